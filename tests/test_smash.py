"""SMASH(w) (``msjgym.policies.msj.smash``): its limits (w = 1 is FCFS, an unbounded window is non-preemptive MSF),
bit for bit; its twin (the environment driven by its agent reproduces the compiled run); its stopping rule on
random event sequences; its parameter's range."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import exp_class, model
from msjgym.api import load_scenario, policy_spec
from msjgym.core import rng
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.family import FAMILY
from msjgym.policies.msj.smash import SMASH
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import S_BUSY
from test_twin import MIXED, assert_twins


def _mixed(tmp_path, load: float = 0.75) -> str:
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED.replace("load = 0.6", f"load = {load}"))
    return str(path)


def _same_run(scenario: str, params: dict, a, b, jobs: int = 20_000) -> None:
    ra = evaluate(load_scenario(scenario, params), a, reps=2, jobs=jobs, seed=3, references=False)
    rb = evaluate(load_scenario(scenario, params), b, reps=2, jobs=jobs, seed=3, references=False)
    assert ra.events == rb.events
    assert ra.replications == rb.replications


def test_smash_is_discovered_with_its_parameter():
    assert POLICIES["smash"] is SMASH and policy_spec(FAMILY, "smash") is SMASH
    assert not SMASH.preemptive and SMASH.value("w") == 4 and SMASH.schedule is not None
    assert SMASH.bind(w=7).value("w") == 7 and SMASH.bind(w=7).schedule is SMASH.schedule
    for bad in (0, 2.5, -1, "3"):
        with pytest.raises(PolicyError, match="w = "):
            SMASH.bind(w=bad)
    with pytest.raises(PolicyError, match="no parameter 'v'"):
        SMASH.bind(v=2)


@pytest.mark.parametrize("scenario", ["mixed", "finite-skip-fig6"])
def test_window_one_is_fcfs(scenario, tmp_path):
    """With w = 1 the window is the oldest waiting job: it starts if it fits, else everything waits (FCFS)."""
    name = _mixed(tmp_path) if scenario == "mixed" else scenario
    _same_run(name, {}, SMASH.bind(w=1), "fcfs")


@pytest.mark.parametrize("scenario", ["mixed", "finite-skip-fig6"])
def test_unbounded_window_is_nonpreemptive_msf(scenario, tmp_path):
    """With a window longer than any queue every waiting job is a candidate: the largest need that fits starts, the
    oldest among equal needs (classes sharing a need merged by arrival order), as msf-nonpreemptive does."""
    name = _mixed(tmp_path) if scenario == "mixed" else scenario
    _same_run(name, {}, SMASH.bind(w=10 ** 9), "msf-nonpreemptive")


@pytest.mark.parametrize("w", [2, 3, 8])
def test_twin(w, tmp_path):
    """The environment driven by SMASH's agent (observation only, W = 128 >= w) reproduces the compiled run."""
    assert_twins(_mixed(tmp_path, 0.75), {}, SMASH.bind(w=w), jobs=10_000, warmup=1_000)


def test_twin_on_fig6(tmp_path):
    assert_twins("finite-skip-fig6", {"load": 0.8}, SMASH.bind(w=3), jobs=10_000, warmup=1_000)


def test_stopping_rule_on_random_events():
    """After every arrival and completion: no job among the w oldest waiting fits in the free servers, no job in
    service was paused, and the jobs started since the last event were, each at its start, the largest need that
    fitted among the w oldest waiting (checked through the stopping rule and non-preemption)."""
    gen = np.random.default_rng(5)
    needs = (1, 2, 3, 5, 8)
    m = model(8, 1.0, *(exp_class(f"v{v}", v, 1 / len(needs)) for v in needs))
    for w in (1, 2, 3, 6):
        s = MSJSimulation(m, SMASH.bind(w=w), RunConfig(debug=True), rng.spawn_states(0, 1)[0])
        serving: set[int] = set()
        for _ in range(600):
            running = [j for j, _, on in s.jobs() if on]
            if running and gen.random() < 0.45:
                s.complete(int(gen.choice(running)))
            else:
                s.arrive(int(gen.integers(len(needs))), 1e9)
            s.check()
            jobs = s.jobs()
            now_serving = {j for j, _, on in jobs if on}
            assert serving - now_serving <= {j for j in serving if j not in {k for k, _, _ in jobs}}, "preempted"
            serving = now_serving
            free = 8 - int(s.state.sys_i[0, S_BUSY])
            window = [c for _, c, on in jobs if not on][:w]
            assert all(needs[c] > free for c in window), (w, window, free)


def test_the_command_line_binds_the_window(capsys):
    """``--param w=...`` binds SMASH's window: w = 1 through the command line gives fcfs's numbers bit for bit, and
    the run is labelled with the bound value."""
    import json

    from msjgym.cli import main

    runs = {}
    for policy, extra in (("smash", ["--param", "w=1"]), ("fcfs", [])):
        assert main(["evaluate", "finite-skip-fig6", "--policy", policy, *extra, "--reps", "2", "--jobs", "3000",
                     "--seed", "2", "--json", "--no-progress"]) == 0
        runs[policy] = json.loads(capsys.readouterr().out)
    assert runs["smash"]["policy"] == "smash(w=1)"
    assert runs["smash"]["metrics"] == runs["fcfs"]["metrics"]
    assert main(["evaluate", "finite-skip-fig6", "--policy", "smash", "--param", "w=0"]) == 2
    assert "w = 0" in capsys.readouterr().err
