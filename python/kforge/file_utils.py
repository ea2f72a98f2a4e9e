"""Kernel Tuner's file_utils for kforge's results: store_output_file writes T4.

    from kforge.file_utils import store_output_file, store_metadata_file
    store_output_file("vector_add.json", results, tune_params)
"""

import json
import os
import platform
import subprocess

from . import _binary

SCHEMA_VERSION = "1.0.0"

_VALIDITY = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime", "InvalidConfig": "constraints",
             "WrongResultConfig": "correctness"}


# the error names the methodology's reader takes as a failed result's objective value
_READER_ERRORS = {"CompilationFailedConfig": "CompilationFailedConfig", "InvalidConfig": "InvalidConfig",
                  "RuntimeFailedConfig": "RuntimeFailedConfig"}


def _json_name(name):
    return name if name.endswith(".json") else name + ".json"


def get_t4_results(results, tune_params, objective="time"):
    """The T4 document of tune_kernel's results, as Kernel Tuner makes it."""
    if isinstance(objective, (list, tuple)):
        raise ValueError("The T4 format does not support multiple objectives.")
    timing = ["compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time"]
    skip = set(tune_params) | set(timing) | {"timestamp", "times", "__error__"}
    out = []
    for r in results:
        err = r.get("__error__")
        x = {"configuration": {k: v for k, v in r.items() if k in tune_params},
             "times": {"compilation": r.get("compile_time", 0.0), "benchmark": r.get("benchmark_time", 0.0),
                       "framework": r.get("framework_time", 0.0), "search_algorithm": r.get("strategy_time", 0.0),
                       "validation": r.get("verification_time", 0.0), "runtimes": list(r.get("times", []))},
             "invalidity": _VALIDITY.get(type(err).__name__, "runtime") if err is not None else "correct",
             "correctness": 0 if type(err).__name__ == "WrongResultConfig" else 1,
             "objectives": [objective]}
        if "timestamp" in r:
            x["timestamp"] = r["timestamp"]
        meas = []
        for k, v in r.items():
            if k in skip:
                continue
            if err is not None and k == "time":  # Kernel Tuner's error name (the methodology reader's)
                v = _READER_ERRORS.get(type(err).__name__, "RuntimeFailedConfig")
            elif not isinstance(v, (int, float, str, list)):
                v = str(v)
            meas.append({"name": k, "value": v, "unit": "ms" if k.startswith("time") else ""})
        x["measurements"] = meas
        out.append(x)
    return {"results": out, "schema_version": SCHEMA_VERSION, "metadata": {"timeunit": "milliseconds"}}


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Writes tune_kernel's results as a T4 JSON file."""
    path = _json_name(output_filename)
    d = os.path.dirname(path)
    if d and not os.path.exists(d):
        os.makedirs(d)
    with open(path, "w") as f:
        json.dump(get_t4_results(results, tune_params, objective), f, indent=4)


def get_device_query():
    """What kforge info says of the GPU (text), or "" without one."""
    try:
        return subprocess.run([_binary(), "info"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def store_metadata_file(metadata_filename):
    """Writes the machine's metadata (host, Python, kforge, the GPU) as JSON."""
    path = _json_name(metadata_filename)
    meta = {"hardware": {"host": platform.node(), "machine": platform.machine(), "gpu": get_device_query()},
            "environment": {"python": platform.python_version(), "system": platform.platform(),
                            "kforge": _binary()}}
    with open(path, "w") as f:
        json.dump({"metadata": meta, "schema_version": SCHEMA_VERSION}, f, indent=4)
