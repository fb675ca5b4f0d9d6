"""Primitives shared by msjgym's input checks (scenario files, distributions, theory functions)."""
from __future__ import annotations

import argparse
import numbers
from collections.abc import Callable

import numpy as np


def is_real(value: object) -> bool:
    """A real number (NumPy scalars included), not a bool and not a string."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def show(value: object, limit: int = 80) -> str:
    """``repr`` of a user's value for an error message (NumPy scalars as Python ones), cut to ``limit`` characters."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` (underscores allowed, as in 1_000_000)."""
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} must be >= {low}")
        return value
    return parse
