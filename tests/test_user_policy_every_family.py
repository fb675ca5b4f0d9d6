"""A user's policy file, with ``act(observation, action_mask)`` and built from the environment's spec, evaluates on a
scenario of every family through ``msjgym evaluate --policy FILE.py:NAME`` (the one policy contract)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from msjgym import api
from msjgym.cli import main

POLICY_FILE = '''
import numpy as np


class FirstAllowed:
    """The lowest allowed action: start the oldest waiting job that fits (MSJ, start mode: first fit), the first
    sampled server (dispatch)."""

    def __init__(self, spec):
        self.actions = spec.action_count

    def act(self, observation, action_mask):
        assert observation.shape == (len(observation),) and action_mask.shape == (self.actions,)
        return int(np.flatnonzero(action_mask)[0])


class LastAllowed(FirstAllowed):
    """The highest allowed action: the widest width the sample allows (loss: greedy)."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


class OldestK:
    """Finite-skip: the k oldest jobs share the capacity equally (LPS); the action is a vector of rates."""

    def __init__(self, spec):
        self.k = spec.servers

    def act(self, observation, action_mask):
        assert action_mask is None
        n = len(observation["params"])
        return [1.0 / min(n, self.k) if j < self.k else 0.0 for j in range(n)]
'''

CASES = {  # family: (scenario, class, extra options)
    "msj": ("one-and-n", "FirstAllowed", ["--mode", "start"]),
    "loss": ("loss-sampled", "LastAllowed", []),
    "dispatch": ("lb-dispatch", "FirstAllowed", ["--observation", "sampled"]),
    "finite-skip": ("finite-skip-fig3", "OldestK", []),
}


def test_the_cases_name_families_of_the_registry() -> None:
    """The cases are the four built-in families' observations; every family (a new one too) that runs a policy of
    the user's is also run with misbehaving ones, from its smoke case (tests/test_reliability_policy.py)."""
    assert set(CASES) <= {f.name for f in api.families() if api.smoke_case(f).user_options is not None}
    assert all(api.family_of(scenario).name == family for family, (scenario, _, _) in CASES.items())


@pytest.mark.parametrize("family", CASES)
def test_a_policy_file_evaluates_on_every_family(tmp_path, capsys, family: str) -> None:
    path = tmp_path / "my_policy.py"
    path.write_text(POLICY_FILE)
    scenario, name, extra = CASES[family]
    status = main(["evaluate", scenario, "--policy", f"{path}:{name}", "--reps", "2", "--jobs", "3000", "--seed", "4",
                   "--json", "--no-progress", *extra])
    out = capsys.readouterr().out
    assert status == 0
    result = json.loads(out)
    assert result["family"] == family and result["policy"].endswith(f"my_policy.py:{name}")
    assert result["stable"] and result["metrics"]["response_time"]["mean"] > 0


def test_the_finite_skip_policy_of_ones_own_is_lps(tmp_path, capsys) -> None:
    """Control: the file's OldestK is LPS, so it gives the built-in lps's numbers on the same seeds."""
    path = tmp_path / "my_policy.py"
    path.write_text(POLICY_FILE)
    runs = []
    for policy in (f"{path}:OldestK", "lps"):
        assert main(["evaluate", "finite-skip-fig3", "--policy", policy, "--reps", "2", "--jobs", "3000", "--seed", "4",
                     "--json", "--no-progress"]) == 0
        runs.append(json.loads(capsys.readouterr().out)["metrics"]["response_time"]["mean"])
    assert runs[0] == pytest.approx(runs[1], rel=1e-12)


OFFSETS_FILE = '''
"""The examples' policies as they were written before the named views: observations read by hand-computed offsets."""
import numpy as np


class PatientFirstFit:
    def __init__(self, spec, patience=5.0):
        self.classes, self.window, self.patience = spec.scenario.model.num_classes, spec.window, patience

    def act(self, observation, action_mask):
        wait = self.window + self.classes
        oldest_age = observation[1 + 3 * self.classes + 2]
        if action_mask[0]:
            return 0
        if oldest_age > self.patience:
            return wait
        allowed = [a for a in range(wait) if action_mask[a]]
        return allowed[0] if allowed else wait


class Threshold:
    def __init__(self, spec):
        self.d = spec.d

    def act(self, observation):
        m, busy = int(observation[0]), float(observation[1])
        if m == self.d:
            return m
        return m if busy < 0.9 else 0


class JoinBelowThreshold:
    threshold = 2

    def act(self, observation):
        below = np.flatnonzero(observation < self.threshold)
        return int(below[0]) if below.size else int(np.argmin(observation))


class EqualShare:
    def __init__(self, spec):
        self.k = spec.servers

    def act(self, obs):
        caps = obs["params"].astype(float)
        servers = np.zeros(caps.size)
        free, active = float(self.k), list(range(caps.size))
        while active and free > 1e-12:
            share = free / len(active)
            capped = [j for j in active if caps[j] - servers[j] <= share]
            if not capped:
                servers[active] += share
                break
            for j in capped:
                free -= caps[j] - servers[j]
                servers[j] = caps[j]
            active = [j for j in active if j not in capped]
        return servers / self.k
'''

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VIEW_CASES = {  # family: (scenario, example file (reads the named views), class, extra options)
    "msj": ("one-and-n", "my_policy.py", "PatientFirstFit", ["--param", "arrival_rate=2.5"]),
    "loss": ("loss-full-access", "loss_threshold_policy.py", "Threshold", []),
    "dispatch": ("lb-dispatch", "my_dispatcher.py", "JoinBelowThreshold", ["--observation", "sampled"]),
    "finite-skip": ("finite-skip-fig4a", "my_finite_skip_policy.py", "EqualShare", []),
}


def test_the_view_cases_name_families_of_the_registry() -> None:
    assert set(VIEW_CASES) <= {f.name for f in api.families()}


@pytest.mark.parametrize("family", VIEW_CASES)
def test_a_policy_reading_the_named_views_decides_as_by_offsets(tmp_path, capsys, family: str) -> None:
    """The examples (named views: ``spec.view(observation)``) and their offset-reading originals give the same
    numbers through ``msjgym evaluate --policy FILE.py:NAME`` on the same seeds."""
    offsets = tmp_path / "offsets.py"
    offsets.write_text(OFFSETS_FILE)
    scenario, example, name, extra = VIEW_CASES[family]
    runs = []
    for policy in (f"{EXAMPLES / example}:{name}", f"{offsets}:{name}"):
        assert main(["evaluate", scenario, "--policy", policy, "--reps", "2", "--jobs", "3000", "--seed", "5",
                     "--json", "--no-progress", *extra]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0]["family"] == family and runs[0]["stable"]
    assert runs[0]["metrics"] == runs[1]["metrics"]
