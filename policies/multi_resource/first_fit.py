"""First fit on resource vectors: start any waiting job that fits, oldest first, on the first node it fits (skip the
jobs that fit nowhere: non-preemptive backfilling without reservations).

Source: with one resource, the non-preemptive first fit of Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip
method for multiserver analysis", §7.3 (``msj``'s ``first-fit``, which this policy equals there); first-fit
placement of vectors: Panigrahy, Talwar, Uyeda & Wieder, "Heuristics for vector bin packing", Microsoft Research
(2011).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.multi_resource.contract import MultiResourcePolicy

from .common import FIRST_FIT as RULE
from .common import pack


@njit(inline="always")
def schedule(st, pr, b):
    """Start waiting jobs in arrival order, skipping those that fit no node."""
    pack(st, pr, b, RULE)


FIRST_FIT = MultiResourcePolicy(
    name="first-fit",
    summary="First fit: start any waiting job that fits, oldest first, on the first node it fits",
    preemptive=False,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (one resource); Panigrahy, Talwar, Uyeda & "
           "Wieder, \"Heuristics for vector bin packing\", MSR 2011 (First Fit)",
    schedule=schedule,
)
