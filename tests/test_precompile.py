"""``msjgym.evaluate.precompile``: what it plans to compile, and one task run for real."""
from __future__ import annotations

import pytest

from msjgym import api
from msjgym.errors import MsjgymError
from msjgym.evaluate.precompile import Task, compile_task, plan, precompile


def test_plan_covers_every_family_once_per_loop_and_every_environment():
    loops, rest = plan()
    families = [f for f in api.families() if f.scenarios()]
    assert sorted(t.family for t in loops) == sorted({t.family for t in loops})  # one loop task per family
    planned = {(t.family, t.policy) for t in loops + rest if t.policy}
    for family in families:
        assert {t.family for t in loops} >= {family.name} or any(t.family == family.name for t in rest)
        assert {p for f, p in planned if f == family.name} <= set(family.policies())
        assert {t.env_id for t in rest if t.family == family.name and t.env_id} == set(family.env_ids)
        for policy in set(family.policies()) - {p for f, p in planned if f == family.name}:
            for name, _ in family.scenarios():  # left out only when no built-in scenario of its family runs it
                with pytest.raises(MsjgymError):
                    family.validate(family.load(name, {}), policy, api.RunSettings(reps=1, jobs=16, batches=1))


def test_one_task_loads_its_kernels_without_error():
    family = api.family("dispatch")
    label, seconds, error = compile_task(Task("dispatch", family.scenarios()[0][0], "random"))
    assert (label, error) == ("dispatch policy random", None) and seconds >= 0


def test_a_task_that_cannot_build_is_reported_not_raised():
    label, _, error = compile_task(Task("dispatch", "no-such-scenario", "random"))
    assert label == "dispatch policy random" and "no-such-scenario" in error


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_workers_must_be_a_positive_integer(workers):
    with pytest.raises(MsjgymError, match="workers"):
        precompile(workers=workers, progress=False)


def test_the_compile_command_names_a_bad_worker_count_in_one_line():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "msjgym", "compile", "--workers", "0"], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--workers" in done.stderr
