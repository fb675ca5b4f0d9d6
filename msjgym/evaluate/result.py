"""The result of evaluating a policy on a scenario, the same for every family, and its JSON form."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from msjgym.core.estimates import Estimate, json_float
from msjgym.core.references import Reference
from msjgym.evaluate.checks import Check

JSON_KEYS = ("scenario", "family", "policy", "params", "stable", "metrics", "references", "checks", "reps", "jobs",
             "warmup", "seed", "events", "wall_seconds", "compile_seconds", "mode", "growth_rate", "unstable_replications",
             "diagnostics")
"""The top-level keys of ``msjgym evaluate --json``, in order, for every family."""


@dataclass
class Result:
    """What :func:`msjgym.evaluate` measured. ``metrics`` is empty when the scenario was found unstable.

    Attributes:
        scenario, family, policy: what ran. params: the scenario's parameters (with its load or arrival rate).
        stable: False when a replication was stopped for unbounded growth.
        metrics: mean and 95 % CI of each metric over replications (with one replication, over batch means).
            Times are in the scenario's time unit, counts are time averages; the same name means the same quantity
            in every family (``response_time``, ``waiting_time``, ``number_in_system``, ``utilization``, ...).
        references: the theory's references for this scenario and policy, with their verdicts.
        reps, jobs, warmup, seed: the run (jobs and warm-up per replication, in ``unit``\\s: jobs or arrivals).
        replications: each replication's own metric values (for checks across replications).
        unstable_replications: indices of the replications stopped for unbounded growth; growth_rates: their growth
            rates of the number in system (jobs per unit time); growth_rate: their mean and CI (None if none).
        events: simulated events over all replications. wall_seconds: time spent simulating;
            compile_seconds: compiling or loading the kernels before that.
        mode: "open", "saturated" (a closed system measured for its maximum throughput), "replay" (one exact replay
            of a trace: the metrics' ``ci95`` is NaN, there being no sampling error) or "windows" (replications over
            windows of a trace).
        diagnostics: family-specific checks of the run (pathwise invariants, ...), by name.
        per_job: for a replayed trace, each job's id, arrival, need (multi-resource: ``demand_NAME`` per resource),
            duration, completion, response and waiting time, bounded slowdown, start and requested time
            (:mod:`msjgym.core.schedule` names the columns).
        notes: lines for the report below the table.
        checks: the run-time invariants' verdicts (:mod:`msjgym.evaluate.checks`); empty for an unstable run.
        check_notes: notes on the run's trustworthiness (a service law of infinite variance, ...).
        verdict_scale, verdict_level: the factor on the 95 % half-widths and the level of the intervals the
            references' verdicts use (Bonferroni over the scorecard's interval verdicts,
            :data:`msjgym.core.references.FALSE_ALARM`).
    """

    scenario: str
    family: str
    policy: str
    params: dict[str, Any]
    stable: bool
    metrics: dict[str, Estimate]
    reps: int
    jobs: int
    warmup: int
    seed: int
    events: int
    wall_seconds: float
    compile_seconds: float = 0.0
    unit: str = "job"
    mode: str = "open"
    batches: int = 0
    replications: list[dict[str, float]] = field(default_factory=list)
    unstable_replications: list[int] = field(default_factory=list)
    growth_rates: list[float] = field(default_factory=list)
    growth_rate: Estimate | None = None
    references: list[Reference] = field(default_factory=list)
    diagnostics: dict[str, float] = field(default_factory=dict)
    per_job: dict[str, np.ndarray] | None = None
    per_job_header: dict[str, Any] = field(default_factory=dict)
    """What a schedule file's header says of the run (``servers``, ``policy``, ``scenario``; msjgym/core/schedule.py)."""
    notes: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    check_notes: list[str] = field(default_factory=list)
    verdict_scale: float = 1.0
    verdict_level: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``msjgym evaluate --json`` (keys :data:`JSON_KEYS`; strict JSON: no NaN)."""
        out = {
            "scenario": self.scenario,
            "family": self.family,
            "policy": self.policy,
            "params": _jsonable(self.params),
            "stable": self.stable,
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "references": [r.to_dict() for r in self.references],
            "checks": {"invariants": [c.to_dict() for c in self.checks], "notes": list(self.check_notes)},
            "reps": self.reps,
            "jobs": self.jobs,
            "warmup": self.warmup,
            "seed": self.seed,
            "events": self.events,
            "wall_seconds": round(self.wall_seconds, 3),
            "compile_seconds": round(self.compile_seconds, 3),
            "mode": self.mode,
            "growth_rate": None if self.growth_rate is None else self.growth_rate.to_dict(),
            "unstable_replications": self.unstable_replications,
            "diagnostics": _jsonable(self.diagnostics),
        }
        assert tuple(out) == JSON_KEYS
        return out


def strict_json(value: Any) -> str:
    """``value`` as indented JSON that strict parsers accept: numpy scalars as numbers, NaN and ±inf as null
    (what every ``--json`` of the command line prints)."""
    return json.dumps(_jsonable(value), indent=2, allow_nan=False)


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and non-finite floats as None (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return json_float(float(value))
    if isinstance(value, str) or value is None:
        return value
    return str(value)
