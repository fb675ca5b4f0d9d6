"""Workload traces: the Standard Workload Format (SWF) of the Parallel Workloads Archive, and a plain CSV.

A trace is a finite list of jobs (arrival time, servers needed, duration). Times are relative to the first arrival
and in the trace's unit (seconds for SWF). Replaying a trace through a policy is deterministic.

SWF (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html, version 2.2): one job per line, 18
whitespace-separated fields; lines starting with ``;`` are header comments. msjgym uses field 1 (job number, kept as
the job's id through ``--per-job``), field 2 (submit time), field 4 (run time), field 5 (allocated processors; when
it is -1, unknown, field 8, the requested processors, is used instead, and the jobs concerned are counted in
``notes``) and field 9 (requested time, the user's runtime estimate, for backfilling schedulers: a job's estimate is
its requested time when that is known, else its run time; a requested time below the run time is kept, and such
jobs are counted in ``notes``: see :func:`kill_at_requested` and ``arrivals.overrun``,
docs/modelling-choices.md#requested-times).

Jobs that cannot be replayed are skipped and counted, by reason, in ``notes``: a run time of -1 (unknown: the job
cannot be replayed, whatever its status), a run time of 0 (the job never ran, typically cancelled: it carries no
workload), a submit time of -1, and processors unknown in both fields 5 and 8. A *malformed* line (wrong number of
fields, a value that is not a number) is an error naming the line, unless ``skip_bad_lines`` is set: then it is
skipped and counted. A file whose jobs are not in arrival order is replayed in arrival order, with a note.

The traced machine's size (the processors the jobs' allocations refer to) is, in this order: the header's
``MaxProcs``; else its ``MaxNodes`` times ``processors_per_node`` (default 1: ``MaxProcs`` entered the format in
version 2.1 "to support SMP nodes", so a log without it counts one processor per node; a note says so); else the
``servers`` the caller gives (a CSV trace has no header). With none of these, reading is an error naming what to give:
the machine size is never guessed from the largest job. A header value goes through the input layer like every
number: -1 (unknown) is ignored, with a note; anything else that is not an integer in [1, 10^9] (``1e20``, ``0``,
``abc``) is an error naming the line, and so is a key given again with another value (the first is never silently
replaced). A header below the largest allocation is raised to it, with a note. A requested time (field 9) that is
not a number (text, NaN, inf) makes its line malformed, as any other field; -1 (or any value <= 0) is unknown.

CSV: a header ``arrival_time,need,duration`` (optionally ``,requested``: the requested time, -1 or empty for
unknown) then one job per line (without requested times, estimates are durations; the job ids are the line's rank
among the jobs, 1-based).
"""
from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from msjgym.core.inputs import open_user_text
from msjgym.core.limits import TIME_RANGE
from msjgym.core.paths import path_kind, shown
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
        machine: the number of processors of the traced machine (module docstring: ``MaxProcs``, ``MaxNodes`` ×
            processors per node, or the size the caller gave).
        skipped_malformed, skipped_unusable: lines skipped (malformed with skip_bad_lines; jobs that cannot be
            replayed: unknown or zero run time, unknown processors; ``notes`` counts them by reason).
        notes: what the reader decided that a user should know (one line each).
        ident: each job's id: the SWF job number (field 1), or the 1-based rank of a CSV line among the jobs.
        generator: for a synthetic trace, ``generator(jobs, seed_sequence)`` draws another trace of ``jobs`` jobs
            from the same workload model (on the same machine, scaled alike); None for a trace read from a file.
        origin: the submit time (SWF field 2, CSV ``arrival_time``, times ``time_scale``) of the job arriving at 0:
            ``arrival + origin`` is each job's submit time in the file (F1 orders by it).
        estimated: how many of the whole trace's jobs have an estimate of their own (a known requested time, or one
            drawn from an estimate model); 0: every estimate is the run time.
        columns: per-job columns a derived family's reader adds (float64 (jobs, E), in the jobs' order: the values
            its ``swf_columns`` read from each job's line, :func:`read_trace`); None for a multiserver-job trace.
        nodes: the header's ``MaxNodes`` (None: not given).
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
    ident: np.ndarray | None = None
    generator: Callable[[int, np.random.SeedSequence], Trace] | None = None
    estimated: int = 0
    origin: float = 0.0
    columns: np.ndarray | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        if self.estimate is None:
            object.__setattr__(self, "estimate", self.duration)
        if self.ident is None:
            object.__setattr__(self, "ident", np.arange(1, self.arrival.size + 1, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.arrival.size)

    def scaled(self, servers: int, time_scale: float = 1.0) -> Trace:
        """The trace on a system of ``servers`` servers: need ⌈p·servers/machine⌉ (clipped to [1, servers]);
        arrival times multiplied by ``time_scale`` (< 1 compresses time: a heavier load)."""
        need = np.clip(np.ceil(self.need * servers / self.machine), 1, servers).astype(np.int64)
        return replace(self, arrival=self.arrival * time_scale, need=need, machine=servers, notes=list(self.notes),
                       origin=self.origin * time_scale)

    def window(self, start: int, count: int) -> Trace:
        """Jobs ``start .. start + count - 1`` (in arrival order) as a trace of their own, its first arrival at 0:
        every per-job column is sliced (ids, estimates and any column a later version adds)."""
        if not (0 <= start and count >= 1 and start + count <= len(self)):
            raise ValueError(f"window [{start}, {start + count}) is not inside the trace's {len(self)} jobs")
        n = len(self)
        cut = {f.name: getattr(self, f.name)[start:start + count] for f in fields(self)
               if isinstance(getattr(self, f.name), np.ndarray) and getattr(self, f.name).shape[:1] == (n,)}
        cut["arrival"] = cut["arrival"] - cut["arrival"][0]
        return replace(self, notes=list(self.notes), origin=self.origin + float(self.arrival[start]), **cut)


SwfColumns = Callable[[list[str]], tuple[tuple[float, ...], str]]
"""A derived family's extra columns of an SWF job line (given its 18 fields, for a job that can be replayed): (the
values, "" or why the job is skipped: a phrase for the notes, e.g. "with unknown requested memory"); a
``ValueError`` makes the line malformed."""


def read_trace(path: str | Path, skip_bad_lines: bool = False, servers: int | None = None,
               processors_per_node: int | None = None, *, swf_columns: SwfColumns | None = None) -> Trace:
    """Read an SWF (``.swf``) or CSV (``.csv``) trace; see the module docstring for what is skipped and how the
    traced machine's size is found.

    Args:
        path: the file.
        skip_bad_lines: skip (and count) malformed lines instead of stopping at the first.
        servers: the traced machine's processors when the file does not say (no ``MaxProcs`` nor ``MaxNodes``
            header; a CSV file); ignored when it does.
        processors_per_node: processors of one node, for a file whose header gives ``MaxNodes`` but no
            ``MaxProcs`` (None: 1, with a note).
        swf_columns: an SWF file's extra per-job columns (the trace's ``columns``; :data:`SwfColumns`).
    Raises:
        TraceError: one line naming the file (and the line, or what to give).
    """
    path = Path(path)
    kind, what = path_kind(path)
    if kind in ("missing", "unusable"):
        raise TraceError(f"trace {shown(path)}: {what}")
    suffix = path.suffix.lower()
    if suffix == ".swf":
        return _read_swf(path, skip_bad_lines, servers, processors_per_node, swf_columns)
    if suffix == ".csv":
        return _read_csv(path, skip_bad_lines, servers)
    raise TraceError(f"trace {str(path)!r}: unknown format {suffix!r}; valid: .swf, .csv")


_HEADERS = ("maxprocs", "maxnodes")
_SKIP_REASONS = {
    "runtime": "with an unknown run time (-1; they cannot be replayed)",
    "never_ran": "that never ran (run time 0, typically cancelled; no workload)",
    "submit": "with an unknown submit time (-1)",
    "procs": "with unknown processors (fields 5 and 8 both -1)",
}


def _read_swf(path: Path, skip_bad_lines: bool, servers: int | None, per_node: int | None,
              swf_columns: SwfColumns | None = None) -> Trace:
    rows: list[tuple] = []
    header: dict[str, int] = {}
    header_line: dict[str, int] = {}
    malformed = 0
    skipped = dict.fromkeys(_SKIP_REASONS, 0)
    requested_procs = 0
    header_notes: list[str] = []
    with open_user_text(path, "trace", MAX_TRACE_BYTES, TraceError, errors="replace") as f:
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                key, _, value = text[1:].partition(":")
                key, value = key.strip(), value.strip()
                if key.lower() in _HEADERS:
                    size = _header_value(path, number, key, value)
                    name = key.lower()
                    if name in header_line and header.get(name) != size:
                        raise TraceError(f"{path} line {number}: {key} given again with another value ({value!r}; "
                                         f"line {header_line[name]} gave {_shown_size(header.get(name))}): give it once")
                    header_line.setdefault(name, number)
                    if size is None:  # -1: unknown, as the SWF format writes it; said
                        header_notes.append(f"line {number}: {key} -1 (unknown); ignored")
                    else:
                        header[name] = size
                continue
            try:
                job, reason, from_requested = _swf_job(text)
                if not reason and swf_columns is not None:
                    more, reason = swf_columns(text.split())
                    job += (more,)
            except ValueError as exc:
                if not skip_bad_lines:
                    raise TraceError(f"{path} line {number}: {exc} (use --skip-bad-lines to skip such lines)")
                malformed += 1
                continue
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            requested_procs += from_requested
            rows.append(job)
    notes = list(header_notes)
    notes += [f"skipped {k:,} job(s) {_SKIP_REASONS.get(r, r)}" for r, k in skipped.items() if k]
    if requested_procs:
        notes.append(f"{requested_procs:,} job(s) with unknown allocated processors (field 5 = -1): their "
                     "requested processors (field 8) used")
    machine = _machine_size(path, header, servers, per_node, notes)
    given = not header  # the size is the caller's servers
    trace = trace_of_rows(rows, path, machine, malformed, sum(skipped.values()), notes, given)
    return replace(trace, nodes=header.get("maxnodes"))


def _header_value(path: Path, number: int, key: str, value: str) -> int | None:
    """A ``MaxProcs`` / ``MaxNodes`` header value through the one input layer: a positive integer of at most
    :data:`MAX_TRACE_PROCESSORS`, or None for -1 (unknown); a ``TraceError`` naming the line otherwise."""
    try:
        size = parse_number(key, value)
        if size == -1:
            return None
        return check_number(key, size, 1, MAX_TRACE_PROCESSORS, integer=True)
    except MsjgymError as exc:
        raise TraceError(f"{path} line {number}: {exc} (or -1: unknown)") from None


def _shown_size(size: int | None) -> str:
    return "-1" if size is None else f"{size:,}"


def _machine_size(path: Path, header: dict[str, int], servers: int | None, per_node: int | None,
                  notes: list[str]) -> int:
    """The traced machine's processors (module docstring), with a note when it is not ``MaxProcs``."""
    if "maxprocs" in header:
        return header["maxprocs"]
    if "maxnodes" in header:
        nodes = header["maxnodes"]
        if per_node is None:
            notes.append(f"no MaxProcs header: the machine has MaxNodes {nodes:,} × 1 processor per node (give "
                         "arrivals.processors_per_node if its nodes have more)")
            return nodes
        return nodes * per_node
    if servers is None:
        raise TraceError(f"{path}: the header gives the machine size neither as MaxProcs nor as MaxNodes; give the "
                         "traced machine's processors as servers = N in the scenario (or --param servers=N)")
    return servers


def _swf_job(text: str) -> tuple[tuple[float, int, float, float, int], str, bool]:
    """One SWF job line: ((submit, processors, run, requested time, job number), the reason it cannot be replayed
    ("" if it can), whether its processors are the requested ones (field 5 unknown))."""
    fields_ = text.split()
    if len(fields_) != SWF_FIELDS:
        raise ValueError(f"expected {SWF_FIELDS} whitespace-separated fields, got {len(fields_)}")
    ident = _field("job number (field 1)", fields_[0], low=None, integer=True)
    submit = _field("submit time (field 2)", fields_[1], low=None)
    run = _field("run time (field 4)", fields_[3], low=None)
    procs = _field("allocated processors (field 5)", fields_[4], low=None, integer=True)
    procs_name, procs_text, from_requested = "allocated processors (field 5)", fields_[4], False
    if procs <= 0:  # unknown allocation: the requested processors, when known
        procs_name, procs_text = "requested processors (field 8)", fields_[7]
        procs = _field(procs_name, procs_text, low=None, integer=True)
        from_requested = procs > 0
    reason = ("runtime" if run < 0 else "never_ran" if run == 0 else "submit" if submit < 0
              else "procs" if procs <= 0 else "")
    if reason:
        return (0.0, 0, 0.0, -1.0, int(ident)), reason, False
    _field("submit time (field 2)", fields_[1], low=0.0, high=MAX_TRACE_TIME)
    _field("run time (field 4)", fields_[3], low=TIME_RANGE[0], high=TIME_RANGE[1])
    procs = _field(procs_name, procs_text, low=1, high=MAX_TRACE_PROCESSORS, integer=True)
    # a number, through the input layer (text, NaN or inf make the line malformed); <= 0 (-1 in SWF): unknown, the
    # estimate is then the run time
    requested = float(_field("requested time (field 9)", fields_[8], low=None))
    if requested > 0:  # known: then within the time range, or float64 rounds ``now + estimate`` (EASY's shadow)
        _field("requested time (field 9)", fields_[8], low=TIME_RANGE[0], high=TIME_RANGE[1])
    return ((submit, procs, run, requested if requested > 0 else -1.0, int(ident)), "", from_requested)


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


def csv_job_rows(reader: Iterator[list[str]], path: Path, parse: Callable[[list[str], int], tuple],
                 skip_bad_lines: bool) -> tuple[list[tuple], int]:
    """A CSV trace's job lines after its header (``reader``: a ``csv.reader`` past line 1), each parsed by
    ``parse(fields, rank)`` (rank: 1 for the first job kept), blank lines skipped: (the rows, the malformed lines
    skipped). A malformed line (``parse`` raises ``ValueError``, or the CSV reader fails on it) is a ``TraceError``
    naming ``path`` and its line, or with ``skip_bad_lines`` skipped and counted. Shared by the multiserver-job and
    the multi-resource CSV traces."""
    rows: list[tuple] = []
    malformed, number = 0, 1
    while True:
        number += 1
        try:
            fields: list[str] | None = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a field longer than csv.field_size_limit(): a malformed line
            fields, problem = None, str(exc)
        if fields is not None and (not fields or all(not x.strip() for x in fields)):
            continue
        try:
            if fields is None:
                raise ValueError(problem)
            rows.append(parse(fields, len(rows) + 1))
        except ValueError as exc:
            if not skip_bad_lines:
                raise TraceError(f"{path} line {number}: {exc} (use --skip-bad-lines to skip such lines)") from None
            malformed += 1
    return rows, malformed


def _read_csv(path: Path, skip_bad_lines: bool, servers: int | None) -> Trace:
    with open_user_text(path, "trace", MAX_TRACE_BYTES, TraceError, errors="replace", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        columns = None if header is None else tuple(h.strip() for h in header)
        if columns not in (CSV_COLUMNS, CSV_COLUMNS + (CSV_REQUESTED,)):
            raise TraceError(f"{path} line 1: the header must be {','.join(CSV_COLUMNS)} (optionally "
                             f",{CSV_REQUESTED})")
        rows, malformed = csv_job_rows(reader, path, lambda fields, rank: _csv_job(fields, len(columns)) + (rank,),
                                       skip_bad_lines)
    if servers is None:
        raise TraceError(f"{path}: a CSV trace does not say the machine's size; give the traced machine's processors "
                         "as servers = N in the scenario (or --param servers=N)")
    return trace_of_rows(rows, path, servers, malformed, 0, given=True)


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


def trace_of_rows(rows: list[tuple], path: Path, machine: int, malformed: int, unusable: int,
                  notes: list[str] | None = None, given: bool = False) -> Trace:
    """The trace of the jobs read (``rows``: submit, processors, run, requested time, id, and optionally a tuple of
    extra columns, the trace's ``columns``), in arrival order, on a machine of ``machine`` processors (``given``: the
    caller's servers, which no job may exceed). A trace reader of any family builds its ``Trace`` with it."""
    if not rows:
        raise TraceError(f"{path}: no usable job ({malformed} malformed and {unusable} unusable lines skipped)")
    data = np.array([r[:4] for r in rows], dtype=np.float64)
    ident = np.array([r[4] for r in rows], dtype=np.int64)
    notes = list(notes or [])
    early = int(np.count_nonzero(np.diff(data[:, 0]) < 0))
    if early:
        notes.append(f"not in arrival order ({early} job(s) arrive before the job listed above them); replayed in "
                     "arrival order (sorted, ties kept in file order)")
    order = np.argsort(data[:, 0], kind="stable")
    data, ident = data[order], ident[order]
    columns = np.array([r[5] for r in rows], dtype=np.float64)[order] if len(rows[0]) > 5 else None
    need = data[:, 1].astype(np.int64)
    largest = int(need.max())
    if largest > machine and given:
        raise TraceError(f"{path}: a job needs {largest:,} processors, more than servers = {machine:,}; give the "
                         "traced machine's processors as servers")
    if largest > machine:
        notes.append(f"the machine size {machine:,} is below the largest allocation {largest:,}; using {largest:,}")
        machine = largest
    duration, requested = data[:, 2], data[:, 3]
    known = requested > 0
    short = known & (requested < duration)
    if short.any():  # kept: the replay decides (arrivals.overrun) whether they run on or are killed at it
        notes.append(f"{int(short.sum())} jobs ran longer than their requested time; it is kept as their runtime "
                     f"estimate (docs/modelling-choices.md#requested-times)")
    estimate = np.where(known, requested, duration)
    return Trace(arrival=data[:, 0] - data[0, 0], need=need, duration=duration, source=str(path),
                 machine=machine, skipped_malformed=malformed, skipped_unusable=unusable, notes=notes,
                 estimate=estimate, ident=ident, estimated=int(known.sum()), origin=float(data[0, 0]), columns=columns)


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
    return replace(trace, duration=np.minimum(trace.duration, trace.estimate),
                   notes=list(trace.notes) + [note])
