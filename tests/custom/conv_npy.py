#!/usr/bin/env python3
"""tests/custom/conv_npy.py WIDTH HEIGHT [CONFIG] -- the convolution example's
inputs and its answer as .npy files, made without NumPy, and a config that
uses them (Kernel Tuner's arguments, cmem_args and answer):

  conv_in.npy      float32, (HEIGHT + 16) x (WIDTH + 16): the padded image
  conv_filter.npy  float32, 17 x 17: the filter (the "constants" d_filter)
  conv_out.npy     float32, HEIGHT x WIDTH: the answer, summed here

Every value is a multiple of 1/16 in [0, 1], so every product is a multiple
of 1/256 and every partial sum (at most 289) is exact in float32: any
correct kernel, in any order of summation, gives exactly this answer, and
the config's tolerance is 0.  CONFIG (default conv_npy.json) is written
next to the files from configs/custom/convolution.json, which is looked
for beside this script's folder (or given as $CONV_JSON)."""
import json
import os
import struct
import sys


def npy(path, fmt, vals, shape):
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))


def main():
    w, h = int(sys.argv[1]), int(sys.argv[2])
    config = sys.argv[3] if len(sys.argv) > 3 else "conv_npy.json"
    state = [12345]

    def sixteenth():
        state[0] = (state[0] * 1103515245 + 12345) & 0x7FFFFFFF
        return ((state[0] >> 16) % 17) / 16.0

    iw, ih = w + 16, h + 16
    image = [sixteenth() for _ in range(iw * ih)]
    filt = [sixteenth() for _ in range(17 * 17)]
    taps = [(fy * iw + fx, filt[fy * 17 + fx]) for fy in range(17) for fx in range(17) if filt[fy * 17 + fx]]
    out = []
    for y in range(h):
        for x in range(w):
            base = y * iw + x
            out.append(sum(image[base + o] * f for o, f in taps))
    npy("conv_in.npy", "f", image, (ih, iw))
    npy("conv_filter.npy", "f", filt, (17, 17))
    npy("conv_out.npy", "f", out, (h, w))
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.environ.get("CONV_JSON") or os.path.join(here, "..", "..", "configs", "custom", "convolution.json")
    c = json.load(open(src))
    k = c["custom"]
    k["source"] = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(src)), k["source"]),
                                  os.path.dirname(os.path.abspath(config)))
    k["name"] = "convolution_npy"
    for a in k["args"]:
        if a["name"] == "input":
            a["fill"] = {"npy": "conv_in.npy"}
    k["constants"][0]["fill"] = {"npy": "conv_filter.npy"}
    k["reference"] = {"expected": {"output": "conv_out.npy"}}
    k["tolerance"] = {"rtol": 0, "atol": 0}
    c["defaults"] = {"width": w, "height": h}
    json.dump(c, open(config, "w"), indent=1)


main()
