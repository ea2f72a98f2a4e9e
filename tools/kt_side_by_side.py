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
  kt_side_by_side.py compile NAME WORK OUT     NVRTC's rate on this host for the example's kernel:
                                               kforge check --compile, cold, with 1 process and
                                               with one per CPU (the bound's c_P)
  kt_side_by_side.py report OUTDIR             the table, the README rows and the bound

NAME: vector_add, convolution, convolution_correct (answers from Kernel
Tuner's run_kernel of its naive kernel, so every candidate is verified by both
tools), matmul and stencil run Kernel Tuner's own examples/cuda/NAME.py unchanged (imported as they are; for kforge the module
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

EXAMPLES = ["vector_add", "stencil", "matmul", "reduction", "convolution", "convolution_correct", "pnpoly"]
FILES = ["vector_add.py", "convolution.py", "convolution.cu", "matmul.py", "matmul.cu", "stencil.py", "stencil.cu",
         "pnpoly.cu", "reduction.cu", "reduction.py", "convolution_correct.py"]
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
        try:
            r = orig(*args, **kw)
        except Exception as e:
            # Kernel Tuner raises after a capped search (its results hold None for the configurations
            # its budget skipped): the wall time is the call's all the same, up to the raise
            calls.append({"wall": time.time() - t0, "results": None, "env": {},
                          "error": "%s: %s" % (type(e).__name__, str(e)[:500])})
            raise
        calls.append({"wall": time.time() - t0, "results": r[0] if isinstance(r, tuple) else r,
                      "env": r[1] if isinstance(r, tuple) and len(r) > 1 else {}})
        return r
    module.tune_kernel = tune_kernel


def is_time(t):
    return isinstance(t, (int, float)) and not isinstance(t, bool) and not isinstance(t, str)


RESULT_FIELDS = ("time", "times", "compile_time", "verification_time", "benchmark_time", "framework_time",
                 "strategy_time", "timestamp", "GFLOP/s", "__error__")


def config_key(params):
    """One configuration as a string, the same for Kernel Tuner's and kforge's results."""
    return ",".join("%s=%s" % (k, int(v) if isinstance(v, float) and v == int(v) else v)
                    for k, v in sorted(params.items()))


def read_kt_cache(path):
    """The results in a Kernel Tuner cache file, also one cut off before its closing braces, and its
    parameter names (the header's tune_params_keys)."""
    try:
        text = open(path).read()
    except OSError:
        return [], None
    try:
        doc = json.loads(text)
    except ValueError:
        try:
            doc = json.loads(text.rstrip().rstrip(",") + "}}")
        except ValueError:
            return [], None
    if not isinstance(doc, dict):
        return [], None
    keys = doc.get("tune_params_keys")
    return [r for r in (doc.get("cache") or {}).values() if isinstance(r, dict)], keys


def kt_doc(name, res, keys, wall, capped, err, env, out):
    """kt.json: Kernel Tuner's run as the report reads it."""
    ok = [r for r in res if is_time(r.get("time"))]
    best = min(ok, key=lambda r: r["time"]) if ok else None

    def params(r):
        return {k: r[k] for k in (keys or [k for k in r if k not in RESULT_FIELDS]) if k in r}
    doc = {"tool": "Kernel Tuner", "name": name, "candidates": len(res), "valid": len(ok),
           "wall": wall, "capped": bool(capped), "error": err,
           "best_ms": best["time"] if best else None,
           "best": params(best) if best else None,
           "verified": "answer" if name in ("matmul", "convolution_correct") else "none (no answer)",
           "configs": [config_key(params(r)) for r in res],
           "times": {config_key(params(r)): r["time"] for r in ok},
           "device": (env or {}).get("device_name")}
    json.dump(doc, open(out, "w"), indent=1, default=str)
    print(json.dumps({k: v for k, v in doc.items() if k not in ("configs", "times")}, default=str))


def kt_run(name, work, cap, out):
    import kernel_tuner
    import kernel_tuner.util as util
    hit = []
    orig_init, orig_done = util.TuningBudget.__init__, util.TuningBudget.is_done

    def init(self, time_limit=None, max_fevals=None):  # the search's own time, after the start-up
        orig_init(self, cap, max_fevals)

    def is_done(self):
        d = orig_done(self)
        if d and not hit:  # once: a capped search asks again for each configuration it skips
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
    except Exception as e:  # Kernel Tuner raises on a wrong answer or after a capped search: recorded
        err = "%s: %s" % (type(e).__name__, str(e)[:500])
    # its cache file has every configuration it measured, also when it raised before returning
    res, keys = read_kt_cache(cache)
    if calls and calls[0]["results"] is not None and not res:
        res = [r for r in calls[0]["results"] if isinstance(r, dict)]
    kt_doc(name, res, keys, calls[0]["wall"] if calls else time.time() - t0, hit, err,
           calls[0]["env"] if calls else {}, out)


def kt_from_cache(name, cache, wall, capped, out):
    """kt.json from a Kernel Tuner cache file alone (the dry run's planted one: the report's and the
    budget's paths run without a GPU)."""
    res, keys = read_kt_cache(cache)
    kt_doc(name, res, keys, wall, capped, None, {"device_name": "planted cache file " + os.path.basename(cache)},
           out)


def mean(xs):
    xs = [x for x in xs if is_time(x)]
    return sum(xs) / len(xs) if xs else None


def kforge_summary(name, tool, lines, wall, out, err=None):
    ok = [x for x in lines if x.get("status") == "ok" and x.get("median_ms")]
    verified = [x for x in lines if x.get("status") in ("ok", "abandoned")]
    # what did not run (does not compile, or its launch asks for more than the GPU has) is not a
    # candidate that can be verified, here as in Kernel Tuner; "wrong", "fault", "timeout" are failures
    ran = [x for x in lines if x.get("status") not in ("compile_error", "launch_error", "out_of_memory", "skipped")]
    best = min(ok, key=lambda x: x["median_ms"]) if ok else None
    by_status = {}
    for x in lines:
        by_status[x.get("status")] = by_status.get(x.get("status"), 0) + 1
    doc = {"tool": tool, "name": name, "candidates": len(lines), "valid": len(verified), "wall": wall,
           "error": err, "best_ms": best["median_ms"] if best else None,
           "best": {k: best[k] for k in best.get("axes", [])} if best else None,
           "ran": len(ran), "status": by_status,
           "verified": "%d of %d that ran (%s)" % (len(verified), len(ran),
                                                   ", ".join("%s %d" % kv for kv in sorted(by_status.items()))),
           "configs": [config_key({k: x[k] for k in x.get("axes", [])}) for x in lines],
           "times": {config_key({k: x[k] for k in x.get("axes", [])}): x["median_ms"] for x in ok},
           "device": lines[0].get("device") if lines else None,
           # per candidate: its NVRTC compile (CPU, in the pool), and its time on the GPU worker
           "compile_ms": mean([x.get("compile_ms") for x in lines if not x.get("cached")]),
           "measure_ms": mean([sum(x.get(k) or 0.0 for k in ("setup_ms", "verify_ms", "bench_ms"))
                               for x in lines if x.get("status") not in ("compile_error", "skipped")])}
    json.dump(doc, open(out, "w"), indent=1)
    print(json.dumps({k: v for k, v in doc.items() if k not in ("configs", "times")}))


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


def filter_data(work):
    """convolution_correct's filter (17 x 17) for the CLI: the same values as the argument filter and the
    __constant__ d_filter, as the example passes one array to both."""
    import numpy
    numpy.save(os.path.join(work, "filter.npy"), numpy.random.default_rng(2).standard_normal(17 * 17).astype(numpy.float32))


def cli_run(name, work, budget, out, cfg):
    if name == "vector_add":
        vector_add_source(work)
    if name == "convolution_correct":
        filter_data(work)
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


# Parameter sets of the example's space whose variants kforge check --compile compiles: a few with one
# process (C_1), more with one process per CPU (c_P, the pool's time per cubin)
COMPILE_SETS = {
    "convolution": (["filter_height=3", "filter_width=3", "block_size_x=16", "block_size_y=1", "tile_size_x=1",
                     "use_padding=0"],
                    ["filter_height=3", "filter_width=3", "block_size_y=1", "tile_size_y=1", "use_padding=0"]),
    "convolution_correct": (["block_size_x=16", "block_size_y=2", "tile_size_x=1", "use_padding=0", "read_only=0"],
                            ["block_size_y=2", "tile_size_y=1", "use_padding=0", "read_only=0"]),
    "pnpoly": (["block_size_x=32", "tile_size=1", "use_method=0"], ["block_size_x=32", "use_method=0"]),
}
# Kernel Tuner's timed runs of each configuration (its examples' iterations; one more run it does not time)
ITERATIONS = {"matmul": 32}


def compile_rate(name, work, out):
    """kforge check --compile over a part of the example's space, cold (a fresh cubin cache and
    CUDA_CACHE_PATH each time), with -j 1 and -j CPUs; the same check without --compile, timed too, is
    taken off (the process, the config, the space), so each figure is the compiles' own: seconds per
    cubin (the reference variant counted)."""
    import tempfile
    k = os.environ.get("KFORGE", os.path.join(ROOT, "build", "kforge"))
    cfg = name + ".json"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    doc = {"name": name, "cpus": cpus}
    for what, sets, j in (("one", COMPILE_SETS[name][0], 1), ("pool", COMPILE_SETS[name][1], cpus)):
        args = sum((["--set", x] for x in sets), [])
        walls = []
        for compile_too in (False, True):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, KFORGE_CACHE_DIR=os.path.join(cache, "k"),
                           CUDA_CACHE_PATH=os.path.join(cache, "c"))
                env.pop("KFORGE_TRACE", None)
                cmd = [k, "check", cfg, "-j", str(j)] + args + (["--compile"] if compile_too else [])
                t0 = time.time()
                try:
                    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=60)
                except subprocess.TimeoutExpired as e:
                    got = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
                    p = subprocess.CompletedProcess(cmd, -1, got or "", "timed out after 60 s")
                walls.append(time.time() - t0)
        m = re.search(r"kforge check: (\d+) variants? compiled now, (\d+) from the cubin cache, (\d+) failed",
                      p.stdout + p.stderr)
        said = p.stdout + p.stderr
        # and the reference variant, where it is another kernel ("(cached)": one of the variants)
        n = int(m.group(1)) + (1 if "reference compiled" in said and
                               not re.search(r"reference compiled .*\(cached\)", said) else 0) if m else 0
        doc[what] = {"jobs": j, "set": sets, "cubins": n, "wall": walls[1], "without_compile": walls[0],
                     "s_per_cubin": (walls[1] - walls[0]) / n if n else None, "exit": p.returncode}
        if not m:
            doc[what]["error"] = (p.stdout + p.stderr)[-500:]
    json.dump(doc, open(out, "w"), indent=1)
    print(json.dumps(doc))


def trace_driver_s(path):
    """The driver's start in a KFORGE_TRACE output: from "gpu N: cuInit" to "gpu N: context made" (s)."""
    t = {}
    try:
        for line in open(path):
            m = re.search(r"trace ([0-9.]+) s \[\d+\]: gpu \d+: (cuInit|context made)$", line.rstrip())
            if m and m.group(2) not in t:
                t[m.group(2)] = float(m.group(1))
    except OSError:
        return None
    return t["context made"] - t["cuInit"] if len(t) == 2 else None


def run_json(outdir, name, what):
    """The JSON document NAME/WHAT.json of a run, or None when it is missing or unreadable."""
    try:
        with open(os.path.join(outdir, name, what + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def floor(name, kt, outdir):
    """The least wall time any tool needs for Kernel Tuner's N candidates of this run, from what was
    measured: W >= max(S + G, N C_1 / P), with S the CUDA driver's start (cuInit and the context, from the
    kforge CLI's trace), G the GPU time of the kernel's own runs at Kernel Tuner's count ((iterations + 1)
    x its time, summed over its candidates) and C_1 NVRTC's time per cubin in one process on this host,
    spread over its P CPUs as if compiles scaled perfectly (compile.json; c_P, what kforge's pool of P
    processes reached there, is shown beside it).  The ratio kforge can reach is at most Kernel Tuner's
    wall / W."""
    n = kt.get("candidates") or 0
    iters = ITERATIONS.get(name, 7)
    g = sum((iters + 1) * t for t in (kt.get("times") or {}).values() if is_time(t)) / 1e3
    s = trace_driver_s(os.path.join(outdir, name, "cli.stderr"))
    c1 = cp = None
    cpus = 1
    try:
        doc = run_json(outdir, name, "compile") or {}
        cpus = int(doc.get("cpus") or 1)
        c1 = doc["one"]["s_per_cubin"]
        cp = doc["pool"]["s_per_cubin"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    comp = n * c1 / cpus if c1 and c1 > 0 else 0.0
    w = max((s or 0.0) + g, comp)
    return {"n": n, "wall_kt": kt.get("wall"), "S": s, "G": g, "C_1": c1, "c_P": cp, "P": cpus, "compile": comp,
            "iters": iters, "W": w, "bound": kt["wall"] / w if kt.get("wall") and w > 0 else None}


def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def compare(kt, d):
    """kforge's run d against Kernel Tuner's kt: on the candidates both measured (kforge's best among
    them / Kernel Tuner's best among them), the count of those, and kforge's best over all its own
    candidates / Kernel Tuner's best."""
    if not kt or not d:
        return None, 0, None
    common = set(kt.get("configs") or []) & set(d.get("configs") or [])
    kt_t = {k: v for k, v in (kt.get("times") or {}).items() if k in common}
    d_t = {k: v for k, v in (d.get("times") or {}).items() if k in common}
    same = min(d_t.values()) / min(kt_t.values()) if kt_t and d_t else None
    over = d["best_ms"] / kt["best_ms"] if kt.get("best_ms") and d.get("best_ms") else None
    return same, len(common), over


def report(outdir):
    print("%-20s %-16s %10s %8s %8s %10s %9s %11s %8s %s" % (
        "kernel", "tool", "candidates", "wall s", "cand/s", "best ms", "best/KT", "same cands", "rate/KT",
        "verified"))
    md = ["| kernel | candidates: KT / kforge CLI / Python (same as KT's) | Kernel Tuner: best ms, cand/s "
          "| kforge CLI: best ms, cand/s | kforge Python: best ms, cand/s | best / KT's on the same candidates "
          "(CLI / Python) | cand/s / KT's (CLI / Python) |", "|---|---|---|---|---|---|---|"]
    ok = True
    names = [n for n in EXAMPLES if os.path.isdir(os.path.join(outdir, n))]
    for name in names:
        docs = {t: run_json(outdir, name, t) for t in ("kt", "cli", "py")}
        side = run_json(outdir, name, "side") or {}
        kt = docs["kt"]
        ktrate = kt["candidates"] / kt["wall"] if kt and kt.get("wall") else None
        cells = {}
        for t in ("kt", "cli", "py"):
            d = docs[t]
            if not d:
                print("%-20s %-16s missing" % (name, {"kt": "Kernel Tuner", "cli": "kforge (CLI)",
                                                     "py": "kforge (Python)"}[t]))
                ok = False
                continue
            rate = d["candidates"] / d["wall"] if d.get("wall") else None
            same, ncommon, over = compare(kt, d) if t != "kt" else (None, 0, None)
            rr = rate / ktrate if rate and ktrate else None
            cells[t] = (d, rate, same if same is not None else over, rr, ncommon)
            print("%-20s %-16s %10d %8.1f %8s %10s %9s %11s %8s %s%s" % (
                name, d["tool"], d["candidates"], d.get("wall") or 0.0, fmt(rate, "%.2f"),
                fmt(d.get("best_ms"), "%.4f"), fmt(over, "%.4f") if t != "kt" else "",
                ("%s (%d)" % (fmt(same, "%.4f"), ncommon)) if t != "kt" else "",
                fmt(rr, "%.1fx") if t != "kt" else "", d.get("verified"),
                ("  (capped at %s s)" % side.get("kt_cap", "?") if d.get("capped") else "")
                + ("  ERROR " + d["error"] if d.get("error") else "")))
            if t != "kt":
                r = same if same is not None else over
                if r is None or r > 1.02 or rr is None or rr < 20 or d["valid"] != d.get("ran", -1):
                    ok = False
        if len(cells) == 3:
            c = [cells[t] for t in ("kt", "cli", "py")]
            how = ""
            if c[0][0].get("capped"):
                how = " (KT capped at %s s; kforge given its %d candidates)" % (side.get("kt_cap", "?"),
                                                                                c[0][0]["candidates"])
            md.append("| %s | %d / %d / %d (%d / %d)%s | %s, %s | %s, %s | %s, %s | %s / %s | %s / %s |" % (
                name, c[0][0]["candidates"], c[1][0]["candidates"], c[2][0]["candidates"], c[1][4], c[2][4], how,
                fmt(c[0][0]["best_ms"], "%.4f"), fmt(c[0][1], "%.2f"), fmt(c[1][0]["best_ms"], "%.4f"),
                fmt(c[1][1], "%.1f"), fmt(c[2][0]["best_ms"], "%.4f"), fmt(c[2][1], "%.1f"),
                fmt(c[1][2], "%.3f"), fmt(c[2][2], "%.3f"), fmt(c[1][3], "%.1fx"), fmt(c[2][3], "%.1fx")))
    dev = None
    for name in names:
        dev = (run_json(outdir, name, "cli") or {}).get("device") or dev
    print("\nREADME rows (%s; kforge's best and cand/s against Kernel Tuner's on the same candidates):\n" % dev)
    print("\n".join(md))
    print("\nThe bound on cand/s / KT's when kforge's compiles run on P CPUs beside one GPU: KT's time per\n"
          "candidate T over kforge's per candidate, at best max(C/P, M) (compiles and measuring overlapped),\n"
          "at worst C/P + M (C: kforge's mean NVRTC compile of a candidate, cold; M: its mean setup, verify\n"
          "and timing on the GPU; from kforge CLI's results lines):")
    for name in names:
        kt, cli = run_json(outdir, name, "kt"), run_json(outdir, name, "cli")
        if kt is None or cli is None:
            continue
        P = int((run_json(outdir, name, "side") or {}).get("cpus") or 16)
        C, M = cli.get("compile_ms"), cli.get("measure_ms")
        if not kt.get("candidates") or not kt.get("wall") or C is None or M is None:
            continue
        T = 1e3 * kt["wall"] / kt["candidates"]
        ratio = (cli["candidates"] / cli["wall"]) / (kt["candidates"] / kt["wall"]) if cli.get("wall") else None
        print("  %-20s T %.0f ms, C %.0f ms, M %.1f ms, P %d: bound %.1fx (overlapped) .. %.1fx (serial); "
              "measured %s" % (name, T, C, M, P, T / max(C / P, M, 1e-9), T / (C / P + M), fmt(ratio, "%.1fx")))
    print("\nThe floor: the least wall time any tool needs for Kernel Tuner's N candidates, W >= max(S + G, N C_1 / P)\n"
          "(S: the CUDA driver's start, cuInit and context, from the kforge CLI's trace; G: the kernel's own runs at\n"
          "Kernel Tuner's count, (iterations + 1) x its time, summed over its candidates; C_1: NVRTC's time per cubin\n"
          "in one process on this host, over its P CPUs as if compiles scaled perfectly; c_P: what kforge's pool\n"
          "of P processes reached, for comparison; compile.json), so cand/s / KT's <= KT's wall / W:")
    for name in names:
        kt = run_json(outdir, name, "kt")
        if kt is None:
            continue
        f = floor(name, kt, outdir)
        if not f["n"] or not f["wall_kt"]:
            continue
        comp = ("N C_1 / P %.2f s (C_1 %.0f ms, P %d; c_P %s ms)" % (
            f["compile"], 1e3 * f["C_1"], f["P"], fmt(1e3 * f["c_P"] if f["c_P"] else None, "%.1f"))
            if f["C_1"] else "compiles not measured")
        print("  %-20s N %d, KT's wall %.2f s; S %s s, G %.2f s (%d+1 runs); %s: W %.2f s, bound %s%s" % (
            name, f["n"], f["wall_kt"], fmt(f["S"], "%.2f"), f["G"], f["iters"], comp, f["W"],
            fmt(f["bound"], "%.1fx"),
            ("  (below 20x: blocked)" if f["bound"] and f["bound"] < 20 else "  (20x not excluded)")
            + ("" if f["S"] is not None else "  (no driver start in the trace: S taken as 0)")))
    print("\ntargets (every candidate verified, best within 2%%, cand/s >= 20x): %s" % ("met" if ok else "NOT all met"))
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
    elif mode == "kt-cache":
        kt_from_cache(argv[2], argv[3], float(argv[4]), argv[5] == "1", argv[6])
    elif mode == "kforge-py":
        kforge_py_run(argv[2], argv[3], int(argv[4]), argv[5])
    elif mode == "cli":
        cli_run(argv[2], argv[3], int(argv[4]), argv[5], argv[6])
    elif mode == "compile":
        if argv[2] in COMPILE_SETS:
            compile_rate(argv[2], argv[3], argv[4])
    elif mode == "report":
        return report(argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
