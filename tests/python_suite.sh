#!/bin/sh
# tests/python_suite.sh -- kforge's Python front end (python/kforge: Kernel
# Tuner's tune_kernel, file_utils and the T4 converter) by pytest on the
# fake GPU: python/tests.  It needs a python3 with NumPy and pytest
# (Debian: python3-numpy, python3-pytest); without one it says SKIP.
#
#   KFORGE=build/kforge sh tests/python_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, pytest' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "SKIP python_suite: no python3 with numpy and pytest (apt install python3-numpy python3-pytest)"
    echo "python_suite: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-py.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT" || exit 2
KFORGE=$K "$py" -m pytest -q -rs -p no:cacheprovider --basetemp="$TMP/pytest" python/tests >"$TMP/out.txt" 2>&1
rc=$?
cat "$TMP/out.txt"
# pytest's last line, "N passed, M failed, K skipped in S s", as the suites' summary
passed=$(tail -1 "$TMP/out.txt" | grep -o '[0-9]* passed' | grep -o '[0-9]*')
failed=$(tail -1 "$TMP/out.txt" | grep -o '[0-9]* \(failed\|error\)' | grep -o '[0-9]*' | awk '{ s += $1 } END { print s + 0 }')
skipped=$(tail -1 "$TMP/out.txt" | grep -o '[0-9]* skipped' | grep -o '[0-9]*')
grep -o 'SKIPPED.*' "$TMP/out.txt" | sed 's/^/SKIP /'
echo "python_suite: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
[ $rc = 0 ]
