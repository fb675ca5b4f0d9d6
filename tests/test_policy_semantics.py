"""Each built-in policy's choice of jobs in service on constructed states (Grosof, Harchol-Balter & Scheller-Wolf
§7.2–7.3, App. B; where the paper leaves a choice open: docs/modelling-choices.md, "Finite-skip systems")."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import exp_class, model, sim
from msjgym.errors import PolicyError
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.state import S_BUSY

LONG = 1e9


def _system(policy: str, servers: int, needs: tuple[int, ...]):
    m = model(servers, 1.0, *(exp_class(f"v{v}", v, 1 / len(needs)) for v in needs))
    return sim(m, policy), {v: i for i, v in enumerate(needs)}


def _arrive(s, cls_of, needs_in_order):
    return [s.arrive(cls_of[v], LONG) for v in needs_in_order]


def _served(s, cls_of):
    need_of = {c: v for v, c in cls_of.items()}
    return [need_of[c] for _, c, serving in s.jobs() if serving]


def test_first_fit_backfills_without_preempting():
    s, c = _system("first-fit", 4, (1, 2, 4))
    a, _, _, _ = _arrive(s, c, (2, 4, 1, 2))
    assert _served(s, c) == [2, 1]  # the 4 cannot fit and is skipped; the 1 backfills; the last 2 does not fit
    s.complete(a)
    assert _served(s, c) == [1, 2]  # the 4 still does not fit (3 free); the waiting 2 starts
    s.check()


def test_preemptive_first_fit_preempts_younger_backfilled_job():
    s, c = _system("preemptive-first-fit", 4, (1, 2, 4))
    a, _, _, _ = _arrive(s, c, (2, 4, 1, 2))
    assert _served(s, c) == [2, 1]
    s.complete(a)
    assert _served(s, c) == [4]  # rescanning in arrival order, the 4 now fits; the younger 1 is preempted
    s.check()


@pytest.mark.parametrize("policy, expected", [
    ("msf", [4]), ("lsf", [1, 1, 2]), ("msf-nonpreemptive", [1, 1, 2]), ("lsf-nonpreemptive", [1, 1, 2])])
def test_need_priority_orders(policy, expected):
    s, c = _system(policy, 4, (1, 2, 4))
    _arrive(s, c, (1, 1, 2, 4))
    assert sorted(_served(s, c)) == expected
    s.check()


def test_msf_nonpreemptive_starts_largest_first_when_servers_free_up():
    s, c = _system("msf-nonpreemptive", 4, (1, 2, 4))
    first = _arrive(s, c, (2, 2))
    _arrive(s, c, (1, 1, 4, 2))
    assert _served(s, c) == [2, 2]
    s.complete(first[0])  # 2 servers free: the 4 does not fit, the waiting 2 is the largest that fits
    assert sorted(_served(s, c)) == [2, 2]
    s.check()


def test_server_filling_serves_front_largest_first():
    s, c = _system("server-filling", 4, (1, 2, 4))
    _, _, big, _ = _arrive(s, c, (1, 1, 4, 2))
    assert _served(s, c) == [4]  # front = (1, 1, 4) (needs reach 4); largest first fills the servers
    s.complete(big)
    assert sorted(_served(s, c)) == [1, 1, 2]  # front extends to the 2
    s.check()


def test_server_filling_fills_servers_whenever_jobs_need_enough():
    """Lemma 7.1: in the exponential setting, if the jobs present need >= n servers, all n are busy."""
    needs = (1, 2, 4, 8)
    s, c = _system("server-filling", 8, needs)
    gen = np.random.default_rng(3)
    for _ in range(400):
        jobs = s.jobs()
        if jobs and gen.random() < 0.45:
            in_service = [j for j, _, serving in jobs if serving]
            s.complete(in_service[gen.integers(len(in_service))])
        else:
            s.arrive(int(gen.integers(len(needs))), LONG)
        total_need = sum(needs[k] for _, k, _ in s.jobs())
        if total_need >= 8:
            assert s.state.sys_i[0, S_BUSY] == 8
        s.check()


def test_server_filling_divisible_serves_one_need_class():
    s, c = _system("server-filling-divisible", 6, (2, 3))
    _arrive(s, c, (3, 2, 2, 2))
    assert _served(s, c) == [2, 2, 2]  # only the 2s can fill 6 servers (3 of them)
    s2, c2 = _system("server-filling-divisible", 6, (2, 3))
    _arrive(s2, c2, (3, 2))
    assert _served(s2, c2) == [3]  # no class fills: the one using the most servers (3 > 2) is served alone


def test_maxweight_maximises_weight():
    s, c = _system("maxweight", 4, (1, 4))
    _arrive(s, c, (4, 4, 4, 1, 1))
    assert _served(s, c) == [1, 1]  # weight 2·N(1)=4 beats 1·N(4)=3
    s2, c2 = _system("maxweight", 4, (1, 4))
    _arrive(s2, c2, (4, 4, 4, 1))
    assert _served(s2, c2) == [4]  # 1·N(4)=3 beats 1·N(1)=1


@pytest.mark.parametrize("policy, needs, servers", [
    ("server-filling", (2, 3), 6), ("server-filling", (2, 4), 6), ("server-filling-divisible", (4,), 6)])
def test_server_filling_rejects_settings_it_does_not_cover(policy, needs, servers):
    m = model(servers, 1.0, *(exp_class(f"v{v}", v, 1 / len(needs)) for v in needs))
    with pytest.raises(PolicyError, match="must divide"):
        POLICIES[policy].validate(m)


def test_classes_sharing_a_need_are_served_oldest_first():
    """Two classes with the same need form one need group: preemptive policies take its oldest jobs across classes."""
    m = model(2, 1.0, exp_class("a", 1, 0.4), exp_class("b", 1, 0.4), exp_class("big", 2, 0.2))
    for policy in ("msf", "lsf", "server-filling", "maxweight", "preemptive-first-fit"):
        s = sim(m, policy)
        s.arrive(1, LONG)
        s.arrive(0, LONG)
        s.arrive(1, LONG)
        assert [c for _, c, serving in s.jobs() if serving] == [1, 0], policy  # b (oldest), then a
        s.check()
