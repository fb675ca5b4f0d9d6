"""MSFQ(ℓ), Most Servers First with Quickswap: non-preemptive, for the one-or-all setting (every job needs 1 or all
k = n servers), cycling through four phases with a threshold ℓ ∈ {0, …, k − 1}.

Source: Z. Chen, A. Anggraito, D. Olliaro, A. Marin, M. Ajmone Marsan, B. Berg & I. Grosof, "Improving nonpreemptive
multiserver job scheduling with quickswap", Performance Evaluation 171 (2026) 102525 (arXiv:2509.01893), §4.2, the
one-or-all MSFQ policy:

1. serve k-server jobs only, until none remain in the system;
2. serve 1-server jobs, until fewer than k of them remain;
3. go on serving 1-server jobs (arrivals start at once) until at most ℓ of them are in service;
4. start no 1-server job; when the 1-server jobs in service have completed, return to phase 1.

ℓ = 0 is non-preemptive Most Servers First (``msf-nonpreemptive``), decision for decision (``tests/test_msfq.py``
checks the runs are identical bit for bit). The paper proves MSFQ(ℓ) throughput-optimal for every ℓ: it is stable
whenever the load is below 1, where FCFS's stability region is smaller.

Phases 2 and 3 start 1-server jobs by the same rule (every waiting one that fits), so the kernel keeps three: wide
(phase 1), small (phases 2–3) and drain (phase 4). The phase changes are read literally, as documented in
``docs/modelling-choices.md#msfq-phases``: the threshold is inclusive (``≤ ℓ``) and tested on the 1-server jobs in the
system after the event's starts; the drain happens whether or not a k-server job is waiting (the paper's statement; the
authors' simulator drains only for a waiting k-server job, which is why MSFQ(ℓ ≥ 1) trails MSF at light load here);
an empty system rests in phase 1. The paper defines MSFQ only for needs {1, k}; its generalisations to more needs (Static and Adaptive
Quickswap, §4.3–4.4) are not implemented, and any other model is refused.

This file holds the policy's compiled kernel and its declaration; its agent form is
:class:`msjgym.policies.msj.msfq.MSFQAgent`.
"""
from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.systems.msj import observation as ob
from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import C_BOUND, C_N, C_X, J_SEQ, P_ARG, P_K, P_SERVERS, S_BUSY, start_next
from msjgym.systems.msj.contract import OwnState, Policy, Sizes

from .agent_forms import EnvSpec, StartAgent

WIDE = 0  # phase 1: k-server jobs only (the scratch starts at 0: an empty system rests here)
SMALL = 1  # phases 2 and 3: start every waiting 1-server job that fits
DRAIN = 2  # phase 4: start nothing; the 1-server jobs in service finish


# ---------------------------------------------------------------- compiled kernel
@njit(inline="always")
def _start_oldest(st, pr, b, v):
    """Start the oldest waiting job of need v (classes sharing the need merged by arrival order); False if none."""
    best = -1
    best_s = 0
    for c in range(pr.ints[P_K]):
        j = st.cls_i[b, c, C_BOUND]
        if pr.need[c] != v or j < 0:
            continue
        s = st.job_i[b, j, J_SEQ]
        if best < 0 or s < best_s:
            best = c
            best_s = s
    if best < 0:
        return False
    start_next(st, pr, b, best)
    return True


@njit
def schedule(st, pr, b):
    """Update the phase (the policy's own state, ``st.own_i[b, 0]``) and start jobs as the phase allows; O(K) per started job.

    Every class needs 1 or n servers (``validate``); a job of need n is "wide", the others are "small".
    """
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    ell = pr.ints[P_ARG]
    slot = 0
    while True:
        wide = 0  # wide jobs in the system
        small = 0  # small jobs in the system
        small_serving = 0
        for c in range(K):
            if pr.need[c] == n:
                wide += st.cls_i[b, c, C_N]
            else:
                small += st.cls_i[b, c, C_N]
                small_serving += st.cls_i[b, c, C_X]
        phase = st.own_i[b, slot]
        if phase == WIDE:
            if wide > 0:  # phase 1 lasts while a wide job is present
                if st.sys_i[b, S_BUSY] == 0:
                    _start_oldest(st, pr, b, n)
                return
            if small == small_serving:  # no small job waiting: rest in phase 1
                return
            st.own_i[b, slot] = SMALL
        elif phase == SMALL:
            while n - st.sys_i[b, S_BUSY] >= 1 and _start_oldest(st, pr, b, 1):
                pass
            if small > ell:
                return
            st.own_i[b, slot] = DRAIN
        else:
            if small_serving > 0:
                return
            st.own_i[b, slot] = WIDE


# ---------------------------------------------------------------- agent form
class MSFQAgent(StartAgent):
    """``msfq``: MSF with Quickswap (``policies/msj/msfq.py``), the one built-in agent with memory: the phase.

    The observation cannot tell phase 3 (start 1-server jobs) from phase 4 (drain) on its own, so the agent runs the
    kernel's phase machine (wide, small, drain) on the counts it observes and keeps the phase. It is asked only at
    decision epochs (instants where a waiting job fits), so it also works out the phase changes at the events in
    between, where nothing starts:

    * a next observation whose counts are exactly those after the agent's last start is the same instant (any event
      changes a count): the machine goes on from the phase of that start;
    * otherwise the instant ended after the last decision, in the phase the machine reaches from there with nothing
      more starting; at the events the agent did not see the phase can only move on from small to drain (the drain
      ends when no 1-server job is in service, which the machine sees at once). That happened iff at one of them no
      1-server job was waiting and at most ℓ were in service: then the event that makes the next epoch is the arrival
      of the only 1-server job waiting (age 0), with still at most ℓ in service.

    An empty system resets the memory (the kernel rests in phase 1 there), so one agent serves several episodes.
    """

    policy_name = "msfq"
    WIDE, SMALL, DRAIN = 0, 1, 2  # msfq.py's phases

    def __init__(self, spec: EnvSpec, policy: Policy | None = None) -> None:
        super().__init__(spec, policy)
        self.ell = int(self.policy.value("threshold"))
        self.wide = [c for c in range(self.K) if self.need[c] == self.n]
        self.small = [c for c in range(self.K) if self.need[c] != self.n]
        self._phase = self.WIDE  # the kernel's phase when the agent last started a job, or after its last wait
        self._after: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # (waiting, in service) after that start

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        serving = [int(obs[at + ob.IN_SERVICE]) for at in self.cls]
        if not any(waiting) and not any(serving):  # empty: phase 1
            self._phase, self._after = self.WIDE, None
            return -1
        counts = (tuple(waiting), tuple(serving))
        phase = self._phase
        if counts != self._after:  # a new instant
            if self._after is not None:  # the instant of the last start ended with nothing more fitting
                phase, c = self._machine(phase, *self._after, None)
                assert c < 0
            if phase == self.SMALL:  # the events between the epochs, unseen
                small_serving = sum(serving[c] for c in self.small)
                arrived = [c for c in self.small if waiting[c] > 0]
                if sum(waiting[c] for c in self.small) == 1 and small_serving <= self.ell \
                        and float(obs[self.cls[arrived[0]] + ob.OLDEST_AGE]) == 0.0:
                    phase = self.DRAIN
        phase, c = self._machine(phase, waiting, serving, obs)
        self._phase = phase
        self._after = None
        if c >= 0:
            after_w, after_x = list(waiting), list(serving)
            after_w[c] -= 1
            after_x[c] += 1
            self._after = (tuple(after_w), tuple(after_x))
        return c

    def _machine(self, phase: int, waiting, serving, obs: np.ndarray | None) -> tuple[int, int]:
        """The kernel's loop (``msfq.schedule``) at these counts, up to its first start: (phase, class to start, or
        -1 and the phase it rests in)."""
        wide = sum(waiting[c] + serving[c] for c in self.wide)
        small = sum(waiting[c] + serving[c] for c in self.small)
        small_serving = sum(serving[c] for c in self.small)
        busy = sum(self.need[c] * serving[c] for c in range(self.K))
        for _ in range(4):
            if phase == self.WIDE:
                ready = [c for c in self.wide if waiting[c] > 0]
                if wide:
                    return phase, (self._oldest_head(obs, ready, waiting) if ready and busy == 0 else -1)
                if small == small_serving:
                    return phase, -1
                phase = self.SMALL
            elif phase == self.SMALL:
                ready = [c for c in self.small if waiting[c] > 0]
                if ready and busy < self.n:
                    return phase, self._oldest_head(obs, ready, waiting)
                if small > self.ell:
                    return phase, -1
                phase = self.DRAIN
            else:
                if small_serving:
                    return phase, -1
                phase = self.WIDE
        raise AssertionError("msfq agent: the phase machine did not settle")


# ---------------------------------------------------------------- declaration
def one_or_all(policy: str, model: MSJModel) -> None:
    """Check the one-or-all setting (every need is 1 or the number of servers), or raise a ``PolicyError``."""
    n = int(model.servers)
    needs = sorted(set(int(m) for m in model.needs))
    bad = [m for m in needs if m not in (1, n)]
    if bad:
        raise PolicyError(f"policy {policy}: defined for the one-or-all setting only, every need 1 or servers={n}; "
                          f"needs {bad} are neither (needs={needs})")


def _phase(sizes: Sizes) -> int:
    return 1


PHASE = OwnState(ints=_phase)
"""The policy's own state: its phase (WIDE, SMALL or DRAIN; 0, WIDE, in a new system)."""


@dataclass(frozen=True, kw_only=True)
class _MSFQ(Policy):
    def validate(self, model: MSJModel) -> None:
        one_or_all(self.name, model)
        ell = self.value("threshold")
        if ell > model.servers - 1:
            raise PolicyError(f"policy {self.name}: threshold = {ell}: must be an integer in [0, "
                              f"{model.servers - 1}] (at most servers − 1 = k − 1, servers={model.servers})")


MSFQ = _MSFQ(
    name="msfq",
    summary="MSF with Quickswap, non-preemptive, needs 1 or n: k-server phase, 1-server phase, drain at <= ℓ",
    preemptive=False,
    source="Chen, Anggraito, Olliaro, Marin, Ajmone Marsan, Berg & Grosof, \"Improving nonpreemptive multiserver "
           "job scheduling with quickswap\", Performance Evaluation 171 (2026), §4.2 (MSFQ, one-or-all)",
    params=(Param("threshold", 1, "ℓ: drain the 1-server jobs once at most ℓ are in service; an integer in "
                                  "[0, servers − 1] (0: non-preemptive MSF)", low=0, integer=True),),
    schedule=schedule,
    agent_class=MSFQAgent,
    state=PHASE,
)
