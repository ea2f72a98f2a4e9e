#!/usr/bin/env python3
"""The Python half of tools/kt_side_by_side.sh: Kernel Tuner's CUDA examples
run by Kernel Tuner itself and by kforge (its CLI and its Python front end),
one run per process (so each is cold: the shell gives it fresh caches).

  kt_side_by_side.py prepare KT_REPO DEST      the examples' .py and .cu files from a Kernel
                                               Tuner checkout or bare git mirror into DEST
  kt_side_by_side.py kt NAME WORK CAP_S OUT    Kernel Tuner (cupy backend), its search stopped
                                               CAP_S seconds after its start-up
  kt_side_by_side.py kforge-py NAME WORK N OUT kforge's Python front end (N: a budget, 0: all)
  kt_side_by_side.py cli NAME WORK N OUT CFG   kforge tune CFG (the CLI)
  kt_side_by_side.py report OUTDIR             the table, and the README rows

NAME: vector_add, convolution, matmul and stencil run Kernel Tuner's own
examples/cuda/NAME.py unchanged (imported as they are; for kforge the module
kernel_tuner is kforge); pnpoly and reduction, whose examples need host code
(pnpoly_host.cu) or a verify function, are tuned by the same call here for
both tools: pnpoly's device kernel cn_pnpoly over the example's 5456
configurations, reduction's sum_floats over the example's parameters with
num_blocks 1 (its second kernel, whose one output every configuration must
agree on).  Every run writes OUT (JSON): candidates, wall seconds, best,
verified.  Standard library and NumPy (and, for "kt", Kernel Tuner and CuPy).
"""
import json
import os
import re
import runpy
import subprocess
import sys
import time

EXAMPLES = ["vector_add", "convolution", "matmul", "stencil", "pnpoly", "reduction"]
FILES = ["vector_add.py", "convolution.py", "convolution.cu", "matmul.py", "matmul.cu", "stencil.py", "stencil.cu",
         "pnpoly.cu", "reduction.cu", "reduction.py"]
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def prepare(repo, dest):
    os.makedirs(dest, exist_ok=True)
    for f in FILES:
        src = os.path.join(repo, "examples", "cuda", f)
        if os.path.exists(src):
            data = open(src, "rb").read()
        else:
            data = subprocess.run(["git", "--git-dir", repo, "show", "HEAD:examples/cuda/" + f],
                                  check=True, capture_output=True).stdout
        with open(os.path.join(dest, f), "wb") as out:
            out.write(data)
    print("prepare: %d files of Kernel Tuner's examples/cuda in %s" % (len(FILES), dest))


def vector_add_source(work):
    """vector_add.py's kernel string, as a .cu file for the CLI."""
    text = open(os.path.join(work, "vector_add.py")).read()
    m = re.search(r'kernel_string = """(.*?)"""', text, re.S)
    with open(os.path.join(work, "vector_add.cu"), "w") as f:
        f.write(m.group(1))


def pnpoly_data(work, size=20000000, vertices=600):
    """The example's polygon (600 vertices on a circle), its slopes as pnpoly_host.cu computes them, and
    the points, as .npy files: the same data for both tools."""
    import numpy
    rng = numpy.random.default_rng(1)
    seeds = numpy.sort(rng.random(vertices) * 2.0 * numpy.pi)[::-1]
    xy = numpy.array(list(zip(numpy.cos(seeds), numpy.sin(seeds)))).astype(numpy.float32)
    slopes = numpy.zeros(vertices, dtype=numpy.float32)
    slopes[0] = (xy[-1, 0] - xy[0, 0]) / (xy[-1, 1] - xy[0, 1])
    slopes[1:] = (xy[:-1, 0] - xy[1:, 0]) / (xy[:-1, 1] - xy[1:, 1])
    numpy.save(os.path.join(work, "vertices.npy"), xy.ravel())
    numpy.save(os.path.join(work, "slopes.npy"), slopes)
    numpy.save(os.path.join(work, "points.npy"), rng.standard_normal(2 * size).astype(numpy.float32))


def pnpoly(kt, work):
    import numpy
    size = 20000000
    if not os.path.exists(os.path.join(work, "points.npy")):
        pnpoly_data(work, size)
    points = numpy.load(os.path.join(work, "points.npy"))
    vertices = numpy.load(os.path.join(work, "vertices.npy"))
    slopes = numpy.load(os.path.join(work, "slopes.npy"))
    bitmap = numpy.zeros(size, dtype=numpy.int32)
    tune_params = {"block_size_x": [32 * i for i in range(1, 32)], "tile_size": [1] + [2 * i for i in range(1, 11)],
                   "between_method": [0, 1, 2, 3], "use_precomputed_slopes": [0, 1], "use_method": [0, 1]}
    with open(os.path.join(work, "pnpoly.cu")) as f:
        src = f.read()
    return kt.tune_kernel("cn_pnpoly", src, (size, 1), [bitmap, points, numpy.int32(size)], tune_params,
                          grid_div_x=["block_size_x", "tile_size"],
                          cmem_args={"d_vertices": vertices, "d_slopes": slopes}, verbose=True)


def reduction(kt, work):
    """The example's 8e8 floats summed by one block of threads stall in float32 (a thread's sum passes
    2^24 and stops growing), so every configuration gives another answer: 2^24 floats here, whose sums
    in any of these orders agree within 1e-3."""
    import numpy
    size = 2 ** 24
    with open(os.path.join(work, "reduction.cu")) as f:
        src = f.read()
    tune_params = {"block_size_x": [2 ** i for i in range(5, 11)], "vector": [2 ** i for i in range(3)],
                   "num_blocks": [1], "loop_unroll_factor_0": [0, 1, 8, 16, 32, 64], "use_shuffle": [0, 1]}
    x = numpy.random.rand(size).astype(numpy.float32)
    sum_x = numpy.zeros(2 ** 15, dtype=numpy.float32)
    # kforge's tolerance for sums in other orders (Kernel Tuner checks nothing without an answer)
    return kt.tune_kernel("sum_floats", src, "num_blocks", [sum_x, x, numpy.int32(size)], tune_params,
                          grid_div_x=[], verbose=True, atol=1e-3 * size / 2)


def run_example(name, module, work):
    os.chdir(work)
    if name in ("pnpoly", "reduction"):
        return {"pnpoly": pnpoly, "reduction": reduction}[name](module, work)
    return runpy.run_path(os.path.join(work, name + ".py"), run_name="__main__")


def wrap_tune(module, tool, budget, calls, cache=None):
    orig = module.tune_kernel

    def tune_kernel(*args, **kw):
        if tool == "kt":
            kw.setdefault("lang", "cupy")  # the GPU machine has CuPy, not PyCUDA
            if cache:
                # Kernel Tuner writes each result to its cache file as it goes: what it measured
                # is kept even when it raises before returning (run E9: its convolution did)
                kw.setdefault("cache", cache)
        else:
            kw["strategy"] = "brute_force"  # the same order as Kernel Tuner's
            so = dict(kw.get("strategy_options") or {}, time_limit=float(os.environ.get("KFORGE_SIDE_TIME", "150")))
            if budget:
                so["max_fevals"] = budget
            kw["strategy_options"] = so
        t0 = time.time()
        r = orig(*args, **kw)
        calls.append({"wall": time.time() - t0, "results": r[0] if isinstance(r, tuple) else r,
                      "env": r[1] if isinstance(r, tuple) and len(r) > 1 else {}})
        return r
    module.tune_kernel = tune_kernel


def is_time(t):
    return isinstance(t, (int, float)) and not isinstance(t, bool) and not isinstance(t, str)


def read_kt_cache(path):
    """The results in a Kernel Tuner cache file, also one cut off before its closing braces."""
    try:
        text = open(path).read()
    except OSError:
        return []
    try:
        doc = json.loads(text)
    except ValueError:
        try:
            doc = json.loads(text.rstrip().rstrip(",") + "}}")
        except ValueError:
            return []
    return [r for r in (doc.get("cache") or {}).values() if isinstance(r, dict)]


def kt_run(name, work, cap, out):
    import kernel_tuner
    import kernel_tuner.util as util
    hit = []
    orig_init, orig_done = util.TuningBudget.__init__, util.TuningBudget.is_done

    def init(self, time_limit=None, max_fevals=None):  # the search's own time, after the start-up
        orig_init(self, cap, max_fevals)

    def is_done(self):
        d = orig_done(self)
        if d:
            hit.append(1)
        return d
    util.TuningBudget.__init__, util.TuningBudget.is_done = init, is_done
    calls = []
    cache = os.path.join(os.path.dirname(os.path.abspath(out)), "kt-cache.json")
    if os.path.exists(cache):
        os.remove(cache)  # a cache Kernel Tuner finds is read, not measured: cold means none
    wrap_tune(kernel_tuner, "kt", 0, calls, cache)
    t0 = time.time()
    err = None
    try:
        run_example(name, kernel_tuner, work)
    except Exception as e:  # Kernel Tuner raises on a wrong answer: recorded
        err = "%s: %s" % (type(e).__name__, str(e)[:500])
    res = calls[0]["results"] if calls else read_kt_cache(cache)
    if not calls:
        calls = [{"wall": time.time() - t0, "results": res, "env": {}}]
    ok = [r for r in res if is_time(r.get("time"))]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    params = [k for k in (best or {}) if k not in ("time", "times", "compile_time", "verification_time",
                                                  "benchmark_time", "framework_time", "strategy_time", "timestamp",
                                                  "GFLOP/s")]
    doc = {"tool": "Kernel Tuner", "name": name, "candidates": len(res), "valid": len(ok),
           "wall": calls[0]["wall"] if calls else time.time() - t0, "capped": bool(hit), "error": err,
           "best_ms": best["time"] if best else None,
           "best": {k: best[k] for k in params} if best else None,
           "verified": "answer" if name == "matmul" else "none (no answer)",
           "device": (calls[0]["env"] or {}).get("device_name") if calls else None}
    json.dump(doc, open(out, "w"), indent=1, default=str)
    print(json.dumps(doc, default=str))


def kforge_summary(name, tool, lines, wall, out, err=None):
    ok = [x for x in lines if x.get("status") == "ok" and x.get("median_ms")]
    verified = [x for x in lines if x.get("status") in ("ok", "abandoned")]
    best = min(ok, key=lambda x: x["median_ms"]) if ok else None
    by_status = {}
    for x in lines:
        by_status[x.get("status")] = by_status.get(x.get("status"), 0) + 1
    doc = {"tool": tool, "name": name, "candidates": len(lines), "valid": len(verified), "wall": wall,
           "error": err, "best_ms": best["median_ms"] if best else None,
           "best": {k: best[k] for k in best.get("axes", [])} if best else None,
           "verified": "%d of %d" % (len(verified), len(lines)), "status": by_status,
           "times": {"%s" % ",".join("%s=%s" % (k, x[k]) for k in x.get("axes", [])): x["median_ms"] for x in ok},
           "device": lines[0].get("device") if lines else None}
    json.dump(doc, open(out, "w"), indent=1)
    print(json.dumps({k: v for k, v in doc.items() if k != "times"}))


def kforge_py_run(name, work, budget, out):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import kforge
    import kforge.file_utils
    sys.modules["kernel_tuner"] = kforge  # the example's "import kernel_tuner": kforge
    sys.modules["kernel_tuner.file_utils"] = kforge.file_utils
    calls = []
    wrap_tune(kforge, "kforge", budget, calls)
    err = None
    try:
        run_example(name, kforge, work)
    except Exception as e:
        err = "%s: %s" % (type(e).__name__, str(e)[:500])
    lines = calls[0]["env"].get("kforge_results", []) if calls else []
    with open(os.path.join(os.path.dirname(out), "py-results.jsonl"), "w") as f:
        for x in lines:
            f.write(json.dumps(x) + "\n")
    kforge_summary(name, "kforge (Python)", lines, calls[0]["wall"] if calls else 0.0, out, err)


def cli_run(name, work, budget, out, cfg):
    if name == "vector_add":
        vector_add_source(work)
    if name == "pnpoly" and not os.path.exists(os.path.join(work, "points.npy")):
        pnpoly_data(work)
    import shutil
    shutil.copy(cfg, os.path.join(work, os.path.basename(cfg)))
    res = os.path.join(work, "cli-results.jsonl")
    if os.path.exists(res):
        os.unlink(res)
    cmd = [os.environ.get("KFORGE", os.path.join(ROOT, "build", "kforge")), "tune", os.path.basename(cfg),
           "--strategy", "exhaustive", "--no-db", "--results", res, "--format", "json", "-q",
           "--time", os.environ.get("KFORGE_SIDE_TIME", "150")]
    if budget:
        cmd += ["--budget", str(budget)]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    wall = time.time() - t0
    with open(os.path.join(os.path.dirname(out), "cli.stderr"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stderr)
    lines = []
    if os.path.exists(res):
        for raw in open(res):
            try:
                lines.append(json.loads(raw))
            except ValueError:
                pass
    kforge_summary(name, "kforge (CLI)", lines, wall, out,
                   None if p.returncode in (0, 1) else "exit %d: %s" % (p.returncode, p.stderr[-300:]))


def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def report(outdir):
    rows = []
    print("%-12s %-16s %10s %9s %9s %11s %9s %9s %s" % ("kernel", "tool", "candidates", "wall s", "cand/s",
                                                      "best ms", "best/KT", "rate/KT", "verified"))
    md = ["| kernel | candidates (KT / kforge CLI / kforge Python) | Kernel Tuner: best, cand/s | kforge CLI: best, "
          "cand/s | kforge Python: best, cand/s | best / KT's | cand/s / KT's |", "|---|---|---|---|---|---|---|"]
    ok = True
    for name in EXAMPLES:
        docs = {}
        for t in ("kt", "cli", "py"):
            p = os.path.join(outdir, name, t + ".json")
            docs[t] = json.load(open(p)) if os.path.exists(p) else None
        kt = docs["kt"]
        ktrate = kt["candidates"] / kt["wall"] if kt and kt["wall"] else None
        cells = {}
        for t in ("kt", "cli", "py"):
            d = docs[t]
            if not d:
                print("%-12s %-16s missing" % (name, t))
                ok = False
                continue
            rate = d["candidates"] / d["wall"] if d["wall"] else None
            ratio = d["best_ms"] / kt["best_ms"] if kt and kt.get("best_ms") and d.get("best_ms") else None
            rr = rate / ktrate if rate and ktrate else None
            cells[t] = (d, rate, ratio, rr)
            print("%-12s %-16s %10d %9.1f %9s %11s %9s %9s %s%s" % (
                name, d["tool"], d["candidates"], d["wall"], fmt(rate, "%.2f"), fmt(d.get("best_ms"), "%.4f"),
                fmt(ratio, "%.4f") if t != "kt" else "", fmt(rr, "%.1fx") if t != "kt" else "", d["verified"],
                ("  (capped)" if d.get("capped") else "") + ("  ERROR " + d["error"] if d.get("error") else "")))
            if t != "kt" and (ratio is None or ratio > 1.02 or rr is None or rr < 20):
                ok = False
        if len(cells) == 3:
            c = [cells[t] for t in ("kt", "cli", "py")]
            md.append("| %s | %d / %d / %d%s | %s ms, %s | %s ms, %s | %s ms, %s | %s / %s | %s / %s |" % (
                name, c[0][0]["candidates"], c[1][0]["candidates"], c[2][0]["candidates"],
                " (KT capped)" if c[0][0].get("capped") else "",
                fmt(c[0][0]["best_ms"], "%.4f"), fmt(c[0][1], "%.2f"), fmt(c[1][0]["best_ms"], "%.4f"),
                fmt(c[1][1], "%.1f"), fmt(c[2][0]["best_ms"], "%.4f"), fmt(c[2][1], "%.1f"),
                fmt(c[1][2], "%.3f"), fmt(c[2][2], "%.3f"), fmt(c[1][3], "%.0fx"), fmt(c[2][3], "%.0fx")))
    dev = None
    for name in EXAMPLES:
        p = os.path.join(outdir, name, "cli.json")
        if os.path.exists(p):
            dev = json.load(open(p)).get("device") or dev
    print("\nREADME rows (%s; kforge's best and cand/s against Kernel Tuner's on the same candidates):\n" % dev)
    print("\n".join(md))
    print("\ntargets (best within 2%%, cand/s >= 20x): %s" % ("met" if ok else "NOT all met"))
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    mode = argv[1]
    if mode == "prepare":
        prepare(argv[2], argv[3])
    elif mode == "kt":
        kt_run(argv[2], argv[3], float(argv[4]), argv[5])
    elif mode == "kforge-py":
        kforge_py_run(argv[2], argv[3], int(argv[4]), argv[5])
    elif mode == "cli":
        cli_run(argv[2], argv[3], int(argv[4]), argv[5], argv[6])
    elif mode == "report":
        return report(argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
