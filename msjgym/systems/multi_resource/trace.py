"""Workload traces of the multi-resource family: each job's demand vector (cores, memory, GPUs, ...) from an SWF log
or a CSV file with a column per resource.

The multiserver-job family's trace subpackage does the reading (:mod:`msjgym.systems.msj.trace.files`: what is
skipped, requested times, arrival order, notes), its windows and replay (:mod:`msjgym.systems.msj.trace.windows`,
:mod:`msjgym.systems.msj.trace.arrivals`) and its users' estimates (:mod:`msjgym.systems.msj.trace.user_estimates`);
this module adds the demand vectors and the machine's capacity vector to its :class:`~msjgym.systems.msj.trace.files.Trace`.

**SWF** (the Standard Workload Format of the Parallel Workloads Archive, version 2.2,
https://www.cs.huji.ac.il/labs/parallel/workload/swf.html; "Data Fields" and "Header Comments"): field 10 is
"Requested Memory (again kilobytes per processor)", field 7 "Used Memory -- in kilobytes. This is again the average
per processor"; -1 marks a missing value. The header comments define ``MaxNodes`` ("number of nodes in the
computer"), ``MaxProcs`` ("number of processors in the computer. This is different from MaxNodes if each node is an
SMP") and ``MaxMemory`` ("in kilobytes. Again, this is the maximum the system allowed": a limit on requests, not a
node's memory, so msjgym does not read it); the format records no node memory and no GPUs. An SWF trace maps to a
two-resource machine, ``cores`` and ``memory``:

* a job's cores are its processors (field 5, else field 8, as the multiserver-job reader takes them);
* its memory is processors × requested memory per processor (field 10), in ``memory_unit`` (``"GB"``, the default:
  2^20 KB; or ``"MB"``: 2^10 KB), rounded up to an integer (amounts are integers);
* a requested memory of -1 (any negative value: unknown) is handled by ``missing_memory``, and every job so handled
  is counted in the trace's notes, never silently: ``"used"`` (the default) takes the job's used memory (field 7) as
  its request when that is known, and skips the job otherwise; ``"skip"`` skips it; ``"zero"`` gives it a memory
  demand of 0; ``"error"`` stops at its line. A log with no memory value on any job is an error naming the fix (replay
  it as a multiserver-job trace, or ``missing_memory = "zero"``);
* the machine is the traced one, pooled: cores = the machine's processors (``MaxProcs``, else ``MaxNodes`` ×
  ``cores_per_node``, else the ``servers`` given; :func:`~msjgym.systems.msj.trace.files.read_trace`), memory =
  nodes × ``memory_per_node`` (GB, given by the user: the log does not say it), nodes = processors / cores per node,
  cores per node = ``cores_per_node`` if given, else ``MaxProcs / MaxNodes`` from the header. A job of an HPC log
  spans nodes, so its demand is placed in the machine's pooled capacity (``nodes = 1`` in the family's scenario
  terms), as the multiserver-job family pools the processors. A job whose memory exceeds the machine's is an error
  naming its job number.

**CSV** with a column per resource: a header line, then one job per line. Header rules: names are separated by
commas, surrounding spaces dropped, case-sensitive, distinct, each a word (letters, digits, ``_``, not starting with a
digit). ``submit`` (submit time, >= 0) and ``runtime`` (> 0) are required; ``requested_time`` (the user's runtime
estimate; empty or -1: unknown) and ``id`` (an integer job id; else the line's rank among the jobs) are optional;
every other column is a resource, and must be one of the machine's (the ``capacity`` given, which names every
resource: its order is the resources' order; a resource without a column is demanded by no job, i.e. 0). Amounts are
non-negative integers no larger than the capacity; a job that demands nothing is an error. Every error names the
file, the line and the column; ``skip_bad_lines`` skips (and counts) malformed lines instead.

**Classes** are the distinct demand vectors (``np.unique`` of the rows, lexicographic order): a replay keeps each
job's own demand, duration and estimate, and classes only group jobs for per-class statistics and the theory's
arrays (:meth:`ResourceTrace.class_arrays`). An SWF log with memory requests typically yields hundreds to thousands of
classes (processor counts × memory requests; ``memory_unit = "GB"`` rounds memory coarser than ``"MB"``): the replay
and the job-feature environment do not depend on their number; the trace's notes say how many there are.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from msjgym.core.inputs import open_user_text
from msjgym.core.distributions import Empirical
from msjgym.core.limits import MAX_CLASSES, TIME_RANGE
from msjgym.core.paths import path_kind, shown
from msjgym.core.validation import check_number, parse_number
from msjgym.errors import MsjgymError
from msjgym.systems.msj.model import JobClass, MSJModel
from msjgym.systems.msj.trace.files import (
    MAX_TRACE_BYTES, MAX_TRACE_TIME, Trace, TraceError, csv_job_rows, kill_at_requested, read_trace, trace_of_rows)

SWF_RESOURCES = ("cores", "memory")
"""The resources of an SWF trace's machine, in order."""
MEMORY_UNITS = {"GB": 2**20, "MB": 2**10}
"""KB per unit of a memory amount (binary units: GiB, MiB)."""
MISSING_MEMORY = ("used", "skip", "zero", "error")
"""What an SWF job with an unknown requested memory (field 10 = -1) gets (module docstring)."""
CSV_REQUIRED = ("submit", "runtime")
CSV_OPTIONAL = ("requested_time", "id")
MAX_CAPACITY = 10**12
"""A resource's capacity (and so any job's amount): exact in float64 and far above any machine."""
MAX_MEMORY_KB = 2.0**50
"""A memory field of an SWF line (KB per processor): 1 EiB."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class TraceClasses:
    """The distinct demand vectors of a trace: ``demand`` int64 (K, R) in lexicographic order, ``index`` int64 (n,)
    each job's class, ``counts`` int64 (K,) jobs per class."""

    demand: np.ndarray
    index: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True)
class ResourceTrace(Trace):
    """A trace whose jobs demand a vector of resources (a :class:`~msjgym.systems.msj.trace.files.Trace`: arrivals,
    durations, estimates, ids, notes, windows). Its ``need`` is the first resource's column and ``machine`` that
    resource's capacity (the multiserver-job reader's view); its ``columns`` hold an SWF trace's raw memory per
    processor (KB) and where it came from (0 field 10, 1 field 7, 2 zero).

    Attributes:
        resources: the resources' names, in order (R).
        capacity: the machine's capacity of each resource (R integers > 0; memory in ``memory_unit``).
        demand: int64 (n, R): each job's amount of each resource, in arrival order.
    """

    resources: tuple[str, ...] = ()
    capacity: tuple[int, ...] = ()
    demand: np.ndarray | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.demand is None or self.demand.shape != (len(self), len(self.resources)):
            raise ValueError(f"demand must be int64 ({len(self)}, {len(self.resources)})")
        if len(self.capacity) != len(self.resources):
            raise ValueError("capacity must give one amount per resource")

    @property
    def capacity_vector(self) -> np.ndarray:
        """int64 (R,): the capacity."""
        return np.array(self.capacity, dtype=np.int64)

    def scaled(self, servers: int, time_scale: float = 1.0) -> Trace:
        raise MsjgymError("a multi-resource trace is replayed on its own machine; it is not rescaled to servers")

    def class_index(self, demands: np.ndarray) -> np.ndarray:
        """int64 (n,): each job's row in ``demands`` (int64 (K, R), distinct rows: a model's classes); a
        ``ValueError`` names a job whose demand is not there."""
        rows = {tuple(int(v) for v in d): k for k, d in enumerate(demands)}
        out = np.empty(len(self), dtype=np.int64)
        for j, d in enumerate(self.demand.tolist()):
            k = rows.get(tuple(d))
            if k is None:
                raise ValueError(f"job {int(self.ident[j])}: demand {tuple(d)} is no class's")
            out[j] = k
        return out

    def classes(self) -> TraceClasses:
        """The distinct demand vectors and each job's (module docstring, "Classes")."""
        demand, index, counts = np.unique(self.demand, axis=0, return_inverse=True, return_counts=True)
        return TraceClasses(demand.astype(np.int64), np.asarray(index, np.int64).reshape(-1),
                            counts.astype(np.int64))

    def class_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(demand int64 (K, R), arrival_rates float64 (K,), mean_sizes float64 (K,)): the theory's arrays of the
        trace's classes. The total rate is (n − 1) / (the span of the arrivals), as the multiserver-job family reports
        a trace's load (:func:`msjgym.systems.msj.scenarios.model_of_trace`; the span is the longest duration when
        every job arrives at once), split by the classes' job counts; E[S_k] is the mean duration of class k."""
        classes = self.classes()
        span = float(self.arrival[-1]) if self.arrival[-1] > 0 else float(self.duration.max())
        rate = max(len(self) - 1, 1) / span
        sizes = np.bincount(classes.index, weights=self.duration, minlength=classes.counts.size) / classes.counts
        return classes.demand, rate * classes.counts / len(self), sizes


def read_resource_trace(path: str | Path, *, skip_bad_lines: bool = False, capacity: Mapping[str, int] | None = None,
                        cores_per_node: int | None = None, memory_per_node: int | None = None,
                        memory_unit: str = "GB", missing_memory: str = "used", servers: int | None = None
                        ) -> ResourceTrace:
    """Read an SWF (``.swf``) or CSV (``.csv``) trace as a multi-resource trace (module docstring).

    Args:
        path: the file.
        skip_bad_lines: skip (and count) malformed lines instead of stopping at the first.
        capacity: a CSV trace's machine, {resource: amount} (required for CSV; not with SWF, whose machine is derived).
        cores_per_node: SWF: processors of one node (default: the header's MaxProcs / MaxNodes).
        memory_per_node: SWF: memory of one node, GB (required: the SWF format does not record it).
        memory_unit: SWF: the unit of memory amounts, "GB" or "MB".
        missing_memory: SWF: what a job with an unknown requested memory gets (:data:`MISSING_MEMORY`).
        servers: SWF: the machine's processors when the header gives neither MaxProcs nor MaxNodes.
    Raises:
        TraceError: one line naming the file (and the line and field or column, or what to give).
    """
    path = Path(path)
    kind, what = path_kind(path)
    if kind in ("missing", "unusable"):
        raise TraceError(f"trace {shown(path)}: {what}")
    suffix = path.suffix.lower()
    swf_only = {"cores_per_node": cores_per_node, "memory_per_node": memory_per_node, "servers": servers}
    if suffix == ".swf":
        if capacity is not None:
            raise TraceError(f"{path}: capacity: not with an SWF trace (its machine is the traced one: give "
                             "memory_per_node, and cores_per_node if the header lacks MaxNodes)")
        return _read_swf(path, skip_bad_lines, cores_per_node, memory_per_node, memory_unit, missing_memory, servers)
    if suffix == ".csv":
        given = [k for k, v in swf_only.items() if v is not None]
        if given:
            raise TraceError(f"{path}: {given[0]}: only for an SWF trace (a CSV trace's machine is its capacity)")
        if capacity is None:
            raise TraceError(f"{path}: a CSV trace does not say the machine's capacity; give it per resource, e.g. "
                             "resources = { cores = 64, memory = 512 }")
        return _read_csv(path, capacity, skip_bad_lines)
    raise TraceError(f"trace {str(path)!r}: unknown format {suffix!r}; valid: .swf, .csv")


# ---------------------------------------------------------------- SWF
_SOURCE_REQUESTED, _SOURCE_USED, _SOURCE_ZERO = 0, 1, 2
_NO_MEMORY_USED = "with unknown requested and used memory (fields 10 and 7 both -1; missing_memory = \"used\")"
_NO_MEMORY = "with unknown requested memory (field 10 = -1; missing_memory = \"skip\")"


def _kb(name: str, text: str) -> float:
    """A memory field (KB per processor): a number (a ``ValueError`` naming the field otherwise, as every field of a
    malformed line); negative: unknown (returned as -1)."""
    try:
        value = parse_number(name, text)
        value = check_number(name, value)
        return -1.0 if value < 0 else float(check_number(name, value, 0, MAX_MEMORY_KB))
    except MsjgymError as exc:
        raise ValueError(str(exc)) from None


class _MemoryColumn:
    """The SWF reader's extra column (:data:`msjgym.systems.msj.trace.files.SwfColumns`): a job's memory per
    processor (KB) and where it came from, per ``missing_memory``; counts the jobs without any memory value."""

    def __init__(self, missing: str) -> None:
        self.missing = missing
        self.unknown = 0
        self.known = 0

    def __call__(self, f: list[str]) -> tuple[tuple[float, ...], str]:
        requested = _kb("requested memory (field 10)", f[9])
        if requested >= 0:
            self.known += 1
            return (requested, _SOURCE_REQUESTED), ""
        if self.missing == "used":
            used = _kb("used memory (field 7)", f[6])
            if used >= 0:
                self.known += 1
                return (used, _SOURCE_USED), ""
            self.unknown += 1
            return (), _NO_MEMORY_USED
        self.unknown += 1
        if self.missing == "zero":
            return (0.0, _SOURCE_ZERO), ""
        if self.missing == "skip":
            return (), _NO_MEMORY
        raise ValueError('requested memory (field 10) = -1 (unknown) and missing_memory = "error" (or "used", '
                         '"skip", "zero")')


def _read_swf(path: Path, skip_bad_lines: bool, cores_per_node: int | None, memory_per_node: int | None,
              memory_unit: str, missing: str, servers: int | None) -> ResourceTrace:
    if memory_unit not in MEMORY_UNITS:
        raise TraceError(f"memory_unit = {memory_unit!r}: must be one of {', '.join(map(repr, MEMORY_UNITS))}")
    if missing not in MISSING_MEMORY:
        raise TraceError(f"missing_memory = {missing!r}: must be one of {', '.join(map(repr, MISSING_MEMORY))}")
    if cores_per_node is not None:
        cores_per_node = check_number("cores_per_node", cores_per_node, 1, 10**6, integer=True, error=TraceError)
    if memory_per_node is None:
        raise TraceError(f"{path}: memory_per_node: give the memory of one node, in GB (the SWF format does not "
                         "record it; its MaxMemory header is the largest request the system allowed)")
    memory_per_node = check_number("memory_per_node", memory_per_node, 1, 10**9, integer=True, error=TraceError,
                                   why="GB")
    column = _MemoryColumn(missing)
    try:
        trace = read_trace(path, skip_bad_lines, servers, cores_per_node, swf_columns=column)
    except TraceError as exc:
        if column.unknown and not column.known:
            raise TraceError(f"{path}: no job has a known memory (fields 10 and 7 are -1 on every job that can be "
                             "replayed): this log records no memory; replay it as a multiserver-job trace (system = "
                             "\"msj\"), or give missing_memory = \"zero\"") from exc
        raise
    processors = trace.machine
    per_node = cores_per_node
    if per_node is None:
        if trace.nodes is None:
            raise TraceError(f"{path}: cores_per_node: the header has no MaxNodes (cores per node = MaxProcs / "
                             "MaxNodes); give the processors of one node as cores_per_node")
        if processors % trace.nodes:
            raise TraceError(f"{path}: the machine's {processors:,} processors are not a whole number of the "
                             f"header's MaxNodes {trace.nodes:,}; give the processors of one node as cores_per_node")
        per_node = processors // trace.nodes
    elif trace.nodes is not None and trace.nodes * per_node != processors:
        raise TraceError(f"{path}: cores_per_node = {per_node:,}: the header's MaxNodes {trace.nodes:,} × "
                         f"{per_node:,} ≠ the machine's {processors:,} processors (MaxProcs, or the largest job); "
                         "leave cores_per_node out or correct it")
    if processors % per_node:
        raise TraceError(f"{path}: cores_per_node = {per_node:,}: the machine's {processors:,} processors are not a "
                         "whole number of nodes")
    nodes = processors // per_node
    unit = MEMORY_UNITS[memory_unit]
    node_memory = memory_per_node * (2**20 // unit)
    capacity = (processors, nodes * node_memory)
    kb, source = trace.columns[:, 0], trace.columns[:, 1]
    # processors × KB per processor / (KB per unit): exact in float64 (the unit is a power of two) for any log
    memory = np.ceil(trace.need * kb / unit)
    over = np.flatnonzero(memory > capacity[1])
    if over.size:
        j = int(over[0])
        raise TraceError(f"{path}: job {int(trace.ident[j])} (field 1) requests {memory[j]:,.0f} {memory_unit} of "
                         f"memory ({int(trace.need[j]):,} processors × {kb[j]:,.0f} KB), more than the machine's "
                         f"{capacity[1]:,} {memory_unit} ({nodes:,} nodes × memory_per_node {memory_per_node:,} GB); "
                         f"{over.size:,} job(s) do: give a larger memory_per_node")
    demand = np.column_stack([trace.need, memory.astype(np.int64)]).astype(np.int64)
    notes = list(trace.notes)
    used, zero = int((source == _SOURCE_USED).sum()), int((source == _SOURCE_ZERO).sum())
    if used:
        notes.append(f"{used:,} job(s) with unknown requested memory (field 10 = -1): their used memory (field 7) "
                     "taken as the request")
    if zero:
        notes.append(f"{zero:,} job(s) with unknown requested memory (field 10 = -1): memory demand 0 "
                     "(missing_memory = \"zero\")")
    notes.append(f"the machine: {nodes:,} node(s) × ({per_node:,} cores, {memory_per_node:,} GB), pooled: cores "
                 f"{capacity[0]:,}, memory {capacity[1]:,} {memory_unit}; a job's memory is its processors × its "
                 f"requested memory per processor (field 10), in {memory_unit} rounded up")
    return _resource_trace(replace(trace, notes=notes), SWF_RESOURCES, capacity, demand)


def _resource_trace(trace: Trace, resources: Sequence[str], capacity: Sequence[int], demand: np.ndarray
                    ) -> ResourceTrace:
    """``trace`` with its demand vectors, and a note on its classes."""
    out = ResourceTrace(**{f.name: getattr(trace, f.name) for f in fields(trace)}, resources=tuple(resources),
                        capacity=tuple(int(c) for c in capacity), demand=demand)
    k = out.classes().counts.size
    out.notes.append(f"{k:,} distinct demand vector(s) (job classes) among {len(out):,} jobs")
    return out


# ---------------------------------------------------------------- CSV
def _capacity(capacity: Mapping[str, int], path: Path) -> dict[str, int]:
    if not isinstance(capacity, Mapping) or not capacity:
        raise TraceError(f"{path}: capacity must name at least one resource with its amount, e.g. "
                         "{ cores = 64, memory = 512 }")
    out = {}
    for name, amount in capacity.items():
        if not isinstance(name, str) or not _NAME.match(name) or name in CSV_REQUIRED + CSV_OPTIONAL:
            raise TraceError(f"capacity: resource name {name!r}: must be a word (letters, digits, _) other than "
                             f"{', '.join(CSV_REQUIRED + CSV_OPTIONAL)}")
        out[name] = check_number(f"capacity.{name}", amount, 1, MAX_CAPACITY, integer=True, error=TraceError)
    return out


def _header(path: Path, header: list[str] | None, capacity: dict[str, int]) -> list[str]:
    """The header's column names, checked (module docstring, "CSV")."""
    names = [] if header is None else [h.strip() for h in header]
    if not names or names == [""]:
        raise TraceError(f"{path} line 1: the header is empty; it must name the columns, e.g. "
                         f"submit,runtime,requested_time,{','.join(capacity)}")
    for i, name in enumerate(names, start=1):
        if not _NAME.match(name):
            raise TraceError(f"{path} line 1: column {i} {name!r}: a column name must be a word (letters, digits, _)")
        if names.index(name) != i - 1:
            raise TraceError(f"{path} line 1: column {i} {name!r} is given twice")
        if name not in CSV_REQUIRED + CSV_OPTIONAL and name not in capacity:
            raise TraceError(f"{path} line 1: column {i} {name!r} is neither {', '.join(CSV_REQUIRED + CSV_OPTIONAL)} "
                             f"nor a resource of the machine ({', '.join(capacity)})")
    for name in CSV_REQUIRED:
        if name not in names:
            raise TraceError(f"{path} line 1: the header has no {name!r} column (required: "
                             f"{', '.join(CSV_REQUIRED)})")
    if not any(name in capacity for name in names):
        raise TraceError(f"{path} line 1: the header has no resource column (the machine's resources: "
                         f"{', '.join(capacity)})")
    return names


def _value(name: str, text: str, low: float, high: float, integer: bool = False) -> float | int:
    """One field of a CSV line through the one input layer; a ``ValueError`` naming the column otherwise."""
    try:
        return check_number(name, parse_number(name, text), low, high, integer=integer)
    except MsjgymError as exc:
        raise ValueError(str(exc)) from None


def _csv_job(f: list[str], names: list[str], capacity: dict[str, int], rank: int) -> tuple:
    """One CSV job line: (submit, first resource, runtime, requested time, id, demand vector)."""
    if len(f) != len(names):
        raise ValueError(f"expected {len(names)} fields ({','.join(names)}), got {len(f)}")
    row = dict(zip(names, f))
    submit = _value("submit", row["submit"], 0.0, MAX_TRACE_TIME)
    runtime = _value("runtime", row["runtime"], TIME_RANGE[0], TIME_RANGE[1])
    requested = -1.0
    if row.get("requested_time", "").strip() not in ("", "-1"):
        requested = _value("requested_time", row["requested_time"], TIME_RANGE[0], TIME_RANGE[1])
    ident = _value("id", row["id"], -2**62, 2**62, integer=True) if "id" in row else rank
    demand = []
    for name, cap in capacity.items():
        amount = _value(name, row[name], 0, MAX_CAPACITY, integer=True) if name in row else 0
        if amount > cap:
            raise ValueError(f"{name} = {amount:,}: more than the machine's capacity {cap:,} (a job must fit the "
                             "machine)")
        demand.append(amount)
    if not any(demand):
        raise ValueError(f"the job demands nothing ({', '.join(capacity)} all 0)")
    return submit, demand[0], runtime, requested, ident, tuple(demand)


def _read_csv(path: Path, capacity: Mapping[str, int], skip_bad_lines: bool) -> ResourceTrace:
    cap = _capacity(capacity, path)
    with open_user_text(path, "trace", MAX_TRACE_BYTES, TraceError, errors="replace", newline="") as f:
        reader = csv.reader(f)
        try:
            names = _header(path, next(reader, None), cap)
        except csv.Error as exc:
            raise TraceError(f"{path} line 1: {exc}") from None
        rows, malformed = csv_job_rows(reader, path, lambda fields, rank: _csv_job(fields, names, cap, rank),
                                       skip_bad_lines)
    first = next(iter(cap.values()))
    trace = trace_of_rows(rows, path, first, malformed, 0, given=True)
    missing = [name for name in cap if name not in names]
    if missing:
        trace.notes.append(f"no column for {', '.join(missing)}: every job demands 0 of it")
    return _resource_trace(trace, list(cap), list(cap.values()), trace.columns.astype(np.int64))


# ---------------------------------------------------------------- the scenario key
TRACE_KEYS = ("trace", "skip_bad_lines", "overrun", "memory_per_node", "cores_per_node", "memory_unit",
              "missing_memory", "servers")
"""The keys of ``arrivals = { trace = FILE, ... }`` in a multi-resource scenario file."""
_REFUSED = {"classes": "the trace gives the jobs", "load": "the trace gives the jobs",
            "arrival_rate": "the trace gives the jobs", "servers": "a trace's machine is its resources",
            "nodes": "a trace's machine is pooled (one node of the traced machine's total capacity)"}


def trace_model(spec: Mapping, base_dir: Path | None = None):
    """The :class:`~msjgym.systems.multi_resource.model.MultiResourceModel` of a scenario table whose arrivals replay
    a trace: ``arrivals = { trace = FILE, ... }`` (:data:`TRACE_KEYS`; an SWF file's machine from its header and
    ``memory_per_node``, a CSV file's from ``resources = { NAME = capacity, ... }``), with the multiserver-job
    family's ``estimate`` (default: the trace's requested times) and ``overrun``. Its classes are the trace's distinct
    demand vectors (:meth:`ResourceTrace.classes`), each with its jobs' durations as an empirical law and its share
    of the jobs as its probability; the replay keeps every job's own duration and estimate."""
    from msjgym.errors import ScenarioError
    from msjgym.systems.msj import scenarios as msj_scenarios
    from msjgym.systems.multi_resource.model import multi_resource_model

    for key, why in _REFUSED.items():
        if key in spec:
            raise ScenarioError(f"{key}: not allowed with arrivals = {{trace = ...}} ({why})")
    table = spec["arrivals"]
    if not isinstance(table, Mapping):
        raise ScenarioError(f"arrivals = {table!r}: must be a table {{ trace = FILE, ... }}")
    for key in table:
        if key not in TRACE_KEYS:
            raise ScenarioError(f"arrivals.{key}: unknown key; valid: {', '.join(TRACE_KEYS)}")
    if "trace" not in table or not isinstance(table["trace"], str):
        raise ScenarioError("arrivals.trace: give the trace file, trace = \"FILE.swf\" or \"FILE.csv\"")
    file = Path(table["trace"]).expanduser()
    if not file.is_absolute() and base_dir is not None:
        file = base_dir / file
    skip = table.get("skip_bad_lines", False)
    if not isinstance(skip, bool):
        raise ScenarioError(f"arrivals.skip_bad_lines = {skip!r}: must be true or false")
    overrun = table.get("overrun", "run")
    if overrun not in msj_scenarios.OVERRUNS:
        raise ScenarioError(f"arrivals.overrun = {overrun!r}: must be one of {', '.join(map(repr, msj_scenarios.OVERRUNS))}")
    capacity = spec.get("resources")
    if capacity is not None and file.suffix.lower() == ".swf":
        raise ScenarioError("resources: not with an SWF trace (its machine is the traced one: give "
                            "arrivals.memory_per_node, and arrivals.cores_per_node if its header lacks MaxNodes)")
    trace = read_resource_trace(
        file, skip_bad_lines=skip, capacity=capacity, cores_per_node=table.get("cores_per_node"),
        memory_per_node=table.get("memory_per_node"), memory_unit=table.get("memory_unit", "GB"),
        missing_memory=table.get("missing_memory", "used"), servers=table.get("servers"))
    if overrun == "kill":
        trace = kill_at_requested(trace)
    law = msj_scenarios.estimate_law(spec, "", trace=True)
    if law.kind == "tsafrir":
        raise ScenarioError("estimate = \"tsafrir\": not for a multi-resource trace yet (its requested times, "
                            "\"requested\", the default, or \"exact\" / { factor = ... })")
    classes = trace.classes()
    if classes.counts.size > MAX_CLASSES:
        raise ScenarioError(f"arrivals.trace: {classes.counts.size:,} distinct demand vectors (job classes); at most "
                            f"{MAX_CLASSES:,} (memory_unit = \"GB\" rounds memory coarser than \"MB\")")
    twin = len(trace.resources) == 1
    jobs = []
    for k, d in enumerate(classes.demand):
        name = "-".join(f"{r}{int(a)}" for r, a in zip(trace.resources, d) if a)
        durations = tuple(float(x) for x in trace.duration[classes.index == k])
        jobs.append(JobClass(name, int(d[0]) if twin else 1, float(classes.counts[k] / len(trace)),
                             Empirical(values=durations)))
    span = float(trace.arrival[-1]) if trace.arrival[-1] > 0 else float(trace.duration.max())
    rate = max(len(trace) - 1, 1) / span
    base = MSJModel(servers=int(trace.capacity[0]) if twin else 1, arrival_rate=rate, classes=tuple(jobs),
                    trace=trace, estimate=law)
    return multi_resource_model(base, trace.resources, trace.capacity, tuple(map(tuple, classes.demand.tolist())))


# ---------------------------------------------------------------- a replay's metrics
def resource_replay_metrics(model, trace: ResourceTrace, completion: np.ndarray, wait: np.ndarray, warmup: int,
                            tau: float) -> dict[str, float]:
    """One replay's exact metrics (:func:`msjgym.systems.msj.trace.replay.replay_metrics`) for a multi-resource
    model: ``utilization`` and the per-size bands are the bottleneck resource's (the model's
    :attr:`~msjgym.systems.multi_resource.model.MultiResourceModel.bottleneck`, over the machine's total of it),
    ``utilization_NAME`` each resource's held fraction over the makespan."""
    from msjgym.systems.msj.trace.replay import replay_metrics, uses_bands

    total = model.nodes * model.capacity_array
    k = model.bottleneck
    out = replay_metrics(trace.arrival, trace.demand[:, k], trace.duration, completion, int(total[k]), warmup, tau,
                         uses_bands(model.trace.demand[:, k]), wait=wait)
    span = out["makespan"]
    for r, name in enumerate(model.resources):
        work = float(np.sum(trace.demand[:, r] * trace.duration))
        out[f"utilization_{name}"] = work / (span * int(total[r])) if span > 0 else float("nan")
    return out


def resource_loop_integrals(model, state, b: int) -> dict[str, float]:
    """The event loop's time integrals of a finished replay (:func:`msjgym.systems.msj.trace.replay.loop_integrals`)
    counted in the bottleneck resource: the values the replay invariants compare with
    :func:`resource_replay_metrics`."""
    from msjgym.systems.msj.trace.replay import loop_integrals

    k = model.bottleneck
    return loop_integrals(state, b, model.demand[:, k], int(model.nodes * model.capacity[k]))


def demand_of(trace: ResourceTrace, name: str) -> np.ndarray:
    """int64 (n,): every job's amount of resource ``name``; a ``MsjgymError`` naming the valid ones otherwise."""
    if name not in trace.resources:
        raise MsjgymError(f"resource {name!r}: the trace's resources are {', '.join(trace.resources)}")
    return trace.demand[:, trace.resources.index(name)]


__all__ = ["SWF_RESOURCES", "MEMORY_UNITS", "MISSING_MEMORY", "CSV_REQUIRED", "CSV_OPTIONAL", "TraceClasses",
           "ResourceTrace", "read_resource_trace", "demand_of", "TraceError", "TRACE_KEYS", "trace_model"]
