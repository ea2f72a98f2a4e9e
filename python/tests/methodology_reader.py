"""The Auto-Tuning Association's methodology reader (github:AutoTuningAssociation/autotuning_methodology)
run on a T4 file, its source read at test time from $METHODOLOGY_REPO (a checkout or a bare git mirror;
nothing of it is copied into kforge's tree).

The reader is runner.py: get_results_and_metadata loads the results and metadata files, and
write_results combines the results of a run into its arrays, asserting on each result what the
methodology needs (every objective time key in "times", exactly one measurement of the objective, a
number or one of Kernel Tuner's error strings).  runner.py imports progressbar and yappi, which only
draw a progress bar and profile; they are not Debian packages, so empty modules stand in for them.

    python3 methodology_reader.py T4_RESULTS [METADATA]     exit 0: loaded; 2: no reader; 1: refused
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

DEFAULT = "/work/.mirror/AutoTuningAssociation+autotuning_methodology/repo"
FILES = ["__init__.py", "runner.py", "caching.py", "searchspace_statistics.py", "validators.py"]


def repo():
    d = os.environ.get("METHODOLOGY_REPO") or DEFAULT
    return d if os.path.isdir(d) else None


def load_reader():
    """The module runner of autotuning_methodology, or None (with why) when its source is not found."""
    r = repo()
    if not r:
        return None, "no autotuning_methodology source: set METHODOLOGY_REPO to a checkout or git mirror"
    tmp = tempfile.mkdtemp(prefix="kforge-atm.")
    pkg = os.path.join(tmp, "autotuning_methodology")
    os.mkdir(pkg)
    for f in FILES:
        src = os.path.join(r, "src", "autotuning_methodology", f)
        if os.path.exists(src):
            data = open(src, "rb").read()
        else:
            p = subprocess.run(["git", "--git-dir", r, "show", "HEAD:src/autotuning_methodology/" + f],
                               capture_output=True)
            if p.returncode != 0:
                return None, "%s: src/autotuning_methodology/%s not found" % (r, f)
            data = p.stdout
        with open(os.path.join(pkg, f), "wb") as out:
            out.write(data)
    for name in ("progressbar", "yappi"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.path.insert(0, tmp)
    try:
        import autotuning_methodology.runner as runner
    except ImportError as e:  # numpy missing: this python cannot run the reader
        return None, "the reader needs %s (%s)" % (e.name, sys.executable)
    finally:  # the modules are loaded: their files go
        sys.path.remove(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    return runner, None


class Description:
    """What write_results reads of a ResultsDescription: the objective's keys, and where it puts the
    arrays."""

    def __init__(self):
        self.objective_time_keys = ["compilation", "benchmark", "framework", "search_algorithm", "validation"]
        self.objective_performance_keys = ["time"]
        self.minimization = True
        self.arrays = None

    def set_results(self, arrays):
        self.arrays = arrays

    def has_results(self):
        return self.arrays is not None


def read(t4_path, metadata_path=None):
    """Loads t4_path with the reader: (number of results, number valid, best time) or raises."""
    runner, why = load_reader()
    if runner is None:
        raise LookupError(why)
    from pathlib import Path
    if metadata_path is None:
        fd, meta = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"metadata": {}, "schema_version": "1.0.0"}, f)
        try:
            _, results = runner.get_results_and_metadata(Path(t4_path), Path(meta))
        finally:
            os.unlink(meta)
    else:
        _, results = runner.get_results_and_metadata(Path(t4_path), Path(metadata_path))
    valid = [r for r in results if runner.is_valid_config_result(r)]
    d = Description()
    runner.write_results([results], d)
    best = d.arrays["objective_performance_best_results"]
    import numpy
    last = best[-1, 0] if best.size else numpy.nan
    return len(results), len(valid), (None if numpy.isnan(last) else float(last))


if __name__ == "__main__":
    try:
        n, v, b = read(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    except LookupError as e:
        print("SKIP methodology reader: %s" % e)
        sys.exit(2)
    except Exception as e:  # the reader's assertion or type error: the file is refused
        print("REFUSED by the methodology reader: %s: %s" % (type(e).__name__, str(e)[:400]))
        sys.exit(1)
    print("methodology reader: %d results, %d valid, best %s" % (n, v, b))
