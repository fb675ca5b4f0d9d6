"""The greedy packing kernel the non-preemptive multi-resource policies share: start waiting jobs one at a time, the
best (job, node) pair by a rule, while some waiting job fits some node.

Within a class every job has the same demand vector, so only each class's oldest waiting job is a candidate (MSJ's
class lists, ``C_BOUND``); a rule scores a candidate class c on a node n, the highest score starts (ties: the older
job, then the lower node). Rules (``rule``):

* :data:`FIRST_FIT`: the oldest waiting job that fits, on the first node it fits (score: none; arrival order);
* :data:`BEST_FIT`: the pair leaving the least free capacity on the node, Σ_r (free_nr − d_cr) / C_r;
* :data:`ALIGNMENT`: the largest alignment score Σ_r (d_cr / C_r)(free_nr / C_r), the dot product of the job's
  demand and the node's free amounts, each normalized by the node's capacity (Grandl, Ananthanarayanan, Kandula,
  Rao & Akella, "Multi-resource packing for cluster schedulers", SIGCOMM 2014: Tetris's alignment score);
* :data:`DOMINANT`: the class with the smallest dominant share max_r x_c d_cr / (nodes · C_r) (x_c its jobs in
  service), on the first node it fits (Ghodsi, Zaharia, Hindman, Konwinski, Shenker & Stoica, "Dominant Resource
  Fairness: fair allocation of multiple resource types", NSDI 2011, §4, Algorithm 1, with classes as users).

Cost: O(K · nodes · R) per job started, and one more scan when nothing more fits.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import C_BOUND, C_X, J_SEQ, P_K
from msjgym.systems.multi_resource.state import first_node, fits_on, start_on

FIRST_FIT = 0
BEST_FIT = 1
ALIGNMENT = 2
DOMINANT = 3


@njit(inline="always")
def _score(st, pr, b, rule, c, node):
    R = pr.res_cap.shape[0]
    total = 0.0
    if rule == BEST_FIT:
        for r in range(R):
            total -= (pr.res_cap[r] - st.res_used[b, node, r] - pr.res_demand[c, r]) / pr.res_cap[r]
    elif rule == ALIGNMENT:
        for r in range(R):
            total += (pr.res_demand[c, r] / pr.res_cap[r]) * ((pr.res_cap[r] - st.res_used[b, node, r])
                                                              / pr.res_cap[r])
    elif rule == DOMINANT:
        nodes = st.res_used.shape[1]
        share = 0.0
        for r in range(R):
            share = max(share, st.cls_i[b, c, C_X] * pr.res_demand[c, r] / (nodes * pr.res_cap[r]))
        total = -share
    return total


@njit(inline="always")
def pack(st, pr, b, rule):
    """Start waiting jobs, the best (class, node) pair by ``rule`` first, while some waiting job fits some node."""
    K = pr.ints[P_K]
    nodes = st.res_used.shape[1]
    by_node = rule == BEST_FIT or rule == ALIGNMENT
    while True:
        best = -1
        best_node = -1
        best_score = 0.0
        best_seq = 0
        for c in range(K):
            j = st.cls_i[b, c, C_BOUND]
            if j < 0:
                continue
            s = st.job_i[b, j, J_SEQ]
            if by_node:
                for node in range(nodes):
                    if not fits_on(st, pr, b, c, node):
                        continue
                    v = _score(st, pr, b, rule, c, node)
                    if best < 0 or v > best_score or (v == best_score and s < best_seq):
                        best, best_node, best_score, best_seq = c, node, v, s
            else:
                node = first_node(st, pr, b, c)
                if node < 0:
                    continue
                v = _score(st, pr, b, rule, c, node)
                if best < 0 or v > best_score or (v == best_score and s < best_seq):
                    best, best_node, best_score, best_seq = c, node, v, s
        if best < 0:
            return
        start_on(st, pr, b, st.cls_i[b, best, C_BOUND], best_node)
