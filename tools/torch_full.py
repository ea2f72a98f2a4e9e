#!/usr/bin/env python3
"""torch_full.py -- PyTorch baseline for full reductions, measured as kforge
measures (L2 flushed before every repetition by a fill over 2 x L2, CUDA
events around the reduction only, warm-up 3, median of 31), printed as the
baseline lines tools/plot.sh reads beside kforge's results:

    {"tool": "pytorch 2.11.0", "n": 1048576, "dtype": "float32", "op": "sum",
     "median_ms": 0.0101, "gbps": 413.2, "device": "NVIDIA H100 80GB HBM3"}

    python3 tools/torch_full.py --dtype float32 --op sum --n 2^10 --n 2^20 ...

Data: small integers (exact in every dtype); the answer is checked against
the sum in float64 (int64 for integers) and a wrong one is status "wrong".
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from half_torch import num, timed  # noqa: E402  (the same timing as the bfloat16 baseline)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float32", choices=["float32", "int32", "float64", "int64"])
    ap.add_argument("--op", default="sum", choices=["sum", "max", "min"])
    ap.add_argument("--n", action="append", default=[])
    a = ap.parse_args()
    dt = getattr(torch, a.dtype)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(42)
    tool = "pytorch " + torch.__version__.split("+")[0]
    bad = 0
    for s in a.n:
        n = num(s)
        x = torch.randint(-4, 5, (n,), generator=gen, device="cuda", dtype=torch.int32).to(dt)
        fn = {"sum": lambda: x.sum(), "max": lambda: x.max(), "min": lambda: x.min()}[a.op]
        exact = x.to(torch.float64 if dt.is_floating_point else torch.int64)
        want = {"sum": exact.sum, "max": exact.max, "min": exact.min}[a.op]()
        got = fn()
        torch.cuda.synchronize()
        ok = float(got) == float(want)
        ms = timed(fn, flush) if ok else 0.0
        bad += not ok
        print(json.dumps({"tool": tool, "n": n, "dtype": a.dtype, "op": a.op, "status": "ok" if ok else "wrong",
                          "median_ms": ms, "gbps": n * x.element_size() / (ms * 1e6) if ok else 0.0,
                          "device": props.name}), flush=True)
        del x, exact
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
