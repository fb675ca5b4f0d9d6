"""Best fit on resource vectors: among the waiting jobs that fit, start the (job, node) pair that leaves the least
free capacity on the node, Σ_r (free_r − demand_r) / capacity_r (ties: the older job, the lower node); repeat while
some job fits.

Source: best fit for vector bin packing, as in Panigrahy, Talwar, Uyeda & Wieder, "Heuristics for vector bin
packing", Microsoft Research (2011); how the leftover of a vector is measured is this implementation's choice (the
sum of the normalized leftovers). With one resource on one node it starts the largest job that fits first:
``msj``'s ``msf-nonpreemptive`` (equal there, bit for bit).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.multi_resource.contract import MultiResourcePolicy

from .common import BEST_FIT as RULE
from .common import pack


@njit(inline="always")
def schedule(st, pr, b):
    """Start the best-fitting (job, node) pair while some waiting job fits."""
    pack(st, pr, b, RULE)


BEST_FIT = MultiResourcePolicy(
    name="best-fit",
    summary="Best fit: start the waiting job and node that leave the least normalized free capacity",
    preemptive=False,
    source="Panigrahy, Talwar, Uyeda & Wieder, \"Heuristics for vector bin packing\", MSR 2011 (best fit; leftover "
           "measured as the sum of normalized leftovers)",
    schedule=schedule,
)
