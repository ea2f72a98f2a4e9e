#!/usr/bin/env python3
"""tune_phases.py -- where a tune's time went, per size, from its results file.

    python3 tools/tune_phases.py RESULTS.jsonl [--wall SECONDS] [--label TEXT]
                                 [--sizes KEY,KEY]

For each shape (the size keys the results line names in "sizes", else n;
rows x cols; width x height; or the keys --sizes names) it prints the cases measured, how many
were abandoned or failed, the seconds spent in the GPU worker's three phases
(setup: module, plan, buffers; verify: the checked runs; timing: warm-up and
timed repetitions), the median repetitions, and the median per-case
overhead: setup + verify + timing minus the GPU's work, which is every run of
the kernel (two checked runs, the warm-up, the timed repetitions; each taken
at the case's median) and an L2 flush before each timed repetition (taken as
writing 2 x l2_bytes at peak_gbps, as the results line gives them).  With
--wall (the tune's wall time), the time outside the worker's phases is shown
too.
Cases taken from an earlier run (resumed) are left out.
"""
import argparse
import json
import statistics
import sys

SIZE_KEYS = ["n", "rows", "cols", "row_stride", "width", "height"]


def shape_of(d, keys=None):
    if keys is None and isinstance(d.get("sizes"), list):
        keys = d["sizes"]   # the results line says which keys are sizes
    if keys is None:
        keys = [k for k in SIZE_KEYS if isinstance(d.get(k), (int, float))]
        if "row_stride" in keys and d.get("row_stride") == d.get("cols"):
            keys.remove("row_stride")
    return tuple((k, d.get(k)) for k in keys)


def shape_text(s):
    if len(s) == 1 and s[0][0] == "n":
        n = s[0][1]
        return "2^%d" % (n.bit_length() - 1) if n & (n - 1) == 0 else str(n)
    return " x ".join(str(v) for _, v in s)


def overhead_ms(d):
    """A case's time in the worker beyond the GPU's work (see above)."""
    wall = (d.get("setup_ms") or 0) + (d.get("verify_ms") or 0) + (d.get("bench_ms") or 0)
    med = d.get("median_ms") or 0
    if not d.get("bench_ms"):   # abandoned after its checked runs: no timing
        return wall - 2 * med
    b = d.get("bench") or {}
    reps = d["reps"]
    flush = 2 * (d.get("l2_bytes") or 0) / (d.get("peak_gbps") or 1e30) / 1e6 if b.get("flush_l2", True) else 0
    return wall - (2 + (b.get("warmup") or 0) + reps) * med - reps * flush


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("results")
    ap.add_argument("--wall", type=float, help="the tune's wall time in seconds")
    ap.add_argument("--label", default="")
    ap.add_argument("--sizes", help="the size keys, comma-separated (default: n, rows/cols, width/height)")
    a = ap.parse_args()
    rows = {}
    order = []
    with open(a.results) as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                d = json.loads(line)
            except ValueError:
                sys.exit("%s:%d: not a JSON line" % (a.results, ln))
            if d.get("resumed"):
                continue
            s = shape_of(d, a.sizes.split(",") if a.sizes else None)
            if s not in rows:
                rows[s] = []
                order.append(s)
            rows[s].append(d)
    if not rows:
        sys.exit("%s: no results" % a.results)
    if a.label:
        print(a.label)
    print("%-14s %6s %5s %5s %8s %8s %8s %6s %10s" %
          ("shape", "cases", "aband", "fail", "setup s", "verify s", "timing s", "reps", "overhead"))
    tot = [0, 0, 0, 0.0, 0.0, 0.0]
    overheads = []
    for s in sorted(order, key=lambda s: [v for _, v in s]):
        v = rows[s]
        setup = sum(d.get("setup_ms") or 0 for d in v) / 1e3
        verify = sum(d.get("verify_ms") or 0 for d in v) / 1e3
        timing = sum(d.get("bench_ms") or 0 for d in v) / 1e3
        ab = sum(d.get("status") == "abandoned" for d in v)
        fail = sum(d.get("status") not in ("ok", "abandoned") for d in v)
        timed = [d for d in v if d.get("reps")]
        reps = statistics.median(d["reps"] for d in timed) if timed else 0
        ov = [overhead_ms(d) for d in timed]
        overheads += ov
        print("%-14s %6d %5d %5d %8.2f %8.2f %8.2f %6g %7.2f ms" %
              (shape_text(s), len(v), ab, fail, setup, verify, timing, reps,
               statistics.median(ov) if ov else float("nan")))
        for i, x in enumerate((len(v), ab, fail, setup, verify, timing)):
            tot[i] += x
    print("%-14s %6d %5d %5d %8.2f %8.2f %8.2f %6s %7.2f ms" %
          ("all", tot[0], tot[1], tot[2], tot[3], tot[4], tot[5], "",
           statistics.median(overheads) if overheads else float("nan")))
    if a.wall:
        rest = a.wall - tot[3] - tot[4] - tot[5]
        print("wall %.2f s: worker phases %.2f s, outside them %.2f s (%.2f ms per case)" %
              (a.wall, tot[3] + tot[4] + tot[5], rest, 1e3 * rest / max(tot[0], 1)))


if __name__ == "__main__":
    main()
