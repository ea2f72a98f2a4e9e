#!/usr/bin/env python3
"""plot.py -- the data half of tools/plot.sh: reads a kforge results file
(JSON Lines, one case per line; keys as in report_json, src/results/report.c),
writes gnuplot data files and a gnuplot script into a work directory.
tools/plot.sh runs gnuplot on the script.

  plot.py RESULTS --work DIR --out OUTDIR [--heat X,Y] [--n N] [--filter KEY=VALUE]...

Charts:
  bandwidth.png  GB/s against n (log2 axis), one line per variant (its name,
                 or its label when it has none), status "ok" rows only; where a
                 (variant, n) was measured more than once, the best median.
  heat.png       median time over two parameters (--heat X,Y) at one size
                 (--n; default the largest measured), the minimum over every
                 other parameter, each cell annotated.

Exit status: 0, or 2 with a message on stderr (bad arguments, nothing to plot).
"""
import argparse
import json
import os
import re
import sys

VARIANT_KEYS = ["dtype", "op", "algorithm", "block_size", "elements_per_thread", "unroll", "vector_width",
                "grid", "passes", "layout", "accumulator", "warp_reduce", "load"]


def die(msg):
    print("plot: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_size(s):
    """An n as kforge accepts it: 1048576, 2^20, 1<<20."""
    s = s.strip()
    m = re.fullmatch(r"2\^(\d+)", s)
    if m:
        return 1 << int(m.group(1))
    m = re.fullmatch(r"(\d+)<<(\d+)", s)
    if m:
        return int(m.group(1)) << int(m.group(2))
    if re.fullmatch(r"\d+", s):
        return int(s)
    raise ValueError(s)


def text(v):
    """A value as one short word: grid objects as {"waves": 1} -> waves=1."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return ",".join("%s=%s" % (k, text(x)) for k, x in v.items())
    if isinstance(v, float) and v == int(v):
        return str(int(v))
    return str(v)


def matches(row, key, want):
    v = row
    for k in key.split("."):
        if not isinstance(v, dict) or k not in v:
            return False
        v = v[k]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            return float(v) == float(parse_size(want) if re.fullmatch(r"[\d<^]+", want) else want)
        except ValueError:
            return False
    if isinstance(v, (dict, list)):
        return want in (text(v), json.dumps(v), json.dumps(v, separators=(",", ":")))
    return text(v) == want


def load(path):
    rows, bad = [], 0
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    with f:
        for line in f:
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except ValueError:
                bad += 1  # a line cut short by a crash: kforge skips these too
                continue
            if isinstance(d, dict):
                rows.append(d)
    if bad:
        print("plot: %s: skipped %d unparseable line%s" % (path, bad, "" if bad == 1 else "s"), file=sys.stderr)
    return rows


def gp_str(s):
    """A gnuplot double-quoted string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def series_names(ok):
    """Legend text per row: the variant's name, else its label; with dtype and
    op appended when the file mixes several."""
    multi = {k: len({text(r.get(k)) for r in ok}) > 1 for k in ("dtype", "op")}
    labels_of = {}
    for r in ok:
        labels_of.setdefault(r.get("name") or "", set()).add(r.get("label", ""))

    def name(r):
        nm = r.get("name") or ""
        if nm and len(labels_of.get(nm, ())) <= 1:
            s = nm
        elif nm:
            s = nm + " " + r.get("label", "")
        else:
            s = r.get("label") or "/".join(text(r.get(k)) for k in VARIANT_KEYS)
        extra = [text(r.get(k)) for k in ("dtype", "op") if multi[k]]
        return s + (" [" + " ".join(extra) + "]" if extra else "")
    return name


def bandwidth(rows, ok, work, out, script):
    name = series_names(ok)
    # legend in the order the variants first appear (config order), failed cases included
    order = []
    for r in rows:
        s = name(r)
        if s not in order:
            order.append(s)
    best = {}  # (series, n) -> row with the smallest median
    for r in ok:
        if not isinstance(r.get("n"), (int, float)) or not isinstance(r.get("median_ms"), (int, float)):
            continue
        s = name(r)
        k = (s, r["n"])
        if k not in best or r["median_ms"] < best[k]["median_ms"]:
            best[k] = r
    if not best:
        die("no ok rows with n and median_ms to plot")
    peak = max((r.get("peak_gbps") or 0 for r in ok), default=0)
    devices = sorted({str(r.get("device", "")) for r in ok if r.get("device")})
    order = [s for s in order if any(ss == s for (ss, _) in best)]
    plots = []
    for i, s in enumerate(order):
        pts = sorted((n, r["gbps"]) for (ss, n), r in best.items() if ss == s)
        p = os.path.join(work, "bw%d.dat" % i)
        with open(p, "w") as f:
            for n, g in pts:
                f.write("%d %.6g\n" % (n, g))
        plots.append("%s using 1:2 with linespoints lc %d dt %d lw 1.5 pt %d ps 0.6 title %s"
                     % (gp_str(p), i % 8 + 1, i // 8 % 5 + 1, (5, 7, 9, 11, 13)[i // 8 % 5], gp_str(s)))
    if peak > 0:
        plots.append("%g with lines dt 2 lc rgb '#888888' title %s" % (peak, gp_str("peak %.0f GB/s" % peak)))
    ns = sorted({n for (_, n) in best})
    height = max(600, 14 * len(order) + 120)
    script.write("""
set terminal pngcairo enhanced size 1200,%d font "Sans,10"
set output %s
set title %s noenhanced
set xlabel "n (elements)"
set ylabel "GB/s (median time)"
set logscale x 2
set format x "2^{%%L}"
set xrange [%g:%g]
set yrange [0:*]
set grid
set key outside right top noenhanced font ",8"
plot %s
unset logscale x
set format x "%%g"
""" % (height, gp_str(os.path.join(out, "bandwidth.png")),
       gp_str("kforge: bandwidth" + (" on " + ", ".join(devices) if devices else "")),
       ns[0] / 1.5, ns[-1] * 1.5, ", \\\n     ".join(plots)))
    return os.path.join(out, "bandwidth.png")


def sort_values(vals):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return sorted(vals)
    return vals  # order of first appearance


def heat(ok, work, out, script, x, y, n):
    for k in (x, y):
        if not any(k in r for r in ok):
            die("--heat: no result has the key '%s' (keys: %s)" % (k, ", ".join(VARIANT_KEYS + ["name"])))
    sizes = sorted({r["n"] for r in ok if isinstance(r.get("n"), (int, float))})
    if n is None:
        n = sizes[-1]
    elif n not in sizes:
        die("--n %d: no ok result at that size (sizes: %s)" % (n, " ".join(str(s) for s in sizes)))
    cell = {}
    xs, ys = [], []
    for r in ok:
        if r.get("n") != n or not isinstance(r.get("median_ms"), (int, float)) or x not in r or y not in r:
            continue
        kx, ky = text(r[x]), text(r[y])
        if kx not in [text(v) for v in xs]:
            xs.append(r[x])
        if ky not in [text(v) for v in ys]:
            ys.append(r[y])
        if (kx, ky) not in cell or r["median_ms"] < cell[(kx, ky)]:
            cell[(kx, ky)] = r["median_ms"]
    if not cell:
        die("--heat %s,%s: nothing measured at n=%d" % (x, y, n))
    xs = [text(v) for v in sort_values(xs)]
    ys = [text(v) for v in sort_values(ys)]
    top = max(cell.values())
    unit, scale = ("us", 1e3) if top < 1 else ("ms", 1.0)
    p = os.path.join(work, "heat.dat")
    with open(p, "w") as f:
        for i, kx in enumerate(xs):
            for j, ky in enumerate(ys):
                if (kx, ky) in cell:
                    v = cell[(kx, ky)] * scale
                    f.write("%d %d %.6g \"%s\"\n" % (i, j, v, "%.3g" % v))
    best = min(cell.values()) * scale
    xt = ", ".join("%s %d" % (gp_str(v), i) for i, v in enumerate(xs))
    yt = ", ".join("%s %d" % (gp_str(v), j) for j, v in enumerate(ys))
    w = max(700, 90 * len(xs) + 260)
    h = max(500, 50 * len(ys) + 200)
    script.write("""
reset
set terminal pngcairo enhanced size %d,%d font "Sans,10"
set output %s
set title %s noenhanced
set xlabel %s noenhanced
set ylabel %s noenhanced
set xtics (%s) noenhanced%s
set ytics (%s) noenhanced
set xrange [-0.5:%g]
set yrange [-0.5:%g]
set cblabel %s
set palette defined (0 "#2c7bb6", 0.5 "#ffffbf", 1 "#d7191c")
set style fill solid 1.0 noborder
unset key
plot %s using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\
     %s using 1:2:4 with labels font ",9" textcolor rgb "black"
""" % (w, h, gp_str(os.path.join(out, "heat.png")),
       gp_str("kforge: median time (%s) at n = %d, min over other parameters; best %.3g %s"
              % ("µs" if unit == "us" else "ms", n, best, "µs" if unit == "us" else "ms")),
       gp_str(x), gp_str(y), xt, " rotate by -35 left" if max(len(v) for v in xs) > 10 else "", yt, len(xs) - 0.5, len(ys) - 0.5,
       gp_str("median time (%s)" % ("µs" if unit == "us" else "ms")), gp_str(p), gp_str(p)))
    return os.path.join(out, "heat.png")


def main():
    ap = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--heat")
    ap.add_argument("--n")
    ap.add_argument("--filter", action="append", default=[])
    a = ap.parse_args()

    heat_keys = None
    if a.heat is not None:
        parts = a.heat.split(",")
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            die("--heat: expected two different keys X,Y (for example block_size,elements_per_thread), got '%s'"
                % a.heat)
        heat_keys = parts
    n = None
    if a.n is not None:
        try:
            n = parse_size(a.n)
        except ValueError:
            die("--n: expected a size such as 1048576 or 2^20, got '%s'" % a.n)
    filters = []
    for f in a.filter:
        if "=" not in f or f.startswith("="):
            die("--filter: expected KEY=VALUE, got '%s'" % f)
        filters.append(f.split("=", 1))

    rows = load(a.results)
    if not rows:
        die("%s: no results" % a.results)
    for k, _ in filters:
        if not any(k.split(".")[0] in r for r in rows):
            die("--filter: no result has the key '%s'" % k)
    rows = [r for r in rows if all(matches(r, k, v) for k, v in filters)]
    if not rows:
        die("no result matches the filters %s" % " ".join(a.filter))
    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        die("no result with status ok%s" % (" among those the filters keep" if filters else ""))

    written = []
    with open(os.path.join(a.work, "plot.gp"), "w", encoding="utf-8") as script:
        written.append(bandwidth(rows, ok, a.work, a.out, script))
        if heat_keys is None and all(any(k in r for r in ok) for k in ("block_size", "elements_per_thread")):
            heat_keys = ["block_size", "elements_per_thread"]
        if heat_keys is not None:
            written.append(heat(ok, a.work, a.out, script, heat_keys[0], heat_keys[1], n))
    with open(os.path.join(a.work, "outputs"), "w") as f:
        f.write("\n".join(written) + "\n")


if __name__ == "__main__":
    main()
