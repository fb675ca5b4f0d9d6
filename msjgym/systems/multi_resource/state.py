"""The multi-resource state record: MSJ's record (:class:`msjgym.systems.msj.state.MSJState`, its fields, layout and
transitions) with a resource area, and the vector transitions the policies and environments share.

The resource area (MSJ's transitions keep it: ``msjgym.systems.msj.state.hold_resources``, called where MSJ counts
the servers, adds a job's demand vector when it starts and gives it back when it is preempted or completes):

* ``res_used[B, N, R]`` (int64): the amount of resource r held on node n;
* ``res_node[B, J]`` (int64): the node job slot j is placed on (set by :func:`start_on` before the job starts;
  0 with one node);
* ``res_work[B, N + 1, R]`` (int64): working vectors any kernel may overwrite during its call (EASY's amounts
  available on each node at a candidate shadow time, rows [0, N), and its extra amounts, row N).

The parameters are MSJ's (:class:`msjgym.systems.msj.state.MSJParams`) with ``res_cap[R]`` (one node's capacity)
and ``res_demand[K, R]`` (a class's demand). MSJ's ``need``/``P_SERVERS``/``S_BUSY`` keep their meaning for the MSJ
engine (servers and needs with one resource on one node; otherwise a bound on the jobs in service and unit needs:
:mod:`msjgym.systems.multi_resource.model`).
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

import numpy as np

from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.systems.msj import state as msj
from msjgym.systems.msj.state import MSJParams, MSJState, OwnArea, start_job

MRState = namedtuple("MRState", MSJState._fields + ("res_used", "res_node", "res_work"))
MRState.__doc__ = """MSJ's state record of B systems with the resource area ``res_used[B, N, R]``, ``res_node[B, J]``,
``res_work[B, N + 1, R]`` (module docstring)."""

MRParams = namedtuple("MRParams", MSJParams._fields + ("res_cap", "res_demand", "pol_table"))
MRParams.__doc__ = """MSJ's parameters with ``res_cap[R]`` (one node's capacity of each resource), ``res_demand[K, R]``
(each class's demand) and ``pol_table`` (float64, 2-D: a table the running policy computes from the model before the
run, its declaration's ``table``; shape (0, 0) when it has none)."""



def with_resources(st: MSJState, nodes: int, resources: int) -> MRState:
    """MSJ's fresh state ``st`` (from :func:`msjgym.systems.msj.state.new_state`) with an empty resource area for
    ``nodes`` nodes of ``resources`` resources (its arrays, the random streams included, are kept)."""
    B, J = st.job_i.shape[0], st.job_i.shape[1]
    return MRState(*st, res_used=np.zeros((B, nodes, resources), dtype=np.int64),
                   res_node=np.zeros((B, J), dtype=np.int64),
                   res_work=np.zeros((B, nodes + 1, resources), dtype=np.int64))


def with_resource_params(pr: MSJParams, capacity: np.ndarray, demand: np.ndarray,
                         table: np.ndarray | None = None) -> MRParams:
    """MSJ's parameters with one node's ``capacity`` (``int64[R]``), the classes' ``demand`` (``int64[K, R]``) and
    the policy's ``table`` (2-D; None: an empty one)."""
    table = np.zeros((0, 0)) if table is None else np.array(table, dtype=np.float64, order="C", ndmin=2)
    if table.ndim != 2:
        raise PolicyError(f"the policy's table (pol_table): must be 2-D, got shape {table.shape}")
    return MRParams(*pr, res_cap=np.ascontiguousarray(capacity, dtype=np.int64),
                    res_demand=np.ascontiguousarray(demand, dtype=np.int64), pol_table=table)


def grow(st: MRState, own: Callable[[int], OwnArea] | None = None) -> MRState:
    """MSJ's :func:`msjgym.systems.msj.state.grow` (the job storage doubled), the placements kept."""
    out = msj.grow(st, own)
    node = np.zeros(out.job_i.shape[:2], dtype=np.int64)
    node[:, :st.res_node.shape[1]] = st.res_node
    return out._replace(res_node=node)


def example_state() -> MRState:
    """A state of one tiny system: its numba type is the record's type in every compiled signature."""
    return with_resources(msj.example_state(), 1, 1)


def example_params() -> MRParams:
    """Parameters with every field of its dtype (their numba type is the parameters' type in every signature)."""
    return with_resource_params(msj.example_params(), np.ones(1, dtype=np.int64), np.ones((1, 1), dtype=np.int64))


# ---------------------------------------------------------------- vector transitions and queries
@njit(inline="always")
def free_amount(st, pr, b, node, r):
    """The amount of resource r free on ``node``."""
    return pr.res_cap[r] - st.res_used[b, node, r]


@njit(inline="always")
def fits_on(st, pr, b, c, node):
    """Does a class-c job fit the free amounts of ``node``?"""
    for r in range(pr.res_cap.shape[0]):
        if pr.res_demand[c, r] > pr.res_cap[r] - st.res_used[b, node, r]:
            return False
    return True


@njit(inline="always")
def first_node(st, pr, b, c):
    """The first node a class-c job fits on (-1: none)."""
    for node in range(st.res_used.shape[1]):
        if fits_on(st, pr, b, c, node):
            return node
    return -1


@njit(inline="always")
def start_on(st, pr, b, j, node):
    """Start the waiting job j on ``node`` (it must fit there): MSJ's ``start_job``, which takes its demand."""
    st.res_node[b, j] = node
    start_job(st, pr, b, j)
