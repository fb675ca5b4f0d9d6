"""Balanced-Splitting-π: a static partition of the servers into one set A_i per class, served without waiting, and
a helper set H run by a policy π (FCFS by default); non-preemptive and size-oblivious.

Source: J. Anselmi & J. Doncel, "Balanced Splitting: A Framework for Achieving Zero-Wait in the Multiserver-Job
Model", IEEE Trans. Parallel and Distributed Systems 36(1):43–54, 2025 (arXiv:2409.18557), §3 (the Balanced
Splitting framework and the Balanced-Splitting policy), §4 (the M/GI/s/s connection; stability).

The framework splits the n servers statically into A_1, …, A_C and H: the servers of A_i serve only class-i jobs,
first come first served; H serves the jobs sent to it with a policy π. Balanced-Splitting-π, as implemented here:

* partition: class i gets s_i = ⌊ψ · a_i⌋ job slots, |A_i| = n_i s_i servers, with a_i = λ_i E[S_i] its offered
  load in jobs (ψ = ``scale``, 1 by default: each class gets the servers its load occupies on average, the balanced
  choice); H gets the rest, |H| = n − Σ_i n_i s_i (the spare capacity and the rounding);
* arrival of a class-i job: if fewer than s_i class-i jobs are in A_i it starts there at once; otherwise it is sent
  to H, for good (it never moves to A_i later);
* H: its jobs are served by π on |H| servers: ``helper="fcfs"`` (oldest first, head-of-line blocking) or
  ``helper="first-fit"`` (the oldest job that fits in H's idle servers, repeatedly);
* completion: the job's servers return to the set it ran in.

So A_i is an M/GI/s_i/s_i loss system whatever H does, and the fraction of class-i arrivals sent to H is Erlang's
loss formula B(s_i, a_i) (``msjgym.systems.msj.theory.balanced_splitting.helper_probability``; ``tests/test_balanced_splitting.py``
measures it). What is the paper's and what is our reading (its full text was not available while this was written:
the partition rule, the routing "for good", ψ and the first-fit helper are ours to confirm) is in
``docs/modelling-choices.md#balanced-splitting``.

Mapping onto msjgym's single pool: the partition is bookkeeping, in the policy's own state (``STATE``).
``st.own_i[b, i]`` counts the class-i jobs in A_i (at most s_i, so at most |A_i| servers); the jobs in H use the
other busy servers (at most |H|). Each job is marked at its arrival (its own entry ``J_SET``: in A_i or in H) so that
its completion returns its servers to the right set (``departed_job`` in the ``on_departure`` hook). All waiting
jobs are H's queue, in arrival order within each class, so π starts them with ``start_next``; a job placed in A_i is
the youngest of its class and is started with ``start_job``. Counters for diagnostics and tests:
``own_i[b, K + i]`` class-i arrivals sent to H, ``own_i[b, 2K + i]`` class-i arrivals.

Setting (``validate``): H must hold the largest need (|H| >= max_i n_i), else a job sent to H could never start;
with ψ = 1 that fails when the classes' loads fill the servers too tightly (e.g. ``one-and-n``, where a job needs
all n servers): lower ``scale`` or use a larger system, the paper's many-server setting.

No agent form: the observation of ``msjgym/MSJ-v0`` does not say which set a job in service runs in, so after a
completion an agent cannot tell whether A_i or H got servers back (see ``BalancedSplittingAgent``); the kernel is
checked event by event against a plain-Python statement of the policy instead (``tests/test_balanced_splitting.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.policies import Choice
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import (
    C_BOUND, J_CLS, J_SEQ, NJI, P_ARG, P_FARG, P_K, P_SERVERS, S_BUSY, departed_job, start_job, start_next)
from msjgym.systems.msj.theory.balanced_splitting import balanced_slots, helper_servers
from msjgym.systems.msj.contract import OwnState, Policy, Sizes

from .agent_forms import NotExpressibleAgent

J_SET = NJI  # the policy's own entry per job: IN_A or IN_H
IN_A = 0  # J_SET: the job runs (ran) in its class's set A_i
IN_H = 1  # J_SET: the job was sent to the helper set H
HELPERS = ("fcfs", "first-fit")  # π on H; the kernel reads the index (pr.ints[P_ARG])




def _own_ints(sizes: Sizes) -> int:
    return 3 * sizes.classes  # jobs in A_i; arrivals sent to H; arrivals (per class)


STATE = OwnState(ints=_own_ints, job_ints=1)
"""The policy's own state: three counters per class, and each job's set."""


# ---------------------------------------------------------------- compiled kernel
@njit(inline="always")
def _slots(pr, c):
    """s_c = ⌊ψ · a_c⌋, a_c = offered_c / need_c (the float operations of ``theory.balanced_splitting``)."""
    return np.int64(math.floor(pr.floats[P_FARG + 1] * (pr.offered[c] / pr.need[c])))


@njit
def on_arrival(st, pr, b, j):
    """Place the arriving job j: in A_c if one of its s_c slots is free (start it now), else in H (its queue)."""
    K = pr.ints[P_K]
    c = st.job_i[b, j, J_CLS]
    st.own_i[b, 2 * K + c] += 1
    if st.own_i[b, c] < _slots(pr, c):
        st.own_i[b, c] += 1
        st.job_i[b, j, J_SET] = IN_A
        start_job(st, pr, b, j)
    else:
        st.own_i[b, K + c] += 1
        st.job_i[b, j, J_SET] = IN_H


@njit(inline="always")
def on_departure(st, pr, b, c):
    """A class-c job left: if it ran in A_c, free its slot (a job of H frees H's servers, counted in ``schedule``)."""
    if st.job_i[b, departed_job(st, b), J_SET] == IN_A:
        st.own_i[b, c] -= 1


@njit
def schedule(st, pr, b):
    """π on H: start waiting jobs (all of them H's) while they fit in H's idle servers; O(K) per started job.

    H's idle servers: n − busy − Σ_c n_c (s_c − jobs in A_c) (the busy servers outside the A_c are H's).
    """
    K = pr.ints[P_K]
    first_fit = pr.ints[P_ARG] == 1  # helper: HELPERS.index
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    for c in range(K):
        free -= pr.need[c] * (_slots(pr, c) - st.own_i[b, c])
    while True:
        best = -1
        best_s = 0
        for c in range(K):
            j = st.cls_i[b, c, C_BOUND]
            if j < 0 or (first_fit and pr.need[c] > free):
                continue
            s = st.job_i[b, j, J_SEQ]
            if best < 0 or s < best_s:
                best = c
                best_s = s
        if best < 0 or pr.need[best] > free:
            return
        start_next(st, pr, b, best)
        free -= pr.need[best]


# ---------------------------------------------------------------- agent form
class BalancedSplittingAgent(NotExpressibleAgent):
    """``balanced-splitting`` (``policies/msj/balanced_splitting.py``): not expressible from the observation.

    The kernel gives each class i a set A_i of servers and sends the overflow to a helper set H; when a class-i job
    completes, its servers return to A_i or to H depending on where it ran. The observation shows how many class-i
    jobs are in service, not where each runs, and completions between decision epochs are unseen: with random
    durations, whether the job that completed was one of A_i's or one of H's is not a function of the observations
    (an agent with memory cannot tell either), and the next decisions (start an H job now; send the next class-i
    arrival to A_i or to H) depend on it.
    """

    policy_name = "balanced-splitting"
    not_expressible = ("the observation does not show which server set (a class's own A_i or the helper set H) "
                       "each job in service runs in, so after a completion the agent cannot know whether A_i or H "
                       "got servers back; run it on the compiled path (msjgym evaluate SCENARIO --policy "
                       "balanced-splitting)")


# ---------------------------------------------------------------- declaration
@dataclass(frozen=True, kw_only=True)
class _BalancedSplitting(Policy):
    def partition(self, model: MSJModel) -> tuple[list[int], int]:
        """(s_i per class, |H|) for ``model`` with this declaration's ``scale``."""
        slots = balanced_slots(model.needs, model.offered_servers_per_class, float(self.value("scale")))
        return slots, helper_servers(model.servers, model.needs, slots)

    def validate(self, model: MSJModel) -> None:
        slots, h = self.partition(model)
        biggest = int(max(model.needs))
        if h < biggest:
            sizes = ", ".join(f"|A_{c.name}| = {int(c.need) * s}" for c, s in zip(model.classes, slots))
            raise PolicyError(
                f"policy {self.name}: the helper set H must hold the largest need {biggest} (a job sent to H could "
                f"never start otherwise); the partition s_i = floor(scale * lambda_i E[S_i]) with scale = "
                f"{self.value('scale'):g} gives {sizes}, leaving |H| = {h} of servers={model.servers}: lower "
                f"scale (0 puts every server in H) or use more servers")


BALANCED_SPLITTING = _BalancedSplitting(
    name="balanced-splitting",
    summary="Balanced-Splitting-π, non-preemptive: class i owns n_i·floor(λ_i E[S_i]) servers (no waiting); "
            "the overflow goes to the helper set H, run by π (FCFS)",
    preemptive=False,
    source="Anselmi & Doncel, \"Balanced Splitting: A Framework for Achieving Zero-Wait in the Multiserver-Job "
           "Model\", IEEE TPDS 36(1) (2025), §3 (framework, Balanced-Splitting), §4 (M/GI/s/s, stability)",
    params=(Choice("helper", "fcfs", "π, the policy of the helper set H: fcfs (the paper's) or first-fit",
                   choices=HELPERS),
            Param("scale", 1.0, "ψ: class i gets s_i = floor(ψ λ_i E[S_i]) slots of n_i servers (1: the balanced "
                                "partition; 0: every server in H, i.e. π alone)", low=0.0, high=16.0)),
    schedule=schedule,
    on_arrival=on_arrival,
    on_departure=on_departure,
    agent_class=BalancedSplittingAgent,
    state=STATE,
)
