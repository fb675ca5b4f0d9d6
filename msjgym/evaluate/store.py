"""The results store of sweeps: one SQLite file, one row per finished (point, policy, replication) task.

Each row is inserted in its own transaction as its task finishes, so an interrupted sweep (Ctrl-C, SIGKILL, a lost
worker) never loses a finished task and never leaves the file half-written (SQLite's write-ahead log). A task is
identified by its *key*: scenario, point (the parameter overrides, as canonical JSON), policy, replication, run
length (jobs, warm-up, batches), root seed (as text: seeds go up to 2^128 - 1, beyond SQLite's 64-bit INTEGER) and
``inputs``, a digest of the *content* of everything that determines it (the scenario file and the files it reads,
a policy file, the parameters, msjgym's version: :func:`msjgym.core.inputs.content_digest`). Rerunning a sweep
skips every key already present; a task whose inputs changed (an edited scenario file under the same name) has a new
key and is recomputed. The rows of the superseded inputs stay in the file, and :meth:`ResultStore.rows` leaves them
out unless asked.

Schema (table ``tasks``): the key columns, then ``task_seed`` (the seed the replication ran with), ``stable``,
``growth_rate`` (jobs per unit time, unstable runs), ``metrics`` (JSON object of the replication's metric values, as
``Result.replications[0]``), ``events``, ``wall_seconds``, ``finished_at`` (UTC ISO time). A store of
an earlier msjgym (no ``inputs`` column, an integer seed) is read as it is, its rows with unknown inputs (``""``),
and converted when a sweep writes to it (its rows are then recomputed on their next run, their inputs unknown).

A store on read-only media (a DVD, a read-only mount, a file without write permission) is opened read-only for
``msjgym plot`` (``create=False``).
"""
from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.core.estimates import Estimate

from msjgym.evaluate.intervals import t_interval
from msjgym.errors import MsjgymError

KEY = ("scenario", "point", "policy", "rep", "jobs", "warmup", "batches", "seed", "inputs")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    scenario TEXT NOT NULL, point TEXT NOT NULL, policy TEXT NOT NULL, rep INTEGER NOT NULL,
    jobs INTEGER NOT NULL, warmup INTEGER NOT NULL, batches INTEGER NOT NULL, seed TEXT NOT NULL,
    inputs TEXT NOT NULL,
    task_seed INTEGER NOT NULL, stable INTEGER NOT NULL, growth_rate REAL, metrics TEXT NOT NULL,
    events INTEGER NOT NULL, wall_seconds REAL NOT NULL, finished_at TEXT NOT NULL,
    PRIMARY KEY (scenario, point, policy, rep, jobs, warmup, batches, seed, inputs)
);
"""
_COLUMNS = list(KEY) + ["task_seed", "stable", "growth_rate", "metrics", "events", "wall_seconds", "finished_at"]
_LEGACY_COLUMNS = [c for c in _COLUMNS if c != "inputs"]
"""The table of msjgym 0.1 stores (before results were keyed by content): read as is, converted on write."""


def canonical_point(point: Mapping[str, Any]) -> str:
    """A point's overrides as canonical JSON (sorted keys), the form stored in the ``point`` column."""
    return json.dumps(dict(point), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class TaskRow:
    """One finished task: its key, the seed it ran with, and what it measured."""

    scenario: str
    point: dict[str, Any]
    policy: str
    rep: int
    jobs: int
    warmup: int
    batches: int
    seed: int
    task_seed: int
    stable: bool
    growth_rate: float | None
    metrics: dict[str, float]
    events: int
    wall_seconds: float
    inputs: str = ""
    """Digest of the content of the task's inputs (``""``: unknown, a row of an earlier msjgym)."""

    def key(self) -> tuple:
        return (self.scenario, canonical_point(self.point), self.policy, self.rep, self.jobs, self.warmup,
                self.batches, str(self.seed), self.inputs)


class ResultStore:
    """A sweep's SQLite results file (created on first use, with its folder, unless ``create`` is False).

    A file that is not msjgym's results store (not SQLite, damaged, or an SQLite file with other tables) is refused
    with a one-line :class:`~msjgym.errors.MsjgymError` starting with ``label`` (the option that named it), before
    anything is written to it; ``msjgym sweep`` and ``msjgym plot`` share this check.
    """

    def __init__(self, path: str | Path, *, create: bool = True, label: str = "results file") -> None:
        self.path = Path(path)
        self._legacy = False
        shown = f"{label} {str(self.path)!r}"
        if self.path.is_dir():
            raise MsjgymError(f"{shown}: is a folder, not a results file")
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MsjgymError(f"{shown}: cannot create its folder ({exc.strerror or exc})") from None
        try:
            self._db = self._connect(create)
        except sqlite3.Error as exc:
            raise MsjgymError(f"{shown}: cannot open ({exc})") from None
        try:
            self._check_schema(shown, create)
            if create:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                if self._legacy:
                    self._convert_legacy()
                self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            self._db.close()
            raise MsjgymError(f"{shown}: not a results file of msjgym sweep ({exc})") from None
        except MsjgymError:
            self._db.close()
            raise

    def _connect(self, create: bool) -> sqlite3.Connection:
        """A connection: read-write when ``create``; else read-only, and on read-only media (where SQLite cannot
        create the write-ahead log's index beside the file) as an immutable file."""
        if create:
            return sqlite3.connect(self.path, isolation_level=None)  # autocommit; explicit transactions below
        uri = self.path.resolve().as_uri()
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
        try:
            db.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
            return db
        except sqlite3.OperationalError:  # e.g. "unable to open database file": a WAL store on read-only media
            db.close()
        except sqlite3.DatabaseError:  # not a database: the schema check says so
            return db
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)

    def _check_schema(self, shown: str, create: bool) -> None:
        """Refuse an SQLite file that holds anything but msjgym's ``tasks`` table (never add ours beside them)."""
        tables = [name for (name,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if "tasks" in tables:
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(tasks)")]
            self._legacy = columns == _LEGACY_COLUMNS
            if columns != _COLUMNS and not self._legacy:
                raise MsjgymError(f"{shown}: its table 'tasks' is not msjgym's (columns {', '.join(columns)}); "
                                  "give another results file or folder")
        elif tables:
            raise MsjgymError(f"{shown}: an SQLite file with other tables ({', '.join(tables)}), not msjgym's "
                              "results; give another results file or folder")
        elif not create:
            raise MsjgymError(f"{shown}: no finished task in the results (empty store)")

    def _convert_legacy(self) -> None:
        """Convert an earlier msjgym's table in one transaction: seeds as text, inputs unknown (``""``)."""
        legacy = ", ".join("CAST(seed AS TEXT)" if c == "seed" else c for c in _LEGACY_COLUMNS)
        columns = ", ".join(_LEGACY_COLUMNS)
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("ALTER TABLE tasks RENAME TO tasks_legacy")
            self._db.execute(_SCHEMA.strip().rstrip(";"))
            self._db.execute(f"INSERT INTO tasks ({columns}, inputs) SELECT {legacy}, '' FROM tasks_legacy")
            self._db.execute("DROP TABLE tasks_legacy")
        self._legacy = False

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def done_keys(self) -> set[tuple]:
        """Keys of every finished task (:meth:`TaskRow.key`)."""
        return {tuple(row) for row in self._db.execute(f"SELECT {self._select(KEY)} FROM tasks")}

    def _select(self, columns: Sequence[str]) -> str:
        """The SELECT list of ``columns``, the same for a legacy table (seed as text, inputs "")."""
        if not self._legacy:
            return ", ".join("CAST(seed AS TEXT)" if c == "seed" else c for c in columns)
        return ", ".join({"seed": "CAST(seed AS TEXT)", "inputs": "''"}.get(c, c) for c in columns)

    def add(self, row: TaskRow) -> None:
        """Insert one finished task atomically (a task already present is left as it is)."""
        values = row.key() + (row.task_seed, int(row.stable), _finite_or_none(row.growth_rate),
                              json.dumps(_jsonable(row.metrics)), row.events, row.wall_seconds,
                              datetime.now(timezone.utc).isoformat(timespec="seconds"))
        with self._db:  # one transaction
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(f"INSERT OR IGNORE INTO tasks ({', '.join(_COLUMNS)}) "
                             f"VALUES ({', '.join('?' * len(values))})", values)

    def rows(self, superseded: bool = False) -> Iterator[TaskRow]:
        """Finished tasks, in key order. Without ``superseded``, a task run again on changed inputs (same scenario
        name, point, policy, run length and seed; another ``inputs``) counts only with the inputs of its most
        recently stored row: the older rows are results of inputs that no longer exist."""
        cursor = self._db.execute(
            f"SELECT {self._select(KEY)}, task_seed, stable, growth_rate, metrics, events, wall_seconds, rowid "
            f"FROM tasks ORDER BY {', '.join(k for k in KEY if k != 'inputs' or not self._legacy)}")
        rows, finished = [], []
        for (scenario, point, policy, rep, jobs, warmup, batches, seed, inputs, task_seed, stable, growth, metrics,
             events, wall, at) in cursor:
            rows.append(TaskRow(scenario, json.loads(point), policy, rep, jobs, warmup, batches, int(seed), task_seed,
                                bool(stable), growth, _from_json(json.loads(metrics)), events, wall, inputs))
            finished.append(at)
        if not superseded:
            latest: dict[tuple, tuple[int, str]] = {}  # by insertion order (rowid): the latest run
            for row, at in zip(rows, finished):
                name = _name_key(row)
                if name not in latest or at > latest[name][0]:
                    latest[name] = (at, row.inputs)
            rows = [r for r in rows if latest[_name_key(r)][1] == r.inputs]
        yield from rows

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]


@dataclass(frozen=True)
class PointSummary:
    """The replications of one (scenario, point, policy, run length): Student-t CIs over replications.

    ``metrics`` is empty when any replication was unstable (then ``growth_rate`` summarizes them).
    """

    scenario: str
    point: dict[str, Any]
    policy: str
    reps: int
    stable: bool
    metrics: dict[str, Estimate]
    growth_rate: Estimate | None


def summarize(rows: Iterable[TaskRow]) -> list[PointSummary]:
    """Group task rows by everything but the replication, and put a 95 % CI on every metric."""
    groups: dict[tuple, list[TaskRow]] = {}
    for row in rows:
        key = row.key()
        groups.setdefault(key[:3] + key[4:], []).append(row)
    out = []
    for group in groups.values():
        first = group[0]
        stable = all(r.stable for r in group)
        metrics: dict[str, Estimate] = {}
        growth = None
        if stable:
            names = list(dict.fromkeys(name for r in group for name in r.metrics))
            metrics = {n: t_interval(np.array([r.metrics.get(n, math.nan) for r in group])) for n in names}
        else:
            growth = t_interval(np.array([r.growth_rate for r in group if not r.stable], dtype=float))
        if len(group) < 2:  # one replication: values, no interval (said as such, never left bare)
            metrics = {n: replace(e, no_ci=ONE_REPLICATION) for n, e in metrics.items()}
            growth = None if growth is None else replace(growth, no_ci=ONE_REPLICATION)
        out.append(PointSummary(first.scenario, first.point, first.policy, len(group), stable, metrics, growth))
    return out


ANY = "any"
"""What a sweep's tables and plots show for a grid key the row's policy does not read (it ran once across it)."""

ONE_REPLICATION = "one replication: no confidence interval (use --reps >= 2)"
"""Why a sweep point's estimates have no interval."""


def _name_key(row: TaskRow) -> tuple:
    """A task's key without its replication and inputs: what a user names (scenario, point, policy, run, seed)."""
    key = row.key()
    return key[:3] + key[4:-1]


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _jsonable(metrics: Mapping[str, float]) -> dict[str, Any]:
    """NaN and ±inf as strings, since JSON has no such numbers."""
    return {k: (v if math.isfinite(v) else str(v)) for k, v in ((k, float(v)) for k, v in metrics.items())}


def _from_json(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items()}

