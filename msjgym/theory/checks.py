"""Input checks shared by :mod:`msjgym.theory`: each raises ``ValueError`` naming the argument, its value and the
valid range, in the one message style of :func:`msjgym.core.validation.check_number`."""
from __future__ import annotations

from msjgym.core.validation import check_number, is_finite, is_real  # noqa: F401  (re-exported for the theory modules)


def require_count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (integral floats accepted, bools rejected)."""
    return check_number(name, value, minimum, integer=True, error=ValueError)


def require_positive(name: str, value: object) -> float:
    """``value`` as a finite float > 0."""
    return check_number(name, value, 0, open_low=True, error=ValueError)


def require_nonnegative(name: str, value: object) -> float:
    """``value`` as a finite float >= 0."""
    return check_number(name, value, 0, error=ValueError)


def require_probability(name: str, value: object) -> float:
    """``value`` as a float in [0, 1]."""
    return check_number(name, value, 0, 1, error=ValueError)


def require_stable(load: float, what: str) -> None:
    """Raise ``ValueError`` unless the utilisation ``load`` (ρ) is < 1."""
    if load >= 1:
        raise ValueError(f"{what}: load ρ = {load!r} >= 1, the queue is unstable (needs ρ < 1)")


def require_in(name: str, value: object, low: float, high: float, closed: tuple[bool, bool] = (True, True)) -> float:
    """``value`` as a finite float in the interval from ``low`` to ``high``, ends included where ``closed`` says."""
    return check_number(name, value, low, high, open_low=not closed[0], open_high=not closed[1], error=ValueError)
