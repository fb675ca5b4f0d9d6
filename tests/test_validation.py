"""The one input layer (:mod:`msjgym.core.validation`), fuzzed: whatever a user writes, a number or one
``MsjgymError`` line in the one style, never another exception.

Bounded time: the default hypothesis profile (``tests/hypothesis_profiles.py``: derandomized, ``print_blob=True`` so
a failure prints the ``@reproduce_failure`` blob that replays it) with the examples below; under a second in all.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_profiles import scaled
from msjgym.core import limits, validation
from msjgym.core.validation import as_float, check_name, check_number, is_finite, parse_number
from msjgym.errors import MsjgymError

# Anything a TOML file, --param, a trace or an API caller can hand over as "a number".
HOSTILE = st.one_of(
    st.integers(), st.integers(min_value=10**300, max_value=10**400), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(), st.text(max_size=20), st.fractions(),
    st.sampled_from([np.int64(2**62), np.float64("nan"), np.float32(1e30), np.bool_(True), 10**400, -(10**400),
                     1e308, 5e-324, [], {}, "1e400", 2**53 + 1]))
BOUNDS = st.one_of(st.none(), st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False))


def _one_style(message: str, name: str) -> None:
    assert "\n" not in message and message.startswith(f"{name} = ") and ": must be " in message


@settings(max_examples=scaled(300), deadline=1000)
@given(value=HOSTILE, low=BOUNDS, high=BOUNDS, integer=st.booleans(), open_low=st.booleans(),
       open_high=st.booleans())
def test_check_number_returns_a_number_in_range_or_one_line(value, low, high, integer, open_low, open_high):
    try:
        x = check_number("key.path", value, low, high, integer=integer, open_low=open_low, open_high=open_high)
    except MsjgymError as exc:
        _one_style(str(exc), "key.path")
        return
    assert type(x) is (int if integer else float)
    if not integer:
        assert math.isfinite(x)
    if low is not None:
        assert x > low if open_low else x >= low
    if high is not None:
        assert x < high if open_high else x <= high


@settings(max_examples=scaled(300), deadline=1000)
@given(text=st.one_of(st.text(max_size=30), st.from_regex(r"-?[0-9]{1,500}(\.[0-9]*)?(e-?[0-9]{1,4})?", fullmatch=True),
                      st.from_regex(r"[0-9]{1,400}/[0-9]{0,400}", fullmatch=True)),
       fractions=st.booleans())
def test_parse_number_reads_or_refuses_in_one_line(text, fractions):
    try:
        x = parse_number("dist.scv", text, fractions=fractions)
    except MsjgymError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("dist.scv = ")
        return
    assert isinstance(x, (int, float)) and not isinstance(x, bool)
    check_or_refuse = lambda: check_number("dist.scv", x, 1)  # noqa: E731  (a parsed number is checkable)
    try:
        check_or_refuse()
    except MsjgymError as exc:
        _one_style(str(exc), "dist.scv")


@settings(max_examples=scaled(200), deadline=1000)
@given(value=HOSTILE)
def test_limits_check_int_and_is_finite_never_overflow(value):
    assert is_finite(value) == (validation.is_real(value) and math.isfinite(as_float(value)))
    try:
        n = limits.check_int("--reps", value, 1, limits.MAX_REPS)
    except MsjgymError as exc:
        _one_style(str(exc), "--reps")
    else:
        assert 1 <= n <= limits.MAX_REPS and type(n) is int


@settings(max_examples=scaled(200), deadline=1000)
@given(value=st.one_of(st.text(max_size=300), st.integers(), st.none()))
def test_names_are_printable_one_liners_or_refused(value):
    try:
        name = check_name("classes[0].name", value)
    except MsjgymError as exc:
        assert "\n" not in str(exc) and "\x1b" not in str(exc)
    else:
        assert name.isprintable() and 0 < len(name) <= 200


@pytest.mark.parametrize("value, message", [
    (10**400, "an integer of 401 digits: must be an integer in [1, 10,000]"),
    (1e400, "inf: must be an integer in [1, 10,000]"),
    (2**53 + 1, "9007199254740993: must be an integer in [1, 10,000]"),
    (True, "True: must be an integer in [1, 10,000]"),
    ("5", "'5': must be an integer in [1, 10,000]"),
])
def test_the_message_names_the_key_the_value_and_the_range(value, message):
    with pytest.raises(MsjgymError) as info:
        check_number("--reps", value, 1, 10_000, integer=True)
    assert str(info.value) == f"--reps = {message}"


def test_exact_comparison_beyond_float_precision():
    """2**53 + 1 is not rounded into an integer range whose top is 2**53."""
    with pytest.raises(MsjgymError):
        check_number("n", 2**53 + 1, 0, 2**53, integer=True)
    assert check_number("n", 2**53, 0, 2**53, integer=True) == 2**53


def test_the_other_checkers_are_this_one():
    """The theory's, the dispatch family's and the policies' checks answer in the same style."""
    from msjgym.systems.dispatch.params import require_rate
    from msjgym.theory.checks import require_count, require_in

    with pytest.raises(ValueError, match=r"^k = an integer of 401 digits: must be an integer >= 1$"):
        require_count("k", 10**400 * -1)
    with pytest.raises(ValueError, match=r"^p = an integer of 401 digits: must be a finite number in \(0, 1\)$"):
        require_in("p", 10**400, 0, 1, (False, False))
    with pytest.raises(MsjgymError, match=r"^delta = nan: must be a finite number > 0"):
        require_rate("delta", math.nan)
