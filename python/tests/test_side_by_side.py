"""tools/kt_side_by_side.py's table without a GPU: Kernel Tuner's results from planted cache files
(whole, and cut off as Kernel Tuner leaves it when it raises after a capped search), kforge's from
results lines, and the report's verdicts: the same candidates found, the best compared on them, the
targets (every candidate verified, best within 2%, 20x the candidates per second) and the bound."""
import contextlib
import importlib.util
import io
import itertools
import json
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
spec = importlib.util.spec_from_file_location("kt_side_by_side", os.path.join(ROOT, "tools", "kt_side_by_side.py"))
sbs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sbs)

PARAMS = {"block_size_x": [32, 64, 128], "tile": [1, 2, 4]}


def configs(n):
    return [dict(zip(PARAMS, v)) for v in itertools.product(*PARAMS.values())][:n]


def plant(path, n, times, cut=True, failed=()):
    """A Kernel Tuner cache file as it writes one: the header, then one entry a line, each ending in
    a comma; whole, it ends in the closing braces."""
    hdr = {"device_name": "NVIDIA H200", "kernel_name": "k", "problem_size": [1024], "tune_params_keys": list(PARAMS),
           "tune_params": PARAMS, "objective": "time", "cache": {}}
    text = json.dumps(hdr, indent="")[:-3]
    for i, c in enumerate(configs(n)):
        r = dict(c, time="CompilationFailedConfig" if i in failed else times[i], compile_time=100.0)
        text += "\n" + json.dumps({",".join(str(v) for v in c.values()): r})[1:-1] + ","
    if not cut:
        text = text[:-1] + "\n}\n}"
    with open(path, "w") as f:
        f.write(text)


def lines_for(cfgs, times, status="ok", compile_ms=1600.0, measure_ms=5.0):
    out = []
    for c, t in zip(cfgs, times):
        x = dict(c, axes=list(PARAMS), status=status if not callable(status) else status(c), median_ms=t,
                 compile_ms=compile_ms, setup_ms=0.0, verify_ms=1.0, bench_ms=measure_ms - 1.0, device="H200")
        out.append(x)
    return out


def make(tmp, name, kt_times, cli_lines, py_lines, wall_kt=20.0, wall_kf=0.5, cut=True, failed=()):
    d = tmp / name
    d.mkdir()
    plant(str(d / "kt-cache.json"), len(kt_times), kt_times, cut=cut, failed=failed)
    with contextlib.redirect_stdout(io.StringIO()):
        sbs.kt_from_cache(name, str(d / "kt-cache.json"), wall_kt, True, str(d / "kt.json"))
        sbs.kforge_summary(name, "kforge (CLI)", cli_lines, wall_kf, str(d / "cli.json"))
        sbs.kforge_summary(name, "kforge (Python)", py_lines, wall_kf, str(d / "py.json"))
    (d / "side.json").write_text(json.dumps({"kt_cap": 20, "kforge_time": 45, "budget": len(kt_times), "cpus": 16}))


def report(tmp):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sbs.report(str(tmp))
    return out.getvalue()


def test_cache_whole_and_cut_off(tmp_path):
    times = [0.5, 0.4, 0.3, 0.6]
    plant(str(tmp_path / "whole.json"), 4, times, cut=False)
    plant(str(tmp_path / "cut.json"), 4, times, cut=True)
    json.load(open(tmp_path / "whole.json"))  # the whole one is JSON as it is
    for f in ("whole.json", "cut.json"):
        res, keys = sbs.read_kt_cache(str(tmp_path / f))
        assert keys == list(PARAMS)
        assert [r["time"] for r in res] == times
    assert sbs.read_kt_cache(str(tmp_path / "none.json")) == ([], None)


def test_capped_run_same_candidates_met(tmp_path):
    kt = [0.50, 0.40, 0.30, 0.60, 0.70]
    cfgs = configs(5)
    make(tmp_path, "convolution", kt, lines_for(cfgs, [t * 0.99 for t in kt]), lines_for(cfgs, kt))
    text = report(tmp_path)
    assert "(KT capped at 20 s; kforge given its 5 candidates)" in text
    assert "| convolution | 5 / 5 / 5 (5 / 5)" in text
    # 5 candidates in 20 s against 5 in 0.5 s: 40x; bests 0.297 and 0.300 against 0.300
    assert "0.990 / 1.000 | 40.0x / 40.0x |" in text
    assert "targets (every candidate verified, best within 2%, cand/s >= 20x): met" in text
    # the bound from the CLI's lines: T = 20 s / 5 = 4000 ms, C = 1600 ms, M = 5 ms, P = 16
    assert "T 4000 ms, C 1600 ms, M 5.0 ms, P 16: bound 40.0x (overlapped) .. 38.1x (serial)" in text


def test_best_over_2pct_on_the_same_candidates_not_met(tmp_path):
    kt = [0.50, 0.40, 0.30, 0.60, 0.70]
    cfgs = configs(6)
    # kforge measured one more candidate, faster than anything: the comparison on the same five
    # candidates still sees its 0.31 against Kernel Tuner's 0.30
    mine = [0.50, 0.40, 0.31, 0.60, 0.70, 0.10]
    make(tmp_path, "matmul", kt, lines_for(cfgs, mine), lines_for(cfgs, mine))
    text = report(tmp_path)
    assert "| matmul | 5 / 6 / 6 (5 / 5)" in text
    assert "1.033 / 1.033" in text
    assert "NOT all met" in text


def test_wrong_candidate_not_met_compile_error_allowed(tmp_path):
    kt = [0.50, 0.40, 0.30, 0.60]
    cfgs = configs(4)
    wrong = lines_for(cfgs, kt, status=lambda c: "wrong" if c == cfgs[1] else "ok")
    make(tmp_path, "stencil", kt, wrong, lines_for(cfgs, kt))
    assert "NOT all met" in report(tmp_path)
    (tmp_path / "stencil" / "cli.json").unlink()
    # a candidate that does not compile is not one that ran: the targets can still be met
    noc = lines_for(cfgs, kt, status=lambda c: "compile_error" if c == cfgs[0] else "ok")
    with contextlib.redirect_stdout(io.StringIO()):
        sbs.kforge_summary("stencil", "kforge (CLI)", noc, 0.5, str(tmp_path / "stencil" / "cli.json"))
    text = report(tmp_path)
    assert "3 of 3 that ran (compile_error 1, ok 3)" in text
    assert ": met" in text


def test_kt_failed_candidates_and_missing_runs(tmp_path):
    kt = [0.50, 0.40, 0.30, 0.60]
    cfgs = configs(4)
    make(tmp_path, "pnpoly", kt, lines_for(cfgs, kt), lines_for(cfgs, kt), cut=False, failed=(2,))
    doc = json.load(open(tmp_path / "pnpoly" / "kt.json"))
    assert doc["candidates"] == 4 and doc["valid"] == 3 and doc["best_ms"] == 0.4 and doc["capped"]
    (tmp_path / "pnpoly" / "py.json").unlink()
    text = report(tmp_path)
    assert "pnpoly               kforge (Python)  missing" in text
    assert "NOT all met" in text


def test_floor_from_the_trace_the_kernel_runs_and_nvrtc(tmp_path):
    # W >= max(S + G, N C_1 / P): S from the CLI's trace, G = 8 runs of each of Kernel Tuner's times,
    # C_1 from compile.json; the ratio is at most Kernel Tuner's wall / W
    kt = [0.5, 0.4, 0.3, 0.6, 0.7]
    cfgs = configs(5)
    make(tmp_path, "convolution", kt, lines_for(cfgs, kt), lines_for(cfgs, kt), wall_kt=20.0)
    d = tmp_path / "convolution"
    (d / "cli.stderr").write_text("kforge tune ...\nkforge: trace 0.100 s [7]: gpu 0: cuInit\n"
                                  "kforge: trace 0.350 s [7]: gpu 0: cuInit done\n"
                                  "kforge: trace 0.700 s [7]: gpu 0: context made\n")
    (d / "compile.json").write_text(json.dumps({"cpus": 16, "one": {"s_per_cubin": 0.32},
                                                "pool": {"s_per_cubin": 0.04}}))
    text = report(tmp_path)
    # S 0.6 s, G 8 x 2.5 ms = 0.02 s; N C_1 / P = 5 x 0.32 / 16 = 0.1 s: W 0.62 s, 20 / 0.62 = 32.3x
    assert ("convolution          N 5, KT's wall 20.00 s; S 0.60 s, G 0.02 s (7+1 runs); N C_1 / P 0.10 s "
            "(C_1 320 ms, P 16; c_P 40.0 ms): W 0.62 s, bound 32.3x  (20x not excluded)") in text
    # compiles of 4 s each: 5 x 4 / 16 = 1.25 s, above S + G: 16.0x, 20x excluded
    (d / "compile.json").write_text(json.dumps({"cpus": 16, "one": {"s_per_cubin": 4.0},
                                                "pool": {"s_per_cubin": 0.5}}))
    assert "W 1.25 s, bound 16.0x  (below 20x: blocked)" in report(tmp_path)
    # no trace, no compile.json: G alone, and said so
    (d / "cli.stderr").unlink()
    (d / "compile.json").unlink()
    text = report(tmp_path)
    assert "S - s, G 0.02 s (7+1 runs); compiles not measured: W 0.02 s, bound 1000.0x" in text
    assert "(no driver start in the trace: S taken as 0)" in text
