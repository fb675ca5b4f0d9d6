"""Evaluation, the same for every family: the evaluator, its result, sweeps, the results store, plots.

This package is also callable: ``msjgym.evaluate(scenario, policy, ...)`` is
:func:`msjgym.evaluate.evaluator.evaluate` (the top-level function of msjgym's quick start), while its modules stay
importable as usual (``import msjgym.evaluate.sweep``). A module cannot be called, so the package's module object gets
a subclass of :class:`types.ModuleType` whose ``__call__`` forwards to the function (``inspect.signature`` follows
``__wrapped__`` to the function's signature).
"""
import sys
import types
from typing import Any

from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.result import Result

__all__ = ["evaluate", "Result"]


class _CallableModule(types.ModuleType):
    """The ``msjgym.evaluate`` package, callable as :func:`msjgym.evaluate.evaluator.evaluate`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Result:
        return evaluate(*args, **kwargs)


__wrapped__ = evaluate
sys.modules[__name__].__class__ = _CallableModule
