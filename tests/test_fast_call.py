"""A compiled function called with its records bound (msjgym.core.fast_call.FastCall) computes what the plain call
computes: arguments of the example's types go to the compiled entry point directly, any others to numba's
dispatcher (which types them as a plain call does)."""
from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
import pytest

from msjgym.core.fast_call import FastCall

Record = namedtuple("Record", "counts total")


@numba.njit(cache=False)
def _add(rec, scale, values, out):
    """Adds ``values`` to the record's counts, returns their scaled sum; ``out[0]`` the new total."""
    s = 0.0
    for i in range(values.shape[0]):
        rec.counts[i] += values[i]
        s += values[i] * scale
    rec.total[0] += s
    out[0] = rec.total[0]
    return s


class _Counting:
    """A dispatcher stand-in that counts the calls reaching it."""

    def __init__(self, dispatcher) -> None:
        self.dispatcher, self.calls = dispatcher, 0

    def __call__(self, *args):
        self.calls += 1
        return self.dispatcher(*args)


@pytest.fixture
def record() -> Record:
    return Record(np.zeros(3), np.zeros(1))


def test_a_bound_call_computes_what_the_plain_call_computes(record):
    other = Record(np.zeros(3), np.zeros(1))
    call = FastCall(_add, (record, 2.0), (np.zeros(3), np.zeros(1)))
    values, out, out_plain = np.array([1.0, 2.0, 3.0]), np.zeros(1), np.zeros(1)
    for _ in range(3):
        assert call(values, out) == _add(other, 2.0, values, out_plain) == 12.0
    assert np.array_equal(record.counts, other.counts) and record.total[0] == other.total[0] == 36.0
    assert out[0] == out_plain[0] == 36.0


def test_the_example_types_skip_the_dispatcher_and_other_types_reach_it(record):
    call = FastCall(_add, (record, 1.0), (np.zeros(3), np.zeros(1)))
    counting = call.dispatcher = _Counting(_add)
    out = np.zeros(1)
    assert call(np.ones(3), out) == 3.0 and counting.calls == 0
    # float32 values (another type: a plain call compiles another version), a strided view, an object: the dispatcher
    assert call(np.ones(3, np.float32), out) == 3.0 and counting.calls == 1
    assert call(np.ones((3, 2))[:, 0], out) == 3.0 and counting.calls == 2  # a strided view: layout "A", not "C"
    with pytest.raises(numba.core.errors.TypingError):
        call(object(), out)
    assert counting.calls == 3 and record.total[0] == 9.0
