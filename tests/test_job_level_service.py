"""Job-level service (``start_job``, ``preempt_job``, ``kill_job``): any job of a class can be started or stopped,
and the class lists keep their invariants (served jobs a prefix, waiting jobs in arrival order)."""
from __future__ import annotations

import numpy as np

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.systems.msj.agent import AGENT
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import J_REM, J_SIZE, check_invariants, kill_job, preempt_job, start_job
from conftest import exp_class, model


@njit
def _start(st, pr, j):
    start_job(st, pr, 0, j)
    return check_invariants(st, pr, 0)


@njit
def _preempt(st, pr, j):
    preempt_job(st, pr, 0, j)
    return check_invariants(st, pr, 0)


@njit
def _kill(st, pr, j):
    kill_job(st, pr, 0, j)
    return check_invariants(st, pr, 0)


def _system(jobs: int) -> tuple[MSJSimulation, list[int]]:
    m = model(8, 1.0, exp_class("a", 1, 0.5), exp_class("b", 2, 0.5))
    sim = MSJSimulation(m, AGENT, RunConfig(debug=True), rng.spawn_states(0, 1)[0])
    slots = [sim.arrive(0, 1.0 + i) for i in range(jobs)]  # the agent policy starts nothing
    return sim, slots


def test_start_any_waiting_job_then_preempt_it_back_into_arrival_order() -> None:
    sim, slots = _system(6)
    for j in (slots[3], slots[0], slots[5]):
        assert _start(sim.state, sim.params, j) == 0
    served = [s for s, _, on in sim.jobs() if on]
    assert served == [slots[0], slots[3], slots[5]]
    for j in (slots[3], slots[0], slots[5]):
        assert _preempt(sim.state, sim.params, j) == 0
        sim.check()
    assert [s for s, _, _ in sim.jobs()] == slots  # every job waiting again, in arrival order
    assert all(not on for _, _, on in sim.jobs())


def test_random_starts_and_preemptions_keep_the_invariants() -> None:
    sim, slots = _system(12)
    gen = np.random.default_rng(7)
    for _ in range(300):
        jobs = sim.jobs()
        served = [s for s, _, on in jobs if on]
        waiting = [s for s, _, on in jobs if not on]
        if waiting and (not served or gen.random() < 0.5) and len(served) < 8:
            assert _start(sim.state, sim.params, int(gen.choice(waiting))) == 0
        elif served:
            assert _preempt(sim.state, sim.params, int(gen.choice(served))) == 0
    assert sorted(s for s, _, _ in sim.jobs()) == sorted(slots)


def test_kill_discards_progress_preempt_keeps_it() -> None:
    sim, slots = _system(2)
    st = sim.state
    for j in slots:
        _start(st, sim.params, j)
    st.sys_f[0, 0] = 0.5  # T_NOW: half a time unit of service
    assert _preempt(st, sim.params, slots[0]) == 0
    assert _kill(st, sim.params, slots[1]) == 0
    assert st.job_f[0, slots[0], J_REM] == st.job_f[0, slots[0], J_SIZE] - 0.5
    assert st.job_f[0, slots[1], J_REM] == st.job_f[0, slots[1], J_SIZE]
