"""Conservative backfilling: every waiting job holds a reservation; a job starts early only if that delays no one.

Every waiting job holds a reservation (a planned start time) on a *profile* of the servers free in the future, built
from the running jobs' estimated completion times and the other waiting jobs' reservations (each occupying its
need from its reservation for its runtime estimate). A job's reservation is the earliest time at which it fits in the
profile for its whole estimated runtime. After every event (an arrival or completions) the schedule is compressed in
arrival order: each waiting job in turn leaves the profile and takes the earliest reservation that fits among all the
other jobs' current reservations, which is never later than its previous one (its old place is still free); a new job
gets its first reservation the same way, after every older job. A job whose reservation is now starts now. So a job
starts before older ones (is backfilled) only where that delays no earlier job's reservation, by the estimates.
Non-preemptive.

Estimates: each job's runtime estimate is set by the scenario's ``estimate`` (exact by default; see
``msjgym.systems.msj.scenarios``). A job that runs past its estimate is seen as ending now (0 estimated time left)
until it completes, so the reservations planned on its servers may slip; a job reserved now that does not fit in the
servers actually free keeps its reservation and waits (``docs/modelling-choices.md#backfilling-overrun``). The
compression: ``docs/modelling-choices.md#backfilling-conservative-compression``.

Source: A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001, §2 (conservative backfilling: reservations for
all queued jobs, the profile of free nodes, and compression of the schedule when jobs end before their estimates).

No agent form: the ``msjgym/MSJ-v0`` observation shows estimates only for its window's jobs (``estimates=True``;
``EstimatesNotObservedAgent``); the kernel is tested decision for decision against a pure-Python reference of the
rule above (``tests/test_backfilling.py``).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.contract import Policy

from .agent_forms import EstimatesNotObservedAgent
from msjgym.systems.msj.backfilling import (
    CONSERVATIVE_STATE, O_FCFS, conservative, kept_on_arrival, kept_on_departure)


# ---------------------------------------------------------------- compiled kernels (backfilling.py, in arrival order)
@njit
def schedule(st, pr, b):
    """Compress the schedule in arrival order and start the jobs whose reservation is now
    (``docs/modelling-choices.md#backfilling-conservative-compression``; how: ``#backfilling-kept-profile`` and
    :func:`msjgym.systems.msj.backfilling.conservative`)."""
    conservative(st, pr, b, O_FCFS)


@njit
def on_arrival(st, pr, b, j):
    """Append the new job to the waiting list (it has no reservation yet)."""
    kept_on_arrival(st, pr, b, j, O_FCFS)


@njit
def on_departure(st, pr, b, c):
    """A job that ended before its estimated end frees servers in the kept profile."""
    kept_on_departure(st, pr, b, c)


# ---------------------------------------------------------------- agent form
class ConservativeBackfillingAgent(EstimatesNotObservedAgent):
    """``conservative-backfilling`` has no agent form (see ``EstimatesNotObservedAgent``)."""

    policy_name = "conservative-backfilling"


# ---------------------------------------------------------------- declaration
CONSERVATIVE_BACKFILLING = Policy(
    name="conservative-backfilling",
    summary="Conservative backfilling: every waiting job holds a reservation; start a job early only if it delays "
            "no reservation",
    preemptive=False,
    source="Mu'alem & Feitelson, \"Utilization, predictability, workloads, and user runtime estimates in scheduling "
           "the IBM SP2 with backfilling\", IEEE TPDS 12(6), 2001, §2",
    schedule=schedule,
    on_arrival=on_arrival,
    on_departure=on_departure,
    agent_class=ConservativeBackfillingAgent,
    estimates=True,
    state=CONSERVATIVE_STATE,
)
