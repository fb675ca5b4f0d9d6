"""Reliability, limits: every numeric input has a valid range that also bounds the cost, checked before any work starts;
results are numerically honest (never a silent 0, -inf or negative time). One test per case found when the inputs were tried carelessly and hostilely.

The limits live in :mod:`msjgym.core.limits` (documented in docs/limits.md). These tests run no new kernels: they
check refusals (fast, before anything is allocated or compiled), the honesty warnings on metrics, and the Ctrl-C
latency of the cached FCFS kernel at the largest phase count allowed.
"""
from __future__ import annotations

import _thread
import argparse
import json
import math
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from msjgym import api
from msjgym.cli import main
from msjgym.core import histogram, limits
from msjgym.core.distributions import Erlang, from_spec
from msjgym.core.estimates import Estimate
from msjgym.errors import MsjgymError, ScenarioError
from msjgym.evaluate import sweep
from msjgym.evaluate.evaluator import evaluate, honest
from msjgym.evaluate.report import format_table
from msjgym.evaluate.result import Result

ROOT = Path(__file__).resolve().parents[1]


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``msjgym ARGV`` in this process: (exit status, stdout, stderr). argparse's own errors are returned too."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(capsys, *argv: str, key: str, seconds: float = 1.0) -> str:
    """The command fails with exit status 2 and one ``msjgym: error:`` line naming ``key``, within ``seconds`` of CPU
    time (not wall-clock time, which a loaded machine stretches)."""
    start = time.process_time()
    status, out, err = _cli(capsys, *argv)
    elapsed = time.process_time() - start
    lines = err.strip().splitlines()
    assert status == 2 and out == "", (status, out, err)
    assert len(lines) == 1 and lines[0].startswith("msjgym: error:") and "Traceback" not in err, err
    assert key in lines[0], lines[0]
    assert elapsed < seconds, f"{elapsed:.2f} s: the check must come before any work"
    return lines[0]


def _toml(tmp_path: Path, service: str, servers: object = 2, load: float = 0.5) -> str:
    path = tmp_path / "scenario.toml"
    path.write_text(f"servers = {servers}\nload = {load}\n[[classes]]\nneed = 1\nservice = {service}\n")
    return str(path)


# ---------------------------------------------------------------------------------------------------------------
# Huge or extreme numbers


def test_servers_1e308_is_refused_with_its_range(capsys):
    """Issue: "`msjgym evaluate one-and-n --param servers=1e308` ... end[s] in `OverflowError` tracebacks"."""
    line = _one_line_error(capsys, "evaluate", "one-and-n", "--policy", "fcfs", "--param", "servers=1e308",
                           key="servers = 1e+308")
    assert f"[1, {limits.MAX_SERVERS:,}]" in line


def test_jobs_1e20_is_refused_with_its_range(capsys):
    """Issue: "`msjgym evaluate one-and-n --jobs 100000000000000000000` end[s] in `OverflowError` tracebacks"."""
    line = _one_line_error(capsys, "evaluate", "one-and-n", "--policy", "fcfs", "--jobs", str(10**20), key="jobs")
    assert f"{limits.MAX_JOBS:,}" in line
    for name, value in (("reps", 10**9), ("warmup", 10**20), ("batches", 10**9), ("seed", 2**200)):
        with pytest.raises(MsjgymError, match=rf"^{name} = .*must be an integer in"):
            evaluate("one-and-n", "fcfs", **{name: value})


@pytest.mark.parametrize("rate", ["1e-300", "1e308"])
def test_extreme_service_rate_of_a_builtin_is_refused(capsys, rate):
    """Issue: "a service rate of 1e-300 or 1e308 (e.g. `--param mu_1=1e-300` ...) crashes the scorecard
    (`ZeroDivisionError`, `OverflowError` from the moments)"; 1e308 also blamed a derived "arrival_rate = nan"."""
    line = _one_line_error(capsys, "evaluate", "one-and-n", "--policy", "fcfs", "--param", f"mu_1={rate}",
                           key="mu_1 = ")
    assert "[1e-15, 1e+15]" in line


@pytest.mark.parametrize("rate", [1e308, 1e-300])
def test_extreme_service_rate_in_a_toml_scenario_is_refused(tmp_path, rate):
    """Issue: "in a TOML scenario `service = { dist = "exp", rate = 1e308 }`) crashes the scorecard"."""
    path = _toml(tmp_path, f'{{ dist = "exp", rate = {rate!r} }}')
    with pytest.raises(ScenarioError, match=r"classes\[0\]\.service: its mean .* is outside \[1e-15, 1e\+15\]"):
        api.load_scenario(path)


def test_a_law_whose_second_moment_overflows_is_refused():
    """Issue: "`OverflowError` from the moments" — a law whose E[S^2] is not a float64 is refused up front."""
    with pytest.raises(ScenarioError, match=r"second moment .* overflows"):
        from_spec({"dist": "lognormal", "mu": -400.0, "sigma": 28.3})  # mean 1.5, E[S^2] = e^801


def test_time_scales_too_far_apart_are_refused_not_silently_wrong():
    """Issue: "some extreme but "valid" laws give silently wrong metrics (zero utilization at a stated load,
    negative waiting times ...) with no warning": the clock rounded the short services to 0."""
    for name, overrides, key in (("one-and-n", {"mu_n": 1e-14}, "arrival_rate"),
                                 ("lb-dispatch", {"lam": 1e-300}, "lam"),
                                 ("loss-full-access", {"lam": 1e-300}, "lam")):
        with pytest.raises(ScenarioError, match=rf"(^|: ){key} = .*must be at most 1e\+09 times"):
            api.load_scenario(name, overrides)


def test_percentiles_outside_the_histogram_carry_a_warning():
    """Issue: "... percentiles of ±inf) with no warning": the table marks them and says why, the JSON keeps the
    warning beside the null."""
    metrics = honest({"response_time_p95": Estimate(math.inf, 0.0), "response_time_p99[1]": Estimate(-math.inf, 0.0),
                      "waiting_time": Estimate(-1e-3, 1e-4), "response_time": Estimate(2.0, 0.1),
                      "waiting_time[1]": Estimate(-1e-14, 9e-14)})
    assert "above the percentile histogram's range" in metrics["response_time_p95"].warning
    assert f"at least {histogram.HIGH:g}" in metrics["response_time_p95"].warning
    assert "below the percentile histogram's range" in metrics["response_time_p99[1]"].warning
    assert "negative" in metrics["waiting_time"].warning
    assert metrics["response_time"].warning is None
    assert metrics["waiting_time[1]"].warning is None  # rounding noise around 0 (a class that never waits)
    assert math.isnan(metrics["response_time_p95"].ci95)  # no half-width of 0 around an infinity
    result = Result(scenario="s", family="msj", policy="fcfs", params={}, stable=True, metrics=metrics, reps=2,
                    jobs=10, warmup=1, seed=0, events=10, wall_seconds=0.0)
    table = format_table(result)
    assert "inf (!)" in table and "(!) response_time_p95: above the percentile histogram's range" in table
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["metrics"]["response_time_p95"]["mean"] is None
    assert data["metrics"]["response_time_p95"]["warning"].startswith("above the percentile histogram's range")
    assert "warning" not in data["metrics"]["response_time"]


# ---------------------------------------------------------------------------------------------------------------
# No upper limits, so a run never ends


@pytest.mark.parametrize("name, overrides", [
    ("lb-dispatch", {"servers": 10**11}), ("loss-full-access", {"servers": 10**10}),
    ("finite-skip-fig3", {"servers": 1e308}), ("one-and-n", {"servers": 10**8})])
def test_absurd_servers_are_refused_in_every_family(name, overrides):
    """Issue: "A scenario with an absurd number of servers ... hang[s] instead of being refused"."""
    start = time.perf_counter()
    with pytest.raises(ScenarioError, match=rf"servers = .*must be an integer in \[1, {limits.MAX_SERVERS:,}\]"):
        api.load_scenario(name, overrides)
    assert time.perf_counter() - start < 1.0


def test_absurd_servers_in_a_toml_scenario_are_refused(tmp_path):
    """Issue: "A scenario with an absurd number of servers ... hang[s] instead of being refused"."""
    with pytest.raises(ScenarioError, match=rf"servers = 1000000000000: .*\[1, {limits.MAX_SERVERS:,}\]"):
        api.load_scenario(_toml(tmp_path, '{ dist = "exp", rate = 1.0 }', servers=10**12))


def test_reproduce_refuses_absurd_sizes_before_running(capsys, tmp_path):
    """Issue: "Every numeric input has a documented valid range that also bounds the cost (servers, ..., jobs ...)",
    for `msjgym reproduce` too."""
    _one_line_error(capsys, "reproduce", "zero-queueing", "--max-servers", str(10**11), "--out", str(tmp_path),
                    key="--max-servers = 100000000000: must be an integer in [1, 10,000,000]")
    _one_line_error(capsys, "reproduce", "lb-tables", "--jobs", str(10**20), "--out", str(tmp_path), key="--jobs")
    assert not any(tmp_path.iterdir())


def test_a_state_too_large_for_memory_is_refused_before_it_is_allocated(capsys):
    """Issue: "a huge state allocation must not lock out Ctrl-C: refuse such sizes before allocating" (each of
    --reps and --batches within its range, their product not)."""
    line = _one_line_error(capsys, "evaluate", "one-and-n", "--policy", "fcfs", "--reps", "10000", "--batches",
                           "10000", key="reps=10000, batches=10000")
    assert "GiB; must be at most 4 GiB" in line


def test_absurd_phase_count_is_refused_before_anything_is_built(tmp_path):
    """Issue: "an Erlang law with an absurd phase count (where Ctrl-C is then ignored for many seconds)"."""
    start = time.perf_counter()
    with pytest.raises(ScenarioError, match=rf"service\.k = 1000000000: must be an integer in \[1, "
                                            rf"{limits.MAX_PHASES}\]"):
        api.load_scenario(_toml(tmp_path, '{ dist = "erlang", k = 1000000000, mean = 1.0 }'))
    with pytest.raises(ScenarioError, match="Erlang.k"):
        Erlang(k=10**9, rate=1.0).phase_type()
    with pytest.raises(ScenarioError, match=rf"sum to 2000 phases: must be at most {limits.MAX_PHASES}"):
        from_spec({"dist": "hypererlang", "probs": [0.5, 0.5], "k": [1000, 1000], "rates": [1.0, 1.0]})
    with pytest.raises(ScenarioError, match="alpha.*phases: must be at most"):
        from_spec({"dist": "ph", "alpha": [1.0] + [0.0] * limits.MAX_PHASES, "S": [[-1.0]]})
    assert time.perf_counter() - start < 1.0


def test_ctrl_c_is_honoured_within_a_second_at_the_largest_phase_count(tmp_path):
    """Issue: "Ctrl-C is honoured within a second everywhere": at the largest phase count allowed, a chunk of the
    compiled loop (where Ctrl-C waits) still ends within a second (the FCFS kernel, already compiled).

    The run is bounded (about a minute uninterrupted on an idle core), so a lost interrupt fails the test instead of
    hanging it. Python drops a KeyboardInterrupt that lands inside a finalizer (``__del__``, a weakref callback:
    "Exception ignored in ..."), so, as a user would, the test presses Ctrl-C again each second until it is honoured
    (at most 5 times) and measures the latency from the press that was honoured."""
    path = _toml(tmp_path, f'{{ dist = "erlang", k = {limits.MAX_PHASES}, mean = 1.0 }}')
    evaluate(path, "fcfs", reps=1, jobs=1000, seed=1, references=False)  # warm: compile or load from the cache
    sent: list[float] = []
    honoured = threading.Event()

    def interrupt() -> None:
        while len(sent) < 5 and not honoured.is_set():
            sent.append(time.perf_counter())
            _thread.interrupt_main()
            honoured.wait(1.0)

    timer = threading.Timer(1.0, interrupt)
    # Python's own Ctrl-C handler, as in the command line's process: a test runner's worker may have SIGINT ignored
    # or left at the OS default (then interrupt_main does nothing), depending on the tests it ran before
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            evaluate(path, "fcfs", reps=1, jobs=3 * 10**7, seed=1, references=False)
        arrived = time.perf_counter()
        honoured.set()
        latency = arrived - sent[-1]
    finally:
        honoured.set()
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    assert latency < 1.0, f"Ctrl-C took {latency:.2f} s (pressed {len(sent)} time(s))"


def test_huge_window_for_a_policy_file_is_refused(capsys):
    """Issue: "`--window 1000000` with a policy file (`--policy examples/my_policy.py:PatientFirstFit`) ...
    hang[s] instead of being refused"."""
    line = _one_line_error(capsys, "evaluate", "one-and-n", "--policy",
                           str(ROOT / "examples" / "my_policy.py") + ":PatientFirstFit", "--window", "1000000",
                           key="--window = 1000000")
    assert f"[1, {limits.MAX_WINDOW:,}]" in line


def test_huge_window_of_an_environment_or_levels_of_a_dispatcher_is_refused(capsys):
    """Issue: "`--window 1000000` with a policy file ... hang[s]": the same bound for the environment's ``window``
    and a dispatcher's ``--levels``."""
    import gymnasium as gym
    import msjgym.envs  # noqa: F401  registers the environments

    with pytest.raises(MsjgymError, match=rf"window = 1000000: must be an integer in \[1, {limits.MAX_WINDOW:,}\]"):
        gym.make("msjgym/MSJ-v0", window=10**6)
    _one_line_error(capsys, "evaluate", "lb-dispatch", "--policy", str(ROOT / "examples" / "my_dispatcher.py")
                    + ":" + _first_definition(ROOT / "examples" / "my_dispatcher.py"), "--levels", "1000000",
                    key="levels = 1000000: must be an integer in [1, 10,000]")


def _first_definition(path: Path) -> str:
    """The name of the first class or function defined in ``path`` (an example policy)."""
    import ast

    return next(node.name for node in ast.parse(path.read_text()).body
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)))


def test_a_sweep_grid_of_1e8_points_is_refused_before_it_is_listed(capsys, tmp_path, monkeypatch):
    """Issue: "a sweep grid of 10⁸ points (memory grows without bound; see `msjgym sweep --help`) hang[s]": refused
    before any point is listed (the grid is never expanded; the memory allocated stays far below one point per
    entry: 10⁸ points would take gigabytes, the 2 axes of 10⁴ values about a megabyte). What happened is asserted,
    not how long it took (tracing the memory slows the run; a loaded machine stretches it)."""
    listed = []
    monkeypatch.setattr(sweep, "grid_points", lambda *args, **kwargs: listed.append(args) or [])
    tracemalloc.start()
    try:
        line = _one_line_error(capsys, "sweep", "one-and-n", "--policy", "fcfs", "--grid", "servers=1:10000:10000",
                               "--grid", "p_n=0:1:10000", "--out", str(tmp_path), key="--grid", seconds=math.inf)
        assert f"100,000,000 points; must be at most {limits.MAX_GRID_POINTS:,}" in line
        _one_line_error(capsys, "sweep", "one-and-n", "--policy", "fcfs", "--grid", "p_n=0.01:0.5:100000000",
                        "--out", str(tmp_path), key="k of a:b:k must be an integer in [1, 1,000,000]", seconds=math.inf)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert listed == [] and peak < 50e6, (listed, peak)
    assert not (tmp_path / "results.sqlite").exists()


def test_a_large_sweep_says_its_cost_before_starting(capsys):
    """Issue: "where a run will be long, say the estimated cost before starting" (for a sweep grid)."""
    args = argparse.Namespace(reps=10, jobs=100_000, warmup=None, workers=2, backend="local")
    sweep._check_size([("servers", list(range(2, 2002))), ("p_n", [0.1] * 50)], 1, args)
    err = capsys.readouterr().err
    assert err.startswith("msjgym: note: this sweep is 100,000 points x 1 policies x 10 replications = 1,000,000 "
                          "tasks") and "at least" in err


def test_no_traceback_in_a_subprocess():
    """Issue: "... end in `OverflowError` tracebacks": the real command, as a user runs it."""
    out = subprocess.run([sys.executable, "-m", "msjgym", "evaluate", "one-and-n", "--policy", "fcfs",
                          "--param", "servers=1e308"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("msjgym: error: one-and-n: servers = 1e+308")
