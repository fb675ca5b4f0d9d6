"""Multiserver-job policies of the user's, compiled into the event loop: the decorator and what a policy may call.

A compiled policy is one function of the system's state, decorated with :func:`policy`, in the user's own file::

    import msjgym.systems.msj.compiled as msj

    @msj.policy
    def my_first_fit(s):
        while True:                                   # start waiting jobs, oldest first, while any fits
            best, best_seq = -1, 0
            for c in range(msj.num_classes(s)):
                j = msj.first_waiting(s, c)
                if j >= 0 and msj.need(s, c) <= msj.free_servers(s):
                    if best < 0 or msj.arrival_seq(s, j) < best_seq:
                        best, best_seq = c, msj.arrival_seq(s, j)
            if best < 0:
                return
            msj.start(s, best)

and is evaluated like a built-in, inside the compiled event loop: ``msjgym evaluate SCENARIO --policy
my_file.py:my_first_fit`` (same seeds, statistics and scorecard as a built-in). The function is called after every
event (an arrival, or the completions at one instant) with ``s``, a view of one system, and decides by calling
:func:`start` / :func:`start_job` (and, for a preemptive policy, :func:`preempt` / :func:`preempt_job`). It returns
nothing. It must be compilable by numba in nopython mode without allocating (no new arrays; scalars, loops and the
functions below are fine).

The view is read through the functions of this module only (``s``'s fields are msjgym's state arrays, not an API).
Jobs are named by their slot ``j`` (an int, valid while the job is in the system). Within a class, jobs form a list:
first the jobs in service (in the order they started), then the waiting jobs in arrival order.

Every decision is checked: naming a class or a job that does not exist, starting a job that is not waiting or that
needs more servers than are free, preempting a job not in service, or preempting in a policy not declared
``preemptive=True`` stops the run with one :class:`msjgym.errors.PolicyError` naming the replication, the event
(its number and time) and the value. Units: time in the scenario's time unit; sizes are durations while holding the
job's ``need`` servers.

Only the policy is compiled: its function (and the ``@numba.njit`` helpers of its file it calls) is compiled on its own,
in about a second, and plugged into msjgym's event loop, which is compiled once per machine
(:mod:`msjgym.systems.msj.loop`). It is cached on disk, keyed on the content of the policy's file and of the msjgym
modules that file imports (:mod:`msjgym.core.jit`): an edit of the file recompiles the policy, nothing else.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from msjgym.core.jit import njit
from msjgym.core.user_policy import compiled_source
from msjgym.core.paths import is_regular_file
from msjgym.errors import PolicyError
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj.state import (
    C_BOUND, C_HEAD, C_N, C_X, J_ARR, J_CLS, J_DONE, J_EST, J_HPOS, J_NEXT, J_REM, J_SEQ, J_SIZE, P_K, P_SERVERS, S_BUSY,
    S_ERRARG, S_NJOBS, SystemView, T_NOW, preempt_job as _preempt_job, preempt_last, start_job as _start_job,
    start_next)

__all__ = ["SystemView", "policy"]  # and the functions below


class PolicyDecisionError(Exception):
    """Raised inside the compiled loop by an invalid decision; turned into a ``PolicyError`` naming the event."""


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class CompiledPolicy:
    """A compiled policy of the user's: what :func:`policy` returns.

    Attributes:
        name: how results name it (the function's name unless given).
        kernel: the compiled function ``kernel(s)``.
        preemptive: whether it may preempt jobs in service.
        summary: one line for listings (the docstring's first line).
        source: the file that defines it.
    """

    name: str
    kernel: Any
    preemptive: bool
    summary: str
    source: str

    def __call__(self, *args: Any) -> None:
        raise TypeError(f"compiled policy {self.name!r} runs inside msjgym's event loop: evaluate it with "
                        f"msjgym.evaluate(scenario, policy) or msjgym evaluate SCENARIO --policy FILE.py:NAME")


def policy(fn: Callable | None = None, *, name: str | None = None, preemptive: bool = False) -> Any:
    """Declare ``fn(s)`` a compiled multiserver-job policy (see the module docstring).

    Usable bare (``@policy``) or with options (``@policy(name="mine", preemptive=True)``). ``preemptive=False``
    (the default) makes :func:`preempt` / :func:`preempt_job` an error.
    """
    def declare(f: Callable) -> CompiledPolicy:
        if not callable(f) or len(inspect.signature(f).parameters) != 1:
            raise PolicyError(f"@policy: {getattr(f, '__name__', f)!r} must be a function of one argument, "
                              "the system view s")
        source, summary = compiled_source(f)
        # Python's error model: an integer division by zero raises ZeroDivisionError (as the same policy in Python
        # would) instead of giving 0 silently (numba's numpy model, kept for the built-ins)
        return CompiledPolicy(name=name or f.__name__, kernel=njit(f, error_model="python"), preemptive=preemptive,
                              summary=summary, source=source)

    return declare if fn is None else declare(fn)


# ---------------------------------------------------------------- reading the system
@njit(inline="always")
def now(s):
    """The current time."""
    return s.st.sys_f[s.b, T_NOW]


@njit(inline="always")
def servers(s):
    """The number of servers n."""
    return s.pr.ints[P_SERVERS]


@njit(inline="always")
def free_servers(s):
    """Servers not held by a job in service."""
    return s.pr.ints[P_SERVERS] - s.st.sys_i[s.b, S_BUSY]


@njit(inline="always")
def num_classes(s):
    """The number of job classes K (classes are 0, ..., K - 1)."""
    return s.pr.ints[P_K]


@njit(inline="always")
def jobs_in_system(s):
    """Jobs in the system (waiting or in service)."""
    return s.st.sys_i[s.b, S_NJOBS]


@njit(inline="always")
def _check_class(s, c):
    if c < 0 or c >= s.pr.ints[P_K]:
        s.st.sys_i[s.b, S_ERRARG] = c
        raise PolicyDecisionError("there is no class c (valid: 0 <= c < num_classes(s))")


@njit(inline="always")
def _check_job(s, j):
    if j < 0 or j >= s.st.job_i.shape[1] or s.st.job_i[s.b, j, J_SEQ] < 0:
        s.st.sys_i[s.b, S_ERRARG] = j
        raise PolicyDecisionError("there is no job j in the system")


@njit(inline="always")
def need(s, c):
    """The servers a class-c job holds while in service."""
    _check_class(s, c)
    return s.pr.need[c]


@njit(inline="always")
def jobs(s, c):
    """Class-c jobs in the system."""
    _check_class(s, c)
    return s.st.cls_i[s.b, c, C_N]


@njit(inline="always")
def in_service(s, c):
    """Class-c jobs in service."""
    _check_class(s, c)
    return s.st.cls_i[s.b, c, C_X]


@njit(inline="always")
def waiting(s, c):
    """Class-c jobs waiting."""
    _check_class(s, c)
    return s.st.cls_i[s.b, c, C_N] - s.st.cls_i[s.b, c, C_X]


@njit(inline="always")
def first_job(s, c):
    """The first job of class c's list (in service if any is; -1: none)."""
    _check_class(s, c)
    return s.st.cls_i[s.b, c, C_HEAD]


@njit(inline="always")
def first_waiting(s, c):
    """The oldest waiting class-c job (-1: none waits)."""
    _check_class(s, c)
    return s.st.cls_i[s.b, c, C_BOUND]


@njit(inline="always")
def next_job(s, j):
    """The job after j in its class's list (-1: j is the last)."""
    _check_job(s, j)
    return s.st.job_i[s.b, j, J_NEXT]


@njit(inline="always")
def job_class(s, j):
    """Job j's class."""
    _check_job(s, j)
    return s.st.job_i[s.b, j, J_CLS]


@njit(inline="always")
def arrival_seq(s, j):
    """Job j's arrival number (smaller: arrived earlier)."""
    _check_job(s, j)
    return s.st.job_i[s.b, j, J_SEQ]


@njit(inline="always")
def arrival_time(s, j):
    """Job j's arrival time."""
    _check_job(s, j)
    return s.st.job_f[s.b, j, J_ARR]


@njit(inline="always")
def is_serving(s, j):
    """Whether job j is in service."""
    _check_job(s, j)
    return s.st.job_i[s.b, j, J_HPOS] >= 0


@njit(inline="always")
def duration(s, j):
    """Job j's whole duration (a size-aware policy's knowledge; size-blind policies should not read it)."""
    _check_job(s, j)
    return s.st.job_f[s.b, j, J_SIZE]


@njit(inline="always")
def estimate(s, j):
    """Job j's runtime estimate as the scheduler knows it: in a replayed trace its requested time (SWF field 9, CSV
    ``requested``; it may be below the duration: docs/modelling-choices.md#requested-times), else as the scenario's
    ``estimate`` says (the duration by default)."""
    _check_job(s, j)
    return s.st.job_f[s.b, j, J_EST]


@njit(inline="always")
def remaining(s, j):
    """Job j's remaining duration now."""
    _check_job(s, j)
    if s.st.job_i[s.b, j, J_HPOS] >= 0:
        return s.st.job_f[s.b, j, J_DONE] - s.st.sys_f[s.b, T_NOW]
    return s.st.job_f[s.b, j, J_REM]


@njit(inline="always")
def attained(s, j):
    """Service job j has received so far (its age, for size-blind policies)."""
    return duration(s, j) - remaining(s, j)


# ---------------------------------------------------------------- deciding
@njit(inline="always")
def start(s, c):
    """Start the oldest waiting class-c job (it must exist and fit in the free servers)."""
    _check_class(s, c)
    st, b = s.st, s.b
    if st.cls_i[b, c, C_BOUND] < 0:
        st.sys_i[b, S_ERRARG] = c
        raise PolicyDecisionError("start(s, c): no class-c job waits")
    if s.pr.need[c] > s.pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]:
        st.sys_i[b, S_ERRARG] = c
        raise PolicyDecisionError("start(s, c): a class-c job needs more servers than are free (over-allocation)")
    start_next(st, s.pr, b, c)


@njit(inline="always")
def start_job(s, j):
    """Start the waiting job j (any waiting job; it must fit in the free servers)."""
    _check_job(s, j)
    st, b = s.st, s.b
    if st.job_i[b, j, J_HPOS] >= 0:
        st.sys_i[b, S_ERRARG] = j
        raise PolicyDecisionError("start_job(s, j): job j is already in service")
    if s.pr.need[st.job_i[b, j, J_CLS]] > s.pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]:
        st.sys_i[b, S_ERRARG] = j
        raise PolicyDecisionError("start_job(s, j): job j needs more servers than are free (over-allocation)")
    _start_job(st, s.pr, b, j)


@njit(inline="always")
def _check_preemptive(s, value):
    if not s.preemptive:
        s.st.sys_i[s.b, S_ERRARG] = value
        raise PolicyDecisionError("a policy declared with preemptive=False preempted a job")


@njit(inline="always")
def preempt(s, c):
    """Preempt the class-c job in service that started last (preempt-resume: it keeps its remaining duration)."""
    _check_class(s, c)
    _check_preemptive(s, c)
    if s.st.cls_i[s.b, c, C_X] == 0:
        s.st.sys_i[s.b, S_ERRARG] = c
        raise PolicyDecisionError("preempt(s, c): no class-c job is in service")
    preempt_last(s.st, s.pr, s.b, c)


@njit(inline="always")
def preempt_job(s, j):
    """Preempt job j, which must be in service (preempt-resume: it keeps its remaining duration)."""
    _check_job(s, j)
    _check_preemptive(s, j)
    if s.st.job_i[s.b, j, J_HPOS] < 0:
        s.st.sys_i[s.b, S_ERRARG] = j
        raise PolicyDecisionError("preempt_job(s, j): job j is not in service")
    _preempt_job(s.st, s.pr, s.b, j)


# ---------------------------------------------------------------- errors
def policy_failure(name: str, exc: BaseException, state: Any, b: int) -> PolicyError:
    """The one-line ``PolicyError`` for ``exc``, raised while compiling or running the compiled policy ``name`` in
    replication ``b`` (``state``: the simulation's state, for the event's number and time)."""
    from numba.core.errors import NumbaError

    from msjgym.systems.msj.state import S_EVENTS

    if isinstance(exc, NumbaError):
        detail = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        return PolicyError(f"policy {name}: numba cannot compile it (it must run in nopython mode without "
                           f"allocating; see msjgym.systems.msj.compiled): {detail[:400]}")
    where = (f"policy {name}: replication {b}, event {int(state.sys_i[b, S_EVENTS]) + 1} "
             f"(time {float(state.sys_f[b, T_NOW]):.6g})")
    if isinstance(exc, PolicyDecisionError):
        return PolicyError(f"{where}: invalid decision: {exc} (value {int(state.sys_i[b, S_ERRARG])})")
    return PolicyError(f"{where}: it raised {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- as a declaration the engine runs
@dataclass(frozen=True, kw_only=True)
class UserCompiledPolicy(Policy):
    """A compiled policy of the user's as an MSJ policy declaration, which
    :class:`msjgym.systems.msj.simulation.MSJSimulation` plugs into the event loop as its ``decide`` hook."""

    compiled: Any = None


def declaration(compiled: CompiledPolicy, name: str) -> UserCompiledPolicy:
    """``compiled`` as an MSJ policy declaration named ``name`` (the ``--policy`` text)."""
    return UserCompiledPolicy(name=name, summary=compiled.summary, preemptive=compiled.preemptive,
                              source=compiled.source, compiled=compiled)


_FILES: dict[tuple[str, int, str], Any] = {}


def resolve(policy: Any) -> Any:
    """The declaration of a compiled policy of the user's given as ``FILE.py:NAME`` or as the object itself; None
    when ``policy`` is not one (a Python policy, a saved model, a built-in's name). The file is executed once per
    version (its modification time)."""
    if isinstance(policy, CompiledPolicy):
        return declaration(policy, policy.name)
    if not isinstance(policy, str) or policy.startswith(("sb3:", "rllib:")):
        return None
    text, sep, name = policy.rpartition(":")
    path = Path(text)
    if not sep or not text.endswith(".py") or not is_regular_file(path):
        return None
    from msjgym.core.user_policy import load_object

    key = (str(path.resolve()), path.stat().st_mtime_ns, name)
    if key not in _FILES:
        _FILES[key] = load_object(path, name, policy)
    obj = _FILES[key]
    return declaration(obj, policy) if isinstance(obj, CompiledPolicy) else None
