#!/usr/bin/env python3
"""half_torch.py -- PyTorch baseline for bfloat16 and float16 reductions with
float32 accumulation (issue 23): x.sum(dtype=torch.float32) and
x.sum(dim=1, dtype=torch.float32) (each allocating its output, as callers
write them), measured as kforge measures: L2 flushed
before every repetition (a fill over 2 x L2), CUDA events around the
reduction only, warm-up 3, median of 31.  Data: small integers 1..4 with
random signs (exact in both types); the result is checked against the
exact sum in float64.

    python3 tools/half_torch.py --dtype bfloat16 --n 2^20 --shape 2^21,32

One line per case, as tools/half_cub.cu writes them (GB/s of input bytes).
"""
import argparse
import sys

import torch


def num(s):
    return 1 << int(s[2:]) if s.startswith("2^") else int(s)


def timed(fn, flush, reps=31):
    for _ in range(3):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for i in range(reps):
        flush.fill_(i & 0xFF)
        ev[i][0].record()
        fn()
        ev[i][1].record()
        ev[i][1].synchronize()  # each repetition waited for, as kforge times them (docs/method.md)
    torch.cuda.synchronize()
    ms = sorted(a.elapsed_time(b) for a, b in ev)
    return ms[reps // 2]


def data(n, dtype, gen):
    mag = torch.randint(1, 5, (n,), generator=gen, device="cuda", dtype=torch.int32)
    sign = torch.randint(0, 2, (n,), generator=gen, device="cuda", dtype=torch.int32) * 2 - 1
    return (mag * sign).to(dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--n", action="append", default=[])
    ap.add_argument("--shape", action="append", default=[])
    a = ap.parse_args()
    dt = torch.bfloat16 if a.dtype == "bfloat16" else torch.float16
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(42)
    impl = "torch" + torch.__version__.split("+")[0]
    print(f"half_torch: {props.name}, torch {torch.__version__}", file=sys.stderr)
    bad = 0
    cases = [("full", num(n), None) for n in a.n]
    cases += [("rows", num(s.split(",")[0]), num(s.split(",")[1])) for s in a.shape]
    for kind, p, q in cases:
        if kind == "full":
            x = data(p, dt, gen)
            fn = lambda: x.sum(dtype=torch.float32)  # (no out= overload takes dtype without dim)
            want = x.to(torch.float64).sum()
            shape, n = str(p), p
        else:
            x = data(p * q, dt, gen).view(p, q)
            fn = lambda: x.sum(dim=1, dtype=torch.float32)
            want = x.to(torch.float64).sum(dim=1)
            shape, n = f"{p}x{q}", p * q
        out = fn()
        torch.cuda.synchronize()
        ok = bool(torch.equal(out.to(torch.float64), want))
        ms = timed(fn, flush) if ok else 0.0
        bad += not ok
        gbps = n * x.element_size() / (ms * 1e6) if ok else 0.0
        print(f"CASE kind={kind} shape={shape} dtype={a.dtype} impl={impl} status={'PASS' if ok else 'FAIL'} "
              f"us={ms * 1e3:.2f} gbps={gbps:.1f}", flush=True)
        del x, out, want
        torch.cuda.empty_cache()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
