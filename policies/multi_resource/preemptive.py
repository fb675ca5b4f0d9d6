"""What the preemptive configuration policies (``maxweight``, ``msr``) share: their working area and serving per-node
target counts.

A policy that chooses, at every event, how many jobs of each class each node serves (``target[node, k]``, a
configuration of the node bounded by the jobs present) writes the counts into its own area (``st.own_i[b]`` from
:data:`TARGET`, node-major) and calls :func:`serve_targets`, which changes as little as it can: a job in service stays
on its node while its class's count there is not exceeded; the other jobs in service are preempted (preempt-resume:
MSJ's ``preempt_job`` keeps their remaining duration and gives their resources back); then the oldest waiting jobs of
each class start on the nodes short of their count (a preempted job may so resume on another node: migration is free
in this model). Kernels allocate nothing: their arrays live in the record (``st.scratch[b, 0:3K]``, the system's
working area, and the policy's own area).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import C_BOUND, C_HEAD, C_X, J_NEXT, P_K, preempt_job
from msjgym.systems.multi_resource.contract import Sizes
from msjgym.systems.multi_resource.model import MAX_RESOURCES
from msjgym.systems.multi_resource.state import start_on

TARGET = 0
"""own_i[b, TARGET + node·K + k]: the class-k jobs node ``node`` is to serve (nodes <= the model's ``servers``, a
bound on the jobs in service that is at least the nodes)."""


def target_ints(sizes: Sizes) -> int:
    """Entries of the target table: servers × K (the nodes are at most ``servers``)."""
    return sizes.servers * sizes.classes


def free_ints(sizes: Sizes) -> int:
    """Entries of a (K, R) table of free amounts, R <= MAX_RESOURCES."""
    return sizes.classes * MAX_RESOURCES


@njit
def serve_targets(st, pr, b, base):
    """Make node n serve ``st.own_i[b, base + n·K + k]`` class-k jobs in system ``b`` (the counts must fit each node
    and sum, per class, to at most the class's jobs present); the table is used up (it holds the jobs started)."""
    K = pr.ints[P_K]
    N = st.res_used.shape[1]
    for k in range(K):
        j = st.cls_i[b, k, C_HEAD]
        for _ in range(st.cls_i[b, k, C_X]):  # the served jobs are a prefix of the class's list
            nxt = st.job_i[b, j, J_NEXT]  # preempt_job moves j behind the served prefix, the rest stays in order
            at = base + st.res_node[b, j] * K + k
            if st.own_i[b, at] > 0:
                st.own_i[b, at] -= 1  # kept
            else:
                preempt_job(st, pr, b, j)
            j = nxt
    for node in range(N):
        for k in range(K):
            at = base + node * K + k
            while st.own_i[b, at] > 0:
                start_on(st, pr, b, st.cls_i[b, k, C_BOUND], node)
                st.own_i[b, at] -= 1
