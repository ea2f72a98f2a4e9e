#!/usr/bin/env python3
"""plot.py -- the data half of tools/plot.sh: reads a kforge results file
(JSON Lines, one case per line; keys as in report_json, src/results/report.c),
writes gnuplot data files and a gnuplot script into a work directory.
tools/plot.sh runs gnuplot on the script.

  plot.py RESULTS --work DIR --out OUTDIR [--heat X,Y] [--n N] [--filter KEY=VALUE]...
  plot.py RESULTS --print-data [--heat X,Y] [--n N] [--filter KEY=VALUE]...

Charts, one set per device (the "device" field; several devices are never
merged: each gets its own files, named after it):
  bandwidth.png  GB/s against n, one line per variant (its name, else the
                 parts of its label that tell it from the others), status "ok"
                 rows only.  At most 8 lines: with more variants, the best
                 variant of each algorithm (highest mean fraction of the best
                 GB/s at each n), the best 8 algorithms if there are more.
  heat.png       each cell's median time as a percentage of the best cell's
                 (100% = the fastest), over two parameters (--heat X,Y) at one
                 size (--n; default the largest measured), the minimum over
                 every other parameter.
  With several devices: bandwidth-DEVICE.png and heat-DEVICE.png.  With
  several problems (kernel, dtype, op): one heat map each,
  heat[-DEVICE]-KERNEL-DTYPE-OP.png.

Titles name the GPU, dtype and op (the heat map also the date of the
measurements).  An axis is logarithmic when its values span two decades or
more.  A case measured more than once (same device, variant and n: a rerun,
or two runs appended to one file) counts once, as its latest run (by the
"time" field, then the order of the file), whatever its status; a footnote
says how many repeats were set aside.

--print-data writes nothing and prints, for each chart, its file, title,
notes, axes and data (series points, heat cells): what tests check.

Exit status: 0, or 2 with a message on stderr (bad arguments, nothing to plot).
"""
import argparse
import json
import math
import os
import re
import sys
import textwrap

VARIANT_KEYS = ["dtype", "op", "algorithm", "block_size", "elements_per_thread", "unroll", "vector_width",
                "grid", "passes", "layout", "accumulator", "warp_reduce", "load"]
MAX_LINES = 8      # legend lines of the bandwidth chart (the peak line not counted)
LOG_SPAN = 100     # an axis whose max / min reaches this is logarithmic


def die(msg):
    print("plot: " + msg, file=sys.stderr)
    sys.exit(2)


def note(msg):
    print("plot: " + msg, file=sys.stderr)


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


def size_text(n):
    """1048576 -> 2^20; other sizes as they are."""
    n = int(n)
    if n > 0 and n & (n - 1) == 0 and n >= 1024:
        return "2^%d" % (n.bit_length() - 1)
    return str(n)


def text(v):
    """A value as one short word: grid objects as {"waves": 1} -> waves=1."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return ",".join("%s=%s" % (k, text(x)) for k, x in v.items())
    if isinstance(v, float) and v == int(v):
        return str(int(v))
    return str(v)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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
        note("%s: skipped %d unparseable line%s" % (path, bad, "" if bad == 1 else "s"))
    return rows


def gp_str(s):
    """A gnuplot double-quoted string (\\n stays a line break)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def plural(k, word):
    return "%d %s%s" % (k, word, "" if k == 1 else "s")


# ---------------------------------------------------------------------------
# Repeated cases, devices


def device_of(r):
    return str(r.get("device") or "unknown device")


def variant_key(r):
    """What makes a variant: its device, name and every parameter."""
    return (device_of(r), str(r.get("name") or "")) + tuple(text(r.get(k)) for k in VARIANT_KEYS)


def latest_only(rows):
    """One row per case (variant and n): its latest run's, by "time", then by
    the order of the file.  Returns the rows in file order, and per device the
    number of earlier runs set aside and of cases whose latest run is not ok
    while an earlier one was."""
    latest, had_ok = {}, set()
    for i, r in enumerate(rows):
        k = variant_key(r) + (text(r.get("n")),)
        if r.get("status") == "ok":
            had_ok.add(k)
        stamp = (str(r.get("time") or ""), i)
        if k not in latest or stamp >= latest[k][0]:
            latest[k] = (stamp, r)
    kept = [r for _, r in sorted(latest.values(), key=lambda v: v[0][1])]
    repeats, failed_latest = {}, {}
    for r in rows:
        repeats[device_of(r)] = repeats.get(device_of(r), 0) + 1
    for r in kept:
        repeats[device_of(r)] -= 1
    for k in had_ok:
        if latest[k][1].get("status") != "ok":
            failed_latest[k[0]] = failed_latest.get(k[0], 0) + 1
    return kept, repeats, failed_latest


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "device"


def repeat_notes(device, repeats, failed_latest):
    out = []
    k = repeats.get(device, 0)
    if k:
        out.append("%s of a case (same variant and n) set aside: the latest run of each is shown"
                   % plural(k, "earlier measurement"))
    k = failed_latest.get(device, 0)
    if k:
        out.append("%s not shown: the latest run failed" % plural(k, "case"))
    return out


def values_text(rows, key):
    vals = []
    for r in rows:
        v = text(r.get(key))
        if v not in vals:
            vals.append(v)
    return vals


def dtype_op(rows):
    """"float32 sum", or "float32, int32 sum" when the rows mix dtypes."""
    return "%s %s" % (", ".join(values_text(rows, "dtype")), ", ".join(values_text(rows, "op")))


def dates(rows):
    ds = sorted({str(r["time"])[:10] for r in rows if isinstance(r.get("time"), str) and len(r["time"]) >= 10})
    if not ds:
        return "date unknown"
    return ds[0] if len(ds) == 1 else "%s to %s" % (ds[0], ds[-1])


def footnote(notes, width_px):
    """The notes wrapped to the chart's width (font ",8": ~6 px a character),
    and the bottom margin (in character lines) they need under the x label."""
    lines = [w for n in notes for w in textwrap.wrap(n, max(40, width_px // 6 - 4))]
    return "\n".join(lines), 4 + len(lines)


def log_axis(vals):
    vals = [v for v in vals if v > 0]
    return bool(vals) and max(vals) / min(vals) >= LOG_SPAN


class Chart:
    """One PNG: what --print-data prints and what the gnuplot script draws."""

    def __init__(self, path, title):
        self.path, self.title, self.notes, self.lines = path, title, [], []

    def show(self):
        print("chart " + os.path.basename(self.path))
        print("  title: " + self.title.replace("\n", " / "))
        for n in self.notes:
            print("  note: " + n)
        for line in self.lines:
            print("  " + line)


# ---------------------------------------------------------------------------
# Bandwidth against n


def series_labels(series, multi_dtype_op):
    """Legend text per series: its name where that is unique among the shown
    series, else the label parts (bs256, ept4, ...) that not all of them share."""
    token_sets = [set(str(s["row"].get("label") or "").split("/")) for s in series]
    common = set.intersection(*token_sets) if token_sets else set()
    names = [str(s["row"].get("name") or "") for s in series]
    out = []
    for s, nm in zip(series, names):
        r = s["row"]
        parts = [t for t in str(r.get("label") or "").split("/") if t and t not in common]
        short = "/".join(parts) or (str(r.get("label") or "").split("/")[0]) or \
            "/".join(text(r.get(k)) for k in VARIANT_KEYS)
        if nm and names.count(nm) == 1:
            lab = nm
        elif nm:
            lab = nm + " " + short
        else:
            lab = short
        if multi_dtype_op:
            lab += " [%s %s]" % (text(r.get("dtype")), text(r.get("op")))
        out.append(lab)
    # still ambiguous (a name shared by variants that differ only in tokens all share): full labels
    dup = {lab for lab in out if out.count(lab) > 1}
    return [lab + " (" + str(s["row"].get("label") or "?") + ")" if lab in dup else lab
            for s, lab in zip(series, out)]


def bandwidth(ok, path, device, notes):
    series = {}  # variant key -> {"row": first row, "pts": {n: gbps}}
    order = []
    for r in ok:
        if not number(r.get("n")) or not number(r.get("gbps")) or not number(r.get("median_ms")):
            continue
        k = variant_key(r)
        if k not in series:
            series[k] = {"row": r, "pts": {}}
            order.append(k)
        series[k]["pts"][int(r["n"])] = float(r["gbps"])
    if not series:
        return None
    best_at = {}
    for k in order:
        for n, g in series[k]["pts"].items():
            best_at[n] = max(best_at.get(n, 0.0), g)
    for k in order:
        pts = series[k]["pts"]
        series[k]["score"] = sum(g / best_at[n] if best_at[n] > 0 else 0 for n, g in pts.items()) / len(pts)

    multi = len(values_text(ok, "dtype")) > 1 or len(values_text(ok, "op")) > 1
    shown = order
    chart_notes = list(notes)
    if len(order) > MAX_LINES:
        fam = {}
        for k in order:
            r = series[k]["row"]
            f = (text(r.get("algorithm")),) + ((text(r.get("dtype")), text(r.get("op"))) if multi else ())
            if f not in fam or series[k]["score"] > series[fam[f]]["score"]:
                fam[f] = k
        picked = sorted(fam.values(), key=lambda k: -series[k]["score"])[:MAX_LINES]
        shown = [k for k in order if k in picked]
        chart_notes.append("%d variants: the best of each algorithm is shown%s (%d of %d; best = highest mean "
                           "fraction of the top GB/s at each n)"
                           % (len(order), "" if len(fam) <= MAX_LINES else ", for the best %d algorithms"
                              % MAX_LINES, len(shown), len(order)))
    labels = series_labels([series[k] for k in shown], multi)

    ns = sorted({n for k in shown for n in series[k]["pts"]})
    gs = [g for k in shown for g in series[k]["pts"].values()]
    xlog, ylog = log_axis(ns), log_axis(gs)
    peak = max((r.get("peak_gbps") or 0 for r in ok if number(r.get("peak_gbps"))), default=0)
    c = Chart(path, "kforge: bandwidth against n, %s on %s" % (dtype_op([series[k]["row"] for k in shown]), device))
    c.notes = chart_notes
    c.lines.append("x: n, %s, %s..%s" % ("log" if xlog else "linear", size_text(ns[0]), size_text(ns[-1])))
    c.lines.append("y: GB/s, %s" % ("log" if ylog else "linear"))
    for k, lab in zip(shown, labels):
        pts = sorted(series[k]["pts"].items())
        c.lines.append("series %s | %s" % (lab, " ".join("%s=%.6g" % (size_text(n), g) for n, g in pts)))
    if peak > 0:
        c.lines.append("peak: %.0f GB/s" % peak)
    c.shown, c.labels, c.series, c.peak, c.xlog, c.ylog, c.ns, c.gs = shown, labels, series, peak, xlog, ylog, ns, gs
    return c


def bandwidth_script(c, work, idx, script):
    plots = []
    for i, (k, lab) in enumerate(zip(c.shown, c.labels)):
        p = os.path.join(work, "bw%d-%d.dat" % (idx, i))
        with open(p, "w") as f:
            for n, g in sorted(c.series[k]["pts"].items()):
                f.write("%d %.6g\n" % (n, g))
        plots.append("%s using 1:2 with linespoints lc %d lw 1.5 pt %d ps 0.7 title %s"
                     % (gp_str(p), i % 8 + 1, (7, 5, 9, 11, 13, 15, 4, 6)[i % 8], gp_str(lab)))
    if c.peak > 0:
        plots.append("%g with lines dt 2 lc rgb '#888888' title %s" % (c.peak, gp_str("peak %.0f GB/s" % c.peak)))
    lo, hi = c.ns[0], c.ns[-1]
    if c.xlog:
        xset = 'set logscale x 2\nset format x "2^{%%L}"\nset xrange [%g:%g]' % (lo / 1.5, hi * 1.5)
    else:
        pad = (hi - lo) * 0.05 or max(1, lo * 0.05)
        xset = 'set format x "%%.0f"\nset xrange [%g:%g]' % (lo - pad, hi + pad)
    if c.ylog:
        yset = "set logscale y 10\nset yrange [%g:%g]" % (min(g for g in c.gs if g > 0) / 1.5,
                                                          max(max(c.gs), c.peak) * 1.5)
    else:
        yset = "set yrange [0:*]"
    foot, nfoot = footnote(c.notes, 1200)
    script.write("""
reset
set terminal pngcairo enhanced size 1200,700 font "Sans,10"
set output %s
set title %s noenhanced
set label 1 %s at screen 0.01, screen %g font ",8" noenhanced
set bmargin %d
set xlabel "n (elements)"
set ylabel "GB/s (median time)"
%s
%s
set grid
set key outside right top noenhanced font ",9"
plot %s
""" % (gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / 700, nfoot, xset, yset,
       ", \\\n     ".join(plots)))


# ---------------------------------------------------------------------------
# Heat map in % of the best


def sort_values(vals):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return sorted(vals)
    return vals  # order of first appearance


def heat(ok, path, device, notes, x, y, n, n_given):
    sizes = sorted({int(r["n"]) for r in ok if number(r.get("n"))})
    if not sizes:
        return None
    if n is None:
        n = sizes[-1]
    elif n not in sizes:
        if n_given:
            note("%s: no ok result at n = %d, so no heat map (sizes: %s)"
                 % (device, n, " ".join(str(s) for s in sizes)))
        return None
    cell, where = {}, {}
    xs, ys = [], []
    used = []
    for r in ok:
        if r.get("n") != n or not number(r.get("median_ms")) or x not in r or y not in r:
            continue
        kx, ky = text(r[x]), text(r[y])
        if kx not in [text(v) for v in xs]:
            xs.append(r[x])
        if ky not in [text(v) for v in ys]:
            ys.append(r[y])
        used.append(r)
        if (kx, ky) not in cell or r["median_ms"] < cell[(kx, ky)]:
            cell[(kx, ky)] = r["median_ms"]
            where[(kx, ky)] = r
    if not cell or min(cell.values()) <= 0:
        if n_given:
            note("%s: nothing measured at n = %d with %s and %s" % (device, n, x, y))
        return None
    xs = [text(v) for v in sort_values(xs)]
    ys = [text(v) for v in sort_values(ys)]
    best = min(cell.values())
    bx, by = min(cell, key=lambda k: cell[k])
    br = where[(bx, by)]
    pct = {k: best / v * 100 for k, v in cell.items()}
    us = best < 1
    c = Chart(path, "kforge: median time in %% of the best at n = %s, %s\n%s, %s"
              % (size_text(n), dtype_op(used), device, dates(used)))
    c.notes = ["100%% = %.4g %s (%s = %s, %s = %s, %s); each cell is the fastest over the other parameters"
               % (best * 1e3 if us else best, "µs" if us else "ms", x, bx, y, by,
                  br.get("name") or br.get("label") or "?")] + list(notes)
    c.lines.append("x: %s: %s" % (x, " ".join(xs)))
    c.lines.append("y: %s: %s" % (y, " ".join(ys)))
    for kx in xs:
        for ky in ys:
            if (kx, ky) in cell:
                c.lines.append("cell %s=%s %s=%s: %.1f%% %.6g ms" % (x, kx, y, ky, pct[(kx, ky)], cell[(kx, ky)]))
    c.xs, c.ys, c.pct, c.x, c.y = xs, ys, pct, x, y
    return c


def heat_script(c, work, idx, script):
    p = os.path.join(work, "heat%d.dat" % idx)
    with open(p, "w") as f:
        for i, kx in enumerate(c.xs):
            for j, ky in enumerate(c.ys):
                if (kx, ky) in c.pct:
                    v = c.pct[(kx, ky)]
                    f.write("%d %d %.6g \"%s\"\n" % (i, j, v, "%.0f%%" % v if v < 99.95 else "100%"))
    lo = min(c.pct.values())
    xt = ", ".join("%s %d" % (gp_str(v), i) for i, v in enumerate(c.xs))
    yt = ", ".join("%s %d" % (gp_str(v), j) for j, v in enumerate(c.ys))
    w = max(760, 90 * len(c.xs) + 300)
    foot, nfoot = footnote(c.notes, w)
    h = max(560, 50 * len(c.ys) + 260) + 12 * nfoot
    script.write("""
reset
set terminal pngcairo enhanced size %d,%d font "Sans,10"
set output %s
set title %s noenhanced
set label 1 %s at screen 0.01, screen %g font ",8" noenhanced
set bmargin %d
set xlabel %s noenhanced
set ylabel %s noenhanced
set xtics (%s) noenhanced%s
set ytics (%s) noenhanced
set xrange [-0.5:%g]
set yrange [-0.5:%g]
set cbrange [%g:100]
set cblabel "%% of the best (median time)"
set palette defined (0 "#d7191c", 0.5 "#ffffbf", 1 "#1a9641")
set style fill solid 1.0 noborder
unset key
plot %s using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\
     %s using 1:2:4 with labels font ",9" textcolor rgb "black"
""" % (w, h, gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / h, nfoot, gp_str(c.x), gp_str(c.y), xt,
       " rotate by -35 left" if max(len(v) for v in c.xs) > 10 else "", yt, len(c.xs) - 0.5, len(c.ys) - 0.5,
       min(lo, 99.0), gp_str(p), gp_str(p)))


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--work")
    ap.add_argument("--out", default="kforge-plots")
    ap.add_argument("--heat")
    ap.add_argument("--n")
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--print-data", action="store_true")
    a = ap.parse_args()
    if not a.print_data and not a.work:
        die("--work DIR is needed unless --print-data is given")

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
    rows, repeats, failed_latest = latest_only(rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        die("no result with status ok%s" % (" among those the filters keep" if filters else ""))
    if heat_keys is not None:
        for k in heat_keys:
            if not any(k in r for r in ok):
                die("--heat: no result has the key '%s' (keys: %s)" % (k, ", ".join(VARIANT_KEYS + ["name"])))
    elif all(any(k in r for r in ok) for k in ("block_size", "elements_per_thread")):
        heat_keys = ["block_size", "elements_per_thread"]

    devices = []
    for r in ok:
        if device_of(r) not in devices:
            devices.append(device_of(r))
    charts = []
    for d in devices:
        suffix = "" if len(devices) == 1 else "-" + slug(d)
        dok = [r for r in ok if device_of(r) == d]
        notes = repeat_notes(d, repeats, failed_latest)
        c = bandwidth(dok, os.path.join(a.out, "bandwidth%s.png" % suffix), d, notes)
        if c:
            charts.append(("bw", c))
        if heat_keys is not None:
            # one heat map per problem (kernel, dtype, op): a percentage of
            # the best compares variants of one problem, never two problems
            problems = []
            for r in dok:
                pk = (text(r.get("kernel", "reduce")), text(r.get("dtype")), text(r.get("op")))
                if pk not in problems:
                    problems.append(pk)
            for pk in problems:
                rows = [r for r in dok if (text(r.get("kernel", "reduce")), text(r.get("dtype")), text(r.get("op"))) == pk]
                psuffix = "" if len(problems) == 1 else "-" + slug("-".join(pk))
                c = heat(rows, os.path.join(a.out, "heat%s%s.png" % (suffix, psuffix)), d, notes, heat_keys[0],
                         heat_keys[1], n, a.n is not None)
                if c:
                    charts.append(("heat", c))
    if not any(kind == "bw" for kind, _ in charts):
        die("no ok rows with n, gbps and median_ms to plot")
    if a.n is not None and heat_keys is not None and not any(kind == "heat" for kind, _ in charts):
        die("--n %s: no heat map could be drawn at that size" % a.n)

    if a.print_data:
        for _, c in charts:
            c.show()
        return
    with open(os.path.join(a.work, "plot.gp"), "w", encoding="utf-8") as script:
        for i, (kind, c) in enumerate(charts):
            (bandwidth_script if kind == "bw" else heat_script)(c, a.work, i, script)
    with open(os.path.join(a.work, "outputs"), "w") as f:
        f.write("\n".join(c.path for _, c in charts) + "\n")


if __name__ == "__main__":
    main()
