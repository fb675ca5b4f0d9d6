"""A replay's schedule out (``msjgym evaluate TRACE --per-job FILE``) and back in (``msjgym plot --schedule FILE``).

Formats, chosen by the file's extension (``.csv``, ``.swf``) or by ``--per-job-format csv|swf``; any other extension
is an error, never a silent CSV:

* **CSV**: one row per job, with a header: ``job`` (the trace's job id: the SWF job number, or a CSV trace's line
  rank), ``arrival_time``, ``need``, ``duration``, ``completion_time``, ``response_time``, ``waiting_time``,
  ``bounded_slowdown``, ``start_time``, ``requested_time`` (the runtime estimate the scheduler used) (times in the
  scenario's unit, relative to the replayed jobs' first arrival); with ``--windows``, a first column ``window`` (0-based; each window's times are relative to
  its own first arrival, as it was replayed). A multi-resource replay has one column per resource instead of
  ``need``: ``demand_NAME``, each job's amount of resource NAME.
* **SWF** (the Standard Workload Format 2.2 of the Parallel Workloads Archive, Feitelson, Tsafrir & Krakov,
  "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014; the format Batsim and evalys read):
  18 whitespace-separated fields per job, -1 where unknown: 1 job number (the trace's id), 2 submit time, 3 wait
  time (start − submit), 4 run time, 5 allocated processors (the servers the job held on the simulated machine), 6
  average CPU time (-1), 7 used memory (-1), 8 requested processors (= field 5), 9 requested time (the runtime
  estimate the scheduler used, by the scenario's ``estimate``: by default the trace's requested time where it has
  one, else the run time; with ``estimate = "exact"`` the run time), 10 requested memory
  (-1), 11 status (1 completed, 0 not completed by the end of the replay: fields 3 then -1), 12–18 user, group,
  executable, queue, partition, preceding job, think time (-1). The header comments name the format version, the
  machine (``MaxProcs``: the simulated servers), the job count, the policy, the scenario and msjgym's version.
  With ``--windows``, the windows follow one another in the one file, each introduced by a comment line
  ``; Window: W (jobs A–B of the trace)`` and with its times relative to its own first arrival; such a file is a
  record of the windows' schedules, not one replay (re-reading it replays the windows back to back, overlapping).
  A multi-resource replay's fields 5 and 8 are its first resource (the header's ``processors`` column; ``MaxProcs``
  the machine's amount of it), as the header comments say; its other resources are in the CSV form.

Times are written as the shortest decimal that reads back as the same double (Python's ``repr``; an integral value
as an integer), so a schedule re-read gives back the replay's numbers: the start time is submit + wait, exact to the
double's rounding (relative 1e-16), and the replay's metrics follow from fields 2–5 alone
(``tests/test_schedule.py``). Used by the msj family's trace replays and ``msjgym plot --schedule``.

A job's start time is its completion time minus its run time: the time it started for the non-preemptive trace
schedulers (FCFS, the backfilling rules, ``priority``); for a preemptive policy, when an uninterrupted run would have
started to end at the same time (its waiting time is then its total time not in service).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.errors import MsjgymError

FORMATS = ("csv", "swf")
SWF_VERSION = "2.2"
SWF_FIELDS = 18


def schedule_format(path: str | Path, given: str | None = None, flag: str = "--per-job") -> str:
    """The format of ``path``: ``given`` (``--per-job-format``), else its extension; an unknown extension is a
    one-line error naming ``flag``."""
    if given is not None:
        if given not in FORMATS:
            raise MsjgymError(f"{flag}-format {given!r}: valid: {', '.join(FORMATS)}")
        return given
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise MsjgymError(f"{flag} {str(path)!r}: unknown extension {Path(path).suffix or '(none)'!r}; valid: "
                          f"{', '.join('.' + f for f in FORMATS)} (or give {flag}-format {'|'.join(FORMATS)})")
    return suffix


def write_schedule(columns: Mapping[str, np.ndarray], path: Path, fmt: str,
                   header: Mapping[str, Any] | None = None) -> None:
    """Write a replay's per-job ``columns`` (``Result.per_job``) to ``path`` as ``fmt`` (:data:`FORMATS`);
    ``header``: ``servers``, ``policy``, ``scenario`` for the SWF header comments."""
    if fmt == "swf":
        write_swf(columns, path, header or {})
    else:
        write_csv(columns, path)


def write_csv(columns: Mapping[str, np.ndarray], path: Path) -> None:
    """One CSV row per job (its id first: the SWF job number, or the rank in arrival order, 1-based); the folder
    must exist."""
    first = next(iter(columns.values()))
    if "job" not in columns:
        columns = {"job": np.arange(1, len(first) + 1)} | dict(columns)
    with path.open("w") as f:
        f.write(",".join(columns) + "\n")
        for i in range(len(first)):
            f.write(",".join(f"{columns[c][i]:.10g}" if columns[c].dtype.kind == "f" else str(columns[c][i])
                             for c in columns) + "\n")


def _number(x: float) -> str:
    """A time as SWF text: an integer when integral, else the shortest decimal that reads back exactly."""
    x = float(x)
    if not math.isfinite(x):
        return "-1"
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


def with_need(columns: Mapping[str, np.ndarray], header: Mapping[str, Any]) -> Mapping[str, np.ndarray]:
    """``columns`` with a ``need`` column (what an SWF schedule and a schedule plot show as processors): the
    header's ``processors`` column when the replay has several resources (``demand_NAME`` columns), else as given."""
    if "need" in columns or not header.get("processors"):
        return columns
    return dict(columns) | {"need": columns[header["processors"]]}


def write_swf(columns: Mapping[str, np.ndarray], path: Path, header: Mapping[str, Any]) -> None:
    """The schedule as SWF (module docstring)."""
    import sys

    version = getattr(sys.modules.get("msjgym"), "__version__", "unknown")  # not imported: core sits below it
    n = len(columns["arrival_time"])
    columns = with_need(columns, header)
    unit = header.get("resource")
    windows = columns.get("window")
    lines = [f"; Version: {SWF_VERSION}",
             f"; Computer: msjgym simulation ({header.get('servers', -1)} {unit or 'servers'})",
             f"; Note: schedule of a replay by msjgym {version}: policy {header.get('policy', '?')} on scenario "
             f"{header.get('scenario', '?')}; field 3 is the simulated wait, field 9 the runtime estimate the "
             "scheduler used",
             f"; MaxJobs: {n}", f"; MaxRecords: {n}", f"; MaxProcs: {header.get('servers', -1)}"]
    if unit:
        lines.append(f"; Note: fields 5 and 8 are each job's {unit} (the first resource; the CSV form "
                     "(--per-job-format csv) has every resource)")
    if windows is not None:
        lines.append("; Note: windows of the trace, one after another, each with its own time origin (a comment "
                     "line '; Window: W' introduces each)")
    current = None
    for i in range(n):
        if windows is not None and windows[i] != current:
            current = windows[i]
            ids = columns["job"][windows == current]
            lines.append(f"; Window: {int(current)} (jobs {ids[0]}–{ids[-1]} of the trace)")
        done = math.isfinite(float(columns["completion_time"][i]))
        need = int(columns["need"][i])
        fields = [str(int(columns["job"][i])), _number(columns["arrival_time"][i]),
                  _number(columns["waiting_time"][i]) if done else "-1", _number(columns["duration"][i]),
                  str(need), "-1", "-1", str(need), _number(columns["requested_time"][i]), "-1",
                  "1" if done else "0"] + ["-1"] * 7
        assert len(fields) == SWF_FIELDS
        lines.append(" ".join(fields))
    path.write_text("\n".join(lines) + "\n")


def read_schedule(path: str | Path) -> tuple[dict[str, np.ndarray], int | None]:
    """A schedule written by :func:`write_schedule` (or any SWF file with its wait times), as columns
    ``arrival_time``, ``start_time``, ``duration``, ``need`` (and ``window`` when the file has windows), with the
    machine's servers (the SWF ``MaxProcs``; None when the file does not say). Jobs without a start (wait -1) are
    left out."""
    path = Path(path)
    fmt = schedule_format(path, flag="--schedule")
    if not path.is_file():
        raise MsjgymError(f"--schedule {str(path)!r}: no such file")
    if fmt == "csv":
        import csv

        with path.open() as f:
            rows = list(csv.DictReader(f))
        need = {"arrival_time", "start_time", "duration", "need"}
        if not rows or not need <= set(rows[0]):
            raise MsjgymError(f"--schedule {str(path)!r}: not a per-job schedule of msjgym (needs the columns "
                              f"{', '.join(sorted(need))})")
        cols = {k: np.array([float(r[k]) for r in rows]) for k in need | ({"window"} & set(rows[0]))}
        return cols, None
    servers, window, out = None, 0, []
    with path.open() as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if text.startswith(";"):
                key, _, value = text[1:].partition(":")
                if key.strip().lower() == "maxprocs" and value.strip().lstrip("-").isdigit():
                    servers = int(value) if int(value) > 0 else None
                elif key.strip().lower() == "window":
                    window = int(value.split()[0])
                continue
            if not text:
                continue
            parts = text.split()
            if len(parts) != SWF_FIELDS:
                raise MsjgymError(f"--schedule {str(path)!r}, line {number}: {len(parts)} fields; SWF has "
                                  f"{SWF_FIELDS}")
            submit, wait, run, procs = (float(p) for p in parts[1:5])
            procs = procs if procs > 0 else float(parts[7])
            if wait < 0 or run <= 0 or procs <= 0:
                continue
            out.append((window, submit, submit + wait, run, procs))
    if not out:
        raise MsjgymError(f"--schedule {str(path)!r}: no job with a wait time (field 3) to draw")
    data = np.array(out)
    cols = {"arrival_time": data[:, 1], "start_time": data[:, 2], "duration": data[:, 3], "need": data[:, 4]}
    if np.unique(data[:, 0]).size > 1:
        cols["window"] = data[:, 0]
    return cols, servers
