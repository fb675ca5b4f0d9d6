"""Dispatchers of the user's, compiled into the dispatch event loop: the decorator and what a dispatcher may call.

A compiled dispatcher is one function in the user's own file, decorated with :func:`dispatcher`, with its own
parameters::

    import msjgym.systems.dispatch.compiled as lb

    @lb.dispatcher(params=(lb.Param("sample", 2, "servers sampled per arrival", low=1, integer=True),))
    def my_jsq_d(st, pr, b, now):
        d = lb.arg(pr, 0)                     # its first parameter (--param sample=3)
        lb.sample(st, pr, b, d)               # d distinct servers at random, d messages counted
        best = lb.sampled(st, 0)
        for k in range(1, d):
            i = lb.sampled(st, k)
            if lb.queue_length(st, i) < lb.queue_length(st, best):
                best = i
        return best

and runs as a built-in does, inside the compiled loop (the same seeds and statistics): ``msjgym evaluate
lb-dispatch --policy my_file.py:my_jsq_d --param sample=3``. The function is called at every arrival with the loop's
state ``st`` and parameters ``pr`` (read through the functions below only), the replication ``b`` and the arrival's
time ``now``; it returns the server (0 .. servers − 1) the job joins. It must compile in numba's nopython mode
without allocating. Its parameters (:class:`msjgym.api.Param`, at most :data:`NARG`) are given as ``--param
NAME=VALUE`` (or ``bind(NAME=VALUE)`` from Python) and read as :func:`arg` (integers) or :func:`real_arg`. State it
keeps between arrivals (a pointer, counters) is its own area: ``@dispatcher(own=K)`` declares K int64 cells, read with
:func:`own_get` and written with :func:`own_set`, zeroed at the start of every replication.

Only the dispatcher is compiled (about a second), cached by the content of its file (:mod:`msjgym.core.jit`); the
event loop is compiled once per machine (:mod:`msjgym.systems.dispatch.loop`). A compiled dispatcher is a
:class:`~msjgym.systems.dispatch.contract.DispatchPolicy` like the built-ins: the family's slot table
(``contract.KERNELS``) compiles its ``choose`` and gives the address the loop calls. A compiled dispatcher gets no
scorecard references (the paper's tables are the built-ins'); the run-time checks apply as to any dispatcher.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.core.user_policy import compiled_params, compiled_source
from msjgym.core.rng import below
from msjgym.errors import PolicyError
from msjgym.systems.dispatch.contract import P_N, DispatchPolicy, count_messages, sample_servers
from msjgym.systems.dispatch.state import BAD_SAMPLE, RUNNING, S_BAD, S_STATUS, V_Q

__all__ = ["Param", "UserDispatcher", "dispatcher", "NARG", "count_messages"]

NARG = 4
"""Parameters a compiled dispatcher may declare (slots ``pr.ints[P_ARG + k]`` and the last NARG floats)."""


@dataclass(frozen=True, kw_only=True)
class UserDispatcher(DispatchPolicy):
    """A compiled dispatcher of the user's: a :class:`~msjgym.systems.dispatch.contract.DispatchPolicy` whose ``choose``
    is the user's function, declared in the user's file (``source``)."""


def dispatcher(fn: Callable | None = None, *, name: str | None = None, params: tuple[Param, ...] = (),
               own: int = 0) -> Any:
    """Declare ``fn(st, pr, b, now) -> server`` a compiled dispatcher (module docstring), with its parameters and
    ``own`` int64 cells of its own area (:func:`own_get`, :func:`own_set`).

    Usable bare (``@dispatcher``) or with options (``@dispatcher(name="mine", params=(Param(...),), own=1)``).
    """
    if isinstance(own, bool) or not isinstance(own, int) or own < 0:
        raise PolicyError(f"@dispatcher: own = {own!r}; must be an integer >= 0 (int64 cells of its own area)")
    params = compiled_params("dispatcher", params, NARG, "dispatcher", "lb")

    def declare(f: Callable) -> UserDispatcher:
        if not callable(f) or len(inspect.signature(f).parameters) != 4:
            raise PolicyError(f"@dispatcher: {getattr(f, '__name__', f)!r} must be a function of four arguments, "
                              "(st, pr, b, now)")
        source, summary = compiled_source(f)
        return UserDispatcher(name=name or f.__name__, summary=summary, source=source, params=params,
                              choose=njit(f), own_ints=own)

    return declare if fn is None else declare(fn)


def resolve(policy: Any) -> UserDispatcher | None:
    """The declaration of a compiled dispatcher given as ``FILE.py:NAME`` or as the object itself (possibly bound);
    None when ``policy`` is not one. The file is executed once per version (its modification time)."""
    from msjgym.core.user_policy import declared_in_file

    return declared_in_file(policy, UserDispatcher)


# ---------------------------------------------------------------- what a dispatcher may call
@njit(inline="always")
def servers(pr):
    """The number of servers N."""
    return pr.ints[P_N]


@njit(inline="always")
def queue_length(st, i):
    """The jobs at server i (waiting and in service)."""
    return st.srv[i, V_Q]


@njit(inline="always")
def arg(pr, k):
    """The dispatcher's k-th parameter (0-based, declaration order) as an integer (0 if it is not one)."""
    return pr.ints[pr.ints.shape[0] - NARG + k]


@njit(inline="always")
def real_arg(pr, k):
    """The dispatcher's k-th parameter as a real number."""
    return pr.floats[pr.floats.shape[0] - NARG + k]


@njit(inline="always")
def own_get(st, k):
    """Cell k (< K) of the dispatcher's own area, the K int64 cells declared with ``@dispatcher(own=K)``, zeroed at
    the start of every replication."""
    return st.own[k]


@njit(inline="always")
def own_set(st, k, value):
    """Cell k (< K) of the dispatcher's own area := ``value`` (an integer)."""
    st.own[k] = value


@njit(inline="always")
def sample(st, pr, b, d):
    """Sample d distinct servers uniformly at random, in random order (read them with :func:`sampled`), and count d
    messages: what the built-in ``jsq-d`` does, draw for draw. A d outside [1, N] stops the run with an error."""
    n = pr.ints[P_N]
    if d < 1 or d > n:
        if st.si[S_STATUS] == RUNNING:
            st.si[S_STATUS] = BAD_SAMPLE
            st.si[S_BAD] = d
        return
    count_messages(st, d)
    sample_servers(st, b, n, d)


@njit(inline="always")
def sampled(st, k):
    """The k-th server of the last :func:`sample`."""
    return st.perm[k]


@njit(inline="always")
def random_server(st, pr, b):
    """A server uniformly at random."""
    return below(st.rng, b, pr.ints[P_N])
