"""The multi-resource event loop: MSJ's compiled loop (:mod:`msjgym.systems.msj.loop`: ``run``,
``force_arrival``, ``force_completion``), compiled for this family's record types (:func:`signature`).

Nothing is re-implemented: the loop's arrivals, completions, statistics and policy calls are MSJ's; the resource
vectors are kept by MSJ's accounting transitions, which numba compiles for this record with the vector accounting
(``msjgym.systems.msj.state.hold_resources``) and for MSJ's own record without it.
"""
from __future__ import annotations

import functools

from numba import types

from msjgym.systems.msj.loop import (
    NO_HOOKS, end_event, end_replay, finish_job, force_arrival, force_completion, run, signatures)
from msjgym.systems.multi_resource.contract import record_types

__all__ = ["NO_HOOKS", "end_event", "end_replay", "finish_job", "force_arrival", "force_completion", "run",
           "signature"]


@functools.lru_cache(maxsize=1)
def signature() -> dict[str, types.Type]:
    """The explicit signature of each entry point (``run``, ``force_arrival``, ``force_completion``) and of the
    invariant checks of a debug run (``check_invariants``) on this family's record types."""
    return signatures(*record_types())
