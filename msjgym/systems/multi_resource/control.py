"""External control of the multi-resource system (an agent decides): MSJ's decision path
(:mod:`msjgym.systems.msj.control`: ``new_control``, ``advance``, ``reset_system``, ``wait``, the rewards), compiled for
this family's record, with the vector start and checks.

MSJ's ``advance`` stops at a decision epoch where some waiting job fits MSJ's servers: with one resource on one node
exactly when one fits the resource; otherwise (unit needs on the bound of the jobs in service,
:mod:`msjgym.systems.multi_resource.model`) whenever a job waits, as ``MODE_QUEUE`` does, and :func:`fits_somewhere`
says whether one fits a node (an environment masks the others, or waits). :func:`start` places a job through the
transitions the built-in policies use (:func:`msjgym.systems.multi_resource.state.start_on`).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.control import advance, new_control, reset_system, wait  # noqa: F401  (the decision path)
from msjgym.systems.msj.state import C_BOUND, J_CLS, J_HPOS, J_SEQ, P_K
from msjgym.systems.multi_resource.state import first_node, fits_on, start_on


@njit
def fits_somewhere(st, pr, b):
    """Does some waiting job fit some node?"""
    for c in range(pr.ints[P_K]):
        if st.cls_i[b, c, C_BOUND] >= 0 and first_node(st, pr, b, c) >= 0:
            return True
    return False


@njit
def can_start(st, pr, b, j, node):
    """Whether job slot j holds a waiting job that fits ``node`` now."""
    if st.job_i[b, j, J_SEQ] < 0 or st.job_i[b, j, J_HPOS] >= 0:
        return False
    return fits_on(st, pr, b, st.job_i[b, j, J_CLS], node)


@njit
def start(st, pr, b, j, node):
    """Start the waiting job j on ``node`` (it must fit: :func:`can_start`)."""
    start_on(st, pr, b, j, node)
