"""The priority-plus-backfilling family of HPC batch schedulers: one job ordering combined with one backfilling rule.

Parameters (``--param order=sjf --param backfill=easy``; from Python ``POLICIES["priority"].bind(order="f1")``):

``order``, the priority of a waiting job (highest first; ties: the older job first). r is the job's runtime estimate
(a replayed trace's requested time, SWF field 9: ``msjgym.systems.msj.trace.files``; else the scenario's ``estimate``), n the
servers it needs (after scaling to the simulated machine), s its arrival time, w = now − s its waiting time:

* ``fcfs``: arrival order.
* ``sjf``: the smallest r (shortest job first by requested time).
* ``saf``: the smallest area r·n (smallest area first).
* ``f1``: the smallest log10(r)·n + 870·log10(s), the first (F1) of the four priority functions learned by
  Carastan-Santos & de Camargo, "Obtaining dynamic scheduling policies with simulation and machine learning",
  SC'17; fitted with times in seconds; s here is the submit time as the trace file states it (SWF field 2: the same
  in a whole replay and in every ``--windows`` window, as RLScheduler and the paper's simulator use it; a scenario
  without a trace counts from time 0; docs/modelling-choices.md#f1-time-origin); r and s below 1 count as 1.
* ``wfp3``: the largest (w/r)³·n, the WFP utility function of Tang, Lan, Desai & Buettner, "Fault-aware,
  utility-based job scheduling on Blue Gene/P systems", IEEE Cluster 2009 (used by Argonne's Cobalt scheduler).
* ``unicep``: the largest w / (log2(n)·r), the UNICEP utility function of the same paper. log2(1) = 0: as in RLScheduler (Zhang et al.,
  SC'20), the score is computed as (w + 1e-15) / (log2(n + 1e-15)·r), so one-server jobs come first.

WFP3 and UNICEP grow with the waiting time: every ordering is recomputed at every event (an arrival or completions).

``backfill``, what happens when the highest-priority waiting job (the *head*) does not fit:

* ``none``: nothing: jobs start in priority order while they fit; the first that does not fit blocks the others.
* ``easy``: EASY backfilling (Lifka 1995; Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2) in priority order: the head
  gets a reservation at its *shadow time* (the earliest estimated completion by which enough servers are free) and
  the *extra* servers (free then beyond its need); another waiting job, in priority order, starts now if it fits
  and either ends (by its estimate) by the shadow time or needs no more than the extra servers (it then uses them).
  With ``order = "fcfs"`` this is ``easy-backfilling``, decision for decision.
* ``conservative``: conservative backfilling (Mu'alem & Feitelson §2) in priority order: every waiting job holds a
  reservation on the profile of future free servers; after every event the schedule is compressed in priority order
  (each job takes the earliest reservation that fits among the others' current ones), and a job whose reservation is
  now starts. With ``order = "fcfs"`` this is ``conservative-backfilling``, decision for decision; with a dynamic
  order a job may be placed after a younger one that now has a higher priority.
* ``easy-narrow``: the narrower rule of RLScheduler's HPCSim (Zhang, Dai, He, Bao & Xie, "RLScheduler: an automated
  HPC batch job scheduler using reinforcement learning", SC'20; its ``moveforward_for_resources_backfill_greedy``)
  and of the simulators built on it, so their published numbers can be reproduced: (1) a job backfills only if it
  ends (by its estimate) strictly before the shadow time: the extra servers are never used; (2) candidates are
  taken in arrival order whatever ``order`` is; (3) the head, once chosen, stays the head with the shadow time
  computed then, until it starts (a higher-priority arrival or an early completion does not change it).
  ``docs/modelling-choices.md#backfilling-narrow``.

Estimates: a job that runs past its estimate is seen as ending now (``docs/modelling-choices.md#backfilling-overrun``).
Non-preemptive. No agent form (``EstimatesNotObservedAgent``: the observation shows estimates only for its window,
and a start action starts the oldest job of a class); the kernel is checked decision for decision against a
plain-Python statement of each rule (``tests/test_priority.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.jit import njit
from msjgym.core.policy_registry import Choice
from msjgym.systems.msj.backfilling import (
    B_CONSERVATIVE, B_EASY, B_NARROW, BACKFILLS, O_F1, O_FCFS, ORDERS, STATE, conservative, conservative_sorted,
    easy, heap_waiting, kept_on_arrival, kept_on_departure, narrow, start_in_order)
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj.state import P_ARG, P_SERVERS, S_BUSY, T_NOW

from .agent_forms import EstimatesNotObservedAgent


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule(st, pr, b):
    """Order the waiting jobs, start them in that order while they fit, then apply the backfilling rule.

    Cost per event, Q waiting and R running jobs: O(Q) to key and heap the waiting jobs, O(log Q) per job started in
    order; ``easy`` adds O(R log R) for the head's reservation and O(F log F) to order the F jobs that fit now;
    ``conservative`` O(Q log Q) to order every waiting job and O((R + Q)·P) for the profile (P <= 1 + R + 4Q
    breakpoints). In a static order ``conservative`` keeps its profile and waiting list between events
    (``backfilling.conservative``). ``easy-narrow`` orders nothing at an event that keeps its head; a new head is
    the oldest job (FCFS), the first of the waiting list kept in a static order, or the top of a heap of every
    waiting job (WFP3, UNICEP: O(Q)); backfilling then costs O(Q + F log F) for the F jobs that could start
    (``_backfill_before``); each arrival costs O(Q) for its place in a kept list.
    """
    order = pr.ints[P_ARG]
    rule = pr.ints[P_ARG + 1]
    now = st.sys_f[b, T_NOW]
    if rule == B_CONSERVATIVE and order <= O_F1:  # a static order: the profile kept between events
        conservative(st, pr, b, order)
        return
    if rule == B_NARROW:
        narrow(st, pr, b, order, now)
        return
    base, q = heap_waiting(st, pr, b, order, now)
    if q == 0:
        return
    if rule == B_CONSERVATIVE:
        conservative_sorted(st, pr, b, base, q, now)
        return
    q, free = start_in_order(st, pr, b, base, q, pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY])
    if q > 0 and rule == B_EASY and free > 0:
        easy(st, pr, b, base, q, free, now)


@njit
def on_arrival(st, pr, b, j):
    """Conservative backfilling in a static order, and ``easy-narrow`` in a static order but FCFS (whose head is the
    oldest job), keep their waiting list: the new job enters at its place."""
    order = pr.ints[P_ARG]
    rule = pr.ints[P_ARG + 1]
    if order <= O_F1 and (rule == B_CONSERVATIVE or (rule == B_NARROW and order != O_FCFS)):
        kept_on_arrival(st, pr, b, j, order)


@njit
def on_departure(st, pr, b, c):
    """Conservative backfilling in a static order keeps its profile: an early completion frees servers in it."""
    if pr.ints[P_ARG + 1] == B_CONSERVATIVE and pr.ints[P_ARG] <= O_F1:
        kept_on_departure(st, pr, b, c)


# ---------------------------------------------------------------- agent form and declaration
class PriorityAgent(EstimatesNotObservedAgent):
    """``priority`` has no agent form (see ``EstimatesNotObservedAgent``)."""

    policy_name = "priority"


@dataclass(frozen=True, kw_only=True)
class _Priority(Policy):
    def uses_estimates(self) -> bool:
        """Every order but FCFS sorts by estimates, and every backfilling rule plans with them."""
        return self.value("order") != "fcfs" or self.value("backfill") != "none"


PRIORITY = _Priority(
    name="priority",
    summary="HPC priority scheduling: an order (fcfs, sjf, saf, f1, wfp3, unicep) with none, easy, conservative or "
            "easy-narrow backfilling",
    preemptive=False,
    source="Carastan-Santos & de Camargo, SC'17 (F1); Tang, Lan, Desai & Buettner, IEEE Cluster 2009 "
           "(WFP3, UNICEP); Lifka, JSSPP 1995 and Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2 (EASY, "
           "conservative); Zhang et al., RLScheduler, SC'20 (easy-narrow)",
    params=(Choice("order", "sjf", "the priority order: " + ", ".join(ORDERS), choices=ORDERS),
            Choice("backfill", "easy", "the backfilling rule: " + ", ".join(BACKFILLS), choices=BACKFILLS)),
    schedule=schedule,
    on_arrival=on_arrival,
    on_departure=on_departure,
    agent_class=PriorityAgent,
    state=STATE,
)
