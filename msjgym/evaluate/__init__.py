"""Evaluation, the same for every family: the evaluator, its result, sweeps, the results store, plots."""
from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.result import Result

__all__ = ["evaluate", "Result"]
