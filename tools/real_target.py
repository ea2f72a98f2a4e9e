#!/usr/bin/env python3
"""real_target.py -- one line per space for tools/real_target.sh: how close the
default search's best came to the exhaustive optimum.

    python3 tools/real_target.py NAME EXHAUSTIVE.jsonl EXH_WALL RUN.jsonl:WALL:SEED...
                                 [--within 0.01] [--time S]

Each file is a kforge results file (one JSON line per case).  At every size
(the values of the line's "sizes" fields) the best is the lowest median_ms of a
line whose status is "ok".  For each default run it prints best/optimum at
each size (the worst size when there are several, and their geometric mean),
the same ratio with the default's best configuration timed in the exhaustive
run (the same configuration, without the run-to-run noise between two runs),
the candidates it measured and its wall time; then one summary line:

    real NAME: N candidates, exhaustive X s (best B ms); default --time T, seeds
    1,2,3: best/optimum 1.004 1.000 1.012 (worst size), wall 15.3 15.4 15.2 s;
    within 1%: 2 of 3, after 8.1 11.9 - s

"after": when the line that brought the best within 1% at every size arrived
(RUN.times beside RUN.jsonl, real_target.sh's samples of the line count every
0.1 s: "start T" then "T LINES"; without it, no time is given).

Exits 0 (also when the target is missed: the line says so); 2 on unreadable
input.
"""
import json
import math
import sys


def read(path, order=None):
    """{size: {label: median_ms}} of the ok lines, and the distinct labels;
    order (a list) gets (line number, size, median_ms) of each ok line."""
    best = {}
    labels = set()
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        print(f"real_target.py: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    with f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                print(f"real_target.py: {path}:{n}: not a JSON line (a cut-off last line is skipped)",
                      file=sys.stderr)
                continue
            label = r.get("label") or r.get("name") or ""
            labels.add(label)
            if r.get("status") != "ok" or not isinstance(r.get("median_ms"), (int, float)):
                continue
            size = tuple(str(r.get(k)) for k in r.get("sizes", []))
            at = best.setdefault(size, {})
            m = float(r["median_ms"])
            if order is not None:
                order.append((n, size, m))
            if label not in at or m < at[label]:
                at[label] = m
    return best, labels


def arrivals(path):
    """real_target.sh's PATH.times ("start T" then "T LINES" every 0.1 s):
    the start and the samples, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = [l.split() for l in f if l.strip()]
    except OSError:
        return None
    if not rows or rows[0][0] != "start":
        return None
    return float(rows[0][1]), [(float(t), int(n)) for t, n in rows[1:]]


def time_to_within(order, opt, within, times, wall):
    """Seconds from the start until the best so far is within of the optimum
    at every size (the first sample that saw that line), or None."""
    best = {}
    for n, size, m in order:
        if size in opt and (size not in best or m < best[size]):
            best[size] = m
        if len(best) == len(opt) and all(best[s] <= (1 + within) * opt[s] for s in opt):
            if not times:
                return None
            start, samples = times
            for t, k in samples:
                if k >= n:
                    return t - start
            return wall
    return None


def size_text(size):
    return "x".join(size) if size else "-"


def main(argv):
    within, tlimit = 0.01, None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--within":
            within = float(argv[i + 1])
            i += 2
        elif argv[i] == "--time":
            tlimit = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    name, exh_path, exh_wall = args[0], args[1], args[2]
    exh, exh_labels = read(exh_path)
    if not exh:
        print(f"real {name}: the exhaustive run ({exh_path}) has no verified result")
        return 0
    opt = {s: min(at.values()) for s, at in exh.items()}
    sizes = sorted(opt, key=lambda s: [float(x) if x.replace(".", "").isdigit() else 0 for x in s])
    ratios, walls, seeds, reached, hits = [], [], [], [], 0
    fmt = lambda v: "%.3f" % v if math.isfinite(v) else "none"
    for spec in args[3:]:
        path, wall, seed = spec.rsplit(":", 2)
        order = []
        run, run_labels = read(path, order)
        tw = time_to_within(order, opt, within,
                            arrivals(path[:-len(".jsonl")] + ".times" if path.endswith(".jsonl") else path + ".times"),
                            float(wall))
        reached.append(tw)
        worst, same_worst, logs, missing = 0.0, 0.0, [], []
        for s in sizes:
            at = run.get(s)
            if not at:
                missing.append(size_text(s))
                continue
            lab = min(at, key=at.get)
            r = at[lab] / opt[s]
            same = exh.get(s, {}).get(lab)
            sr = same / opt[s] if same else float("inf")  # abandoned there: > 2% slower
            worst = max(worst, r)
            same_worst = max(same_worst, sr)
            logs.append(math.log(r))
        if missing:
            worst = same_worst = float("inf")
        gm = math.exp(sum(logs) / len(logs)) if logs else float("inf")
        ok = worst <= 1 + within
        hits += ok
        ratios.append(worst)
        walls.append(float(wall))
        seeds.append(seed)
        several = len(sizes) > 1
        nl = len(run_labels)
        print(f"  {name} seed {seed}: {nl} candidate{'' if nl == 1 else 's'} measured in {float(wall):.1f} s; "
              f"best/optimum {fmt(worst)}{' (worst of %d sizes, geometric mean %.3f)' % (len(sizes), gm) if several else ''}"
              f"{'; no result at ' + ','.join(missing) if missing else ''}; its configuration in the exhaustive run: "
              f"{fmt(same_worst) if math.isfinite(same_worst) or missing else 'stopped early there (> 2% slower)'}"
              f"{' (worst size)' if several else ''}; within {within:.0%}: {'yes' if ok else 'no'}"
              f"{' (after %.1f s)' % tw if ok and tw is not None else ''}")
    opt_text = (f"best {opt[sizes[0]]:.4g} ms" if len(sizes) == 1
                else f"{len(sizes)} sizes, best {opt[sizes[0]]:.4g} ms at {size_text(sizes[0])} "
                     f"to {opt[sizes[-1]]:.4g} ms at {size_text(sizes[-1])}")
    ne = len(exh_labels)
    print(f"real {name}: {ne} candidate{'' if ne == 1 else 's'}, exhaustive {float(exh_wall):.1f} s ({opt_text}); "
          f"default{' --time ' + tlimit if tlimit else ''}, seed{'s' if len(seeds) > 1 else ''} {','.join(seeds)}: "
          f"best/optimum {' '.join(fmt(r) for r in ratios)}{' (worst size)' if len(sizes) > 1 else ''}, "
          f"wall {' '.join('%.1f' % w for w in walls)} s; within {within:.0%}: {hits} of {len(ratios)}"
          f"{'' if not any(t is not None for t in reached) else ', after ' + ' '.join('%.1f' % t if t is not None else '-' for t in reached) + ' s'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
