"""Tetris's alignment packing: among the waiting jobs that fit, start the (job, node) pair with the largest
alignment score, the dot product of the job's demand vector and the node's free amounts, both normalized by the
node's capacity: Σ_r (d_r / C_r)(free_r / C_r) (ties: the older job, the lower node); repeat while some job fits.

Source: Grandl, Ananthanarayanan, Kandula, Rao & Akella, "Multi-resource packing for cluster schedulers", SIGCOMM
2014, §3 (the alignment score of Tetris; its combination with a shortest-remaining-time score and its fairness knob
are not modelled: the alignment alone).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.multi_resource.contract import MultiResourcePolicy

from .common import ALIGNMENT as RULE
from .common import pack


@njit(inline="always")
def schedule(st, pr, b):
    """Start the best-aligned (job, node) pair while some waiting job fits."""
    pack(st, pr, b, RULE)


TETRIS = MultiResourcePolicy(
    name="tetris",
    summary="Tetris alignment packing: start the waiting job and node whose normalized demand and free vectors "
            "have the largest dot product",
    preemptive=False,
    source="Grandl, Ananthanarayanan, Kandula, Rao & Akella, \"Multi-resource packing for cluster schedulers\", "
           "SIGCOMM 2014, §3 (alignment score)",
    schedule=schedule,
)
