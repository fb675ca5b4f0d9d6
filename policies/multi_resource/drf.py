"""Dominant-resource order: the waiting jobs are taken by their class's dominant share, DRF's order with the job
classes as its users. A class's dominant share is max_r x_c d_cr / (nodes · C_r), x_c its jobs in service: the
largest fraction of any resource its running jobs hold. Among the classes whose oldest waiting job fits some node,
the one with the smallest dominant share starts it (ties: the older job), on the first node it fits; repeat.

Source: Ghodsi, Zaharia, Hindman, Konwinski, Shenker & Stoica, "Dominant Resource Fairness: fair allocation of
multiple resource types", NSDI 2011, §4, Algorithm 1 (progressive filling: the user with the lowest dominant share
launches its next task). Algorithm 1 stops when that user's task does not fit; this order skips to the next class
instead (a non-blocking scheduler), so it never idles resources a waiting job could use.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.multi_resource.contract import MultiResourcePolicy

from .common import DOMINANT as RULE
from .common import pack


@njit(inline="always")
def schedule(st, pr, b):
    """Start the oldest waiting job of the fitting class with the smallest dominant share while some job fits."""
    pack(st, pr, b, RULE)


DRF = MultiResourcePolicy(
    name="drf",
    summary="Dominant-resource order: start the waiting job whose class holds the smallest dominant share (DRF, "
            "classes as users), skipping jobs that fit nowhere",
    preemptive=False,
    source="Ghodsi, Zaharia, Hindman, Konwinski, Shenker & Stoica, \"Dominant Resource Fairness\", NSDI 2011, §4, "
           "Algorithm 1",
    schedule=schedule,
)
