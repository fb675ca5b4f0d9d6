"""Width rules of the user's, compiled into the loss event loop: the decorator and what a rule may call.

A compiled width rule is one function in the user's own file, decorated with :func:`width_rule`, with its own
parameters::

    import msjgym.systems.loss.compiled as loss

    @loss.width_rule(params=(loss.Param("least", 1, "fewest servers a job accepts", low=1, integer=True),),
                     block_probability=..., full_width_probability=...)   # optional: the rule's law
    def at_least(m, d, s, b, pmf):
        return m if m >= loss.arg(pmf, b, 0) else 0

and runs as a built-in does, inside the compiled loop (the same seeds and statistics): ``msjgym evaluate
loss-small --policy my_file.py:at_least --param least=2``. The function is called at every arrival with m = min(l, d)
(l idle servers among the k sampled, d the maximum width), the replications' random streams ``s`` (draw with
:func:`below` / :func:`uniform`), the replication ``b`` and the state's table ``pmf`` (``pmf[b, j]`` = P(m = j |
state), j = 0..d; read the rule's parameters, kept in its last columns, with :func:`arg` / :func:`real_arg`); it
returns the job's width, 0 (block) .. m. It must compile in numba's nopython
mode without allocating. Its parameters (:class:`msjgym.api.Param`, at most :data:`NARG`) are given as ``--param
NAME=VALUE`` (or ``bind(NAME=VALUE)`` from Python).

The statistics integrate P(block | state) and P(width d | state) (GMGM eqs. (2), (9): the PASTA and Stein
residuals). A rule that declares them, as functions ``p(pmf, b, d)`` of ``pmf[b, j]`` = P(m = j | state), gets
those residuals as a built-in does; one that does not is treated as a policy of unknown law (greedy's probabilities
are integrated and the two residuals are left out, as for a policy deciding in Python).

Only the rule (and its probabilities) are compiled (about a second), cached by the content of its file
(:mod:`msjgym.core.jit`); the event loop is compiled once per machine (:mod:`msjgym.systems.loss.loop`). A compiled
rule gets the policy-free references of the scorecard (the paper's exact values are the built-ins').
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from msjgym.core.policy_registry import Param
from msjgym.core import rng as streams
from msjgym.core.jit import njit
from msjgym.core.user_policy import compiled_params, compiled_source
from msjgym.errors import PolicyError
from msjgym.systems.loss.contract import NARG, LossPolicy, block_if_none_idle, width_d_if_d_idle

__all__ = ["Param", "UserWidthRule", "width_rule", "NARG", "arg", "real_arg", "below", "uniform"]


@dataclass(frozen=True, kw_only=True)
class UserWidthRule(LossPolicy):
    """A compiled width rule of the user's: a :class:`~msjgym.systems.loss.contract.LossPolicy` whose kernels are the
    user's functions, declared in the user's file (``source``).

    Attributes (beyond :class:`LossPolicy`'s):
        law_known: whether the rule declared its P(block | state) and P(width d | state).
    """

    law_known: bool = False

    def parameter_row(self) -> list[float]:
        """The rule's parameter values as the loop's parameter slots (:data:`NARG` reals, declaration order)."""
        row = [float(v) for v in self.arguments()]
        return row + [0.0] * (NARG - len(row))  # the last NARG columns of the state's pmf table


def _python_rule(name: str) -> Callable[[int, int, Any], int]:
    def rule(m: int, d: int, rng: Any) -> int:
        raise PolicyError(f"width rule {name}: a compiled rule runs in the compiled loop only (msjgym evaluate), "
                          "not as an agent of msjgym/AdaptiveLoss-v0")
    return rule


def _kernel(f: Callable | None, what: str, arity: int, name: str) -> Any:
    if not callable(f) or len(inspect.signature(f).parameters) != arity:
        raise PolicyError(f"@width_rule: {what} of {name!r} must be a function of {arity} arguments")
    return f if hasattr(f, "compile") else njit(f)  # an @njit function as given; a plain one compiled here


def width_rule(fn: Callable | None = None, *, name: str | None = None, params: tuple[Param, ...] = (),
               block_probability: Callable | None = None, full_width_probability: Callable | None = None) -> Any:
    """Declare ``fn(m, d, s, b, pmf) -> width`` a compiled width rule (module docstring), with its parameters and,
    optionally, its law: ``block_probability(pmf, b, d)`` = P(block | state) and ``full_width_probability(pmf, b,
    d)`` = P(width d | state) (both or neither; they read the rule's parameters from ``pmf`` as the rule does).

    Usable bare (``@width_rule``) or with options (``@width_rule(name="mine", params=(Param(...),))``).
    """
    params = compiled_params("width_rule", params, NARG, "width rule", "loss")
    if (block_probability is None) != (full_width_probability is None):
        raise PolicyError("@width_rule: give both block_probability and full_width_probability, or neither")

    def declare(f: Callable) -> UserWidthRule:
        label = name or getattr(f, "__name__", str(f))
        width = _kernel(f, "the rule", 5, label)
        source, summary = compiled_source(f)
        known = block_probability is not None
        blocked = _kernel(block_probability, "block_probability", 3, label) if known else block_if_none_idle
        full = _kernel(full_width_probability, "full_width_probability", 3, label) if known else width_d_if_d_idle
        return UserWidthRule(name=label, summary=summary, source=source, params=params,
                             rule=_python_rule(label), width_kernel=width, block_probability=blocked,
                             full_width_probability=full, deterministic=False, law_known=known)

    return declare if fn is None else declare(fn)


def resolve(policy: Any) -> UserWidthRule | None:
    """The declaration of a compiled width rule given as ``FILE.py:NAME`` or as the object itself (possibly bound);
    None when ``policy`` is not one."""
    from msjgym.core.user_policy import declared_in_file

    return declared_in_file(policy, UserWidthRule)


# ---------------------------------------------------------------- what a rule may call
@njit(inline="always")
def arg(pmf, b, k):
    """The rule's k-th parameter (0-based, declaration order) as an integer."""
    return int(pmf[b, pmf.shape[1] - NARG + k])


@njit(inline="always")
def real_arg(pmf, b, k):
    """The rule's k-th parameter as a real number."""
    return pmf[b, pmf.shape[1] - NARG + k]


@njit(inline="always")
def below(s, b, n):
    """A uniform integer in 0 .. n − 1 from replication b's stream (what the built-in ``random-width`` draws)."""
    return streams.below(s, b, n)


@njit(inline="always")
def uniform(s, b):
    """A uniform real in [0, 1) from replication b's stream."""
    return streams.uniform(s, b)
