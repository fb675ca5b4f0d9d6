"""Any policy — a file, a callable, a saved model — is evaluated like a built-in one, by ``msjgym.evaluate``."""
from __future__ import annotations

from pathlib import Path

import pytest

import msjgym
import cli_run
from msjgym.api import load_scenario
from msjgym.core.user_policy import load_user_policy
from msjgym.errors import PolicyError
from msjgym.systems.msj.agent import EnvSpec

ROOT = Path(__file__).resolve().parents[1]


def test_an_fcfs_callable_reproduces_the_builtin_fcfs_exactly():
    """Through ``msjgym.evaluate``, the function 'start the oldest waiting job if it fits, else wait' is FCFS: same
    seeds, same numbers bit for bit as the compiled FCFS (the same replications, warm-up and batches)."""
    scenario = load_scenario("one-and-n")
    spec = EnvSpec.make(scenario, "start", 8, None, None, 5_000, 500)
    wait = spec.action_count - 1

    def oldest_if_it_fits(observation, mask):
        return 0 if mask[0] else wait

    agent = msjgym.evaluate(scenario, oldest_if_it_fits, mode="start", window=8, reps=3, jobs=5_000, warmup=500,
                            seed=3)
    builtin = msjgym.evaluate(scenario, "fcfs", reps=3, jobs=5_000, warmup=500, seed=3)
    assert agent.policy == "oldest_if_it_fits"
    assert agent.replications == builtin.replications and agent.events == builtin.events


def test_example_policy_file_runs_through_the_cli():
    out = cli_run.msjgym("evaluate", "one-and-n", "--policy",
                         str(ROOT / "examples" / "my_policy.py") + ":PatientFirstFit", "--reps", "2", "--jobs", "5000",
                         "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert '"policy":' in out.stdout and "PatientFirstFit" in out.stdout


BAD = {
    "raises": ("def act(obs):\n    raise RuntimeError('boom')\n", "step 0: it raised RuntimeError: boom"),
    "out of range": ("def act(obs):\n    return 99\n", "action 99 is not allowed: out of range"),
    "not an action": ("def act(obs):\n    return 'x'\n", "not an action"),
    "masked": ("calls = [0]\ndef act(obs, mask):\n    calls[0] += 1\n    return 0 if calls[0] == 1 else "
               "int(mask.argmin())\n", "is not allowed now"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_faulty_policy_gets_one_clear_error(tmp_path, case):
    code, message = BAD[case]
    (tmp_path / "p.py").write_text(code)
    out = cli_run.msjgym("evaluate", "finite-skip-fig6", "--policy", f"{tmp_path / 'p.py'}:act", "--reps", "1",
                         "--jobs", "2000", "--seed", "1")
    assert out.returncode == 2 and out.stdout == "", out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msjgym: error: policy ") and message in lines[0], lines


@pytest.mark.parametrize("text, message", [("nofile.py:X", "no such file"), ("x.txt:X", "expected"),
                                           ("sb3:missing.zip", "no such file")])
def test_bad_policy_names(text, message):
    spec = EnvSpec.make(load_scenario("one-and-n"), "start", 8, None, None, 1000, 0)
    with pytest.raises(PolicyError, match=message):
        load_user_policy(text, spec)
