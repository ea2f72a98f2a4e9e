#!/usr/bin/env python3
"""plot.py -- the data half of tools/plot.sh: reads a kforge results file
(JSON Lines, one case per line; keys as in report_json, src/results/report.c),
writes gnuplot data files and a gnuplot script into a work directory.
tools/plot.sh runs gnuplot on the script.

  plot.py FILE... --work DIR --out OUTDIR [--chart LIST] [--heat X,Y] [--sweep X[,Y]] [--n N]
                   [--filter KEY=VALUE]...
  plot.py FILE... --print-data [...]

FILEs hold kforge results lines, baseline lines (JSON with "tool", "n",
"gbps", as tools/cub_bench.cu prints them; CSV with a tool,n,gbps header;
ROW lines of tools/rows_torch.py and rows_cub with one-row shapes) and
kforge tune --format jsonl output, in any mix; see tools/plot.sh --help.
compare.png, sweep.png and convergence.png are described there.

Any family: a results line names its family's parameters ("axes") and sizes
("sizes"), a custom kernel's too (lines written before those fields are the
built-in families': VARIANT_KEYS and n).  "n" below is the size of a family
of one (reduce); a family of several (transpose: width and height) has a
shape instead.

Charts, one set per device (the "device" field; several devices are never
merged: each gets its own files, named after it):
  bandwidth.png  GB/s against n, one line per variant (its name, else the
                 parts of its label that tell it from the others), status "ok"
                 rows only.  At most 8 lines: with more variants, the best
                 variant of each algorithm (highest mean fraction of the best
                 GB/s over every n, 0 where it has no ok result), the best 8
                 algorithms if there are more (a family without algorithms:
                 the best 8 variants).  Several sizes: against the one that
                 varies, else the bytes moved.  One chart per family
                 (kernel): bandwidth-KERNEL.png.
  heat.png       each cell's median time as a percentage of the best cell's
                 (100% = the fastest verified; 128% takes 1.28x as long),
                 over two parameters (--heat X,Y; default block_size,
                 elements_per_thread where both vary, else the two that vary
                 with the most values; none when that is one cell) at one
                 size or shape (--n 2^20, --n 1024x512, --n
                 width=1024,height=512; default the largest measured), the
                 minimum over every other parameter.  Rows
                 a tune abandoned (status "abandoned": the median of their
                 first repetitions) count here and in the sweep, with a note.
  With several devices: bandwidth-DEVICE.png and heat-DEVICE.png.  With
  several problems (kernel, dtype, op): one heat map each,
  heat[-DEVICE]-KERNEL-DTYPE-OP.png.

Titles name the GPU, dtype and op (a custom kernel: its name; the heat map
also the date of the measurements).  An axis is logarithmic when its values
span two decades or more.  A case measured more than once (same device,
variant and shape: a rerun, or two runs appended to one file) counts once, as
its latest run (by the "time" field, then the order of the file), whatever
its status; a footnote says how many repeats were set aside.

--print-data writes nothing and prints, for each chart, its file, title,
notes, axes and data (series points, heat cells): what tests check.

Exit status: 0, or 2 with a message on stderr (bad arguments, nothing to
plot: one variant at one size compares nothing).
"""
import argparse
import json
import math
import os
import re
import sys
import textwrap

# A results line names its family's parameters ("axes") and sizes ("sizes"):
# any family, a custom kernel's too.  Lines written before those fields were
# the built-in families': their parameters and sizes are these.
VARIANT_KEYS = ["dtype", "op", "acc_dtype", "algorithm", "block_size", "elements_per_thread", "unroll",
                "vector_width", "grid", "passes", "layout", "accumulator", "warp_reduce", "load"]
BUILTIN_SIZES = {"reduce": ["n"], "reduce_rows": ["rows", "cols", "row_stride"]}
HEAT_DEFAULT = ["block_size", "elements_per_thread"]
MAX_LINES = 8      # legend lines of the bandwidth chart (the peak line not counted)
LOG_SPAN = 100     # an axis whose max / min reaches this is logarithmic
HEAT_CEIL = 125.0  # the heat map's colour scale runs from 100% (the best) to max(worst cell, this): a
                   # spread of a few percent stays nearly one colour instead of running from green to red


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


def parse_shape(s):
    """--n: a size (2^20), a shape (1024x512: the sizes in the family's
    order) or sizes by name (width=1024,height=512).  A tuple of ints or a
    dict; ValueError when it is none of these."""
    s = s.strip()
    if "=" in s:
        want = {}
        for part in s.split(","):
            k, _, v = part.partition("=")
            k = k.strip()
            if not k or k in want:
                raise ValueError(s)
            want[k] = parse_size(v)
        return want
    return tuple(parse_size(p) for p in s.split("x"))


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


BASELINE_CSV_KEYS = ("tool", "n", "gbps")


def tool_label(tool, version=None):
    """cub -> "CUB 3.0.1"; torch2.11.0 or pytorch -> "PyTorch 2.11.0"; others as they are."""
    t = str(tool)
    m = re.fullmatch(r"(?i)(py)?torch[- ]?v?([0-9][\w.]*)?", t)
    if m:
        v = version or m.group(2)
        return "PyTorch" + (" " + str(v) if v else "")
    m = re.fullmatch(r"(?i)cub([- ].*)?", t)
    if m:
        rest = (m.group(1) or "").strip(" -")
        return "CUB" + (" " + str(version) if version else "") + (" (" + rest + ")" if rest else "")
    return t + (" " + str(version) if version else "")


def baseline_point(d, path):
    """A baseline measurement as {tool, n, gbps, status, dtype?, op?, device?}, or None."""
    try:
        n = d["n"] if number(d.get("n")) else parse_size(str(d["n"]))
        g = float(d["gbps"])
    except (KeyError, ValueError, TypeError):
        return None
    if not math.isfinite(g) or n <= 0:
        return None
    b = {"tool": str(d.get("label") or tool_label(d["tool"], d.get("version") or d.get("cub_version"))),
         "n": int(n), "gbps": g, "status": str(d.get("status") or "ok"), "file": path}
    for k in ("dtype", "op", "device", "time"):
        if d.get(k) not in (None, ""):
            b[k] = str(d[k])
    return b


def row_line(line):
    """A "ROW shape=RxC ... impl=I status=PASS gbps=G" line of tools/rows_torch.py,
    tools/rows_cub.cu or tools/rows_proto.cu: a baseline point when the shape
    is one row (a full reduction of cols elements)."""
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    m = re.fullmatch(r"(\d+)x(\d+)", f.get("shape", ""))
    if not m or "impl" not in f:
        return None, False
    if int(m.group(1)) != 1:
        return None, True  # a row-wise shape: not a full reduction
    d = {"tool": f["impl"], "n": int(m.group(2)), "gbps": f.get("gbps", "nan"),
         "status": "ok" if f.get("status") == "PASS" else f.get("status", "?"),
         "dtype": f.get("dtype"), "op": f.get("op")}
    return d, False


def load(path):
    """One input file: kforge results lines, baseline lines (JSON with "tool",
    CSV with a tool,n,gbps header, ROW lines) and tune summary events
    (kforge tune --format jsonl).  Returns (results, baselines, events)."""
    rows, base, events, bad, multirow = [], [], [], 0, 0
    header = None
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    with f:
        for line in f:
            t = line.strip()
            if not t or t.startswith("#"):
                continue
            if t.startswith("{"):
                try:
                    d = json.loads(t)
                except ValueError:
                    bad += 1  # a line cut short by a crash: kforge skips these too
                    continue
                if not isinstance(d, dict):
                    continue
                if "event" in d:
                    d["_file"] = path
                    events.append(d)
                elif "tool" in d and "kforge" not in d:
                    b = baseline_point(d, path)
                    if b:
                        base.append(b)
                    else:
                        bad += 1
                else:
                    d["_file"] = path
                    rows.append(d)
            elif t.startswith("ROW "):
                d, rowwise = row_line(t)
                if rowwise:
                    multirow += 1
                b = baseline_point(d, path) if d else None
                if b:
                    base.append(b)
                elif not rowwise:
                    bad += 1
            elif header is None and all(k in [x.strip() for x in t.split(",")] for k in BASELINE_CSV_KEYS):
                header = [x.strip() for x in t.split(",")]
            elif header is not None:
                vals = [x.strip() for x in t.split(",")]
                b = baseline_point(dict(zip(header, vals)), path) if len(vals) == len(header) else None
                if b:
                    base.append(b)
                else:
                    bad += 1
            else:
                bad += 1
    if bad:
        note("%s: skipped %d unparseable line%s" % (path, bad, "" if bad == 1 else "s"))
    if multirow:
        note("%s: %s of row-wise shapes set aside (only one-row shapes are full reductions)"
             % (path, plural(multirow, "ROW line")))
    return rows, base, events


def gp_str(s):
    """A gnuplot double-quoted string (\\n stays a line break)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def plural(k, word):
    return "%d %s%s" % (k, word, "" if k == 1 else "s")


# ---------------------------------------------------------------------------
# Repeated cases, devices


def kernel_of(r):
    """r's family; a line written before the field is reduce's."""
    return text(r.get("kernel", "reduce"))


def kernels_of(rows):
    out = []
    for r in rows:
        if kernel_of(r) not in out:
            out.append(kernel_of(r))
    return out


def device_of(r):
    return str(r.get("device") or "unknown device")


def listed(r, key):
    v = r.get(key)
    if isinstance(v, list) and v and all(isinstance(k, str) for k in v):
        return v
    return None


def axes_of(r):
    """The parameters of r's family: the line's "axes", else the built-in
    families' (a line written before it)."""
    return listed(r, "axes") or VARIANT_KEYS


def sizes_of(r):
    """The sizes of r's family (["n"], ["width", "height"]): the line's
    "sizes", else the built-in family's (a line written before it)."""
    return listed(r, "sizes") or \
        [k for k in BUILTIN_SIZES.get(kernel_of(r), ["n"]) if k in r] or ["n"]


def shape_of(r):
    """r's shape: the values of its sizes, a tuple of ints (None when one is missing)."""
    vals = []
    for k in sizes_of(r):
        if not number(r.get(k)):
            return None
        vals.append(int(r[k]))
    return tuple(vals)


def shape_label(names, shape):
    """n = 2^20; width = 1024, height = 512."""
    return ", ".join("%s = %s" % (k, size_text(v)) for k, v in zip(names, shape))


def shape_order(shape):
    """Shapes by elements, then size by size: the last is "the largest"."""
    return (math.prod(shape), shape)


def shapes_text(shapes):
    """1024x512 2048x512"""
    return " ".join("x".join(str(v) for v in sh) for sh in shapes)


def pick_shape(rows, want):
    """The shape a chart of one shape (heat map, sweep) is drawn at, from rows
    of one family: want's (--n, parse_shape), else the largest measured.
    Returns (names, shape, why): shape None, and why (None when nothing was
    measured) if no shape, or more than one, matches want."""
    names = sizes_of(rows[0]) if rows else ["n"]
    shapes = sorted({shape_of(r) for r in rows if shape_of(r) is not None}, key=shape_order)
    if not shapes:
        return names, None, None
    if want is None:
        return names, shapes[-1], None
    if isinstance(want, dict):
        hit = [s for s in shapes if all(k in names and s[names.index(k)] == v for k, v in want.items())]
        asked = ", ".join("%s = %s" % (k, size_text(v)) for k, v in want.items())
    else:
        hit = [s for s in shapes if s == want]
        asked = shape_label(names, want) if len(want) == len(names) else "x".join(size_text(v) for v in want)
    if len(hit) == 1:
        return names, hit[0], None
    if hit:
        return names, None, "%s matches %d shapes (%s): name every size" % (asked, len(hit), shapes_text(hit))
    return names, None, "no ok result at %s (%s: %s)" % (asked, "sizes" if len(names) == 1 else "shapes",
                                                         shapes_text(shapes))


def variant_key(r):
    """What makes a variant: its device, family, name and every parameter."""
    return (device_of(r), kernel_of(r), str(r.get("name") or "")) + \
        tuple(sorted((k, text(r.get(k))) for k in axes_of(r)))


def latest_only(rows):
    """One row per case (variant and n): its latest run's, by "time", then by
    the order of the file.  Returns the rows in file order, and per device the
    number of earlier runs set aside and of cases whose latest run is not ok
    while an earlier one was."""
    latest, had_ok = {}, set()
    for i, r in enumerate(rows):
        k = variant_key(r) + (text(shape_of(r)),)
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


def repeat_notes(device, repeats, failed_latest, size_word):
    out = []
    k = repeats.get(device, 0)
    if k:
        out.append("%s of a case (same variant and %s) set aside: the latest run of each is shown"
                   % (plural(k, "earlier measurement"), size_word))
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
    """"float32 sum", or "float32, int32 sum" when the rows mix dtypes; for
    a family without dtype and op (a custom kernel), its name: "transpose".
    Rows of several families (never drawn together; a title of something
    else) name each: "reduce float32 sum, vector_add"."""
    kernels = kernels_of(rows)
    if len(kernels) > 1:
        parts = [(k, dtype_op([r for r in rows if kernel_of(r) == k])) for k in kernels]
        return ", ".join(d if d == k else k + " " + d for k, d in parts)
    typed = [r for r in rows if "dtype" in r or "op" in r]
    if not typed:
        return ", ".join(kernels)
    return "%s %s" % (", ".join(values_text(typed, "dtype")), ", ".join(values_text(typed, "op")))


def problem_of(r):
    """What a chart's percentages or bars compare within: kernel, dtype, op
    (a family without dtype and op, a custom kernel, by its name alone)."""
    return (kernel_of(r), text(r["dtype"]) if "dtype" in r else "",
            text(r["op"]) if "op" in r else "")


def varying_axes(rows):
    """The parameters whose values differ among rows (of one family), most values first."""
    axes = axes_of(rows[0]) if rows else []
    vary = [k for k in axes if len(values_text(rows, k)) > 1]
    return sorted(vary, key=lambda k: (-len(values_text(rows, k)), axes.index(k)))


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
            "/".join(text(r.get(k)) for k in axes_of(r))
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


def size_axis(rows):
    """The x axis of GB/s against size, for rows whose family has the same
    sizes: the size (n) of a family of one; of several, the one that varies
    (the rest named in a note), or when more than one varies the bytes a run
    moves (GB/s x median time).  Returns (title, x(r), note or None)."""
    names = sizes_of(rows[0])
    if len(names) == 1:
        return names[0], lambda r: shape_of(r)[0], None
    shapes = sorted({shape_of(r) for r in rows if shape_of(r) is not None}, key=shape_order)
    vary = [i for i in range(len(names)) if len({sh[i] for sh in shapes}) > 1]
    if len(vary) <= 1 and shapes:
        i = vary[0] if vary else 0
        fixed = [shape_label([names[j]], [shapes[0][j]]) for j in range(len(names)) if j != i]
        return names[i], lambda r: shape_of(r)[i], "%s in every case" % ", ".join(fixed)
    return "bytes moved", lambda r: int(round(float(r["gbps"]) * float(r["median_ms"]) * 1e6)), \
        "x: the bytes a run moves (GB/s x median time), as the shapes differ in more than one of %s" % ", ".join(names)


def bandwidth(ok, path, device, notes):
    rows = [r for r in ok if shape_of(r) is not None and number(r.get("gbps")) and number(r.get("median_ms"))]
    if not rows:
        return None
    xname, xof, xnote = size_axis(rows)
    xword = "size" if xname == "bytes moved" else xname
    series = {}  # variant key -> {"row": first row, "pts": {x: gbps}}
    order = []
    shared = 0   # cases at the x of another shape of their variant (several sizes: the same bytes)
    for r in rows:
        k = variant_key(r)
        if k not in series:
            series[k] = {"row": r, "pts": {}, "shape": {}}
            order.append(k)
        x, g, sh = xof(r), float(r["gbps"]), shape_of(r)
        pts = series[k]["pts"]
        if x in pts and series[k]["shape"][x] != sh:
            shared += 1
            if g <= pts[x]:
                continue
        pts[x] = g
        series[k]["shape"][x] = sh
    # a variant's score: its mean fraction of its problem's (dtype, op) top
    # GB/s over every size of the chart, a size it has no ok result at
    # (abandoned, failed, not run) counting 0, so one that is best at the one
    # size it reached never outranks one that is best at every size
    best_at = {}
    for k in order:
        pk = problem_of(series[k]["row"])
        for n, g in series[k]["pts"].items():
            best_at[(pk, n)] = max(best_at.get((pk, n), 0.0), g)
    nsizes = len({n for _, n in best_at})
    for k in order:
        pts, pk = series[k]["pts"], problem_of(series[k]["row"])
        series[k]["score"] = sum(g / best_at[(pk, n)] for n, g in pts.items() if best_at[(pk, n)] > 0) / nsizes

    multi = len(values_text(ok, "dtype")) > 1 or len(values_text(ok, "op")) > 1
    shown = order
    chart_notes = list(notes)
    if xnote:
        chart_notes.append(xnote)
    if shared:
        chart_notes.append("%s moved as many bytes as another shape of their variant: the faster is shown"
                           % plural(shared, "case"))
    if len(order) > MAX_LINES and not any("algorithm" in axes_of(series[k]["row"]) for k in order):
        # a family without algorithms (a custom kernel): the best variants
        picked = sorted(order, key=lambda k: -series[k]["score"])[:MAX_LINES]
        shown = [k for k in order if k in picked]
        chart_notes.append("%d variants: the best %d are shown (best = highest mean fraction of the top GB/s "
                           "over every %s, 0 where it has no ok result)" % (len(order), MAX_LINES, xword))
    elif len(order) > MAX_LINES:
        fam = {}
        for k in order:
            r = series[k]["row"]
            f = (text(r.get("algorithm")),) + ((text(r.get("dtype")), text(r.get("op"))) if multi else ())
            if f not in fam or series[k]["score"] > series[fam[f]]["score"]:
                fam[f] = k
        picked = sorted(fam.values(), key=lambda k: -series[k]["score"])[:MAX_LINES]
        shown = [k for k in order if k in picked]
        chart_notes.append("%d variants: the best of each algorithm is shown%s (%d of %d; best = highest mean "
                           "fraction of the top GB/s over every %s, 0 where it has no ok result)"
                           % (len(order), "" if len(fam) <= MAX_LINES else ", for the best %d algorithms"
                              % MAX_LINES, len(shown), len(order), xword))
    labels = series_labels([series[k] for k in shown], multi)

    ns = sorted({n for k in shown for n in series[k]["pts"]})
    gs = [g for k in shown for g in series[k]["pts"].values()]
    xlog, ylog = log_axis(ns), log_axis(gs)
    peak = max((r.get("peak_gbps") or 0 for r in ok if number(r.get("peak_gbps"))), default=0)
    c = Chart(path, "kforge: bandwidth against %s, %s on %s" % (xname, dtype_op([series[k]["row"] for k in shown]),
                                                                device))
    c.notes = chart_notes
    c.lines.append("x: %s, %s, %s..%s" % (xname, "log" if xlog else "linear", size_text(ns[0]), size_text(ns[-1])))
    c.lines.append("y: GB/s, %s" % ("log" if ylog else "linear"))
    for k, lab in zip(shown, labels):
        pts = sorted(series[k]["pts"].items())
        c.lines.append("series %s | %s" % (lab, " ".join("%s=%.6g" % (size_text(n), g) for n, g in pts)))
    if peak > 0:
        c.lines.append("peak: %.0f GB/s" % peak)
    c.shown, c.labels, c.series, c.peak, c.xlog, c.ylog, c.ns, c.gs = shown, labels, series, peak, xlog, ylog, ns, gs
    c.xlabel = "n (elements)" if xname == "n" else xname
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
        # headroom over the highest line and the peak, so neither runs under the legend's top
        yset = "set yrange [0:%g]" % (max(max(c.gs), c.peak) * 1.08)
    foot, nfoot = footnote(c.notes, 1200)
    script.write("""
reset
set terminal pngcairo enhanced size 1200,700 font "Sans,10"
set output %s
set title %s noenhanced
set label 1 %s at screen 0.01, screen %g font ",8" noenhanced
set bmargin %d
set xlabel %s noenhanced
set ylabel "GB/s (median time)"
%s
%s
set grid
set key inside left top opaque box noenhanced font ",9" samplen 2 spacing 1.1 width 1
plot %s
""" % (gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / 700, nfoot, gp_str(c.xlabel), xset, yset,
       ", \\\n     ".join(plots)))


# ---------------------------------------------------------------------------
# Heat map in % of the best


def sort_values(vals):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return sorted(vals)
    return vals  # order of first appearance


def heat(ok, path, device, notes, x, y, names, shape):
    """The heat map of ok (one problem) at shape, over x and y (None: block_size
    by elements_per_thread where both vary there, else the two parameters that
    vary with the most values).  Each cell's median time in % of the best
    cell's: 100% the best, 128% a cell that takes 1.28x as long.  The best is
    a verified (ok) measurement; an abandoned candidate's first repetitions
    fill a cell that has no ok one.  None, with a note, where no map says
    anything (fewer than two parameters vary, or one cell)."""
    at = [r for r in ok if shape_of(r) == shape]
    where_text = shape_label(names, shape)
    if x is None:
        vary = varying_axes([r for r in at if number(r.get("median_ms"))])
        if len(vary) < 2:
            note("%s: no heat map at %s: %s" % (device, where_text,
                                                 "only %s varies there" % vary[0] if vary else
                                                 "one variant only, nothing varies there"))
            return None
        x, y = HEAT_DEFAULT if all(k in vary for k in HEAT_DEFAULT) else vary[:2]
    cell, where, is_ok = {}, {}, {}
    xs, ys = [], []
    used = []
    for r in at:
        if not number(r.get("median_ms")) or x not in r or y not in r:
            continue
        kx, ky = text(r[x]), text(r[y])
        if kx not in [text(v) for v in xs]:
            xs.append(r[x])
        if ky not in [text(v) for v in ys]:
            ys.append(r[y])
        used.append(r)
        k, rok = (kx, ky), r.get("status") == "ok"
        # an ok measurement takes the cell from an abandoned one; of two alike, the faster (ties: the first)
        if k not in cell or (rok and not is_ok[k]) or (rok == is_ok[k] and r["median_ms"] < cell[k]):
            cell[k], where[k], is_ok[k] = r["median_ms"], r, rok
    if not cell or min(cell.values()) <= 0:
        note("%s: nothing measured at %s with %s and %s: no heat map" % (device, where_text, x, y))
        return None
    if len(cell) == 1:
        note("%s: no heat map at %s: %s and %s have one value each there (one cell says nothing)"
             % (device, where_text, x, y))
        return None
    xs = [text(v) for v in sort_values(xs)]
    ys = [text(v) for v in sort_values(ys)]
    oks = [k for k in cell if is_ok[k]] or list(cell)
    bx, by = min(oks, key=lambda k: cell[k])
    best = cell[(bx, by)]
    br = where[(bx, by)]
    ties = [r for r in used if r is not br and r.get("status") == "ok" and r["median_ms"] == best]
    pct = {k: v / best * 100 for k, v in cell.items()}
    us = best < 1
    c = Chart(path, "kforge: median time in %% of the best at %s, %s\n%s, %s"
              % (where_text, dtype_op(used), device, dates(used)))
    c.notes = ["100%% = %.4g %s (%s = %s, %s = %s, %s%s); a cell at 128%% takes 1.28x as long; each cell is the "
               "fastest over the other parameters"
               % (best * 1e3 if us else best, "µs" if us else "ms", x, bx, y, by,
                  br.get("name") or br.get("label") or "?",
                  ", and %s as fast" % plural(len(ties), "other variant") if ties else "")] + list(notes)
    c.lines.append("x: %s: %s" % (x, " ".join(xs)))
    c.lines.append("y: %s: %s" % (y, " ".join(ys)))
    for kx in xs:
        for ky in ys:
            if (kx, ky) in cell:
                c.lines.append("cell %s=%s %s=%s: %.1f%% %.6g ms" % (x, kx, y, ky, pct[(kx, ky)], cell[(kx, ky)]))
    c.cb_lo = min(100.0, min(pct.values()))
    c.cb_hi = max(max(pct.values()), HEAT_CEIL)
    c.lines.append("colour: %.0f%%..%.0f%% (to the worst cell or %.0f%%, whichever is higher)"
                   % (c.cb_lo, c.cb_hi, HEAT_CEIL))
    c.lines.append("best: %s=%s %s=%s (marked)" % (x, bx, y, by))
    c.xs, c.ys, c.pct, c.x, c.y, c.best = xs, ys, pct, x, y, (bx, by)
    return c


def heat_script(c, work, idx, script):
    p = os.path.join(work, "heat%d.dat" % idx)
    hi = max(c.pct.values())
    # whole percents, or tenths when every cell is within 5% of the best (else they would all read 100-105%)
    fmt = "%.1f%%" if hi <= 105 else "%.0f%%"
    with open(p, "w") as f:
        for i, kx in enumerate(c.xs):
            for j, ky in enumerate(c.ys):
                if (kx, ky) in c.pct:
                    v = c.pct[(kx, ky)]
                    lab = "best " + fmt % v if (kx, ky) == c.best else fmt % v
                    f.write("%d %d %.6g \"%s\"\n" % (i, j, v, lab))
    pb = os.path.join(work, "heat%d-best.dat" % idx)
    with open(pb, "w") as f:
        f.write("%d %d\n" % (c.xs.index(c.best[0]), c.ys.index(c.best[1])))
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
set cbrange [%g:%g]
set cblabel "median time in %% of the best (lower is better)"
set palette defined (0 "#1a9641", 0.5 "#ffffbf", 1 "#d7191c")
set style fill solid 1.0 noborder
unset key
plot %s using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\
     %s using 1:2:(0.47):(0.47) with boxxyerror lc rgb "black" lw 3 fs empty, \\
     %s using 1:2:4 with labels font ",9" textcolor rgb "black"
""" % (w, h, gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / h, nfoot, gp_str(c.x), gp_str(c.y), xt,
       " rotate by -35 left" if max(len(v) for v in c.xs) > 10 else "", yt, len(c.xs) - 0.5, len(c.ys) - 0.5,
       c.cb_lo, c.cb_hi, gp_str(p), gp_str(pb), gp_str(p)))


# ---------------------------------------------------------------------------
# kforge against the baselines (CUB, PyTorch, ...)


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])


def compare(ok, base, path, device, problem, notes):
    """kforge's fastest variant at each n against each baseline tool's median
    GB/s at each n.  ok: kforge rows of one device and problem (dtype, op);
    base: the baseline points that belong to them."""
    kf = {}
    for r in ok:
        sh = shape_of(r)
        if sh is not None and len(sh) == 1 and number(r.get("gbps")):
            n = sh[0]
            if n not in kf or r["gbps"] > kf[n][0]:
                kf[n] = (float(r["gbps"]), str(r.get("name") or r.get("label") or "?"))
    tools = {}
    failed = 0
    for b in base:
        if b["status"] != "ok":
            failed += 1
            continue
        tools.setdefault(b["tool"], {}).setdefault(b["n"], []).append(b["gbps"])
    if not kf or not tools:
        return None
    series = [("kforge", {n: g for n, (g, _) in kf.items()})]
    reps = 1
    for t in sorted(tools):
        series.append((t, {n: median(v) for n, v in tools[t].items()}))
        reps = max(reps, max(len(v) for v in tools[t].values()))
    c = Chart(path, "kforge against %s: %s on %s" % (", ".join(t for t, _ in series[1:]), problem, device))
    c.notes = ["kforge: the fastest variant measured at each n (as a per-size dispatch would pick it)"]
    if reps > 1:
        c.notes.append("baselines: the median of their measurements at each n (up to %d)" % reps)
    if failed:
        c.notes.append("%s of the baselines set aside: not ok" % plural(failed, "measurement"))
    ratios = [kf[n][0] / max(pts[n] for _, pts in series[1:] if n in pts)
              for n in kf if any(n in pts for _, pts in series[1:])]
    if ratios:
        c.notes.append("kforge / best baseline: %.2fx to %.2fx over %s" % (min(ratios), max(ratios),
                                                                         plural(len(ratios), "size")))
    c.notes += list(notes)
    ns = sorted({n for _, pts in series for n in pts})
    gs = [g for _, pts in series for g in pts.values()]
    c.xlog, c.ylog = log_axis(ns), log_axis(gs)
    c.lines.append("x: n, %s, %s..%s" % ("log" if c.xlog else "linear", size_text(ns[0]), size_text(ns[-1])))
    c.lines.append("y: GB/s, %s" % ("log" if c.ylog else "linear"))
    for lab, pts in series:
        c.lines.append("series %s | %s" % (lab, " ".join("%s=%.6g" % (size_text(n), g) for n, g in sorted(pts.items()))))
    c.lines.append("kforge variants: %s" % " ".join("%s=%s" % (size_text(n), kf[n][1]) for n in sorted(kf)))
    peak = max((r.get("peak_gbps") or 0 for r in ok if number(r.get("peak_gbps"))), default=0)
    # the same drawing as the bandwidth chart: series, labels, points
    c.shown = list(range(len(series)))
    c.labels = [lab for lab, _ in series]
    c.series = {i: {"pts": pts} for i, (_, pts) in enumerate(series)}
    c.peak, c.ns, c.gs, c.xlabel = peak, ns, gs, "n (elements)"
    return c


# ---------------------------------------------------------------------------
# A one-size sweep: bars by variant, grouped by the axis that varies


MAX_BARS = 8  # bars per group (legend lines)


def sweep(ok, path, device, notes, names, shape, axes):
    """GB/s at one shape: a group of bars per value of the group axis, a bar
    per value of the bar axis, each the fastest variant over every other
    parameter.  axes: None (the varying axes with the most values), [X] or
    [X, Y]."""
    at = [r for r in ok if shape_of(r) == shape and number(r.get("gbps"))]
    if not at:
        return None
    params = axes_of(at[0])
    varying = [k for k in params if len(values_text(at, k)) > 1]
    for k in axes or []:
        if k not in varying:
            note("%s: %s does not vary at %s (varying: %s)" % (device, k, shape_label(names, shape),
                                                              ", ".join(varying) or "none"))
            return None
    by_count = sorted(varying, key=lambda k: (-len(values_text(at, k)), varying.index(k)))
    if axes:
        group = axes[0]
        bar = axes[1] if len(axes) > 1 else next((k for k in by_count if k != group), None)
    elif varying:
        group = by_count[0]
        bar = by_count[1] if len(by_count) > 1 else None
    else:
        return None
    rest = [k for k in varying if k not in (group, bar)]

    def ordered(key):
        return [text(v) for v in sort_values(list({text(r[key]): r[key] for r in at if key in r}.values()))]

    gvals = ordered(group)
    bars, who = {}, {}  # bar value -> {group value: gbps}, and the variant behind it
    for r in at:
        b = text(r.get(bar)) if bar else "GB/s"
        g = text(r.get(group))
        cur = bars.setdefault(b, {})
        if r["gbps"] > cur.get(g, -1.0):
            cur[g] = float(r["gbps"])
            who[(b, g)] = r
    combos = ordered(bar) if bar else ["GB/s"]
    chart_notes = []
    if rest:
        chart_notes.append("each bar is the fastest variant over %s" % ", ".join(rest))
    if len(combos) > MAX_BARS:
        best = sorted(combos, key=lambda k: -max(bars[k].values()))[:MAX_BARS]
        chart_notes.append("%d values of %s: the %d with the highest GB/s are shown" % (len(combos), bar, MAX_BARS))
        combos = [k for k in combos if k in best]
    same = [k for k in params if k not in varying and k in at[0] and k not in ("dtype", "op")]
    c = Chart(path, "kforge: GB/s at %s by %s%s, %s on %s" % (shape_label(names, shape), group,
                                                            " and " + bar if bar else "", dtype_op(at), device))
    if same:
        chart_notes.append("same in every bar: " + " ".join("%s=%s" % (k, text(at[0].get(k))) for k in same))
    c.notes = chart_notes + list(notes)
    c.lines.append("x: %s: %s" % (group, " ".join(gvals)))
    if bar:
        c.lines.append("bars: %s" % bar)
    for k in combos:
        c.lines.append("bars %s | %s" % (("%s=%s" % (bar, k)) if bar else k,
                                         " ".join("%s=%.6g" % (g, bars[k][g]) for g in gvals if g in bars[k])))
    c.group, c.gvals, c.bars = group, gvals, bars
    c.combos, c.legend = combos, ["%s=%s" % (bar, k) for k in combos] if bar else []
    return c


def sweep_script(c, work, idx, script):
    p = os.path.join(work, "sweep%d.dat" % idx)
    with open(p, "w") as f:
        for g in c.gvals:
            f.write("%s %s\n" % (gp_str(g), " ".join("%.6g" % c.bars[k][g] if g in c.bars[k] else "?"
                                                     for k in c.combos)))
    plots = []
    for i, k in enumerate(c.combos):
        plots.append("%s using %d%s lc %d %s" % (gp_str(p) if i == 0 else "''", i + 2,
                                                 ":xtic(1)" if i == 0 else "", i % 8 + 1,
                                                 "title " + gp_str(c.legend[i]) if c.legend else "notitle"))
    w = min(1800, max(900, 22 * len(c.gvals) * (len(c.combos) + 1) + 300))
    rot = " rotate by -30 left" if max(len(g) for g in c.gvals) * len(c.gvals) * 7 > w - 300 else ""
    foot, nfoot = footnote(c.notes, w)
    top = max(max(v.values()) for v in c.bars.values())
    script.write("""
reset
set terminal pngcairo enhanced size %d,650 font "Sans,10"
set output %s
set title %s noenhanced
set label 1 %s at screen 0.01, screen %g font ",8" noenhanced
set bmargin %d
set xlabel %s noenhanced
set ylabel "GB/s (median time)"
set xtics noenhanced%s
set yrange [0:%g]
set grid ytics
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
%s
plot %s
""" % (w, gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / 650, nfoot + (int(max(len(g) for g in c.gvals) * 3.5 / 12) + 1 if rot else 0),
       gp_str(c.group), rot, top * (1.12 + 0.045 * len(c.legend)),
       'set key inside left top opaque box noenhanced font ",9" samplen 2 width 1' if c.legend else "unset key",
       ", \\\n     ".join(plots)))


# ---------------------------------------------------------------------------
# The search's convergence: best so far against candidates evaluated


def runs_from_events(events, multi_file):
    """kforge tune --format jsonl output: "improvement" events, then a
    "summary" that names the strategy and seed and counts the evaluations."""
    runs, cur = [], []
    for e in events:
        if e.get("event") == "improvement":
            cur.append(e)
        elif e.get("event") == "summary":
            key = next((k for k in e.get("best", {}) if k.startswith("objective")), None) or \
                next((k for i in cur for k in i if k.startswith("objective")), "objective_ms")
            pts = [(int(i["evaluation"]), float(i[key])) for i in cur if number(i.get(key)) and number(i.get("evaluation"))]
            lab = "%s seed %s" % (e.get("strategy", "?"), e.get("seed", "?"))
            if e.get("simulated"):
                lab += " (simulated)"
            if multi_file:
                lab += " [%s]" % os.path.basename(e["_file"])
            runs.append({"label": lab, "pts": pts, "end": int(e.get("evaluations") or (pts[-1][0] if pts else 0)),
                         "unit": key[len("objective_"):] or "ms", "device": str(e.get("device") or "?"),
                         "space": e.get("space"), "budget": e.get("budget")})
            cur = []
    if cur:
        note("tune output ends without its summary line: %s set aside" % plural(len(cur), "improvement"))
    return runs


def runs_from_results(rows, multi_file):
    """A tune results file: one run per "run" id, its candidates (a variant,
    every size) in the order of the file; a candidate's objective is the sum
    of its median times (the sizes weighted alike), none if a case failed."""
    byrun, order = {}, []
    for r in rows:
        k = (r.get("_file"), str(r.get("run") or "?"))
        if k not in byrun:
            byrun[k] = {"cands": {}, "order": [], "row": r}
            order.append(k)
        run = byrun[k]
        v = variant_key(r)
        if v not in run["cands"]:
            run["cands"][v] = 0.0
            run["order"].append(v)
        if run["cands"][v] is None:
            continue
        if r.get("status") == "ok" and number(r.get("median_ms")):
            run["cands"][v] += float(r["median_ms"])
        else:
            run["cands"][v] = None
    runs = []
    for k in order:
        run = byrun[k]
        pts, best = [], None
        for i, v in enumerate(run["order"]):
            o = run["cands"][v]
            if o is not None and o > 0 and (best is None or o < best):
                best = o
                pts.append((i + 1, o))
        r = run["row"]
        cfg = str(r.get("config") or "")
        sets = cfg[cfg.index(" --set "):].strip() if " --set " in cfg else ""
        lab = "run %s" % (str(r.get("time") or k[1])[11:19] or k[1])
        if sets:
            lab += " " + sets
        if multi_file:
            lab = os.path.basename(k[0]) + ": " + lab
        runs.append({"label": lab, "pts": pts, "end": len(run["order"]), "unit": "ms", "device": device_of(r),
                     "space": cfg.split(" --set ")[0]})
    return runs


def convergence(runs, path, from_results):
    runs = [r for r in runs if r["pts"]]
    if not runs:
        return None
    units = {r["unit"] for r in runs}
    if len(units) > 1:
        note("convergence: the runs tune for different objectives (%s): one chart per objective" % ", ".join(units))
    unit = runs[0]["unit"]
    runs = [r for r in runs if r["unit"] == unit]
    best = min(o for r in runs for _, o in r["pts"])
    scale, shown = 1.0, unit
    if unit == "ms" and best < 1:
        scale, shown = 1e3, "µs"
    devices = sorted({r["device"] for r in runs})
    spaces = sorted({os.path.basename(str(r["space"])) for r in runs if r.get("space")})
    c = Chart(path, "kforge tune: best so far against candidates evaluated, %s on %s"
              % (", ".join(spaces) or "?", ", ".join(devices)))
    c.notes = ["dashed: 2%% above the best found by any run (%.4g %s)" % (best * scale, shown)]
    if from_results:
        c.notes.append("from results files: one line per run; a candidate's objective is the sum of its median "
                       "times; candidates a run took from the file (resume) are not in its lines")
    ends = [r["end"] for r in runs]
    c.xlog = log_axis([1] + ends)
    c.lines.append("x: candidates evaluated, %s, 1..%d" % ("log" if c.xlog else "linear", max(ends)))
    c.lines.append("y: best objective so far (%s)" % shown)
    for r in runs:
        c.lines.append("series %s | %s end=%d" % (r["label"], " ".join("%d=%.4g" % (e, o * scale) for e, o in r["pts"]),
                                                  r["end"]))
    c.runs, c.scale, c.unit, c.best = runs, scale, shown, best
    return c


def convergence_script(c, work, idx, script):
    plots = []
    for i, r in enumerate(c.runs):
        p = os.path.join(work, "conv%d-%d.dat" % (idx, i))
        with open(p, "w") as f:
            for e, o in r["pts"]:
                f.write("%d %.6g\n" % (e, o * c.scale))
            f.write("%d %.6g\n" % (max(r["end"], r["pts"][-1][0]), r["pts"][-1][1] * c.scale))
        plots.append("%s using 1:2 with steps lc %d lw 2 title %s" % (gp_str(p), i % 8 + 1, gp_str(r["label"])))
        plots.append("%s every ::0::%d using 1:2 with points lc %d pt 7 ps 0.8 notitle"
                     % (gp_str(p), len(r["pts"]) - 1, i % 8 + 1))
    plots.append("%g with lines dt 2 lc rgb '#888888' title %s" % (c.best * c.scale * 1.02,
                                                                   gp_str("best found + 2%")))
    end = max(r["end"] for r in c.runs)
    xset = ('set logscale x 10\nset xrange [0.8:%g]' % (end * 1.2)) if c.xlog else \
        ('set xrange [0:%g]' % (end * 1.03 + 1))
    top = max(o for r in c.runs for _, o in r["pts"]) * c.scale
    foot, nfoot = footnote(c.notes, 1100)
    script.write("""
reset
set terminal pngcairo enhanced size 1100,650 font "Sans,10"
set output %s
set title %s noenhanced
set label 1 %s at screen 0.01, screen %g font ",8" noenhanced
set bmargin %d
set xlabel "candidates evaluated"
set ylabel %s noenhanced
%s
set yrange [%g:%g]
set grid
set key inside right top opaque box noenhanced font ",9" samplen 2 width 1
plot %s
""" % (gp_str(c.path), gp_str(c.title), gp_str(foot), (nfoot - 3) * 12.0 / 650, nfoot,
       gp_str("best objective so far (%s, lower is better)" % c.unit), xset, c.best * c.scale * 0.97,
       top * 1.05 + (top - c.best * c.scale) * 0.25, ", \\\n     ".join(plots)))


# ---------------------------------------------------------------------------


CHARTS = ("bandwidth", "compare", "heat", "sweep", "convergence")


def main():
    ap = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--work")
    ap.add_argument("--out", default="kforge-plots")
    ap.add_argument("--heat")
    ap.add_argument("--n")
    ap.add_argument("--sweep")
    ap.add_argument("--chart")
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
            n = parse_shape(a.n)
        except ValueError:
            die("--n: expected a size such as 1048576 or 2^20, or a shape such as 1024x512 or width=1024,height=512, "
                "got '%s'" % a.n)
    filters = []
    for f in a.filter:
        if "=" not in f or f.startswith("="):
            die("--filter: expected KEY=VALUE, got '%s'" % f)
        filters.append(f.split("=", 1))
    want = None
    if a.chart is not None:
        want = [w.strip() for w in a.chart.split(",") if w.strip()]
        for w in want:
            if w not in CHARTS:
                die("--chart: unknown chart '%s' (charts: %s)" % (w, ", ".join(CHARTS)))
    if a.sweep is not None and want is None:
        want = ["sweep"]

    rows, base, events = [], [], []
    for path in a.results:
        r, b, e = load(path)
        rows += r
        base += b
        events += e
    if not rows and not base and not events:
        die("%s: no results" % " ".join(a.results))
    for k, _ in filters:
        if not any(k.split(".")[0] in r for r in rows + base):
            die("--filter: no result has the key '%s'" % k)
    # a baseline line is filtered on the keys it has (tool, n, dtype, op, device): a
    # filter on a kforge parameter (name, block_size, ...) keeps every baseline
    base = [b for b in base if all(matches(b, k, v) for k, v in filters if k.split(".")[0] in b)]
    rows = [r for r in rows if all(matches(r, k, v) for k, v in filters)]
    if not rows and not base and not events:
        die("no result matches the filters %s" % " ".join(a.filter))
    multi_file = len(a.results) > 1
    raw = rows
    rows, repeats, failed_latest = latest_only(rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    if want is not None and any(w in want for w in ("bandwidth", "compare", "heat", "sweep")) and not ok:
        die("no result with status ok%s" % (" among those the filters keep" if filters else ""))
    if want is None and not ok and not events:
        die("no result with status ok%s" % (" among those the filters keep" if filters else ""))
    params, sizes = [], []  # every family's parameters and sizes
    for r in ok:
        params += [k for k in axes_of(r) if k not in params and k in r]
        sizes += [k for k in sizes_of(r) if k not in sizes]

    def axis_key(opt, k, keys):
        if k in sizes and k not in params:
            die("%s: '%s' is a size, and the chart is drawn at one shape (--n): name parameters (%s)"
                % (opt, k, ", ".join(keys)))
        if not any(k in r for r in ok):
            die("%s: no result has the key '%s' (keys: %s)" % (opt, k, ", ".join(keys)))

    if heat_keys is not None:
        for k in heat_keys:
            axis_key("--heat", k, params + ["name"])
    # without --heat: block_size by elements_per_thread where a problem has
    # them (the built-in families), else its two parameters that vary most
    heat_default = heat_keys is None and all(any(k in r for r in ok) for k in HEAT_DEFAULT)
    sweep_axes = None
    if a.sweep is not None:
        sweep_axes = a.sweep.split(",")
        if len(sweep_axes) > 2 or not all(sweep_axes) or len(set(sweep_axes)) != len(sweep_axes):
            die("--sweep: expected AXIS or AXIS,BARS (for example block_size,algorithm), got '%s'" % a.sweep)
        for k in sweep_axes:
            axis_key("--sweep", k, params)

    def nshapes(rows):
        return len({shape_of(r) for r in rows if shape_of(r) is not None})

    if want is None:
        # by default: bandwidth against n (for a family measured at one size
        # only, a sweep over it instead), the heat map, kforge against the
        # baselines when the files hold some, and the search's convergence
        # when they hold kforge tune --format jsonl output
        want = ["bandwidth", "sweep", "heat", "compare", "convergence"]
        explicit = False
    else:
        explicit = True

    devices = []
    for r in ok:
        if device_of(r) not in devices:
            devices.append(device_of(r))
    charts = []
    if "compare" in want:
        for t, dev in sorted({(b["tool"], b["device"]) for b in base if b.get("device", devices[0] if devices else "")
                              not in devices}):
            note("%s measured on %s, where the results have no kforge measurement: not compared" % (t, dev))
    no_shape = False  # --n matched no shape of some problem
    for d in devices:
        suffix = "" if len(devices) == 1 else "-" + slug(d)
        dok = [r for r in ok if device_of(r) == d]
        notes = repeat_notes(d, repeats, failed_latest,
                             "n" if all(sizes_of(r) == ["n"] for r in rows if device_of(r) == d) else "shape")
        problems = []
        for r in dok:
            if problem_of(r) not in problems:
                problems.append(problem_of(r))

        def per_problem(pk):
            return [r for r in dok if problem_of(r) == pk]

        # a tune stops candidates that cannot win after their first
        # repetitions (status "abandoned", with those repetitions' figures):
        # the heat map and the sweep show them too, so the space has no holes
        dab = [r for r in rows if device_of(r) == d and r.get("status") == "abandoned" and
               number(r.get("median_ms")) and number(r.get("gbps"))]

        def with_abandoned(pk, prow, shape):
            """prow and the problem's abandoned rows at shape, and the notes to draw with them."""
            extra = [r for r in dab if problem_of(r) == pk and shape_of(r) == shape]
            more = ["%d of the measurements are of candidates a tune abandoned (the median of their first "
                    "repetitions)" % len(extra)] if extra else []
            return prow + extra, notes + more

        def psuffix(pk):
            return "" if len(problems) == 1 else "-" + slug("-".join(pk))

        if "bandwidth" in want:
            # one chart per family (reduce, vector_add): their sizes and GB/s
            # mean different things, and the best of one says nothing of another
            kernels = kernels_of(dok)
            for kern in kernels:
                kok = [r for r in dok if kernel_of(r) == kern]
                if not explicit and nshapes(kok) < 2:
                    continue  # the sweep chart instead
                ksuffix = "" if len(kernels) == 1 else "-" + slug(kern)
                c = bandwidth(kok, os.path.join(a.out, "bandwidth%s%s.png" % (suffix, ksuffix)), d, notes)
                if c:
                    charts.append(("bw", c))
        if "compare" in want:
            dbase = [b for b in base if b.get("device", d) == d]
            for pk in problems:
                pb = [b for b in dbase if b.get("dtype", pk[1]) == pk[1] and b.get("op", pk[2]) == pk[2]]
                c = compare(per_problem(pk), pb, os.path.join(a.out, "compare%s%s.png" % (suffix, psuffix(pk))), d,
                            " ".join(p for p in pk[1:] if p) or pk[0], notes)
                if c:
                    charts.append(("compare", c))
        for kind in ("heat", "sweep"):
            if kind not in want:
                continue
            # one chart per problem (kernel, dtype, op): a percentage of the
            # best compares variants of one problem, never two problems
            for pk in problems:
                prow = per_problem(pk)
                if kind == "sweep" and not explicit and nshapes([r for r in dok if kernel_of(r) == pk[0]]) > 1:
                    continue  # the bandwidth chart instead
                size_names, shape, why = pick_shape(prow, n)
                cnotes = notes
                if shape is not None:
                    prow, cnotes = with_abandoned(pk, prow, shape)
                if shape is None:
                    if why:
                        note("%s: %s, so no %s" % (d, why, "heat map" if kind == "heat" else "sweep chart"))
                        no_shape = no_shape or kind == "heat"
                    continue
                out = os.path.join(a.out, "%s%s%s.png" % (kind, suffix, psuffix(pk)))
                if kind == "sweep":
                    c = sweep(prow, out, d, cnotes, size_names, shape, sweep_axes)
                else:
                    keys = heat_keys or [None, None]
                    c = heat(prow, out, d, cnotes, keys[0], keys[1], size_names, shape)
                if c:
                    charts.append((kind, c))
    if "convergence" in want:
        runs = runs_from_events(events, multi_file)
        from_results = False
        if not runs and explicit and raw:
            runs, from_results = runs_from_results(raw, multi_file), True
        c = convergence(runs, os.path.join(a.out, "convergence.png"), from_results)
        if c:
            charts.append(("convergence", c))

    kinds = {kind for kind, _ in charts}
    if a.n is not None and (heat_keys is not None or heat_default or no_shape) and "heat" in want \
            and "heat" not in kinds:
        die("--n %s: no heat map could be drawn at that size" % a.n)
    if explicit:
        names = {"bw": "bandwidth"}
        got = {names.get(k, k) for k in kinds}
        for w in want:
            if w not in got:
                why = {"bandwidth": "no ok rows with n, gbps and median_ms",
                       "compare": "no baseline measurements (tool,n,gbps) for the kforge results' device and problem",
                       "heat": "nothing measured with both keys at that size (without --heat: fewer than two "
                               "parameters vary there)",
                       "sweep": "no parameter varies at that size",
                       "convergence": "no tune output (--format jsonl) or tune results"}[w]
                die("--chart %s: nothing to draw: %s" % (w, why))
    elif not charts:
        if ok and len({variant_key(r) for r in ok}) == 1 and nshapes(ok) == 1:
            r = ok[0]
            die("%s: one variant at one size (%s, %s: %s%s): nothing to chart; a chart needs several sizes or a "
                "parameter that varies (a list in the config)"
                % (" ".join(a.results), shape_label(sizes_of(r), shape_of(r)), r.get("name") or r.get("label") or "?",
                   "%.4g ms" % r["median_ms"] if number(r.get("median_ms")) else "no time",
                   ", %.4g GB/s" % r["gbps"] if number(r.get("gbps")) else ""))
        die("no ok rows with n, gbps and median_ms to plot")

    if a.print_data:
        for _, c in charts:
            c.show()
        return
    draw = {"bw": bandwidth_script, "compare": bandwidth_script, "heat": heat_script, "sweep": sweep_script,
            "convergence": convergence_script}
    with open(os.path.join(a.work, "plot.gp"), "w", encoding="utf-8") as script:
        for i, (kind, c) in enumerate(charts):
            draw[kind](c, a.work, i, script)
    with open(os.path.join(a.work, "outputs"), "w") as f:
        f.write("\n".join(c.path for _, c in charts) + "\n")


if __name__ == "__main__":
    main()
