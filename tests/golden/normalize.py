#!/usr/bin/env python3
"""normalize.py KIND FILE: prints FILE with what changes from run to run left
out, so that two runs of the same search compare equal.

  results  a kforge results file (JSON Lines): every line, sorted, without the
           run's identity, times of day, host, config path and the wall times
           of compiling, setup, verifying and benching (the fake GPU's model
           times stay: they are the measurements)
  db       a tuning database file: every entry without date and how
  header   an exported header: without its date line
"""
import json
import re
import sys

VOLATILE = {"run", "time", "host", "config", "compile_ms", "cached", "setup_ms",
            "verify_ms", "bench_ms"}


def results(path):
    rows = []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            for k in VOLATILE:
                o.pop(k, None)
            rows.append(json.dumps(o, sort_keys=True))
    return "\n".join(sorted(rows)) + "\n"


def db(path):
    with open(path) as f:
        o = json.load(f)
    for e in o.get("entries", []):
        e.pop("date", None)
        e.pop("how", None)
    return json.dumps(o, sort_keys=True, indent=1) + "\n"


def header(path):
    with open(path) as f:
        text = f.read()
    return re.sub(r"(?m)^.*\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ.*$", "<date line>", text)


kind, path = sys.argv[1], sys.argv[2]
sys.stdout.write({"results": results, "db": db, "header": header}[kind](path))
