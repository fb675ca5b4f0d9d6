"""The multiserver-job family: n servers, K job classes, each job holding ``need`` servers at once.

Its scenarios are the built-ins of :mod:`msjgym.systems.msj.scenarios` and every TOML scenario file (``system =
"msj"``, the default); its policies are :mod:`msjgym.policies`'s built-ins; a policy of the user's decides through
``msjgym/MSJ-v0``'s observation (``--mode``, ``--window``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core import rng
from msjgym.core import histogram
from msjgym.core import limits
from msjgym.core.limits import MAX_WINDOW, TIME_RANGE
from msjgym.core.paths import is_regular_file
from msjgym.core.validation import check_state_bytes
from msjgym.core.references import Reference, judge
from msjgym.systems.msj.trace.files import Trace
from msjgym.errors import MsjgymError
from msjgym.core.policy_registry import registered
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj import scorecard
from msjgym.systems.msj.compiled import resolve as resolve_compiled
from msjgym.systems.msj.simulation import DEFAULT_BSLD_THRESHOLD, MSJSimulation, RunConfig
from msjgym.systems.msj.metrics import invariants, open_metrics, sampled_load, saturated_metrics
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.trace.replay import loop_integrals, replay_invariants, replay_metrics, uses_bands
from msjgym.systems.msj.trace.windows import MIN_WINDOW_JOBS, MIN_WINDOWS, trace_parts, trace_run_length
from msjgym.systems.msj.backfilling import CONSERVATIVE_STATE
from msjgym.systems.msj.contract import sizes_of
from msjgym.systems.msj.state import NJF, NJI
from msjgym.systems.msj.scenarios import (
    is_builtin_msj, list_msj_scenarios, load_msj_scenario, replayed_load, scenario_system)

DEFAULT_REPS = 10
DEFAULT_JOBS = 100_000
AGENT_CHUNK = 4096
"""Decisions per call between progress-bar updates when a policy of the user's decides in Python."""


def _run_length(model: Any, run: api.RunSettings) -> tuple[int, int, int]:
    """(reps, jobs, warmup) with this family's defaults: 10 replications of 100,000 jobs after jobs/10 warm-up. A
    replayed trace is deterministic: one replay of its first warmup + jobs jobs (default all of them, no warm-up); or,
    with ``windows``, that many replications, each a window of warmup + ``window_jobs`` consecutive jobs."""
    trace = model.trace
    saturated = bool(run.options.get("saturated"))
    windows, window_jobs = run.options.get("windows"), run.options.get("window_jobs")
    if trace is None:
        if windows is not None or window_jobs is not None:
            raise MsjgymError(f"--{'windows' if windows is not None else 'window-jobs'}: only for scenarios that "
                              "replay a trace (arrivals = {trace = ...})")
        reps = DEFAULT_REPS if run.reps is None else run.reps
        jobs = DEFAULT_JOBS if run.jobs is None else run.jobs
        return reps, jobs, jobs // 10 if run.warmup is None else run.warmup
    return trace_run_length(trace, run, saturated, windows, window_jobs)


def _builtin(policy: str | Policy) -> Policy:
    """A built-in policy by name, or its declaration as given (with any parameters bound by ``Policy.bind``)."""
    return policy if isinstance(policy, Policy) else api.policy_spec(FAMILY, policy)


def check_combinations(scenario: api.Scenario, run: api.RunSettings) -> None:
    """How the options combine (each one's value, and which policies it applies to, are checked from its declaration
    by :func:`msjgym.api.check_options`)."""
    if run.options.get("backlog") is not None and not run.options.get("saturated"):
        raise MsjgymError("--backlog: only with --saturated (the closed system that always has --backlog waiting "
                          "jobs); an open system's queue is set by its arrivals")
    if "per_job" in run.options and scenario.model.trace is None:
        raise MsjgymError("--per-job: only for scenarios that replay a trace (arrivals = {trace = ...})")
    if "per_job_format" in run.options and "per_job" not in run.options:
        raise MsjgymError("--per-job-format: only with --per-job FILE")
    if "per_job" in run.options:
        from msjgym.core.schedule import schedule_format  # the one place that knows the formats
        schedule_format(run.options["per_job"], run.options.get("per_job_format"))


def check_state_size(model: MSJModel, run: api.RunSettings) -> None:
    """The replications' state (allocated side by side: per-server heap and profile, per-batch per-class histograms;
    :func:`msjgym.systems.msj.state.new_state`) within :data:`~msjgym.core.limits.MAX_STATE_BYTES`."""
    reps = _run_length(model, run)[0]
    batches = 1 if model.trace is not None else run.batches  # a replay measures no batches
    per_rep = 5 * model.servers + batches * model.num_classes * (histogram.NBINS + 16)
    inputs = f"reps={reps}, batches={batches}, servers={model.servers}, classes={model.num_classes}"
    backlog = run.options.get("backlog") if run.options.get("saturated") else None
    if backlog:  # the waiting jobs are job slots (NJI + NJF words, a slot index and a policy's own entries each) and
        slots = 2 * (backlog + model.servers)  # a policy's own areas, backfilling's profile room (the largest built-in
        own = CONSERVATIVE_STATE.area(sizes_of(model, slots))  # one, 2 words a breakpoint); slots double: up to 2×
        per_rep += slots * (NJI + NJF + 1 + own.job_ints + own.job_floats) + own.ints + own.floats
        inputs += f", backlog={backlog:,}"
    check_state_bytes(8.0 * reps * per_rep, inputs, fix="use fewer --reps, --batches, servers or a smaller --backlog"
                      if backlog else "use fewer --reps, --batches or servers")


class _MSJRuns(api.Simulation):
    """What the built-in and the agent paths share: the state arrays of an :class:`MSJSimulation` and its metrics.

    A replayed trace runs as one exact replay (``mode = "replay"``: the evaluator reports exact values) or as
    ``--windows`` replications (``mode = "windows"``), each replication a window of the trace with a simulation of
    its own (:meth:`_at` maps a replication to its simulation and the system in it)."""

    unit = "job"

    def _setup(self, scenario: api.Scenario, name: str, config: RunConfig, reps: int) -> None:
        self.scenario, self.model, self.name, self.config, self.reps = scenario, scenario.model, name, config, reps
        self.jobs, self.warmup, self.batches = config.jobs, config.warmup, config.batches
        self.per_rep = config.warmup + config.jobs
        self.mode = "saturated" if config.saturated else "open"
        self.class_names = [c.name for c in self.model.classes]
        self.windows: list[Trace] | None = None
        self.starts: list[int] = []
        self.seed = 0
        if self.model.trace is not None:
            self.exact = reps == 1
            self.mode = "replay" if self.exact else "windows"
        self.draws = False

    def _trace_mode(self, run: api.RunSettings) -> bool:
        """Whether the replications of a trace scenario are traces drawn from its workload model (``--reps`` on a
        synthetic trace) rather than windows of its trace; sets the mode."""
        self.draws = self.reps > 1 and run.options.get("windows") is None
        if self.draws:
            self.mode = "traces"
        return self.draws

    @property
    def _sim(self) -> MSJSimulation:
        raise NotImplementedError

    def _at(self, rep: int) -> tuple[MSJSimulation, int]:
        """The simulation that runs replication ``rep``, and its system index there."""
        return self._sim, rep

    def _trace_of(self, rep: int) -> Trace:
        """The jobs replication ``rep`` replays (a trace scenario only)."""
        if self.windows is not None:
            return self.windows[rep]
        trace = self.model.trace
        return trace if len(trace) == self.per_rep else trace.window(0, min(self.per_rep, len(trace)))

    def status(self, rep: int) -> int:
        sim, b = self._at(rep)
        return sim.status(b)

    def progress(self, rep: int) -> int:
        sim, b = self._at(rep)
        return sim.progress(b)

    def events(self, rep: int) -> int:
        sim, b = self._at(rep)
        return sim.events(b)

    def growth_rate(self, rep: int) -> float:
        sim, b = self._at(rep)
        return sim.growth_rate(b)

    def _unit_metrics(self, bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray) -> dict[str, float]:
        m = self.model
        if self.config.saturated:
            return saturated_metrics(bstat, bsys, m.needs, m.servers, self.class_names)
        return open_metrics(bstat, bsys, hist, m.needs, m.servers, self.class_names)

    def metrics(self, rep: int) -> dict[str, float]:
        if self.model.trace is not None:
            trace = self._trace_of(rep)
            sim, b = self._at(rep)
            return self.replay_metrics(trace, sim.completion_times(b)[:len(trace)], sim.wait_times(b)[:len(trace)])
        st = self._sim.state
        return self._unit_metrics(st.bstat[rep].sum(axis=0), st.bsys[rep].sum(axis=0), st.hist[rep].sum(axis=0))

    def replay_metrics(self, trace: Trace, completion: np.ndarray, wait: np.ndarray) -> dict[str, float]:
        """One replay's exact metrics (:func:`msjgym.systems.msj.trace.replay.replay_metrics`); a derived family
        whose jobs hold more than servers measures its own utilization here."""
        return replay_metrics(trace.arrival, trace.need, trace.duration, completion, self.model.servers, self.warmup,
                              self.config.bsld_threshold, uses_bands(self.model.trace.need),
                              wait=wait)  # the whole trace decides every window's bands

    def batch_metrics(self, rep: int) -> list[dict[str, float]]:
        if self.model.trace is not None:
            return []  # a replay is exact, and windows are replications: no batch means
        st = self._sim.state
        return [self._unit_metrics(st.bstat[rep, i], st.bsys[rep, i], st.hist[rep, i]) for i in range(self.batches)]

    def invariants(self) -> list[api.Invariant]:
        if self.config.saturated:
            return []
        if self.model.trace is not None:
            return replay_invariants() if self.warmup == 0 else []
        return invariants(self.model)

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        if self.config.saturated:
            return {}
        if self.model.trace is not None:
            if self.warmup:
                return {}
            sim, b = self._at(rep)
            return loop_integrals(sim.state, b, sim.model.needs, sim.model.servers)
        st = self._sim.state
        bstat = st.bstat[rep].sum(axis=0) if batch is None else st.bstat[rep, batch]
        return {"sampled_load": sampled_load(bstat, self.model)}

    def service_laws(self) -> list[tuple[str, Any]]:
        if self.model.trace is not None:
            return []
        return [(f"classes[{i}] ({c.name}) service", c.service) for i, c in enumerate(self.model.classes)]

    def per_job(self) -> dict[str, np.ndarray] | None:
        """Each replayed job's row (msjgym/core/schedule.py names the columns); with windows (or drawn traces)
        every replication's jobs, a ``window`` column first."""
        if self.model.trace is None:
            return None
        tau = self.config.bsld_threshold
        tables = []
        for rep in range(len(self.windows) if self.windows is not None else 1):  # the finished windows' rows
            trace = self._trace_of(rep)
            sim, b = self._at(rep)
            completion = sim.completion_times(b)[:len(trace)]
            wait = sim.wait_times(b)[:len(trace)]
            estimate = sim.estimates(b)[:len(trace)]  # what the scheduler planned with, not the file's field 9
            response = wait + trace.duration  # both exact: 0 and the run time for a job that started on arrival
            table = {"job": trace.ident, "arrival_time": trace.arrival} | self.job_demand(trace) | {
                     "duration": trace.duration, "completion_time": completion, "response_time": response, "waiting_time": wait,
                     "bounded_slowdown": np.maximum(1.0, response / np.maximum(trace.duration, tau)),
                     "start_time": trace.arrival + wait, "requested_time": estimate}
            if self.windows is not None:
                table = {"window": np.full(len(trace), rep, dtype=np.int64)} | table
            tables.append(table)
        return {k: np.concatenate([t[k] for t in tables]) for k in tables[0]}

    def job_demand(self, trace: Any) -> dict[str, np.ndarray]:
        """The per-job columns of what each job of ``trace`` holds: its servers (``need``)."""
        return {"need": trace.need}

    def per_job_header(self) -> dict[str, Any]:
        """What a schedule file's header says (msjgym/core/schedule.py): the machine, the policy, the scenario."""
        return {"servers": int(self.model.servers), "policy": self.name, "scenario": self.scenario.name}

    def summary_params(self) -> dict:
        """The load: the model's; for a trace, that of the jobs the run replays (:meth:`_replayed_loads`)."""
        if self.model.trace is None:
            return {"load": self.model.load}
        loads = self._replayed_loads()
        return {"load": float(np.mean(loads))}

    def _replayed_loads(self) -> list[float]:
        """The load of each replication's jobs (:func:`~msjgym.systems.msj.scenarios.replayed_load`): the prefix an
        exact replay runs, each window, each drawn trace; the whole trace's own when a replay runs all of it (the
        value its scenario reports)."""
        trace = self.model.trace
        if self.windows is None and len(self._trace_of(0)) == len(trace):
            return [self.model.load]
        return [replayed_load(self._trace_of(r), self.model.servers)
                for r in range(len(self.windows) if self.windows is not None else 1)]

    def notes(self) -> list[str]:
        trace: Trace | None = self.model.trace
        if trace is None:
            return []
        tau = f"bounded slowdown = mean of max(1, response / max(run time, τ)), τ = {self.config.bsld_threshold:g}"
        if self.windows is None:
            done = int(np.isfinite(self._sim.completion_times(0)).sum())
            part = self._trace_of(0)
            lines = [f"exact replay of {len(part):,} of the trace's {len(trace):,} jobs (ids {part.ident[0]}–"
                     f"{part.ident[-1]}; {done:,} completed); values are the replay's exact per-job averages (no CI: "
                     "one deterministic replay; for CIs use --windows N --window-jobs M); " + tau]
        elif self.draws:
            length = self.warmup + self.jobs
            lines = [f"{self.reps} independent traces of {length:,} jobs drawn from the workload model "
                     f"(trace r from SeedSequence({self.seed}).spawn({self.reps})[r]), each replayed exactly from an "
                     "empty machine; mean ± 95% CI across traces; " + tau]
            if length != len(trace):  # --jobs (and --warmup) take precedence over the scenario's jobs: said, not silent
                lines.append(f"drawn traces: {length:,} jobs each, from --jobs {self.jobs:,}"
                             + (f" + --warmup {self.warmup:,}" if self.warmup else "") + f", not the scenario's jobs = "
                             f"{len(trace):,} (the length of its one exact replay without --reps; "
                             "docs/tutorials/real-trace.md#4-a-synthetic-workload-without-a-file)")
        else:
            length = self.warmup + self.jobs
            lines = [f"{self.reps} windows of {length:,} consecutive jobs" + (f" ({self.warmup:,} warm-up)" if
                     self.warmup else "") + f", each replayed from an empty machine; starts uniform over the trace "
                     f"(seed {self.seed}): {', '.join(f'{s:,}' for s in self.starts[:10])}"
                     + (" ..." if len(self.starts) > 10 else "") + "; mean ± 95% CI across windows; " + tau]
        lines.append(self._load_note())
        if trace.generator is not None:
            lines.append(f"trace: {trace.source}")
        else:
            lines.append(f"trace {trace.source}: {len(trace):,} jobs read; skipped {trace.skipped_unusable:,} jobs "
                         f"that cannot be replayed and {trace.skipped_malformed:,} malformed lines")
        return lines + [f"note: {n}" for n in trace.notes] + self._estimates_notice()

    def _load_note(self) -> str:
        """What the reported load is: of the replayed jobs (the mean over windows or drawn traces, with their range),
        beside the whole trace's when they differ."""
        loads = self._replayed_loads()
        what = ("of the replayed jobs" if len(loads) == 1 else
                f"the mean over the {len(loads)} {'traces' if self.draws else 'windows'} ({min(loads):.3g} to "
                f"{max(loads):.3g})")
        whole = "" if self.draws or loads == [self.model.load] else f"; the whole trace's: {self.model.load:.3g}"
        return (f"load {float(np.mean(loads)):.3g}: {what}, their offered work per unit time over their arrivals' "
                f"span, a fraction of the {self.model.servers:,} servers{whole} (jobs that outlast the span count "
                "whole: above 1 need not mean a queue; docs/modelling-choices.md#trace-load)")

    def _estimates_notice(self) -> list[str]:
        """One line when the policy plans with runtime estimates and the trace has none of its own (every requested
        time unknown, no estimate model): the exact run times stand in for them."""
        policy, law = getattr(self, "policy", None), self.model.estimate
        if policy is None or not policy.uses_estimates() or law.kind != "requested" or self.model.trace.estimated:
            return []
        return [f"note: {EXACT_ESTIMATES_NOTICE}"]


EXACT_ESTIMATES_NOTICE = ("the trace has no requested times: its exact run times stand in for the runtime "
                          "estimates (estimate = \"tsafrir\" draws users' estimates; docs/modelling-choices.md"
                          "#user-estimates)")
"""The one line of a run whose policy plans with estimates on a trace without any (a note below the report)."""


def _config(run: api.RunSettings, jobs: int, warmup: int, trace: bool) -> RunConfig:
    opts = run.options
    tau = opts.get("bsld_threshold")
    return RunConfig(jobs=jobs, warmup=warmup, batches=1 if trace else run.batches,
                     saturated=bool(opts.get("saturated")), backlog=int(opts.get("backlog") or 1),
                     detect_instability=not opts.get("no_instability_check", False), debug=bool(opts.get("debug")),
                     bsld_threshold=DEFAULT_BSLD_THRESHOLD if tau is None else float(tau))


class BuiltinRuns(_MSJRuns):
    """Replications of a built-in policy, advanced by the compiled event loop (a ``simulation_class``: a derived
    family's subclass of :class:`MSJSimulation` runs its own record through the same loop)."""

    simulation_class = MSJSimulation

    def __init__(self, scenario: api.Scenario, policy: Policy, run: api.RunSettings, seed: int) -> None:
        reps, jobs, warmup = _run_length(scenario.model, run)
        trace = scenario.model.trace is not None
        config = _config(run, jobs, warmup, trace)
        self._setup(scenario, policy.label, config, reps)  # the name, with any bound parameters: smash(w=8)
        self.policy = policy
        if not trace:
            streams, _ = rng.spawn_states(seed, reps)
            self.sims = [self.simulation_class(scenario.model, policy, config, streams)]
            return
        parts, self.starts, self.windows, seqs = trace_parts(scenario, reps, jobs, warmup, seed,
                                                              self._trace_mode(run))
        streams = [rng.spawn_states(seed, 1)[0]] if seqs is None else [rng.seed_states([q]) for q in seqs]
        self.seed = seed
        self.sims = [self.simulation_class(p.model, policy, config, s) for p, s in zip(parts, streams)]

    @property
    def sim(self) -> MSJSimulation:
        return self.sims[0]

    @property
    def _sim(self) -> MSJSimulation:
        return self.sims[0]

    def _at(self, rep: int) -> tuple[MSJSimulation, int]:
        return (self.sims[0], rep) if len(self.sims) == 1 else (self.sims[rep], 0)

    def prepare(self) -> None:
        for sim in self.sims:
            sim.prepare()

    def compile_note(self) -> str | None:
        return self.sims[0].compile_note()

    def advance(self, rep: int, max_events: int) -> int:
        sim, b = self._at(rep)
        return sim.advance(b, max_events)


def observation_options(policy: Any, run: api.RunSettings) -> tuple[str, int, bool]:
    """(mode, window, estimates) of the observation a policy of the user's decides on: the command's ``--mode``,
    ``--window`` and ``--estimates``; where one is not given, what ``sb3:MODEL.zip`` was saved with
    (:func:`msjgym.envs.sb3.record_env`), else the environment's default (start, 8, no estimates)."""
    from msjgym.core.user_policy import saved_env_settings

    saved = saved_env_settings(policy)
    if saved.get("id", "msjgym/MSJ-v0") != "msjgym/MSJ-v0":
        saved = {}  # another environment's model: the shape check says so when it loads
    mode = run.options.get("mode") or saved.get("mode") or "start"
    window = run.options.get("window") or saved.get("window") or 8
    return mode, int(window), bool(run.options.get("estimates") or saved.get("estimates", False))


JOB_ENV = "msjgym/JobScheduling-v0"


def job_env_settings(policy: Any, run: api.RunSettings, env_id: str = JOB_ENV) -> dict[str, Any] | None:
    """The ``msjgym/JobScheduling-v0`` arguments a policy of the user's decides with, or None for ``msjgym/MSJ-v0``'s
    observation: what ``sb3:MODEL.zip`` was saved with (:func:`msjgym.envs.sb3.record_env`, ``id`` =
    JobScheduling-v0), or the ``env_settings`` dict of a policy object or class (``FILE.py:NAME``: the file is imported
    to read it), e.g. ``env_settings = {"id": "msjgym/JobScheduling-v0", "window": 128, "backfill": "easy"}``. The
    command's ``--window`` sets K."""
    from msjgym.core.user_policy import load_object, saved_env_settings

    saved = saved_env_settings(policy)
    if not saved and isinstance(policy, str) and policy.rpartition(":")[0].endswith(".py"):
        path, _, name = policy.rpartition(":")
        saved = getattr(load_object(Path(path), name, policy), "env_settings", None)
    elif not saved and not isinstance(policy, str):
        saved = getattr(policy, "env_settings", None)
    if not isinstance(saved, dict) or saved.get("id") != env_id:
        return None
    if run.options.get("mode") or run.options.get("estimates"):
        raise MsjgymError(f"--mode / --estimates: {env_id}'s observation has neither (the policy decides through it)")
    settings = {k: v for k, v in saved.items() if k != "id"}
    if run.options.get("window"):
        settings["window"] = int(run.options["window"])
    return settings


class AgentRuns(_MSJRuns):
    """Replications scheduled by a policy of the user's, deciding through ``msjgym/MSJ-v0``'s observation, or through
    ``msjgym/JobScheduling-v0``'s for a policy made for it (:func:`job_env_settings`)."""

    chunk = AGENT_CHUNK
    job_env = JOB_ENV
    """The job-feature environment a policy may decide through (a derived family's own)."""

    @staticmethod
    def job_replications() -> type:
        """The replications of a policy deciding through :attr:`job_env`."""
        from msjgym.systems.msj.job_agent import JobAgentReplications
        return JobAgentReplications

    def __init__(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> None:
        from msjgym.systems.msj.agent import AgentReplications

        JobAgentReplications = self.job_replications()
        reps, jobs, warmup = _run_length(scenario.model, run)
        settings = job_env_settings(policy, run, self.job_env)
        mode, window, estimates = observation_options(policy, run) if settings is None else ("start", 1, False)
        trace = scenario.model.trace is not None
        parts, seeds = [scenario], [seed]
        if trace:
            if reps > 1 and run.options.get("windows") is None:
                raise MsjgymError("--reps on a synthetic workload: only for built-in policies (each drawn trace has "
                                  "classes of its own, so the observation of a policy of yours would change shape); "
                                  "use --windows N --window-jobs M")
            parts, self_starts, windows, seqs = trace_parts(scenario, reps, jobs, warmup, seed, False)
            if seqs is not None:  # each window's own seed, derived from its seed sequence (never seed + i)
                seeds = [int(q.generate_state(1, np.uint32)[0]) for q in seqs]
        if settings is not None:
            self.runners = [JobAgentReplications(p, policy, settings, reps=1 if trace else reps, jobs=jobs,
                                                 warmup=warmup, batches=1 if trace else run.batches, seed=s)
                            for p, s in zip(parts, seeds)]
        else:
            self.runners = [AgentReplications(p, policy, mode=mode, window=window, reps=1 if trace else reps,
                                              jobs=jobs, warmup=warmup, batches=1 if trace else run.batches, seed=s,
                                              estimates=estimates)
                            for p, s in zip(parts, seeds)]
        self.runner = self.runners[0]
        self._setup(scenario, self.runner.name, replace(self.runner.batch.spec.config,
                                                        bsld_threshold=_config(run, jobs, warmup, trace).bsld_threshold),
                    reps)
        if trace:
            self.starts, self.windows, self.seed = self_starts, windows, seed

    @property
    def _sim(self) -> MSJSimulation:
        return self.runner.batch.sim

    def _at(self, rep: int) -> tuple[MSJSimulation, int]:
        return (self.runners[0].batch.sim, rep) if len(self.runners) == 1 else (self.runners[rep].batch.sim, 0)

    def advance(self, rep: int, max_events: int) -> int:
        if len(self.runners) == 1:
            return self.runner.advance(rep, max_events)
        return self.runners[rep].advance(0, max_events)


class EpisodeRuns(_MSJRuns):
    """One replication already run by an environment (``MSJEnv.episode_result``)."""

    def __init__(self, scenario: api.Scenario, sim: MSJSimulation) -> None:
        self._setup(scenario, sim.policy.name, sim.config, 1)
        self.sim = sim

    @property
    def _sim(self) -> MSJSimulation:
        return self.sim


class MSJFamily:
    """The multiserver-job family (see the module docstring)."""

    name = "msj"
    title = "multiserver jobs: n servers, jobs holding several servers at once (FCFS, ServerFilling, MSF, ...)"
    order = 0
    env_ids = ("msjgym/MSJ-v0", "msjgym/JobScheduling-v0")
    smoke = api.Smoke("one-and-n", "fcfs", user_options={"mode": "start"})  # the shared tests' tiny run
    reads_files = True
    """Scenario TOML files with ``system = "msj"`` (or no ``system`` key) are this family's."""

    def scenarios(self) -> list[tuple[str, str]]:
        return list_msj_scenarios()

    def owns(self, name: str) -> bool:
        if is_builtin_msj(name):
            return True
        path = Path(name).expanduser()
        return is_regular_file(path) and scenario_system(path) in (None, self.name)

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return load_msj_scenario(name, overrides)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`MSJModel` as a scenario named "model" (not a derived family's subclass of it: that
        family's own ``scenario_of_model`` claims it)."""
        return api.Scenario("model", self.name, "", {}, model) if type(model) is MSJModel else None

    def policies(self) -> Mapping[str, Policy]:
        return registered("msj")  # the parent's policies for a derived family too (it reuses them)

    def validate(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> None:
        policy = resolve_compiled(policy) or policy  # a compiled policy of the user's runs as a built-in does
        api.check_options(self, run.options, user=api.is_user_policy(policy))
        check_combinations(scenario, run)
        check_state_size(scenario.model, run)
        if not api.is_user_policy(policy):
            _builtin(policy).validate(scenario.model)

    def run_length(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> tuple[int, int, int]:
        return _run_length(scenario.model, run)

    def keys_not_read(self, scenario: api.Scenario, policy: Any) -> frozenset[str]:
        """``estimate`` (with its keys ``estimate.factor``, ...) for a built-in policy that reads no runtime estimates
        (:meth:`~msjgym.systems.msj.contract.Policy.uses_estimates`: the estimates come from a stream of their own,
        so the jobs are the same whatever the law; :func:`msjgym.api.keys_not_read`); none for a policy of the
        user's."""
        if api.is_user_policy(policy) or resolve_compiled(policy) is not None:
            return frozenset()
        spec = policy if isinstance(policy, Policy) else self.policies().get(policy)
        return frozenset() if spec is None or spec.uses_estimates() else frozenset({"estimate"})

    def replication_scenarios(self, scenario: api.Scenario, run: api.RunSettings, seed: int
                              ) -> tuple[list[tuple[api.Scenario, int]], dict[str, Any]] | None:
        """A replicated trace run split into one exact replay per replication, for sweeps (one task each): the
        scenario of replication r (window r of ``window_starts(..., seed)``, or trace r drawn from the workload
        model) with its replay's seed, and the run options each replay takes (``--windows``/``--window-jobs``
        removed); None when the run is not replications of a trace. Window r is the same whatever the policy and
        however many windows run, so a sweep's rows are paired by window."""
        if scenario.model.trace is None:
            return None
        reps, jobs, warmup = _run_length(scenario.model, run)
        if reps == 1:
            return None
        draws = run.options.get("windows") is None
        parts, _, _, seqs = trace_parts(scenario, reps, jobs, warmup, seed, draws)
        options = {k: v for k, v in run.options.items() if k not in ("windows", "window_jobs")}
        return [(p, int(q.generate_state(1, np.uint32)[0])) for p, q in zip(parts, seqs)], options

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        policy = resolve_compiled(policy) or policy
        if api.is_user_policy(policy):
            return AgentRuns(scenario, policy, run, seed)
        return BuiltinRuns(scenario, _builtin(policy), run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        policy = resolve_compiled(policy) or policy
        if api.is_user_policy(policy):
            from msjgym.systems.msj.agent import AGENT
            pol = AGENT
        else:
            pol = _builtin(policy)
        return scorecard.references(scenario.model, pol, regime=scenario.regime,
                                    saturated=bool(run.options.get("saturated")))

    def default_policy(self, scenario: api.Scenario) -> str:
        return "fcfs"

    def judge(self, scenario: api.Scenario, references: list[Reference], result: Any) -> list[Reference]:
        return judge(references, result)

    def options(self) -> tuple[api.Option, ...]:
        """The switches of ``msjgym evaluate``/``sweep`` for multiserver-job scenarios: each one's values and the
        policies it applies to (checked by :func:`msjgym.api.check_options`; how they combine: :meth:`validate`)."""
        return (
            api.Option("saturated", "built-in policies: measure the closed system that always has --backlog waiting "
                       "jobs (maximum throughput, jobs per unit time)", policies="builtin"),
            api.Option("backlog", "built-in policies with --saturated: waiting jobs kept (default 1)", int, low=1,
                       metavar="JOBS", policies="builtin"),
            api.Option("no_instability_check", "do not stop replications whose number in system keeps growing"),
            api.Option("mode", "a policy of your own: the decisions it takes, as in msjgym/MSJ-v0 (default: an sb3 "
                       "model's saved mode, else start)", str, choices=("start", "preemptive"), policies="user"),
            api.Option("window", "a policy of your own: waiting jobs (start) or jobs (preemptive) it sees (default: an "
                       "sb3 model's saved window, else 8)", int, low=1, high=MAX_WINDOW, metavar="JOBS",
                       policies="user"),
            api.Option("estimates", "a policy of your own: its observation ends with the window's requested run "
                       "times, as msjgym/MSJ-v0(estimates=True) (an sb3:MODEL.zip saved with record_env gets its "
                       "mode, window and estimates from the model)", policies="user"),
            api.Option("per_job", "trace replays: write the schedule, each job's id, arrival, start, need, run "
                       "time, estimate, completion, response and waiting time (scenario time unit) and bounded "
                       "slowdown: FILE.csv, or FILE.swf in the Standard Workload Format (fields 3 and 4 filled); "
                       "with --windows a window column (CSV) or one '; Window: W' comment per window (SWF)", str,
                       metavar="FILE.csv|FILE.swf", writes="per_job"),
            api.Option("per_job_format", "the format of --per-job when its extension does not say it", str,
                       choices=("csv", "swf")),
            api.Option("windows", "trace replays: replicate over N windows of the trace (with --window-jobs), each "
                       "replayed from an empty machine, for CIs across windows (default: one exact replay, no CI)",
                       int, low=MIN_WINDOWS, high=limits.MAX_REPS, metavar="N"),
            api.Option("window_jobs", "trace replays with --windows: measured jobs per window (consecutive jobs)",
                       int, low=MIN_WINDOW_JOBS, high=limits.MAX_JOBS, metavar="M"),
            api.Option("bsld_threshold", "threshold τ of the bounded slowdown max(1, response / max(run time, τ)), "
                       "in the scenario's time unit (default 10, the literature's 10 s)", float, low=0.0,
                       high=TIME_RANGE[1], metavar="TAU"),
            api.Option("skip_bad_lines", "trace replays: skip malformed trace lines (and count them) instead of "
                       "stopping", scenario_key="arrivals.skip_bad_lines"),
            api.Option("debug", "check the state's invariants after every event (slow; for tests)",
                       command_line=False, policies="builtin"),
        )


FAMILY = MSJFamily()
