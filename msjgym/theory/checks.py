"""Input checks shared by :mod:`msjgym.theory`: each raises ``ValueError`` naming the argument, its value and the
valid range."""
from __future__ import annotations

import math

from msjgym.core.validation import is_real


def require_count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (integral floats accepted, bools rejected)."""
    ok = (is_real(value) and math.isfinite(value)
          and float(value).is_integer() and value >= minimum)
    if not ok:
        raise ValueError(f"{name} = {value!r}: must be an integer >= {minimum}")
    return int(value)


def require_positive(name: str, value: object) -> float:
    """``value`` as a finite float > 0."""
    if not (is_real(value) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} = {value!r}: must be a finite number > 0")
    return float(value)


def require_nonnegative(name: str, value: object) -> float:
    """``value`` as a finite float >= 0."""
    if not (is_real(value) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} = {value!r}: must be a finite number >= 0")
    return float(value)


def require_probability(name: str, value: object) -> float:
    """``value`` as a float in [0, 1]."""
    if not (is_real(value) and 0 <= value <= 1):
        raise ValueError(f"{name} = {value!r}: must be a probability in [0, 1]")
    return float(value)


def require_stable(load: float, what: str) -> None:
    """Raise ``ValueError`` unless the utilisation ``load`` (ρ) is < 1."""
    if load >= 1:
        raise ValueError(f"{what}: load ρ = {load!r} >= 1, the queue is unstable (needs ρ < 1)")


def require_in(name: str, value: object, low: float, high: float, closed: tuple[bool, bool] = (True, True)) -> float:
    """``value`` as a finite float in the interval from ``low`` to ``high``, ends included where ``closed`` says."""
    ok = (is_real(value) and math.isfinite(value)
          and (low <= value if closed[0] else low < value) and (value <= high if closed[1] else value < high))
    if not ok:
        interval = f"{'[' if closed[0] else '('}{low:g}, {high:g}{']' if closed[1] else ')'}"
        raise ValueError(f"{name} = {value!r}: must be a finite number in {interval}")
    return float(value)
