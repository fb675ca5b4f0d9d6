"""Rate rules of the user's, compiled into the finite-skip event loop: the decorator and what a rule may call.

A compiled rule is one function in the user's own file, decorated with :func:`rule`, naming the system it runs on,
with its own parameters::

    import msjgym.systems.finite_skip.compiled as fsk

    @fsk.rule(system=fsk.THRESHOLD, params=(fsk.Param("cap", 0, "most servers a job gets (0: P)", low=0,
                                                       integer=True),))
    def capped_fcfs(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
        cap = fsk.arg(speeds, k, 0)
        ...

and runs as a built-in does, inside the compiled loop (the same seeds and statistics): ``msjgym evaluate
finite-skip-fig4a --policy my_file.py:capped_fcfs --param cap=2``. The function has the built-ins' signature
(:data:`msjgym.systems.finite_skip.contract.ALLOCATE`, documented in :mod:`msjgym.systems.finite_skip.contract`): it is
called after every arrival and completion with the n >= 1 jobs present in arrival order (job j of class ``cls[j]``,
threshold or need ``prm[cls[j]]``, server ``srv[j]`` on heterogeneous servers), the k servers' speeds
``speeds[0..k-1]`` (fastest first), the distinct thresholds ``levels``, a scratch array ``taken`` and the random
stream ``rng`` (row 0); it writes each job's rate (a fraction of the capacity, summing to at most 1) into ``rates``
(zeroed before the call). It must compile in numba's nopython mode without allocating. Its parameters
(:class:`msjgym.api.Param`, at most :data:`NARG`) are given as ``--param NAME=VALUE`` (or ``bind(NAME=VALUE)``) and
read with :func:`arg` (integers) or :func:`real_arg`: they sit in :data:`NARG` slots after the k speeds.

Only the rule is compiled (about a second), cached by the content of its file (:mod:`msjgym.core.jit`); the event loop
is compiled once per machine. A compiled rule is judged as a policy of the user's: the policy-free references, no
work-conserving finite-skip claim (the loop still measures whether it serves outside the front or leaves capacity
idle with jobs waiting).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.core.user_policy import compiled_params, compiled_source
from msjgym.errors import PolicyError
from msjgym.systems.finite_skip.contract import HET, LPS, MSJ, SYSTEM_NAMES, THRESHOLD, FiniteSkipPolicy

__all__ = ["Param", "UserRateRule", "rule", "NARG", "arg", "real_arg", "HET", "LPS", "THRESHOLD", "MSJ"]

NARG = 4
"""Parameters a compiled rule may declare (the slots ``speeds[k + i]``, i < NARG)."""


@dataclass(frozen=True, kw_only=True)
class UserRateRule(FiniteSkipPolicy):
    """A compiled rate rule of the user's: a :class:`~msjgym.systems.finite_skip.contract.FiniteSkipPolicy` whose
    ``allocate`` is the user's function, declared in the user's file (``source``); never claimed WCFS."""

    def parameter_slots(self) -> list[float]:
        """The rule's parameter values as the slots after the speeds (:data:`NARG` reals, declaration order)."""
        row = [float(v) for v in self.arguments()]
        return row + [0.0] * (NARG - len(row))


def rule(fn: Callable | None = None, *, system: int, name: str | None = None, params: tuple[Param, ...] = (),
         preemptive: bool = True) -> Any:
    """Declare ``fn(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` a compiled rate rule for ``system``
    (:data:`HET`, :data:`LPS`, :data:`THRESHOLD` or :data:`MSJ`), with its parameters (module docstring).

    Usable as ``@rule(system=LPS)`` or with options (``@rule(system=LPS, name="mine", params=(Param(...),))``).
    """
    if system not in SYSTEM_NAMES:
        raise PolicyError(f"@rule: system = {system!r}: must be one of HET, LPS, THRESHOLD, MSJ "
                          f"({', '.join(f'{c} = {n}' for c, n in SYSTEM_NAMES.items())})")
    params = compiled_params("rule", params, NARG, "rule", "fsk")

    def declare(f: Callable) -> UserRateRule:
        label = name or getattr(f, "__name__", str(f))
        py = getattr(f, "py_func", f)
        if not callable(f) or len(inspect.signature(py).parameters) != 10:
            raise PolicyError(f"@rule: {label!r} must be a function of ten arguments, "
                              "(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)")
        source, summary = compiled_source(f)
        return UserRateRule(name=label, summary=summary, source=source, params=params, system=system,
                            preemptive=preemptive, wcfs=False, allocate=f if hasattr(f, "compile") else njit(f))

    return declare if fn is None else declare(fn)


def resolve(policy: Any) -> UserRateRule | None:
    """The declaration of a compiled rate rule given as ``FILE.py:NAME`` or as the object itself (possibly bound);
    None when ``policy`` is not one."""
    from msjgym.core.user_policy import declared_in_file

    return declared_in_file(policy, UserRateRule)


# ---------------------------------------------------------------- what a rule may call
@njit(inline="always")
def arg(speeds, k, i):
    """The rule's i-th parameter (0-based, declaration order) as an integer."""
    return int(speeds[k + i])


@njit(inline="always")
def real_arg(speeds, k, i):
    """The rule's i-th parameter as a real number."""
    return speeds[k + i]
