#!/usr/bin/env python3
"""remeasure_best.py -- re-measure each size's best of tune results with the full method.

    python3 tools/remeasure_best.py RESULTS.jsonl [RESULTS.jsonl ...] [--kforge build/kforge]

A tune measures each candidate briefly, enough to rank them.  This takes the
fastest verified variant at each size n of every results file of the reduce
family, measures each again with `kforge run` and the default bench settings
(warm-up, L2 flushed, up to 0.5 s or a 0.5% noise), all in one table, so that
the variants that different tunes chose can be compared on equal terms.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

AXES = ["dtype", "op", "acc_dtype", "algorithm", "block_size", "elements_per_thread", "unroll", "vector_width",
        "grid", "passes", "layout", "accumulator", "warp_reduce", "load"]


def bests(path):
    b = {}
    for line in open(path):
        d = json.loads(line)
        if d.get("kernel") != "reduce" or d.get("status") != "ok":
            continue
        if d["n"] not in b or d["median_ms"] < b[d["n"]]["median_ms"]:
            b[d["n"]] = d
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--kforge", default=os.environ.get("KFORGE", "build/kforge"))
    a = ap.parse_args()
    per = [bests(f) for f in a.results]
    sizes = sorted(set().union(*per))
    print("%-11s" % "n" + "".join("  %-34s" % os.path.basename(f)[:34] for f in a.results))
    print("%-11s" % "" + "  tune median -> run median (us)    " * len(a.results))
    for n in sizes:
        row = "%-11d" % n
        got = []
        for b in per:
            d = b.get(n)
            if not d:
                row += "  %-34s" % "-"
                got.append(None)
                continue
            var = {k: d[k] for k in AXES if k in d}
            cfg = {"kernel": "reduce", "n": [n], "variants": [var]}
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
                json.dump(cfg, t)
            out = subprocess.run([a.kforge, "run", t.name, "--no-results", "--format", "jsonl", "-q"],
                                 capture_output=True, text=True)
            os.unlink(t.name)
            lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
            if out.returncode != 0 or not lines or lines[0]["status"] != "ok":
                row += "  %-34s" % ("run failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:20])
                got.append(None)
                continue
            m = lines[0]["median_ms"]
            got.append(m)
            row += "  %9.4f -> %9.4f          " % (d["median_ms"] * 1e3, m * 1e3)
        ok = [g for g in got if g]
        if len(ok) > 1:
            row += "  run ratio to the fastest: " + " ".join("%.3f" % (g / min(ok)) if g else "-" for g in got)
        print(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
