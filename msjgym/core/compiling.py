"""What a run compiles, the one notice that says so, and how long it took on this machine.

A family lists what its run needs compiled as :class:`Unit` s (a numba dispatcher, the explicit signature it is
compiled for, a label and a kind): its event loop, its policy's kernels. Before the first call:

* :func:`note` — one line naming what is not cached yet, with an estimate measured on this machine (the CPU time of
  earlier compiles, kept in ``msjgym.core.jit.cache_dir()/compile-times.json``; a unit never compiled here is
  estimated from the others of its kind, else the notice says the first compile takes a while);
* :func:`compile_units` — compile (or load from the cache) each unit, recording the CPU time each compile took,
  with the objects that existed before left out of the garbage collector's scans (:func:`older_objects_frozen`, also
  used by :class:`msjgym.core.fast_call.FastCall`).

The record is CPU time, not wall-clock time: a compile recorded while other processes shared the cores (``msjgym
compile`` compiles on every core at once; a test suite runs beside it) took several times its own work in wall time,
and the estimates made from such records were too long (measured on a shared 2-core machine: the notice said "about
15 s" for ``msfq``, whose compile then took 4.5 s of wall time at a load average of 8 and 1.5 s of CPU time). A
compile is one thread's work, so its CPU time is its wall time on an idle core, and the notice says "of one core"; on
a busy machine the wall time is longer.

The evaluator times :func:`compile_units` apart from the simulation (``Result.compile_seconds``). Nothing here
names a family.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from msjgym.core.jit import cache_dir, cached

_RECORD = "compile-times.json"


@dataclass(frozen=True)
class Unit:
    """One thing to compile: ``dispatcher`` for ``signature``.

    Attributes:
        label: how the notice names it ("the MSJ event loop", "policy fcfs").
        kind: units of one kind take about as long to compile (an estimate for a unit never compiled here).
        dispatcher: the numba dispatcher.
        signature: the explicit signature it is compiled for.
    """

    label: str
    kind: str
    dispatcher: Any
    signature: Any

    @property
    def key(self) -> str:
        """The unit's entry in the record of compile times (its function and signature)."""
        fn = getattr(self.dispatcher, "py_func", self.dispatcher)
        return f"{fn.__module__}.{fn.__qualname__}"


def pending(units: list[Unit]) -> list[Unit]:
    """The units that are neither compiled in this process nor in numba's on-disk cache."""
    return [u for u in units if not cached(u.dispatcher, u.signature)]


def _record_path() -> Path:
    return cache_dir() / _RECORD


def _load() -> dict[str, float]:
    try:
        data = json.loads(_record_path().read_text())
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def _save(record: dict[str, float]) -> None:
    path = _record_path()
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, indent=0, sort_keys=True))
        os.replace(tmp, path)  # atomic: concurrent runs write whole files
    except OSError:
        pass  # a record is a nicety: never fail a run for it


def estimate(units: list[Unit]) -> float | None:
    """Seconds the units took to compile on this machine (None: no unit of one of their kinds was ever timed here)."""
    record = _load()
    total = 0.0
    for unit in units:
        seconds = record.get(f"{unit.kind}|{unit.key}")
        if seconds is None:
            same = [v for k, v in record.items() if k.split("|", 1)[0] == unit.kind]
            if not same:
                return None
            seconds = sum(same) / len(same)
        total += seconds
    return total


def note(units: list[Unit]) -> str | None:
    """The one notice before compiling: what, and about how long (None: everything is cached)."""
    todo = pending(units)
    if not todo:
        return None
    what = " and ".join(dict.fromkeys(u.label for u in todo))
    seconds = estimate(todo)
    how_long = (f"about {seconds:.0f} s of one core on this machine" if seconds is not None and seconds >= 1 else
                "a few seconds" if seconds is not None else "a while, the first time on this machine")
    return f"msjgym: compiling {what} ({how_long}; once, cached afterwards) ..."


@contextlib.contextmanager
def older_objects_frozen():
    """Leave the objects that exist before a compile out of the garbage collector's scans during it (``gc.freeze``).

    A compile allocates many short-lived objects, so the collector runs hundreds of times, each full collection
    scanning every module imported before (numba, numpy, scipy, msjgym): measured on the finite-skip family's first
    run, 0.8-0.95 s of collection in 6-7 s of compiling, 0.5 s with the older objects frozen (the peak memory 2 %
    higher). Nothing is frozen if the program froze objects itself (``gc.get_freeze_count()``), whose freeze this must
    not undo."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def compile_units(units: list[Unit]) -> float:
    """Compile (or load from the cache) every unit; returns the seconds it took, recording each compile's time."""
    start = time.perf_counter()
    timed: dict[str, float] = {}
    with older_objects_frozen():
        for unit in units:
            if tuple(unit.signature.args) in unit.dispatcher.overloads:
                continue  # compiled in this process already
            fresh = not cached(unit.dispatcher, unit.signature)
            t0 = time.process_time()  # the compile's own CPU time: a record made on a busy machine is not inflated
            loop = unit.kind.endswith("loop")
            if loop:  # a loop compiles only the signatures its units declare (a derived family's record is another one)
                unit.dispatcher.disable_compile(False)
            unit.dispatcher.compile(unit.signature)
            if loop:
                unit.dispatcher.disable_compile()  # never recompiled implicitly, for a signature no unit declares
            if fresh and unit.dispatcher._cache.__class__.__name__ != "NullCache":
                timed[f"{unit.kind}|{unit.key}"] = time.process_time() - t0
    if timed:
        record = _load()
        record.update(timed)
        _save(record)
    return time.perf_counter() - start
