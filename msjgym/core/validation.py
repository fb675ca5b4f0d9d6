"""The one input layer: every number that enters msjgym from a user goes through :func:`check_number` (a value from
TOML, ``--param``, a policy parameter, an environment argument) or :func:`parse_number` (text: a trace field, a
fraction inside ``dist = "h2(f=1/2, scv=15)"``, a command-line option), with one message style::

    NAME = VALUE: must be an integer in [LOW, HIGH] (WHY)
    NAME = VALUE: must be a finite number in (LOW, HIGH]

Whatever the value -- a bool, a string, NaN, ±inf, a 400-digit integer, ``1e400``, a NumPy scalar, a float one ulp
outside the range -- the answer is the number (a Python ``int`` or ``float``) or one ``MsjgymError`` line of that
form; never an ``OverflowError`` or a ``TypeError`` from deep inside. ``tests/test_validation.py`` fuzzes it with
hypothesis. The package's other number checks are thin names over these, and live here too: the theory's argument
checks (:func:`require_count`, :func:`require_positive`, ..., raising ``ValueError``), the run-cost checks against
:mod:`msjgym.core.limits`' ranges (:func:`check_int`, :func:`check_time`, :func:`check_time_spread`,
:func:`check_state_bytes`), the command line's :func:`int_at_least`. A family's parameter checks
(``msjgym.systems.dispatch.params``, the models' ``__post_init__``), the policies' parameters
(:class:`msjgym.api.Param`), the options (:class:`msjgym.api.Option`) and the environments' arguments call them.
"""
from __future__ import annotations

import argparse
import math
import re
import numbers
from collections.abc import Callable
from typing import Any
from fractions import Fraction

import numpy as np

from msjgym.core.limits import MAX_STATE_BYTES, MAX_TIME_SPREAD, TIME_RANGE
from msjgym.errors import MsjgymError

MAX_NUMBER_CHARS = 100
"""Characters of a number written as text: far more than any float64 needs (17 significant digits and an
exponent), and a bound on the work of parsing (Python parses a 10^6-digit integer in seconds)."""


def is_real(value: object) -> bool:
    """A real number (NumPy scalars included), not a bool and not a string."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def show(value: object, limit: int = 80) -> str:
    """``repr`` of a user's value for an error message (NumPy scalars as Python ones), cut to ``limit`` characters;
    control characters are escaped by ``repr``, so a message is always one printable line."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**60:
        return f"an integer of {len(str(abs(value)))} digits"  # repr() of a huge int is slow and unreadable
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


LONG_WORD = 120
"""An error message's word (a run without spaces: a name, a path, a value) longer than this is cut (:func:`one_line`)."""


def one_line(message: object, limit: int = LONG_WORD) -> str:
    """``message`` as the one line an error prints: every run of more than ``limit`` characters without a space (a
    100 KB policy name, a value echoed whole) cut to its start and its length, and line breaks as spaces. The one
    helper every ``msjgym: error:`` line goes through, so no message echoes a long input whole."""
    text = " ".join(str(message).splitlines())
    return re.sub(r"\S{%d,}" % (limit + 1), lambda m: f"{m.group(0)[:limit - 20]}... ({len(m.group(0)):,} characters)",
                  text)


def as_float(value: object) -> float:
    """``value`` (a real number) as a float: ±inf for an integer or fraction beyond float64's range (instead of
    ``OverflowError``), NaN for anything that is not a real number."""
    if not is_real(value):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_finite(value: object) -> bool:
    """A real number that float64 holds finitely (False for NaN, ±inf, ``10**400``, bools and strings; never raises
    ``OverflowError`` as ``math.isfinite(10**400)`` does)."""
    return math.isfinite(as_float(value))


def interval(low: float | None, high: float | None, open_low: bool = False, open_high: bool = False) -> str:
    """``[low, high]`` with ``(``/``)`` for open ends; None is ∓inf (always open)."""
    lo = "-inf" if low is None else _bound(low)
    hi = "inf" if high is None else _bound(high)
    return f"{'(' if open_low or low is None else '['}{lo}, {hi}{')' if open_high or high is None else ']'}"


def _bound(x: float) -> str:
    if isinstance(x, (int, np.integer)) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e9):
        return f"{int(x):,}"
    return f"{x:g}"


def check_number(name: str, value: object, low: float | None = None, high: float | None = None, *,
                 integer: bool = False, open_low: bool = False, open_high: bool = False, why: str = "",
                 error: type[Exception] = MsjgymError) -> int | float:
    """``value`` if it is a real number (an integer, if ``integer``; integral floats accepted) in the interval from
    ``low`` to ``high`` (None: unbounded on that side; ends closed unless ``open_low``/``open_high``); the value as a
    Python ``int`` when ``integer``, else as a finite ``float``. Otherwise ``error`` with the one message style."""
    x = as_float(value)
    ok = math.isfinite(x)
    if ok and integer:
        ok = isinstance(value, (int, np.integer)) or x.is_integer()
        exact = int(value) if ok else 0
    if ok:  # compare exactly: an integer beyond 2**53 is not rounded into range
        v = exact if integer else x
        ok = ((low is None or (v > low if open_low else v >= low))
              and (high is None or (v < high if open_high else v <= high)))
    if not ok:
        raise error(f"{name} = {show(value)}: {requirement(low, high, integer, open_low, open_high)}"
                    f"{f' ({why})' if why else ''}")
    return exact if integer else x


def requirement(low: float | None, high: float | None, integer: bool = False, open_low: bool = False,
                open_high: bool = False) -> str:
    """The message's requirement: ``must be an integer in [1, 100]``, ``must be a finite number > 0``, ..."""
    kind = "an integer" if integer else "a finite number"
    if low is not None and high is not None:
        return f"must be {kind} in {interval(low, high, open_low, open_high)}"
    if low is not None:
        return f"must be {kind} {'>' if open_low else '>='} {_bound(low)}"
    if high is not None:
        return f"must be {kind} {'<' if open_high else '<='} {_bound(high)}"
    return f"must be {kind}"


def parse_number(name: str, text: str, *, fractions: bool = False, error: type[Exception] = MsjgymError
                 ) -> int | float:
    """The number written in ``text`` (an integer -- ``1_000`` allowed -- or a decimal float; with ``fractions``
    also ``a/b``): an ``int`` when it is written as one, else a ``float`` (±inf beyond float64's range, which
    :func:`check_number` then refuses). Text that is no number, or longer than :data:`MAX_NUMBER_CHARS`, is
    ``error`` naming ``name``."""
    raw = text.strip() if isinstance(text, str) else text
    if not isinstance(raw, str) or not raw or len(raw) > MAX_NUMBER_CHARS or not raw.isascii():
        problem = (f"longer than {MAX_NUMBER_CHARS} characters" if isinstance(raw, str) and len(raw) > MAX_NUMBER_CHARS
                   else "not a number")
        raise error(f"{name} = {show(text, 60)}: {problem}")
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        if fractions and "/" in raw:
            value = Fraction(raw)
            return as_float(value)
        return float(raw)
    except (ValueError, ZeroDivisionError):
        what = "a number (decimal or fraction a/b)" if fractions else "a number"
        raise error(f"{name} = {show(text, 60)}: not {what}") from None


def check_name(name: str, value: object, limit: int = 200, error: type[Exception] = MsjgymError) -> str:
    """A name a user chose (a class name, a label): a non-empty string of printable characters (no control
    characters: a name is printed in tables and one-line messages) of at most ``limit`` characters."""
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise error(f"{name} = {show(value)}: must be a non-empty string of at most {limit} printable characters "
                    "(no control characters)")
    return value


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` (and <= ``high``; underscores allowed, as in 1_000_000)."""
    def parse(text: str) -> int:
        try:
            value = parse_number("value", text, error=argparse.ArgumentTypeError)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{show(text, 60)} is not an integer") from None
        if not isinstance(value, int):
            raise argparse.ArgumentTypeError(f"{show(text, 60)} is not an integer")
        if value < low or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"in {interval(low, high)}"
            raise argparse.ArgumentTypeError(f"{value} must be {bounds}")
        return value
    return parse


# ---------------------------------------------------------------- the theory's argument checks (ValueError)
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


# ---------------------------------------------------------------- run-cost checks (msjgym.core.limits' ranges)
def check_int(name: str, value: Any, low: int, high: int, error: type[Exception] = MsjgymError,
              why: str = "") -> int:
    """``value`` as an int if it is an integer (integral floats accepted) in [low, high]; else ``error`` naming it
    (:func:`check_number`: huge values such as ``1e308`` or ``10**400`` included)."""
    return check_number(name, value, low, high, integer=True, why=why, error=error)


def check_time(name: str, value: float, error: type[Exception] = MsjgymError, what: str = "mean") -> float:
    """``value`` (a mean time, in the scenario's time unit) if it is finite and within :data:`~msjgym.core.limits.TIME_RANGE`."""
    low, high = TIME_RANGE
    if not low <= as_float(value) <= high:
        raise error(f"{name}: its {what} {show(value)} is outside [{low:g}, {high:g}] time units, where moments and "
                    f"metrics stay exact in float64; rescale the time unit")
    return float(value)


def check_time_spread(name: str, value: Any, interarrival: float, service: float,
                      error: type[Exception] = MsjgymError, what: str = "the shortest mean service time") -> None:
    """Refuse a scenario whose mean interarrival time is more than :data:`~msjgym.core.limits.MAX_TIME_SPREAD` times ``service`` (the
    shortest mean service time): the simulation clock would round those services to 0 (zero utilization, zero or
    negative times, silently). ``name = value`` is the input to change (an arrival rate, usually)."""
    spread = interarrival / service if service > 0 else math.inf
    if not spread <= MAX_TIME_SPREAD:
        raise error(f"{name} = {show(value)}: the mean interarrival time ({interarrival:.3g}) is {spread:.3g} times "
                    f"{what} ({service:.3g}); must be at most {MAX_TIME_SPREAD:g} times, or float64 cannot resolve "
                    "those services on the simulation clock (raise the arrival rate, or rescale)")


def check_state_bytes(estimate: float, inputs: str, error: type[Exception] = MsjgymError,
                      fix: str = "use fewer --reps, --batches or servers", what: str = "the replications' state") -> None:
    """Refuse a run whose state (``estimate`` bytes, from ``inputs``, e.g. "reps=10, batches=20, ...") is above
    :data:`~msjgym.core.limits.MAX_STATE_BYTES`, before anything is allocated; ``fix`` says what the caller's user can change."""
    if estimate > MAX_STATE_BYTES:
        raise error(f"{inputs}: {what} would take {estimate / 2**30:,.1f} GiB; must be at most "
                    f"{MAX_STATE_BYTES / 2**30:g} GiB (allocated before it starts): {fix}")
