#!/usr/bin/env python3
"""tally.py RESULTS FAULT -- reads the results of a run with a planted
coverage fault (KFORGE_PLANT=FAULT@*) and checks the verification caught it:
every case where the fault changes the exact answer must be `wrong`; the
cases where it cannot (min, max; a float product's -1 neighbours or a block
whose product is +1) or has no place (no vector tail, one block) are counted,
and must be `ok`; none of them may be a sum, xor or integer product.  Prints
one line of counts and every miss; exit 1 on a miss.  Used by
tests/verify_suite.sh (fake GPU) and tests/gpu_suite.sh (real kernels)."""
import json, sys, collections
path, fault = sys.argv[1], sys.argv[2]
n = collections.Counter(); misses = []; weak = []
for line in open(path):
    d = json.loads(line)
    eff = d.get("planted_effect", "")
    where = "%s %s %s %s %s" % (d["name"], d["dtype"], d["op"],
                               " ".join("%s=%s" % (k, d[k]) for k in ("n", "rows", "cols", "row_stride") if k in d),
                               eff)
    if d.get("planted") != fault:
        misses.append("not planted: " + where); continue
    if eff == "changes the answer":
        n["changes"] += 1
        if d["status"] == "wrong": n["caught"] += 1
        else: misses.append(d["status"] + ": " + where)
    elif eff == "cannot change the answer":
        n["cannot"] += 1
        idempotent = d["op"] in ("min", "max", "and", "or")
        # float prod data are -1 but for a few powers of two: a neighbour or
        # a block's product may be -1 and +1 too
        float_prod = d["op"] == "prod" and d["dtype"] in ("float32", "float64", "bfloat16", "float16") and fault in ("shift", "double_block")
        if not (idempotent or float_prod): weak.append(where)
        if d["status"] != "ok": misses.append("unexpected " + d["status"] + ": " + where)
    elif eff.startswith("no place: "):
        n["noplace"] += 1
        if d["status"] != "ok": misses.append("unexpected " + d["status"] + ": " + where)
    else:
        misses.append("no effect recorded: " + where)
print("  %-12s %5d cases: %5d change the answer, %5d caught; %4d cannot change it (min/max%s); %4d with no place"
      % (fault, sum(n[k] for k in ("changes", "cannot", "noplace")), n["changes"], n["caught"], n["cannot"],
         ", float prod" if fault in ("shift", "double_block") else "", n["noplace"]))
for m in misses[:10]: print("  MISSED " + m)
for w in weak[:10]: print("  WEAK DATA " + w)
sys.exit(1 if misses or weak or n["changes"] == 0 else 0)
