"""Compiled policies of the user's (``msjgym.systems.msj.compiled``): run inside the event loop, identical to the
built-in they re-implement, and every invalid decision is one ``PolicyError`` naming the event."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from msjgym.core import rng
from msjgym.core.jit import cached
from msjgym.errors import PolicyError
from msjgym.evaluate import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj import compiled
from msjgym.core.compiling import compile_units
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig, loop_unit
from msjgym.systems.msj.contract import hook_signatures
from conftest import exp_class, model

ROOT = Path(__file__).resolve().parents[1]
FIRST_FIT = f"{ROOT / 'examples' / 'compiled_first_fit.py'}:first_fit"
BAD = Path(__file__).with_name("data_compiled_policies.py")


def benchmark_model(servers: int = 32, load: float = 0.35):
    """The events benchmark's model: needs 1 (p = 0.9) or all n servers (p = 0.1), Exp(1) durations."""
    lam = load * servers / (0.9 * 1 + 0.1 * servers)
    return model(servers, lam, exp_class("1", 1, 0.9), exp_class("n", servers, 0.1))


def test_user_first_fit_is_the_builtin_trajectory_bit_for_bit() -> None:
    m = benchmark_model()
    sims = [MSJSimulation(m, policy, RunConfig(jobs=4000, warmup=0, batches=4, debug=True),
                          rng.spawn_states(11, 1)[0])
            for policy in (POLICIES["first-fit"], compiled.resolve(FIRST_FIT))]
    for _ in range(3000):  # event by event: the same state after every event
        statuses = [sim.advance(0, 1) for sim in sims]
        assert statuses[0] == statuses[1]
        for a, b in zip(sims[0].state, sims[1].state):
            np.testing.assert_array_equal(a, b)
    assert sims[0].hooks[3] == 0 and sims[1].hooks[0] == 0 and sims[1].hooks[3] != 0  # the same loop, other hooks


def test_user_first_fit_evaluates_to_the_builtin_metrics_bit_for_bit() -> None:
    m = benchmark_model()
    builtin, user = (evaluate(m, policy, reps=2, jobs=30_000, seed=5) for policy in ("first-fit", FIRST_FIT))
    assert user.policy == FIRST_FIT and user.events == builtin.events
    assert {k: (v.mean, v.ci95) for k, v in user.metrics.items()} == \
        {k: (v.mean, v.ci95) for k, v in builtin.metrics.items()}
    kernel = compiled.resolve(FIRST_FIT).compiled.kernel
    assert cached(kernel, hook_signatures()[3])  # the user's kernel alone, compiled for the loop's hook


@pytest.mark.parametrize("servers, message", [
    (7, r"event \d+ \(time [-0-9.e+]+\): invalid decision: there is no class c .* \(value 2\)"),
    (8, r"invalid decision: start\(s, c\): no class-c job waits \(value \d\)"),
    (9, r"invalid decision: start\(s, c\): a class-c job needs more servers than are free \(over-allocation\)"),
    (11, r"invalid decision: a policy declared with preemptive=False preempted a job"),
    (12, r"invalid decision: there is no job j in the system \(value -5\)"),
])
def test_an_invalid_decision_is_one_error_naming_the_replication_and_event(servers, message) -> None:
    m = model(servers, 0.5 * servers / 1.9, exp_class("a", 1, 0.9), exp_class("b", servers, 0.1))
    with pytest.raises(PolicyError, match=rf"policy {BAD}:misbehave: replication 0, .*{message}"):
        evaluate(m, f"{BAD}:misbehave", reps=1, jobs=2000, seed=1)


def test_a_policy_numba_cannot_compile_is_one_error() -> None:
    with pytest.raises(PolicyError, match="numba cannot compile it"):
        evaluate(benchmark_model(4), f"{BAD}:allocates", reps=1, jobs=100, seed=1)


def test_the_declaration_is_checked_and_the_object_is_not_callable_from_python() -> None:
    with pytest.raises(PolicyError, match="must be a function of one argument"):
        compiled.policy(lambda s, t: None)
    with pytest.raises(TypeError, match="runs inside msjgym's event loop"):
        compiled.resolve(FIRST_FIT).compiled(None)


def _twice(tmp_path: Path, policy: str) -> list[subprocess.CompletedProcess]:
    """``msjgym evaluate one-and-n --policy POLICY --json`` twice, each in a fresh process."""
    env = {"MSJGYM_CACHE_DIR": str(tmp_path / "cache"), "PATH": "", "PYTHONPATH": str(ROOT),
           **{k: v for k, v in os.environ.items() if k == "NUMBA_CACHE_DIR"}}  # the loop's cache: this process's
    run = [sys.executable, "-m", "msjgym", "evaluate", "one-and-n", "--policy", policy, "--reps", "2",
           "--jobs", "2000", "--seed", "3", "--json"]
    return [subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path) for _ in range(2)]


def _same_results(first: subprocess.CompletedProcess, second: subprocess.CompletedProcess, policy: str) -> None:
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    results = [json.loads(out.stdout) for out in (first, second)]
    for result in results:
        del result["wall_seconds"], result["compile_seconds"]
    assert results[0] == results[1] and results[0]["policy"] == policy


def test_the_cli_compiles_the_policy_alone_once_and_says_so(tmp_path) -> None:
    copy = tmp_path / "compiled_first_fit.py"  # a file never compiled before: its kernel compiles, the loop does not
    copy.write_text((ROOT / "examples" / "compiled_first_fit.py").read_text())
    policy = f"{copy}:first_fit"
    compile_units([loop_unit("run")])  # the loop compiled (or loaded) once per machine, before: not part of this
    first, second = _twice(tmp_path, policy)
    assert f"msjgym: compiling policy {policy} (" in first.stderr, first.stderr
    assert "event loop" not in first.stderr and "compiling" not in second.stderr  # cached
    _same_results(first, second, policy)


HELPER_POLICY = """
import numba
import msjgym.systems.msj.compiled as msj


@numba.njit
def fits(s, c):
    j = msj.first_waiting(s, c)
    return j >= 0 and msj.need(s, c) <= msj.free_servers(s)


@msj.policy
def greedy(s):
    while True:
        best = -1
        for c in range(msj.num_classes(s)):
            if fits(s, c):
                best = c
                break
        if best < 0:
            return
        msj.start(s, best)
"""


def test_a_policy_calling_its_own_compiled_helper_runs_again_in_a_fresh_process(tmp_path) -> None:
    """The second run loads the policy (helper included) from the cache: no ``No module named '<dynamic>'``."""
    (tmp_path / "helper_policy.py").write_text(HELPER_POLICY)
    policy = f"{tmp_path / 'helper_policy.py'}:greedy"
    first, second = _twice(tmp_path, policy)
    assert "compiling policy" in first.stderr and "compiling" not in second.stderr, first.stderr + second.stderr
    _same_results(first, second, policy)
