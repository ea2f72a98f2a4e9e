"""T4, the Auto-Tuning Association's results format, from kforge's results.

    python3 -m kforge.t4 RESULTS.jsonl [-o OUT.json] [--kernel NAME]

converts a kforge results file (kforge run or tune, any family) into one T4
document: each line a result whose "configuration" is its axes (the line's
"axes"), with its sizes as measurements too, "times" (compilation,
validation, benchmark in ms, runtimes), "invalidity" (correct, compile, runtime,
correctness, constraints) and "measurements" (time, GB/s, ...).  Lines of
other kernels are left out with --kernel.  Standard library only.
"""

import argparse
import json
import sys

SCHEMA_VERSION = "1.0.0"

# kforge's status -> T4's invalidity
INVALIDITY = {"ok": "correct", "abandoned": "correct", "wrong": "correctness", "compile_error": "compile",
              "launch_error": "runtime", "skipped": "constraints", "timeout": "timeout", "fault": "runtime",
              "oom": "runtime"}
# kforge's status -> Kernel Tuner's error name, a failed result's objective value
ERROR = {"compile_error": "CompilationFailedConfig", "skipped": "InvalidConfig"}


def from_lines(lines, kernel=None):
    """The T4 document (a dict) of kforge results lines (dicts)."""
    out = []
    for line in lines:
        if not isinstance(line, dict) or "status" not in line or "axes" not in line:
            continue
        if kernel and line.get("kernel") != kernel:
            continue
        st = line["status"]
        conf = {k: line[k] for k in line["axes"] if k in line}
        ok = st in ("ok", "abandoned") and line.get("median_ms") is not None
        # every evaluation names the objective: a failed one's value is Kernel Tuner's error name (the
        # methodology's reader takes no other string), kforge's status beside it
        meas = [{"name": "time", "value": line["median_ms"] if ok else ERROR.get(st, "RuntimeFailedConfig"),
                 "unit": "ms"}]
        if not ok:
            meas.append({"name": "status", "value": st, "unit": ""})
        if ok:
            for k, unit in (("min_ms", "ms"), ("max_ms", "ms"), ("mean_ms", "ms"), ("stddev_ms", "ms"),
                            ("gbps", "GB/s"), ("gflops", "GFLOP/s"), ("energy_j", "J")):
                if isinstance(line.get(k), (int, float)):
                    meas.append({"name": k, "value": line[k], "unit": unit})
        for s in line.get("sizes", []):
            if s in line:
                meas.append({"name": s, "value": line[s], "unit": ""})
        if line.get("message"):
            meas.append({"name": "message", "value": line["message"], "unit": ""})
        # milliseconds, under the keys Kernel Tuner writes and the methodology's reader sums
        times = {"compilation": float(line.get("compile_ms") or 0.0),
                 "validation": float(line.get("verify_ms") or 0.0),
                 "benchmark": float(line.get("bench_ms") or 0.0),
                 "framework": 0.0, "search_algorithm": 0.0, "runtimes": []}
        r = {"configuration": conf, "times": times, "invalidity": INVALIDITY.get(st, "runtime"),
             "correctness": 0 if st == "wrong" else 1, "measurements": meas, "objectives": ["time"]}
        if line.get("time"):
            r["timestamp"] = line["time"]
        out.append(r)
    return {"schema_version": SCHEMA_VERSION, "results": out,
            "metadata": {"timeunit": "milliseconds", "producer": "kforge"}}


def read_results(path):
    """The lines of a kforge results file that parse (a torn last line is left out)."""
    lines = []
    with open(path) as f:
        for raw in f:
            raw = raw.strip()
            if not raw:
                continue
            try:
                lines.append(json.loads(raw))
            except ValueError:
                pass
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kforge.t4", description="kforge results file -> T4 JSON")
    ap.add_argument("results")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--kernel")
    a = ap.parse_args(argv)
    try:
        doc = from_lines(read_results(a.results), a.kernel)
    except OSError as e:
        print("kforge.t4: %s: %s" % (a.results, e.strerror), file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=1) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(a.output, "w") as f:
            f.write(text)
    except OSError as e:
        print("kforge.t4: %s: %s" % (a.output, e.strerror), file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
