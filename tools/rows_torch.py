#!/usr/bin/env python3
"""rows_torch.py -- PyTorch baseline for the row-wise reduction, measured as
tools/rows_bench.h does: output poisoned before every run (x.sum(dim=1, out=)),
L2 flushed before every repetition (a memset, zero_(), over 2 x L2 bytes),
a pair of torch.cuda.Event around the reduction only, warm-up 3, median of
>= 30 repetitions (default 50).  GB/s = rows * cols * itemsize / median.

Data: uniform in [-1, 1) (never 0: 24-bit values k/2^23 - 1 + 2^-24) or
random int32; a strided or offset shape is a view into a larger buffer, as
in the other harnesses.  Every row is checked against a float64 (int64 for
int32, with wrap-around) reference: sums within cols * 2^-24 * sum|x|,
max exact.

    python3 tools/rows_torch.py --op sum,max --shape 2^24,4 --shape 64,2^20

One line per (shape, impl, op), in the format of the C++ harnesses.
"""
import argparse
import math
import sys

import torch


def num(s):
    s = s.strip()
    if s.startswith("2^"):
        rest = s[2:]
        for sign in "+-":
            if sign in rest:
                k, d = rest.split(sign, 1)
                return (1 << int(k)) + (int(d) if sign == "+" else -int(d))
        return 1 << int(rest)
    return int(s)


def shape_of(s):
    p = [num(x) for x in s.split(",")]
    rows, cols = p[0], p[1]
    stride = p[2] if len(p) > 2 else cols
    off = p[3] if len(p) > 3 else 0
    return rows, cols, stride, off


def shape_name(rows, cols, stride, off):
    n = f"{rows}x{cols}"
    if stride != cols:
        n += f"/s{stride}"
    if off:
        n += f"+{off}"
    return n


def total_name(n):
    l2 = math.log2(n)
    return f"2^{int(l2)}" if l2 == int(l2) else str(n)


def make(rows, cols, stride, off, dtype, gen):
    span = off + (rows - 1) * stride + cols
    if dtype == torch.float32:
        k = torch.randint(0, 1 << 24, (span,), generator=gen, device="cuda", dtype=torch.int64)
        base = ((k.to(torch.float64) + 0.5) / float(1 << 23) - 1.0).to(torch.float32)
    else:
        base = torch.randint(-(1 << 31), 1 << 31, (span,), generator=gen, device="cuda", dtype=torch.int64).to(torch.int32)
    x = torch.as_strided(base, (rows, cols), (stride, 1), off)
    return base, x


def check(x, got, op):
    if x.dtype == torch.float32:
        xd = x.to(torch.float64)
        if op == "sum":
            ref = xd.sum(dim=1)
            tol = x.shape[1] * 2.0 ** -24 * xd.abs().sum(dim=1)
            ok = torch.isfinite(got) & ((got.to(torch.float64) - ref).abs() <= tol)
        else:
            ok = got.to(torch.float64) == xd.amax(dim=1)
    else:
        if op == "sum":
            ref = x.to(torch.int64).sum(dim=1)
            ref = ((ref + (1 << 31)) % (1 << 32)) - (1 << 31)  # wrap to int32
            ok = got.to(torch.int64) == ref
        else:
            ok = got == x.amax(dim=1)
    return int((~ok).sum().item())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--op", default="sum")
    ap.add_argument("--dtype", default="float32", choices=["float32", "int32"])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    reps = max(30, a.reps)
    dtype = torch.float32 if a.dtype == "float32" else torch.int32
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    print(f"rows_torch: {props.name}, torch {torch.__version__}", file=sys.stderr)
    gen = torch.Generator(device="cuda")
    failures = 0
    impl = f"torch{torch.__version__.split('+')[0]}"
    for si, sh in enumerate(a.shape):
        rows, cols, stride, off = shape_of(sh)
        gen.manual_seed(a.seed + si)
        base, x = make(rows, cols, stride, off, dtype, gen)
        out = torch.empty(rows, dtype=dtype, device="cuda")
        for op in a.op.split(","):
            if op == "sum":
                fn = lambda: torch.sum(x, dim=1, out=out)
            else:
                fn = lambda: torch.amax(x, dim=1, out=out)
            bad = 0
            runs = []
            for v in (0xFF, 0x7F):
                out.view(torch.uint8).fill_(v)
                fn()
                torch.cuda.synchronize()
                bad += check(x, out, op)
                runs.append(out.clone())
            det = bool(torch.equal(runs[0].view(torch.uint8), runs[1].view(torch.uint8)))
            status = "PASS" if bad == 0 else "FAIL"
            med = mn = 0.0
            if bad == 0:
                for _ in range(3):
                    out.view(torch.uint8).fill_(0xFF)
                    fn()
                ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
                for i in range(reps):
                    out.view(torch.uint8).fill_(0xFF)
                    flush.fill_(i & 0xFF)
                    ev[i][0].record()
                    fn()
                    ev[i][1].record()
                    ev[i][1].synchronize()  # each repetition waited for, as kforge times them
                torch.cuda.synchronize()
                ms = sorted(s.elapsed_time(e) for s, e in ev)
                med = ms[reps // 2] if reps % 2 else 0.5 * (ms[reps // 2 - 1] + ms[reps // 2])
                mn = ms[0]
                if check(x, out, op):
                    status = "FAIL"
                det = det and bool(torch.equal(out.view(torch.uint8), runs[0].view(torch.uint8)))
            failures += status != "PASS"
            el = x.element_size()
            line = (f"ROW shape={shape_name(rows, cols, stride, off)} total={total_name(rows * cols)} dtype={a.dtype} "
                    f"op={op} impl={impl} cfg={impl} status={status}")
            if med > 0:
                line += (f" us={med * 1e3:.2f} min_us={mn * 1e3:.2f} gbps={rows * cols * el / (med * 1e6):.1f}"
                         f" io_gbps={(rows * cols + rows) * el / (med * 1e6):.1f}")
            line += f" det={'yes' if det else 'no'}"
            print(line, flush=True)
        del base, x, out
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
