"""The multiserver-job family: n servers, K job classes, each job holding ``need`` servers at once.

Its scenarios are the built-ins of :mod:`msjgym.systems.msj.scenarios` and every TOML scenario file (``system =
"msj"``, the default); its policies are :mod:`msjgym.policies`'s built-ins; a policy of the user's decides through
``msjgym/MSJ-v0``'s observation (``--mode``, ``--window``).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core import rng
from msjgym.core import histogram
from msjgym.core.limits import MAX_WINDOW, check_int, check_state_bytes
from msjgym.core.references import Reference, judge
from msjgym.core.traces import Trace
from msjgym.errors import MsjgymError
from msjgym.policies.msj import BUILTIN_POLICIES, Policy, get_policy
from msjgym.systems.msj import scorecard
from msjgym.systems.msj.compiled import resolve as resolve_compiled
from msjgym.systems.msj.engine import MSJSimulation, RunConfig
from msjgym.systems.msj.metrics import invariants, open_metrics, sampled_load, saturated_metrics
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import NJF, NJI
from msjgym.systems.msj.scenarios import is_builtin_msj, list_msj_scenarios, load_msj_scenario, scenario_system

DEFAULT_REPS = 10
DEFAULT_JOBS = 100_000
AGENT_CHUNK = 4096
"""Decisions per call between progress-bar updates when a policy of the user's decides in Python."""


def _run_length(model: Any, run: api.RunSettings) -> tuple[int, int, int]:
    """(reps, jobs, warmup) with this family's defaults: 10 replications of 100,000 jobs after jobs/10 warm-up; a
    replayed trace is deterministic: one replication of all its jobs, no warm-up."""
    trace = model.trace
    saturated = bool(run.options.get("saturated"))
    reps = run.reps if run.reps is not None else (1 if trace is not None else DEFAULT_REPS)
    if trace is not None and (reps != 1 or saturated):
        raise MsjgymError(f"reps = {reps}{', saturated' if saturated else ''}: a trace replay is deterministic and "
                          "open: use one replication (CIs come from batch means)")
    if trace is not None:
        warmup = 0 if run.warmup is None else run.warmup
        if warmup >= len(trace):
            raise MsjgymError(f"--warmup {warmup:,}: the trace has {len(trace):,} jobs; the warm-up must leave at "
                              f"least one to measure (at most --warmup {len(trace) - 1:,})")
        jobs = len(trace) - warmup if run.jobs is None else run.jobs
    else:
        jobs = DEFAULT_JOBS if run.jobs is None else run.jobs
        warmup = jobs // 10 if run.warmup is None else run.warmup
    return reps, jobs, warmup


_OPTIONS = {"saturated": "builtin", "backlog": "builtin", "no_instability_check": "any", "debug": "builtin",
            "mode": "user", "window": "user", "per_job": "any"}
"""The options of ``msjgym evaluate`` this family takes, and for which policies."""


def _builtin(policy: str | Policy) -> Policy:
    """A built-in policy by name, or its declaration as given (with any parameters bound by ``Policy.bind``)."""
    return policy if isinstance(policy, Policy) else get_policy(policy)


def _check_options(scenario: api.Scenario, policy: str, run: api.RunSettings) -> None:
    user = api.is_user_policy(policy)
    for key in run.options:
        flag = f"--{key.replace('_', '-')}"
        if key not in _OPTIONS:
            raise MsjgymError(f"{flag}: not for multiserver-job scenarios")
        if _OPTIONS[key] == "user" and not user:
            raise MsjgymError(f"{flag}: only for a policy of your own (FILE.py:NAME, sb3:MODEL.zip, "
                              "rllib:CHECKPOINT_DIR)")
        if _OPTIONS[key] == "builtin" and user:
            raise MsjgymError(f"{flag}: only for built-in policies")
    if run.options.get("window") is not None:
        check_int("--window", run.options["window"], 1, MAX_WINDOW, MsjgymError,
                  "the observation is rebuilt at every decision, in O(window)")
    if run.options.get("backlog") is not None and not run.options.get("saturated"):
        raise MsjgymError("--backlog: only with --saturated (the closed system that always has --backlog waiting "
                          "jobs); an open system's queue is set by its arrivals")
    if "per_job" in run.options and scenario.model.trace is None:
        raise MsjgymError("--per-job: only for scenarios that replay a trace (arrivals = {trace = ...})")


def _check_state_size(model: MSJModel, run: api.RunSettings) -> None:
    """The replications' state (allocated side by side: per-server heap and profile, per-batch per-class histograms;
    :func:`msjgym.systems.msj.state.new_state`) within :data:`~msjgym.core.limits.MAX_STATE_BYTES`."""
    reps = _run_length(model, run)[0]
    per_rep = 5 * model.servers + run.batches * model.num_classes * (histogram.NBINS + 16)
    inputs = f"reps={reps}, batches={run.batches}, servers={model.servers}, classes={model.num_classes}"
    backlog = run.options.get("backlog") if run.options.get("saturated") else None
    if backlog:  # the waiting jobs are job slots (NJI + NJF words, a slot index, 4 profile breakpoints of 2 words)
        per_rep += 2 * (backlog + model.servers) * (NJI + NJF + 1 + 8)  # slots double as they fill: up to 2×
        inputs += f", backlog={backlog:,}"
    check_state_bytes(8.0 * reps * per_rep, inputs, fix="use fewer --reps, --batches, servers or a smaller --backlog"
                      if backlog else "use fewer --reps, --batches or servers")


class _MSJRuns(api.Simulation):
    """What the built-in and the agent paths share: the state arrays of an :class:`MSJSimulation` and its metrics."""

    unit = "job"

    def _setup(self, scenario: api.Scenario, name: str, config: RunConfig, reps: int) -> None:
        self.scenario, self.model, self.name, self.config, self.reps = scenario, scenario.model, name, config, reps
        self.jobs, self.warmup, self.batches = config.jobs, config.warmup, config.batches
        self.per_rep = config.warmup + config.jobs
        self.mode = "saturated" if config.saturated else "open"
        self.class_names = [c.name for c in self.model.classes]

    @property
    def _sim(self) -> MSJSimulation:
        raise NotImplementedError

    def status(self, rep: int) -> int:
        return self._sim.status(rep)

    def progress(self, rep: int) -> int:
        return self._sim.progress(rep)

    def events(self, rep: int) -> int:
        return self._sim.events(rep)

    def growth_rate(self, rep: int) -> float:
        return self._sim.growth_rate(rep)

    def _unit_metrics(self, bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray) -> dict[str, float]:
        m = self.model
        if self.config.saturated:
            return saturated_metrics(bstat, bsys, m.needs, m.servers, self.class_names)
        return open_metrics(bstat, bsys, hist, m.needs, m.servers, self.class_names)

    def metrics(self, rep: int) -> dict[str, float]:
        st = self._sim.state
        return self._unit_metrics(st.bstat[rep].sum(axis=0), st.bsys[rep].sum(axis=0), st.hist[rep].sum(axis=0))

    def batch_metrics(self, rep: int) -> list[dict[str, float]]:
        st = self._sim.state
        return [self._unit_metrics(st.bstat[rep, i], st.bsys[rep, i], st.hist[rep, i]) for i in range(self.batches)]

    def invariants(self) -> list[api.Invariant]:
        return [] if self.config.saturated else invariants(self.model)

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        if self.config.saturated or self.model.trace is not None:
            return {}
        st = self._sim.state
        bstat = st.bstat[rep].sum(axis=0) if batch is None else st.bstat[rep, batch]
        return {"sampled_load": sampled_load(bstat, self.model)}

    def service_laws(self) -> list[tuple[str, Any]]:
        if self.model.trace is not None:
            return []
        return [(f"classes[{i}] ({c.name}) service", c.service) for i, c in enumerate(self.model.classes)]

    def per_job(self) -> dict[str, np.ndarray] | None:
        trace: Trace | None = self.model.trace
        if trace is None:
            return None
        completion = self._sim.completion_times(0)
        response = completion - trace.arrival
        return {"arrival_time": trace.arrival, "need": trace.need, "duration": trace.duration,
                "completion_time": completion, "response_time": response, "waiting_time": response - trace.duration}

    def summary_params(self) -> dict:
        return {"load": self.model.load}

    def notes(self) -> list[str]:
        trace: Trace | None = self.model.trace
        if trace is None:
            return []
        done = int(np.isfinite(self._sim.completion_times(0)).sum())
        lines = [f"trace {trace.source}: {len(trace):,} jobs replayed ({done:,} completed); skipped "
                 f"{trace.skipped_unusable:,} jobs that never ran or had unknown processors and "
                 f"{trace.skipped_malformed:,} malformed lines"]
        return lines + [f"note: {n}" for n in trace.notes]


class BuiltinRuns(_MSJRuns):
    """Replications of a built-in policy, advanced by the compiled event loop."""

    def __init__(self, scenario: api.Scenario, policy: Policy, run: api.RunSettings, seed: int) -> None:
        reps, jobs, warmup = _run_length(scenario.model, run)
        opts = run.options
        config = RunConfig(jobs=jobs, warmup=warmup, batches=run.batches, saturated=bool(opts.get("saturated")),
                           backlog=int(opts.get("backlog") or 1),
                           detect_instability=not opts.get("no_instability_check", False),
                           debug=bool(opts.get("debug")))
        self._setup(scenario, policy.label, config, reps)  # the name, with any bound parameters: smash(w=8)
        streams, _ = rng.spawn_states(seed, reps)
        self.sim = MSJSimulation(scenario.model, policy, config, streams)

    @property
    def _sim(self) -> MSJSimulation:
        return self.sim

    def prepare(self) -> None:
        self.sim.prepare()

    def compile_note(self) -> str | None:
        return self.sim.compile_note()

    def advance(self, rep: int, max_events: int) -> int:
        return self.sim.advance(rep, max_events)


class AgentRuns(_MSJRuns):
    """Replications scheduled by a policy of the user's, deciding through ``msjgym/MSJ-v0``'s observation."""

    chunk = AGENT_CHUNK

    def __init__(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> None:
        from msjgym.systems.msj.agent import AgentReplications

        reps, jobs, warmup = _run_length(scenario.model, run)
        mode, window = run.options.get("mode") or "start", run.options.get("window") or 8
        self.runner = AgentReplications(scenario, policy, mode=mode, window=window, reps=reps, jobs=jobs,
                                                     warmup=warmup, batches=run.batches, seed=seed)
        self._setup(scenario, self.runner.name, self.runner.batch.spec.config, reps)

    @property
    def _sim(self) -> MSJSimulation:
        return self.runner.batch.sim

    def advance(self, rep: int, max_events: int) -> int:
        return self.runner.advance(rep, max_events)


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
    env_ids = ("msjgym/MSJ-v0",)
    reads_files = True
    """Scenario TOML files with ``system = "msj"`` (or no ``system`` key) are this family's."""

    def scenarios(self) -> list[tuple[str, str]]:
        return list_msj_scenarios()

    def owns(self, name: str) -> bool:
        if is_builtin_msj(name):
            return True
        path = Path(name).expanduser()
        return path.is_file() and scenario_system(path) in (None, self.name)

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return load_msj_scenario(name, overrides)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`MSJModel` as a scenario named "model"."""
        return api.Scenario("model", self.name, "", {}, model) if isinstance(model, MSJModel) else None

    def policies(self) -> Mapping[str, Policy]:
        return BUILTIN_POLICIES

    def validate(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> None:
        policy = resolve_compiled(policy) or policy  # a compiled policy of the user's runs as a built-in does
        _check_options(scenario, policy, run)
        _check_state_size(scenario.model, run)
        if not api.is_user_policy(policy):
            _builtin(policy).validate(scenario.model)

    def run_length(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> tuple[int, int, int]:
        return _run_length(scenario.model, run)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        self.validate(scenario, policy, run)
        policy = resolve_compiled(policy) or policy
        if api.is_user_policy(policy):
            return AgentRuns(scenario, policy, run, seed)
        return BuiltinRuns(scenario, _builtin(policy), run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        policy = resolve_compiled(policy) or policy
        _check_options(scenario, policy, run)  # not the state's size: the theory simulates nothing
        if not api.is_user_policy(policy):
            _builtin(policy).validate(scenario.model)
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


FAMILY = MSJFamily()
