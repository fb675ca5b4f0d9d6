"""FCFS with head-of-line blocking on resource vectors: jobs start in arrival order, each on the first node where
every resource it demands is free; the first job that fits no node blocks the others.

Sources: with one resource, the multiserver-job FCFS of Wang, Xie & Harchol-Balter, "Zero Queueing for Multi-Server
Jobs" (2021), §3 (``msj``'s ``fcfs``, which this policy equals there, bit for bit); FCFS as the baseline of
multi-resource cluster scheduling: Grandl et al., "Multi-resource packing for cluster schedulers", SIGCOMM 2014.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import J_CLS, oldest_waiting
from msjgym.systems.multi_resource.contract import MultiResourcePolicy
from msjgym.systems.multi_resource.state import first_node, start_on


@njit(inline="always")
def schedule(st, pr, b):
    """Start the oldest waiting job on the first node it fits while it fits (non-preemptive). O(K + nodes · R) per
    job started."""
    while True:
        j = oldest_waiting(st, pr, b)
        if j < 0:
            return
        node = first_node(st, pr, b, st.job_i[b, j, J_CLS])
        if node < 0:
            return
        start_on(st, pr, b, j, node)


FCFS = MultiResourcePolicy(
    name="fcfs",
    summary="FCFS with head-of-line blocking: start jobs in arrival order on the first node that fits; a job that "
            "fits nowhere blocks the queue",
    preemptive=False,
    source="Wang, Xie & Harchol-Balter (2021) §3 (one resource); Grandl et al., SIGCOMM 2014 (the baseline)",
    schedule=schedule,
)
