"""Workload traces: the Standard Workload Format (SWF) of the Parallel Workloads Archive, and a plain CSV.

A trace is a finite list of jobs (arrival time, servers needed, duration). Times are relative to the first arrival
and in the trace's unit (seconds for SWF). Replaying a trace through a policy is deterministic.

SWF (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job per line, 18 whitespace-separated fields;
lines starting with ``;`` are header comments (``; MaxProcs: 128`` gives the machine size). msjgym uses field 2
(submit time), field 4 (run time), field 5 (allocated processors) and field 9 (requested time, the user's runtime
estimate, for backfilling schedulers: a job's estimate is its requested time when that is known, else its run time;
a requested time below the run time is kept, and such jobs are counted in ``notes``: see :func:`kill_at_requested`
and ``arrivals.overrun``, docs/modelling-choices.md#requested-times). The
archive marks unknown values with -1 and
has jobs that never ran (run time 0, typically cancelled): such jobs carry no workload and are always skipped, and
counted. A *malformed* line (wrong number of fields, a value that is not a number) is an error naming the line,
unless ``skip_bad_lines`` is set: then it is skipped and counted. A ``MaxProcs`` header that is not a positive
integer (-1: unknown) is ignored, with a note (the machine size is then the largest allocation). A file whose jobs
are not in arrival order is replayed in arrival order, with a note.

CSV: a header ``arrival_time,need,duration`` (optionally ``,requested``: the requested time, -1 or empty for
unknown) then one job per line (without requested times, estimates are durations).
"""
from __future__ import annotations

import csv
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from msjgym.core.inputs import check_input_file, note_read
from msjgym.core.limits import TIME_RANGE
from msjgym.core.validation import check_number, parse_number
from msjgym.errors import MsjgymError

SWF_FIELDS = 18
CSV_COLUMNS = ("arrival_time", "need", "duration")
CSV_REQUESTED = "requested"
"""The optional fourth CSV column: a job's requested time (trace time units; -1 or empty: unknown)."""


class TraceError(MsjgymError):
    """A trace file cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class Trace:
    """Jobs in arrival order.

    Attributes:
        arrival: arrival times, non-decreasing, the first one 0 (trace time units).
        need: servers each job holds (after scaling to the simulated system).
        duration: service durations (trace time units), > 0.
        estimate: runtime estimates (trace time units): requested times where known (possibly below the duration),
            else the duration.
        source: the file it came from.
        machine: the number of processors of the traced machine (SWF ``MaxProcs``, or the largest need).
        skipped_malformed, skipped_unusable: lines skipped (malformed with skip_bad_lines; jobs that never ran or
            have unknown processors).
    """

    arrival: np.ndarray
    need: np.ndarray
    duration: np.ndarray
    source: str
    machine: int
    skipped_malformed: int = 0
    skipped_unusable: int = 0
    notes: list[str] = field(default_factory=list)
    estimate: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.estimate is None:
            object.__setattr__(self, "estimate", self.duration)

    def __len__(self) -> int:
        return int(self.arrival.size)

    def scaled(self, servers: int, time_scale: float = 1.0) -> Trace:
        """The trace on a system of ``servers`` servers: need ⌈p·servers/machine⌉ (clipped to [1, servers]);
        arrival times multiplied by ``time_scale`` (< 1 compresses time: a heavier load)."""
        need = np.clip(np.ceil(self.need * servers / self.machine), 1, servers).astype(np.int64)
        return Trace(self.arrival * time_scale, need, self.duration, self.source, servers, self.skipped_malformed,
                     self.skipped_unusable, list(self.notes), self.estimate)


def read_trace(path: str | Path, skip_bad_lines: bool = False) -> Trace:
    """Read an SWF (``.swf``) or CSV (``.csv``) trace; see the module docstring for what is skipped."""
    path = Path(path)
    if not path.exists():
        raise TraceError(f"trace {str(path)!r}: no such file")
    check_input_file(path, "trace", MAX_TRACE_BYTES, TraceError)
    note_read(path)
    suffix = path.suffix.lower()
    if suffix == ".swf":
        return _read_swf(path, skip_bad_lines)
    if suffix == ".csv":
        return _read_csv(path, skip_bad_lines)
    raise TraceError(f"trace {str(path)!r}: unknown format {suffix!r}; valid: .swf, .csv")


def _read_swf(path: Path, skip_bad_lines: bool) -> Trace:
    rows: list[tuple[float, int, float, float]] = []
    machine = 0
    malformed = unusable = 0
    header_notes: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                key, _, value = text[1:].partition(":")
                if key.strip().lower() == "maxprocs":
                    value = value.strip()
                    if value.isdigit() and int(value) > 0:
                        machine = int(value)
                    else:  # not a machine size (-1: unknown): scale from the largest allocation, and say so
                        header_notes.append(f"line {number}: MaxProcs {value!r} is not a positive integer")
                continue
            try:
                submit, procs, run, requested = _swf_job(text)
            except ValueError as exc:
                if not skip_bad_lines:
                    raise TraceError(f"{path} line {number}: {exc} (use --skip-bad-lines to skip such lines)")
                malformed += 1
                continue
            if run <= 0 or procs <= 0 or submit < 0:
                unusable += 1
                continue
            rows.append((submit, procs, run, requested))
    return _trace(rows, path, machine, malformed, unusable, header_notes)


def _swf_job(text: str) -> tuple[float, int, float, float]:
    fields = text.split()
    if len(fields) != SWF_FIELDS:
        raise ValueError(f"expected {SWF_FIELDS} whitespace-separated fields, got {len(fields)}")
    submit = _field("submit time (field 2)", fields[1], low=None)
    run = _field("run time (field 4)", fields[3], low=None)
    procs = _field("allocated processors (field 5)", fields[4], low=None, integer=True)
    if run <= 0 or procs <= 0 or submit < 0:  # the archive's -1 (unknown) and jobs that never ran: unusable
        return submit, int(procs), run, -1.0
    _field("submit time (field 2)", fields[1], low=0.0, high=MAX_TRACE_TIME)
    _field("run time (field 4)", fields[3], low=TIME_RANGE[0], high=TIME_RANGE[1])
    procs = _field("allocated processors (field 5)", fields[4], low=1, high=MAX_TRACE_PROCESSORS, integer=True)
    try:
        requested = float(parse_number("requested time (field 9)", fields[8]))
    except MsjgymError:
        requested = -1.0  # an unreadable requested time is unknown: the estimate is the run time
    if requested > 0:  # known: then within the time range, or float64 rounds ``now + estimate`` (EASY's shadow)
        _field("requested time (field 9)", fields[8], low=TIME_RANGE[0], high=TIME_RANGE[1])
    return submit, procs, run, requested if math.isfinite(requested) else -1.0


MAX_TRACE_PROCESSORS = 10**9
"""Processors of one trace job (and of the traced machine): far above any machine yet built, and exact in the
int64 and float64 arithmetic of the scaling to the simulated servers (1e20 would wrap around int64)."""

MAX_TRACE_TIME = TIME_RANGE[1]
"""Submit times (trace time units): as every time of a scenario, within :data:`~msjgym.core.limits.TIME_RANGE`."""

MAX_TRACE_BYTES = 2 * 2**30
"""A trace file's size: a trace is read into memory (about 100 bytes a job); 2 GiB is ~2·10^7 jobs."""


def _field(name: str, text: str, *, low: float | None, high: float | None = None, integer: bool = False
           ) -> float | int:
    """One numeric field of a trace line, through the one input layer (:mod:`msjgym.core.validation`); a
    ``ValueError`` naming the field otherwise (a malformed line)."""
    try:
        value = parse_number(name, text)
        return check_number(name, value, low, high, integer=integer)
    except MsjgymError as exc:
        raise ValueError(str(exc)) from None


def _read_csv(path: Path, skip_bad_lines: bool) -> Trace:
    rows: list[tuple[float, int, float, float]] = []
    malformed = 0
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        columns = None if header is None else tuple(h.strip() for h in header)
        if columns not in (CSV_COLUMNS, CSV_COLUMNS + (CSV_REQUESTED,)):
            raise TraceError(f"{path} line 1: the header must be {','.join(CSV_COLUMNS)} (optionally "
                             f",{CSV_REQUESTED})")
        number = 1
        while True:
            number += 1
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:  # e.g. a field longer than csv.field_size_limit(): a malformed line
                fields, problem = None, str(exc)
            if fields is not None and (not fields or all(not x.strip() for x in fields)):
                continue
            try:
                if fields is None:
                    raise ValueError(problem)
                rows.append(_csv_job(fields, len(columns)))
            except ValueError as exc:
                if not skip_bad_lines:
                    raise TraceError(f"{path} line {number}: {exc} (use --skip-bad-lines to skip such lines)")
                malformed += 1
    return _trace(rows, path, 0, malformed, 0)


def _csv_job(fields: list[str], columns: int = len(CSV_COLUMNS)) -> tuple[float, int, float, float]:
    if len(fields) != columns:
        names = CSV_COLUMNS + (CSV_REQUESTED,) * (columns - len(CSV_COLUMNS))
        raise ValueError(f"expected {columns} fields ({','.join(names)}), got {len(fields)}")
    arrival = _field("arrival_time", fields[0], low=0.0, high=MAX_TRACE_TIME)
    need = _field("need", fields[1], low=1, high=MAX_TRACE_PROCESSORS, integer=True)
    duration = _field("duration", fields[2], low=TIME_RANGE[0], high=TIME_RANGE[1])
    requested = -1.0
    if columns > len(CSV_COLUMNS) and fields[3].strip() not in ("", "-1"):
        requested = _field(CSV_REQUESTED, fields[3], low=TIME_RANGE[0], high=TIME_RANGE[1])
    return arrival, need, duration, requested


def _trace(rows: list[tuple[float, int, float, float]], path: Path, machine: int, malformed: int,
           unusable: int, header_notes: list[str] | None = None) -> Trace:
    if not rows:
        raise TraceError(f"{path}: no usable job ({malformed} malformed and {unusable} unusable lines skipped)")
    data = np.array(rows, dtype=np.float64)
    notes = list(header_notes or [])
    fallback = "ignored" if machine else f"the machine size is the largest allocation, {int(data[:, 1].max())}"
    notes = [f"{note}; {fallback}" for note in notes]
    early = int(np.count_nonzero(np.diff(data[:, 0]) < 0))
    if early:
        notes.append(f"not in arrival order ({early} job(s) arrive before the job listed above them); replayed in "
                     "arrival order (sorted, ties kept in file order)")
    order = np.argsort(data[:, 0], kind="stable")
    data = data[order]
    need = data[:, 1].astype(np.int64)
    largest = int(need.max())
    if machine and largest > machine:
        notes.append(f"MaxProcs {machine} is below the largest allocation {largest}; using {largest}")
        machine = largest
    duration, requested = data[:, 2], data[:, 3]
    known = requested > 0
    short = known & (requested < duration)
    if short.any():  # kept: the replay decides (arrivals.overrun) whether they run on or are killed at it
        notes.append(f"{int(short.sum())} jobs ran longer than their requested time; it is kept as their runtime "
                     f"estimate (docs/modelling-choices.md#requested-times)")
    estimate = np.where(known, requested, duration)
    return Trace(arrival=data[:, 0] - data[0, 0], need=need, duration=duration, source=str(path),
                 machine=machine or largest, skipped_malformed=malformed, skipped_unusable=unusable, notes=notes,
                 estimate=estimate)


def kill_at_requested(trace: Trace) -> Trace:
    """The trace as a batch system that kills a job at its requested time would run it: each job whose requested
    time (its ``estimate``) is below its run time gets the requested time as its duration; a note counts them.
    docs/modelling-choices.md#requested-times."""
    killed = trace.estimate < trace.duration
    if not killed.any():
        return trace
    note = (f"{int(killed.sum()):,} job(s) killed at their requested time (overrun = \"kill\"): their duration is "
            f"their requested time, {float((trace.duration - trace.estimate)[killed].sum()):,.6g} time units of "
            "service cut")
    return dataclasses.replace(trace, duration=np.minimum(trace.duration, trace.estimate),
                               notes=list(trace.notes) + [note])
