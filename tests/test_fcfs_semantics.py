"""FCFS head-of-line blocking and batch admission on constructed states (Wang, Xie & Harchol-Balter §3, Fig. 2)."""
from __future__ import annotations

from conftest import exp_class, model, sim

from msjgym.systems.msj.state import S_BUSY

LONG = 1e9  # durations that never end during these tests


def _fig2_system():
    """Wang, Xie & Harchol-Balter Fig. 2: n = 9 servers, class i needs i servers, jobs (3,1,4,3,4,1,4,1)."""
    m = model(9, 1.0, *(exp_class(str(i), i, 0.25) for i in range(1, 5)))
    s = sim(m, "fcfs")
    slots = [s.arrive(c - 1, LONG) for c in (3, 1, 4, 3, 4, 1, 4, 1)]
    return s, slots


def _classes(s, in_service):
    return [c + 1 for _, c, serving in s.jobs() if serving == in_service]


def test_fig2_state_hol_blocking():
    s, _ = _fig2_system()
    assert _classes(s, True) == [3, 1, 4]
    assert _classes(s, False) == [3, 4, 1, 4, 1]
    assert s.state.sys_i[0, S_BUSY] == 8  # busy servers: 3 + 1 + 4; one idle, the head (class 3) does not fit


def test_fig2_arriving_small_job_queues_behind_blocked_head():
    s, _ = _fig2_system()
    slot = s.arrive(0, LONG)  # a class-1 job would fit the idle server, but someone is waiting
    assert not dict((j, serving) for j, _, serving in s.jobs())[slot]
    assert _classes(s, False) == [3, 4, 1, 4, 1, 1]


def test_fig2_departure_admits_head_then_blocks():
    s, slots = _fig2_system()
    s.complete(slots[2])  # the class-4 job in service departs: 5 servers free
    assert _classes(s, True) == [3, 1, 3]  # head class 3 starts; next head (class 4) needs 4 > 2 free: blocks
    assert _classes(s, False) == [4, 1, 4, 1]
    s.check()


def test_batch_admission_after_big_job_departs():
    n = 8
    m = model(n, 1.0, exp_class("1", 1, 0.5), exp_class("n", n, 0.5))
    s = sim(m, "fcfs")
    big = s.arrive(1, LONG)
    for _ in range(n + 2):
        s.arrive(0, LONG)
    assert _classes(s, True) == [2] and len(_classes(s, False)) == n + 2
    s.complete(big)
    served = [c for _, c, serving in s.jobs() if serving]
    assert served == [0] * n  # n one-server jobs start at the same instant
    assert len(_classes(s, False)) == 2
    s.check()
