#!/usr/bin/env python3
"""kt_strategies.py -- Kernel Tuner's search strategies on recorded spaces, in
its simulation mode, with the metrics of tools/strat_bench.c, so that
tools/bench_strategies.sh can put Kernel Tuner's rows beside kforge's.

  kt_strategies.py [--kt DIR] [--seeds N] [--budgets 1,2,5,10,20]
                   [--strategies LIST] [--jobs N] [--csv FILE]
                   HUBCONFIG=FILE...

Each argument pairs a recorded space (a Kernel Tuner cache file, gzipped or
not: benchmark_hub's cachefiles/<kernel>_milo/<GPU>.json.gz; or a T4 file,
as kforge's own recorded spaces are turned into for strat_bench, read as the
cache file Kernel Tuner would have written) with the kforge
config that describes its kernel's restrictions (tools/hub/<kernel>_milo.json,
its "constraints", written in C, turned into Python).  The tunable parameters,
their order, the kernel's name and the problem size are the cache file's own.

Kernel Tuner is a benchmark here, not a dependency: its source is found in
--kt DIR or $KERNEL_TUNER_PATH (a folder holding the kernel_tuner package and
python-constraint), else on the Python path; without it the script says SKIP
and exits 0.  It needs numpy and scipy (and scikit-learn for bayes_opt).

Each strategy runs each space at each budget (max_fevals: a percentage of the
space, at least 1) with seeds 1..N (tune_kernel's seed, and numpy's and
random's); the table gives the mean optimum/best (0 when nothing that ran was
found) and the score against random sampling (Willemsen et al.): per budget
(random - strategy) / (random - optimum) of the mean best time, random's
expectation exact (without replacement), averaged over the budgets, as
strat_bench computes them.  A strategy whose search does not depend on its
budget runs once per seed at the largest budget and its best within the first
b evaluations is its best at budget b; those whose schedule follows max_fevals
(simulated_annealing, dual_annealing, and any with --exact) run every budget
apart.  bayes_opt (a Gaussian process over the whole space, refitted every
evaluation) runs only the budgets up to --bayes-max-pct (5): its row shows "-"
above, its name a "*", and its score is the mean over the budgets it ran.
"""
import argparse
import gzip
import json
import math
import os
import re
import sys
import tempfile
import time
import warnings

DEFAULT_STRATEGIES = ("random_sample,genetic_algorithm,basinhopping,simulated_annealing,greedy_ils,mls,pso,"
                      "diff_evo,dual_annealing,bayes_opt")
# max_fevals sets more than where they stop
BUDGET_BOUND = {"simulated_annealing", "dual_annealing"}


def c_to_python(expr):
    """A kforge constraint (C operators) as a Python expression."""
    e = expr.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e)
    return e


def t4_to_cache(t4, name):
    """A T4 file (kforge's own recorded spaces: tools/hub/h100, converted by
    python -m kforge.t4) as a Kernel Tuner cache file: each configuration
    keyed by its values in parameter order; a failed one with Kernel Tuner's
    error name, and so is one kforge did not run (invalidity "constraints":
    skipped as it cannot run, e.g. too many threads): Kernel Tuner asks for
    every configuration its restrictions let through, so its space can be
    larger than strat_bench's (Kernel Tuner's convolution on the H100: 360
    against 340)."""
    res = t4["results"]
    keys = list(res[0]["configuration"].keys())
    tune_params = {k: sorted({r["configuration"][k] for r in res}) for k in keys}
    cache = {}
    for r in res:
        inv = r.get("invalidity")
        c = r["configuration"]
        e = dict(c)
        t = [m["value"] for m in r.get("measurements", []) if m.get("name") == "time"]
        if inv == "correct" and t and is_number(t[0]):
            e["time"] = t[0]
            e["times"] = [t[0]]
        else:
            e["time"] = "CompilationFailedConfig" if inv == "compile" else "RuntimeFailedConfig"
        e.update(compile_time=0, verification_time=0, benchmark_time=0, strategy_time=0, framework_time=0,
                 timestamp=r.get("timestamp", ""))
        cache[",".join(str(c[k]) for k in keys)] = e
    return {"device_name": t4.get("metadata", {}).get("device", "?"), "kernel_name": name,
            "problem_size": [1], "tune_params_keys": keys, "tune_params": tune_params, "objective": "time",
            "cache": cache}


def load_space(path, config):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    if "results" in data and "cache" not in data:
        data = t4_to_cache(data, re.sub(r"\W", "_", os.path.basename(path).split(".")[0]))
    with open(config) as f:
        cfg = json.load(f)
    restrictions = [c_to_python(c) for c in cfg["custom"].get("constraints", [])]
    return data, restrictions


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def lchoose(n, k):
    if k < 0 or k > n:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def random_expect(n, sorted_times, worst, b):
    """Random sampling of b of n without replacement: expected best time, optimum/best."""
    lt = lchoose(n, b)
    et = er = 0.0
    opt = sorted_times[0]
    for i in range(1, len(sorted_times) + 1):
        p = math.exp(lchoose(n - i + 1, b) - lt) - math.exp(lchoose(n - i, b) - lt)
        et += p * sorted_times[i - 1]
        er += p * opt / sorted_times[i - 1]
    none = math.exp(lchoose(n - len(sorted_times), b) - lt)
    return et + none * worst, er


def run_one(task):
    """One tune_kernel in simulation mode: the costs of its evaluations, in order."""
    (cache_file, meta, restrictions, strategy, max_fevals, seed) = task
    import random
    import numpy as np
    from kernel_tuner import tune_kernel
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            results, _ = tune_kernel(meta["kernel_name"], "__global__ void %s() {}" % meta["kernel_name"],
                                     tuple(meta["problem_size"]), [], meta["tune_params"],
                                     restrictions=restrictions, lang="CUDA", strategy=strategy,
                                     strategy_options={"max_fevals": max_fevals}, cache=cache_file,
                                     simulation_mode=True, quiet=True, verbose=False, seed=seed)
        except Exception as e:  # a strategy that could not run: said in the table
            return None, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    costs, seen = [], set()
    keys = list(meta["tune_params"].keys())
    for r in results:
        k = tuple(r.get(p) for p in keys)
        if k in seen:
            continue
        seen.add(k)
        t = r.get("time")
        costs.append(t if is_number(t) and "__error__" not in r else math.inf)
    return costs, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kt", default=os.environ.get("KERNEL_TUNER_PATH"),
                    help="folder holding the kernel_tuner package (default: $KERNEL_TUNER_PATH, else sys.path)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budgets", default="1,2,5,10,20")
    ap.add_argument("--strategies", default=DEFAULT_STRATEGIES)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--exact", action="store_true", help="run every budget apart for every strategy")
    ap.add_argument("--bayes-max-pct", type=float, default=5,
                    help="bayes_opt only at budgets up to this %% of the space (its Gaussian process is slow)")
    ap.add_argument("--csv")
    ap.add_argument("spaces", nargs="+", metavar="CACHE=HUBCONFIG")
    a = ap.parse_args()
    if a.kt:
        sys.path.insert(0, a.kt)
    try:
        import kernel_tuner
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError as e:
        print("kt_strategies: SKIP: Kernel Tuner cannot run here (%s); give its source with --kt DIR or "
              "KERNEL_TUNER_PATH" % e)
        return 0
    version = getattr(kernel_tuner, "__version__", "?")
    pcts = [int(x) for x in a.budgets.split(",")]
    strategies = a.strategies.split(",")
    cf = open(a.csv, "w") if a.csv else None
    if cf:
        cf.write("space,strategy,budget_pct,evaluations,mean_opt_over_best,mean_best_ms,random_opt_over_best,score\n")
    pool = None
    if a.jobs > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(a.jobs)
    tot, nspaces = {}, 0
    tmp = tempfile.mkdtemp(prefix="kt_strategies.")
    for arg in a.spaces:
        if "=" not in arg:
            print("kt_strategies: %s: expected CACHE=HUBCONFIG" % arg, file=sys.stderr)
            return 2
        path, config = arg.split("=", 1)
        data, restrictions = load_space(path, config)
        # Kernel Tuner reads a plain JSON cache file
        plain = os.path.join(tmp, os.path.basename(path).replace(".gz", "").replace(".t4", ""))
        with open(plain, "w") as f:
            json.dump(data, f)
        meta = {k: data[k] for k in ("kernel_name", "problem_size", "tune_params")}
        from kernel_tuner.util import check_restrictions
        keys = list(data["tune_params"].keys())
        entries = [e for e in data["cache"].values()
                   if check_restrictions(restrictions, {p: e[p] for p in keys}, False)]
        n = len(entries)
        times = sorted(e["time"] for e in entries if is_number(e.get("time")) and "__error__" not in e)
        opt, worst = times[0], times[-1]
        budgets = [max(1, int(math.floor(n * p / 100.0 + 0.5))) for p in pcts]
        tasks, where = [], []
        for s in strategies:
            exact = a.exact or s in BUDGET_BOUND
            allowed = [bi for bi in range(len(budgets)) if s != "bayes_opt" or pcts[bi] <= a.bayes_max_pct]
            if not allowed:
                continue
            top = max(budgets[bi] for bi in allowed)
            for bi in allowed:
                b = budgets[bi]
                if not exact and b != top:
                    continue
                for seed in range(1, a.seeds + 1):
                    tasks.append((plain, meta, restrictions, s, b, seed))
                    where.append((s, bi, seed, exact))
        t0 = time.time()
        out = (pool.map(run_one, tasks, chunksize=1) if pool else [run_one(t) for t in tasks])
        best = {}
        errors = {}
        for (s, bi, seed, exact), (costs, err) in zip(where, out):
            if costs is None:
                errors[s] = err
                continue
            for bj, b in enumerate(budgets):
                if (exact and bj != bi) or b > budgets[bi]:
                    continue
                c = min(costs[:b], default=math.inf)
                best.setdefault((s, bj), []).append(c)
        base = os.path.basename(path)
        print("\n%s: Kernel Tuner %s simulation mode, %s, %d configurations (%d ran), %d restrictions; "
              "optimum %.4g ms; %d seeds; %.1f s" % (base, version, data.get("device_name", "?"), n, len(times),
                                                     len(restrictions), opt, a.seeds, time.time() - t0))
        print("  %-22s" % "budget" + "".join("  %5d%% (%4d)" % (p, b) for p, b in zip(pcts, budgets)) + "   score")
        rt, rr = zip(*(random_expect(n, times, worst, b) for b in budgets))
        print("  %-22s" % "random (exp)" + "".join("  %12.3f" % r for r in rr) + "   %6.3f" % 0.0)
        for s in strategies:
            name = "kt:" + s
            if s in errors or not any((s, bi) in best for bi in range(len(budgets))):
                print("  %-22s  (could not run: %s)" % (name, errors.get(s, "no result")))
                continue
            score, row, nb = 0.0, "", 0
            for bi, b in enumerate(budgets):
                if (s, bi) not in best:
                    row += "  %12s" % "-"
                    continue
                nb += 1
                cs = best[(s, bi)]
                mr = sum(opt / c if math.isfinite(c) else 0 for c in cs) / len(cs)
                mt = sum(c if math.isfinite(c) else worst for c in cs) / len(cs)
                sb = (rt[bi] - mt) / (rt[bi] - opt) if rt[bi] > opt else 0
                score += sb
                row += "  %12.3f" % mr
                if cf:
                    cf.write("%s,%s,%d,%d,%.5f,%.6g,%.5f,%.4f\n" % (base, name, pcts[bi], b, mr, mt, rr[bi], sb))
            score /= nb
            if nb < len(budgets):
                name += "*"  # its score is over the budgets it ran
            tot.setdefault(name, []).append(score)
            # how much of its largest budget it used (a strategy may stop before max_fevals)
            top = max(b for bi, b in enumerate(budgets) if (s, bi) in best)
            used = [len(c) for (t, bi, _, _), (c, _) in zip(where, out) if t == s and budgets[bi] == top and c]
            print("  %-22s" % name + row + "   %6.3f" % score +
                  ("   (used %d%% of %d)" % (round(100.0 * sum(used) / len(used) / top), top) if used else ""))
        sys.stdout.flush()
        if cf:
            cf.flush()  # a run cut short keeps the spaces it finished
        nspaces += 1
        os.unlink(plain)
    os.rmdir(tmp)
    if nspaces > 1:
        print("\nmean score over %d spaces:" % nspaces +
              "".join("  %s %.3f" % (k, sum(v) / len(v)) for k, v in tot.items()))
    if cf:
        cf.close()
    if pool:
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
