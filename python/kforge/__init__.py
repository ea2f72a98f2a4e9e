"""kforge's Python front end: Kernel Tuner's tune_kernel, driving the kforge binary.

A Kernel Tuner script runs by changing its import::

    from kforge import tune_kernel          # was: from kernel_tuner import tune_kernel
    results, env = tune_kernel("vector_add", kernel_string, size, args, tune_params)

tune_kernel writes the kernel, its arguments (.npy files) and a kforge config
(a "custom" kernel) into a temporary folder, runs ``kforge tune`` on it and
reads the results file as it grows (streaming each result when verbose), then
returns Kernel Tuner's ``(results, env)``.  Standard library and NumPy only.

The kforge binary: $KFORGE, else ``kforge`` on the PATH, else the build/kforge
of the source tree this package sits in.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy

__all__ = ["tune_kernel", "run_kernel", "KforgeError", "ErrorConfig", "InvalidConfig",
           "CompilationFailedConfig", "RuntimeFailedConfig", "WrongResultConfig"]


class KforgeError(Exception):
    """An argument kforge cannot take, or kforge failing (its message)."""


class ErrorConfig(str):
    """A failed configuration's "time", as in Kernel Tuner."""

    def __str__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    pass


class CompilationFailedConfig(ErrorConfig):
    pass


class RuntimeFailedConfig(ErrorConfig):
    pass


class WrongResultConfig(ErrorConfig):
    """A configuration whose outputs are wrong (Kernel Tuner raises instead)."""


_DTYPES = {numpy.dtype(numpy.float32): "float32", numpy.dtype(numpy.float64): "float64",
           numpy.dtype(numpy.int32): "int32", numpy.dtype(numpy.uint32): "uint32",
           numpy.dtype(numpy.int64): "int64", numpy.dtype(numpy.float16): "float16",
           numpy.dtype(numpy.int8): "int8", numpy.dtype(numpy.uint8): "uint8"}

_STRATEGIES = {None: None, "brute_force": "exhaustive", "random_sample": "random",
               "genetic_algorithm": "genetic", "simulated_annealing": "anneal", "greedy_ils": "local",
               "greedy_mls": "local", "mls": "local", "ordered_greedy_mls": "local", "firefly_algorithm": "genetic",
               "pso": "genetic", "diff_evo": "genetic", "basinhopping": "local", "dual_annealing": "anneal",
               "minimize": "local", "bayes_opt": "genetic"}

# kforge's "status" of a result line -> the ErrorConfig of Kernel Tuner's results
_ERRORS = {"compile_error": CompilationFailedConfig, "skipped": InvalidConfig, "wrong": WrongResultConfig}

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _binary():
    k = os.environ.get("KFORGE")
    if k:
        return k
    k = shutil.which("kforge")
    if k:
        return k
    here = os.path.dirname(os.path.abspath(__file__))
    k = os.path.join(here, "..", "..", "build", "kforge")
    if os.path.exists(k):
        return os.path.normpath(k)
    raise KforgeError("the kforge binary is not found: set $KFORGE, put kforge on the PATH or build it (make)")


def _int_values(name, values):
    out = []
    for v in values:
        if isinstance(v, (bool, numpy.bool_)):
            v = int(v)
        if isinstance(v, (float, numpy.floating)) and float(v).is_integer():
            v = int(v)
        if not isinstance(v, (int, numpy.integer)):
            raise KforgeError("tune_params[%r]: %r is not an integer: kforge's params are integers "
                              "(give a list of ints, e.g. %s: [0, 1] for a choice)" % (name, v, name))
        out.append(int(v))
    if not out:
        raise KforgeError("tune_params[%r]: an empty list" % name)
    return out


def _expr(text, what):
    """A Kernel Tuner (Python) expression: kforge's expressions take and, or, not and // as Python does.
    A lambda or a one-line function of the params is read from its source (as Kernel Tuner does)."""
    if callable(text):
        text = _callable_expr(text, what)
    if not isinstance(text, str):
        raise KforgeError("%s: %r is not a string expression or a function of the params" % (what, text))
    t = text
    if "**" in t:
        raise KforgeError("%s: %r: '**' has no kforge form (use pow2(k) for 2**k)" % (what, text))
    return t


def _callable_expr(f, what):
    """The expression a restriction function returns, with p["name"] as name: Kernel Tuner's
    ``lambda p: p["block_size_x"] * p["tile"] <= 1024`` (or ``def f(p): return ...``, or a function of
    the params by name).  Names of the function's globals or closure that hold integers become numbers."""
    import ast
    import inspect
    import textwrap
    why = ("%s: %r: kforge reads a restriction function from its source: a lambda or a def whose body is one "
           "'return EXPR' over p[\"name\"] (give a string expression instead)" % (what, f))
    try:
        src = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError):
        raise KforgeError(why + ": its source is not available")
    nodes = []
    tree = None
    try:
        tree = ast.parse(src)
    except SyntaxError:
        # a lambda inside a longer statement: from "lambda" to the longest end that parses
        i = src.find("lambda")
        while i >= 0 and tree is None:
            for j in range(len(src), i, -1):
                try:
                    tree = ast.parse(src[i:j].strip(), mode="eval")
                    break
                except SyntaxError:
                    continue
            if tree is None:
                i = src.find("lambda", i + 1)
    if tree is None:
        raise KforgeError(why)
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            nodes.append((n, n.body))
        elif isinstance(n, (ast.FunctionDef,)) and n.name == f.__name__:
            body = [b for b in n.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                nodes.append((n, body[0].value))
    code = getattr(f, "__code__", None)
    want = code.co_varnames[:code.co_argcount] if code else None
    nodes = [(n, b) for n, b in nodes if tuple(a.arg for a in n.args.args) == want]
    if len(nodes) > 1:  # several lambdas on the line: the one whose bytecode is f's
        same = []
        for n, b in nodes:
            try:
                g = eval(compile(ast.Expression(ast.Lambda(args=n.args, body=b)), "<kforge>", "eval"),
                         getattr(f, "__globals__", {}))
                if g.__code__.co_code == code.co_code and g.__code__.co_consts == code.co_consts:
                    same.append((n, b))
            except Exception:
                pass
        nodes = same
    if len(nodes) != 1:
        raise KforgeError(why)
    args = list(want)
    consts = dict((k, v) for k, v in getattr(f, "__globals__", {}).items())
    if code and f.__closure__:
        consts.update(zip(code.co_freevars, (c.cell_contents for c in f.__closure__)))
    dictarg = args[0] if len(args) == 1 else None

    class Rewrite(ast.NodeTransformer):
        def visit_Subscript(self, node):
            if isinstance(node.value, ast.Name) and node.value.id == dictarg:
                k = node.slice
                if isinstance(k, ast.Index):  # Python < 3.9
                    k = k.value
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    return ast.copy_location(ast.Name(id=k.value, ctx=ast.Load()), node)
                raise KforgeError(why + ": %s[...] with a key that is not a string" % dictarg)
            return self.generic_visit(node)

        def visit_Name(self, node):
            if node.id == dictarg:
                raise KforgeError(why + ": %s used other than as %s[\"name\"]" % (dictarg, dictarg))
            if node.id not in args and isinstance(consts.get(node.id), (int, numpy.integer)) and \
                    not isinstance(consts.get(node.id), bool):
                return ast.copy_location(ast.Constant(value=int(consts[node.id])), node)
            return node

    body = Rewrite().visit(nodes[0][1])
    return ast.unparse(body)


def _problem(problem_size):
    """Kernel Tuner's problem_size: an int, a string (an expression over the params, e.g. "num_blocks"),
    or a tuple of 1 to 3 of them.  Returns a list of ints and expression strings."""
    if isinstance(problem_size, (int, numpy.integer, str)):
        problem_size = (problem_size,)
    if callable(problem_size):
        raise KforgeError("problem_size: a function has no kforge form: give ints, or strings over the params")
    if not isinstance(problem_size, (tuple, list)) or not 1 <= len(problem_size) <= 3:
        raise KforgeError("problem_size: expected an int, a string or a tuple of 1 to 3 of them, got %r" %
                          (problem_size,))
    out = []
    for p in problem_size:
        if isinstance(p, str):
            out.append(_expr(p, "problem_size"))
        elif isinstance(p, (int, numpy.integer)) and not isinstance(p, bool) and int(p) >= 1:
            out.append(int(p))
        else:
            raise KforgeError("problem_size: %r is not a positive integer nor an expression over the params" % (p,))
    return out


def _divisor(div, default, d, tune_params):
    if div is None:
        div = [default] if default in tune_params else []
    if isinstance(div, str):
        div = [div]
    if callable(div):
        div = [div]
    return ["(%s)" % _expr(x, "grid_div_%s" % "xyz"[d]) for x in div]


def _spec(folder, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div, restrictions,
          answer, atol, cmem_args, compiler_options, block_size_names, iterations, defines, rtol=1e-5):
    src = "kernel.cu"
    if isinstance(kernel_source, (list, tuple)):
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, str) and "\n" not in kernel_source and os.path.isfile(kernel_source):
        src = os.path.abspath(kernel_source)  # beside its own headers: the run allows outside files (_env)
    elif isinstance(kernel_source, str):
        with open(os.path.join(folder, src), "w") as f:
            f.write(kernel_source)
    else:
        raise KforgeError("kernel_source: expected the kernel's code or a file name, got %r" % type(kernel_source))
    if defines:
        raise KforgeError("defines: not supported: give the values as tune_params of one value each")
    ps = _problem(problem_size)
    names = list(block_size_names or ["block_size_x", "block_size_y", "block_size_z"])
    params = {}
    for k, v in tune_params.items():
        if not _IDENT.match(str(k)):
            raise KforgeError("tune_params: %r is not a C identifier" % (k,))
        params[k] = _int_values(k, v if isinstance(v, (list, tuple, range, numpy.ndarray)) else [v])
    block = []
    for d, bn in enumerate(names[:3]):
        block.append(bn if bn in params else ("256" if d == 0 else "1"))
    grid = []
    for d in range(len(ps)):
        div = _divisor(grid_div[d], names[d] if d < len(names) else None, d, params)
        grid.append("ceil((%s) / (%s))" % (ps[d], " * ".join(div)) if div else "(%s)" % (ps[d],))
    sizes = ["problem_size_%s" % "xyz"[d] for d in range(len(ps)) if isinstance(ps[d], int)]
    size_values = [p for p in ps if isinstance(p, int)]
    if not sizes:  # every dimension an expression over the params: one size of one value keys the results
        sizes, size_values = ["kt_problem"], [1]
    if answer is not None and len(answer) != len(arguments):
        raise KforgeError("answer: %d entries for %d arguments" % (len(answer), len(arguments)))
    args, expected = [], {}
    for i, a in enumerate(arguments):
        name = "arg%d" % i
        if isinstance(a, numpy.ndarray):
            if a.dtype not in _DTYPES:
                raise KforgeError("arguments[%d]: dtype %s is not one kforge takes (%s)" %
                                  (i, a.dtype, ", ".join(sorted(_DTYPES.values()))))
            path = os.path.join(folder, name + ".npy")
            numpy.save(path, numpy.ascontiguousarray(a).reshape(-1))
            g = {"name": name, "dtype": _DTYPES[a.dtype], "length": str(a.size), "fill": {"npy": name + ".npy"}}
            if answer is None:
                g["role"] = "inout"  # Kernel Tuner copies every argument in: each starts from its array
            elif answer[i] is None:
                g["role"] = "in"
            else:
                e = numpy.asarray(answer[i])
                if e.size != a.size:
                    raise KforgeError("answer[%d]: %d elements, the argument has %d" % (i, e.size, a.size))
                epath = os.path.join(folder, name + ".answer.npy")
                numpy.save(epath, numpy.ascontiguousarray(e.astype(a.dtype)).reshape(-1))
                g["role"] = "inout"
                expected[name] = name + ".answer.npy"
            args.append(g)
        elif isinstance(a, (numpy.generic, int, float)):
            if isinstance(a, numpy.generic):
                dt = numpy.dtype(type(a))
                if dt not in _DTYPES:
                    raise KforgeError("arguments[%d]: a scalar of dtype %s is not one kforge takes" % (i, dt))
                t = _DTYPES[dt]
            else:
                t = "int32" if isinstance(a, int) else "float32"
            v = repr(float(a)) if t.startswith("float") else str(int(a))
            args.append({"name": name, "scalar": t, "value": v})
            if answer is not None and answer[i] is not None:
                raise KforgeError("answer[%d]: a scalar argument is not an output (give None)" % i)
        else:
            raise KforgeError("arguments[%d]: expected a numpy array or a numpy scalar, got %r" % (i, type(a)))
    if answer is not None and not expected:
        raise KforgeError("answer: every entry is None: nothing to check (give answer=None to check against the "
                          "first configuration)")
    custom = {"source": src, "entry": kernel_name, "params": params, "sizes": sizes, "args": args,
              "grid": grid, "block": block,
              "tolerance": {"rtol": float(rtol), "atol": float(atol)}}
    if expected:
        custom["reference"] = {"expected": expected}
    # else no "reference": kforge checks against the first configuration that meets the restrictions
    if restrictions:
        if isinstance(restrictions, str) or callable(restrictions):
            restrictions = [restrictions]
        custom["constraints"] = [_expr(r, "restrictions") for r in restrictions]
    if compiler_options:
        custom["compiler_options"] = list(compiler_options)
    if cmem_args:
        consts = []
        for k, v in cmem_args.items():
            v = numpy.asarray(v)
            if v.dtype not in _DTYPES:
                raise KforgeError("cmem_args[%r]: dtype %s is not one kforge takes" % (k, v.dtype))
            path = os.path.join(folder, "cmem_%s.npy" % k)
            numpy.save(path, numpy.ascontiguousarray(v).reshape(-1))
            consts.append({"name": k, "dtype": _DTYPES[v.dtype], "length": str(v.size), "fill": {"npy": "cmem_%s.npy" % k}})
        custom["constants"] = consts
    spec = {"kernel": "custom", "custom": custom, "defaults": {s: str(p) for s, p in zip(sizes, size_values)}}
    # each candidate measured briefly, as kforge's tuning spaces are (configs/custom/*.json: enough to rank
    # them), with at least Kernel Tuner's iterations (7 by default) timed runs; kforge run's defaults
    # (0.5 s or 0.5% noise) took 1000 runs of a 0.04 ms kernel
    reps = 7 if iterations is None else int(iterations)
    spec["bench"] = {"warmup": 1, "min_reps": reps, "max_reps": max(200, reps), "max_time_s": 0.005,
                     "max_noise": 0.02, "max_median_ci": 0.01}
    return spec


def _result(line, tune_params):
    r = {k: line[k] for k in tune_params if k in line}
    st = line.get("status")
    if st in ("ok", "abandoned") and line.get("median_ms") is not None:
        r["time"] = line["median_ms"]  # abandoned: verified, and its median so far already behind the best
    else:
        err = _ERRORS.get(st, RuntimeFailedConfig)(line.get("message", ""))
        r["time"] = err
        r["__error__"] = err
    r["times"] = []
    r["compile_time"] = line.get("compile_ms") or 0.0
    r["verification_time"] = line.get("verify_ms") or 0.0
    r["benchmark_time"] = line.get("bench_ms") or 0.0
    r["framework_time"] = 0.0
    r["strategy_time"] = 0.0
    r["timestamp"] = line.get("time", "")
    if line.get("gbps") is not None:
        r["GB/s"] = line["gbps"]
    r["kforge_status"] = st
    if line.get("message"):
        r["kforge_message"] = line["message"]
    return r


def _env(spec):
    """kforge's environment: a kernel file the caller named (outside the temporary folder of the
    generated config) is allowed, as the caller chose it."""
    env = dict(os.environ)
    if os.path.isabs(spec["custom"]["source"]):
        env["KFORGE_ALLOW_OUTSIDE_FILES"] = "1"
    return env


def _read_lines(path, pos):
    """New complete lines of the results file from byte pos: (lines, new pos)."""
    try:
        with open(path, "rb") as f:
            f.seek(pos)
            data = f.read()
    except FileNotFoundError:
        return [], pos
    end = data.rfind(b"\n")
    if end < 0:
        return [], pos
    out = []
    for raw in data[:end].split(b"\n"):
        try:
            out.append(json.loads(raw))
        except ValueError:
            pass
    return out, pos + end + 1


def _check_lang(lang):
    """Kernel Tuner's CUDA backends, their names in any case (its examples write "Cupy")."""
    if lang is not None and not (isinstance(lang, str) and lang.lower() in ("cuda", "cupy", "nvcuda")):
        raise KforgeError("lang: %r: kforge runs CUDA kernels only (CUDA, CuPy or NVCUDA)" % (lang,))


def _host(x):
    """An array on the GPU (CuPy's: __cuda_array_interface__ and get()) as a NumPy copy; else x."""
    if hasattr(x, "__cuda_array_interface__") and callable(getattr(x, "get", None)):
        return numpy.asarray(x.get())
    return x


def _on_host(arguments, answer, cmem_args):
    """The arguments, the answer and cmem_args with CuPy arrays copied to the host, as kforge's worker
    makes its own device copies (Kernel Tuner's examples/cuda/vector_add_cupy.py passes CuPy arrays)."""
    args = [_host(a) for a in arguments] if isinstance(arguments, (list, tuple)) else arguments
    ans = [_host(a) for a in answer] if isinstance(answer, (list, tuple)) else answer
    cm = {k: _host(v) for k, v in cmem_args.items()} if isinstance(cmem_args, dict) else cmem_args
    return args, ans, cm


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                compiler=None, compiler_options=None, defines=None, log=None, iterations=None,
                block_size_names=None, quiet=False, strategy=None, strategy_options=None, cache=None,
                metrics=None, simulation_mode=False, observers=None, objective=None,
                objective_higher_is_better=None):
    """Kernel Tuner's tune_kernel on kforge: returns (results, env).

    results: one dict per configuration kforge measured: the tunable
    parameters, "time" (the median in ms; a failed configuration has an
    ErrorConfig there and under "__error__"), "compile_time",
    "verification_time", "benchmark_time" (ms) and kforge's "GB/s".
    env: the device, kforge's version and the settings of the run.
    """
    for what, v in (("verify", verify), ("smem_args", smem_args), ("texmem_args", texmem_args),
                    ("observers", observers), ("cache", cache)):
        if v:
            raise KforgeError("%s: not supported by kforge's front end" % what)
    _check_lang(lang)
    arguments, answer, cmem_args = _on_host(arguments, answer, cmem_args)
    if objective not in (None, "time"):
        raise KforgeError("objective: %r: kforge's front end tunes for time" % (objective,))
    if strategy not in _STRATEGIES:
        raise KforgeError("strategy: %r is not one kforge maps (%s)" %
                          (strategy, ", ".join(sorted(k for k in _STRATEGIES if k))))
    opts = dict(strategy_options or {})
    for name, f in (metrics or {}).items():
        if isinstance(f, str):
            try:
                compile(f, "metrics[%r]" % (name,), "eval")
            except SyntaxError as e:
                raise KforgeError("metrics[%r]: %r is not an expression: %s" % (name, f, e.msg))
        elif not callable(f):
            raise KforgeError("metrics[%r]: expected a function of a result (lambda p: ...) or an expression "
                              "over its names (\"1e-6 * n / time\")" % (name,))
    if simulation_mode:
        raise KforgeError("simulation_mode: use kforge tune --simulate FILE")
    folder = tempfile.mkdtemp(prefix="kforge-py.")
    keep = os.environ.get("KFORGE_PY_KEEP")
    try:
        spec = _spec(folder, kernel_name, kernel_source, problem_size, arguments, tune_params,
                     (grid_div_x, grid_div_y, grid_div_z), restrictions, answer, atol, cmem_args,
                     compiler_options, block_size_names, iterations, defines)
        cfg = os.path.join(folder, "tune.json")
        with open(cfg, "w") as f:
            json.dump(spec, f, indent=1)
        res = os.path.join(folder, "results.jsonl")
        cmd = [_binary(), "tune", cfg, "--results", res, "--no-db", "--format", "json", "--device", str(device)]
        if _STRATEGIES[strategy]:
            cmd += ["--strategy", _STRATEGIES[strategy]]
        if "max_fevals" in opts:
            cmd += ["--budget", str(int(opts["max_fevals"]))]
        if "time_limit" in opts:
            cmd += ["--time", str(float(opts["time_limit"]))]
        if "fraction" in opts:
            space = 1
            for v in spec["custom"]["params"].values():
                space *= len(v)
            cmd += ["--budget", str(max(1, int(math.ceil(space * float(opts["fraction"])))))]
        if quiet or not verbose:
            cmd.append("-q")
        t0 = time.time()
        err_path = os.path.join(folder, "stderr.txt")
        with open(os.path.join(folder, "summary.json"), "w") as out, open(err_path, "w") as errf:
            p = subprocess.Popen(cmd, stdout=out, stderr=errf if not verbose else None, env=_env(spec))
            lines, pos = [], 0
            while True:
                rc = p.poll()
                new, pos = _read_lines(res, pos)
                for line in new:
                    lines.append(line)
                    if verbose and not quiet:
                        r = _result(line, tune_params)
                        print(", ".join("%s=%s" % (k, r[k]) for k in tune_params if k in r) +
                              ", time=%s" % (("%.3f ms" % r["time"]) if not isinstance(r["time"], str)
                                             else str(r["time"])))
                if rc is not None:
                    new, pos = _read_lines(res, pos)
                    lines.extend(new)
                    break
                time.sleep(0.05)
        if rc not in (0, 1):
            msg = open(err_path).read().strip() if os.path.exists(err_path) else ""
            raise KforgeError("kforge tune failed (exit %d): %s" % (rc, msg[-2000:] or "see its messages above"))
        results = [_result(line, tune_params) for line in lines]
        ok = [r for r in results if "__error__" not in r]
        for r in ok:  # Kernel Tuner's metrics: functions of a result, in order (one may use the one before)
            for name, f in (metrics or {}).items():
                r[name] = f(r) if callable(f) else _metric(name, f, r)
        if not quiet and ok:
            best = min(ok, key=lambda r: r["time"])
            print("best performing configuration:",
                  ", ".join("%s=%s" % (k, best[k]) for k in tune_params), "time=%.3f ms" % best["time"])
        first = lines[0] if lines else {}
        env = {"device_name": first.get("device", ""), "kforge_version": first.get("kforge", ""),
               "cc": first.get("cc", ""), "driver": first.get("driver", ""), "nvrtc": first.get("nvrtc", ""),
               "problem_size": problem_size, "tune_params": tune_params, "compiler_options": compiler_options,
               "iterations": iterations, "strategy": strategy or "brute_force",
               "kforge_strategy": _STRATEGIES[strategy] or "default", "total_time": time.time() - t0,
               "kforge_results": [dict(x) for x in lines]}
        return results, env
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


_METRIC_NAMES = {"abs": abs, "min": min, "max": max, "round": round, "int": int, "float": float, "pow": pow,
                 "sqrt": math.sqrt, "log": math.log, "log2": math.log2, "ceil": math.ceil, "floor": math.floor}


def _metric(name, expr, r):
    """A metric given as a string, as Kernel Tuner evaluates it (util.process_metrics): each word that
    names a parameter, a result or an earlier metric replaced by its value, then evaluated."""
    text = "".join(str(r[w]) if w in r else w for w in re.split(r"([a-zA-Z0-9_]+)", expr))
    try:
        return eval(text, {"__builtins__": {}}, dict(_METRIC_NAMES))
    except Exception as e:
        raise KforgeError("metrics[%r]: %r (%r for this result): %s: %s" % (name, expr, text, type(e).__name__, e))


def _impossible(a):
    """An answer no output of a kernel equals unless it is this: NaN for floats, every integer plus one
    (so that the reference leaves no element at its first value).  The host then compares (and, with
    $KFORGE_SAVE_OUTPUTS, writes) every output that is not exactly it."""
    if a.dtype.kind == "f":
        return numpy.full(a.shape, numpy.nan, dtype=a.dtype)
    return (a + 1).astype(a.dtype)


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None):
    """Kernel Tuner's run_kernel on kforge: compiles the kernel with params (each one value), runs it
    once on the arguments and returns a list with one entry per argument, in order: an array argument
    as the GPU left it (a new array of its shape and dtype), a scalar as given.

    kforge compares every output with an answer it cannot have (NaN, or each integer plus one); the
    worker writes the outputs it compares as .npy files ($KFORGE_SAVE_OUTPUTS), and one it does not
    write equalled that answer bit for bit.  A kernel that does not compile or launch raises
    KforgeError with kforge's message (Kernel Tuner raises too)."""
    for what, v in (("smem_args", smem_args), ("texmem_args", texmem_args)):
        if v:
            raise KforgeError("%s: not supported by kforge's front end" % what)
    _check_lang(lang)
    arguments, _, cmem_args = _on_host(arguments, None, cmem_args)
    if not isinstance(params, dict):
        raise KforgeError("params: expected a dict of parameter values, got %r" % (type(params),))
    tune_params = {}
    for k, v in params.items():
        if isinstance(v, (list, tuple, numpy.ndarray)):
            raise KforgeError("params[%r]: run_kernel takes one value per parameter, got %r" % (k, v))
        tune_params[k] = [v]
    answer = [_impossible(a) if isinstance(a, numpy.ndarray) else None for a in arguments]
    if not any(x is not None for x in answer):
        raise KforgeError("arguments: no array: run_kernel returns what the kernel writes into arrays")
    folder = tempfile.mkdtemp(prefix="kforge-py.")
    keep = os.environ.get("KFORGE_PY_KEEP")
    try:
        spec = _spec(folder, kernel_name, kernel_source, problem_size, arguments, tune_params,
                     (grid_div_x, grid_div_y, grid_div_z), None, answer, 0.0, cmem_args, compiler_options,
                     block_size_names, None, defines, rtol=0.0)
        spec["bench"] = {"warmup": 0, "min_reps": 1, "max_reps": 1}
        cfg = os.path.join(folder, "run.json")
        with open(cfg, "w") as f:
            json.dump(spec, f, indent=1)
        outdir = os.path.join(folder, "outputs")
        os.mkdir(outdir)
        res = os.path.join(folder, "results.jsonl")
        cmd = [_binary(), "run", cfg, "--results", res, "--no-resume", "--format", "json", "-q", "--device",
               str(device)]
        env = dict(_env(spec), KFORGE_SAVE_OUTPUTS=outdir)
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines, _ = _read_lines(res, 0)
        st = lines[-1].get("status") if lines else None
        if p.returncode not in (0, 1) or st not in ("ok", "wrong"):
            why = (lines[-1].get("message") if lines else "") or p.stderr.strip()[-2000:]
            raise KforgeError("run_kernel: kforge run %s (exit %d): %s" % (st or "failed", p.returncode, why))
        out = []
        for i, a in enumerate(arguments):
            if not isinstance(a, numpy.ndarray):
                out.append(a)
                continue
            path = os.path.join(outdir, "arg%d.npy" % i)
            got = numpy.load(path) if os.path.exists(path) else answer[i]
            if got.size != a.size:
                raise KforgeError("run_kernel: arguments[%d]: %d elements came back for %d" % (i, got.size, a.size))
            out.append(numpy.asarray(got, dtype=a.dtype).reshape(a.shape).copy())
        return out
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
