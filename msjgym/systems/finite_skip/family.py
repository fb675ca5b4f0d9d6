"""The finite-skip family: heterogeneous M/G/k, limited processor sharing and threshold parallelism as rate models.

Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (Figs. 2–4). Capacity is
normalised to 1 and ``load`` is ρ = λE[S]. Each replication discards the first ``warmup`` arrivals (default jobs/5),
measures the next ``jobs`` and runs until they have completed. The paper's multiserver-job setting (Figs. 6–7) runs
on the multiserver-job engine: its scenarios belong to the ``msj`` family. A policy of the user's chooses the rates
in Python (``act(observation) -> rates``, see :mod:`msjgym.policies.finite_skip.finite_skip_agents`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core.references import Reference
from msjgym.errors import MsjgymError
from msjgym.policies.finite_skip import FINITE_SKIP_POLICIES, FiniteSkipPolicy
from msjgym.systems.finite_skip import scenarios as F
from msjgym.systems.finite_skip import simulate as fs
from msjgym.systems.finite_skip.agent import simulate_agent

DEFAULT_REPS = 10
DEFAULT_JOBS = 100_000


class FiniteSkipRuns(api.Simulation):
    """Replications of a finite-skip model under a built-in policy (compiled) or a policy of the user's (Python),
    each run to its end in one call."""

    unit = "job"

    def __init__(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> None:
        self.model: fs.FiniteSkipModel = scenario.model
        self.reps, self.jobs, self.warmup = _run_length(run)
        self.per_rep = self.warmup + self.jobs
        self.seeds = np.random.SeedSequence(seed).spawn(self.reps)
        self.results: list[fs.Replication | None] = [None] * self.reps
        if api.is_user_policy(policy):
            self.name, self.agent = policy, load_agent(policy, self.model)
        else:
            self.name, self.agent = policy, None
            self.policy = builtin_policy(scenario, policy)

    def compile_note(self) -> str | None:
        """A line to print before :meth:`prepare` compiles something (None: cached, or a policy of the user's)."""
        if self.agent is not None:
            return None
        from msjgym.core.compiling import note
        return note(fs.units(self.policy))

    def prepare(self) -> None:
        """Compile (or load from the cache) the event loop and the built-in policy's kernel (a policy of the user's
        runs in Python: nothing to compile)."""
        if self.agent is None:
            fs.prepare(self.policy)

    def advance(self, rep: int, max_events: int) -> int:
        if self.agent is None:
            (r,) = fs.simulate(self.model, self.policy, jobs=self.jobs, warmup=self.warmup, seeds=[self.seeds[rep]])
        else:
            (r,) = simulate_agent(self.model, self.agent, jobs=self.jobs, warmup=self.warmup, seeds=[self.seeds[rep]],
                                  first_replication=rep)
        self.results[rep] = r
        return self.status(rep)

    def status(self, rep: int) -> int:
        r = self.results[rep]
        return api.RUNNING if r is None else api.DONE if r.stable else api.UNSTABLE

    def progress(self, rep: int) -> int:
        return self.per_rep if self.results[rep] is not None else 0

    def events(self, rep: int) -> int:
        return int(self.results[rep].acc[fs.A_EVENTS])

    def growth_rate(self, rep: int) -> float:
        return F.growth_rate(self.results[rep])

    def metrics(self, rep: int) -> dict[str, float]:
        r = self.results[rep]
        if not r.stable:
            return {}
        out = F.replication_metrics(self.model, r)
        if not all(F.through_front(x) for x in self.results if x is not None and x.stable):
            for key in F.FRONT_METRICS:  # not in every replication: in none (F.replications_metrics)
                out.pop(key, None)
        return out

    def diagnostics(self) -> dict[str, float]:
        return F.pathwise_invariants(self.results)

    def summary_params(self) -> dict:
        return {"load": self.model.load}

    def invariants(self) -> list[api.Invariant]:
        return invariants(self.model)

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        r = self.results[rep]
        if batch is not None or r is None or not r.stable:
            return {}
        return {"sampled_load": self.model.arrival_rate * float(np.mean(r.rec[:, fs.R_SIZE]))}

    def service_laws(self) -> list[tuple[str, Any]]:
        return [(f"classes[{i}] size", law) for i, law in enumerate(self.model.laws)]


WINDOW_ALLOWANCE = 0.01
"""Relative slack of the checks that compare time averages with per-job means over a finite window (the jobs in
system at the window's two edges)."""


def _max_rates(model: fs.FiniteSkipModel) -> list[float]:
    """The largest capacity fraction a job of each class can be served at: the fastest server (heterogeneous
    M/G/k), P/k (threshold parallelism: at most P servers of speed 1/k), v/k (a multiserver job holds v servers),
    1 (limited processor sharing: a job alone may get the whole capacity)."""
    k = model.servers
    if model.system == fs.HET:
        return [max(model.speeds)] * len(model.laws)
    if model.system in (fs.THRESHOLD, fs.MSJ):
        return [p / k for p in model.params]
    return [1.0] * len(model.laws)


def invariants(model: fs.FiniteSkipModel) -> list[api.Invariant]:
    """The run-time checks of a finite-skip run (:mod:`msjgym.evaluate.checks`): the load of the sampled sizes and
    the busy capacity against the declared ρ = λE[S], the mean response time against the shortest mean service a
    job can get, and Little's law with the declared λ."""
    rho, lam = model.load, model.arrival_rate
    floor = sum(p * s * law.mean / rate for p, s, law, rate in
                zip(model.probs, model.size_scales, model.laws, _max_rates(model)))
    return [
        api.Invariant("work_arrived", f"load the sampled sizes carry, λ·mean(S) over the measured jobs, = the "
                      f"declared ρ = λE[S] = {rho:.4g}", "sampled_load", rho),
        api.Invariant("utilization", f"busy capacity = the declared load ρ = {rho:.4g} (in a stable run the work "
                      "served is the work that arrived)", "utilization", rho, allowance=WINDOW_ALLOWANCE),
        api.Invariant("response>=service", f"mean response time >= Σ p_i E[S_i]/(largest rate of class i) = "
                      f"{floor:.4g}", "response_time", floor, ">="),
        api.Invariant("little", f"Little's law: time-average number in system = λ × mean response time (λ = "
                      f"{lam:.4g})", "number_in_system", lambda u: lam * u["response_time"],
                      allowance=WINDOW_ALLOWANCE),
    ]


def _run_length(run: api.RunSettings) -> tuple[int, int, int]:
    jobs = DEFAULT_JOBS if run.jobs is None else run.jobs
    return DEFAULT_REPS if run.reps is None else run.reps, jobs, jobs // 5 if run.warmup is None else run.warmup


def builtin_policy(scenario: api.Scenario, name: str) -> FiniteSkipPolicy:
    """The built-in policy ``name``, checked against the scenario's system."""
    if name not in FINITE_SKIP_POLICIES:
        raise MsjgymError(f"--policy {name!r}: unknown; valid for {scenario.name}: "
                          f"{', '.join(F.FIGURES[scenario.name].policies)}, or FILE.py:NAME")
    policy = FINITE_SKIP_POLICIES[name]
    fs.check_policy(scenario.model, policy)
    return policy


def load_agent(text: str, model: fs.FiniteSkipModel) -> Any:
    """``FILE.py:NAME``: a class (constructed with the :class:`~msjgym.systems.finite_skip.agent.FiniteSkipSpec` if it
    takes an argument), an object or a function, loaded as every family's policies are
    (:func:`msjgym.core.user_policy.load_user_policy`)."""
    from msjgym.core.user_policy import load_user_policy
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec

    return load_user_policy(text, FiniteSkipSpec(model))[1]


class FiniteSkipFamily:
    """The finite-skip family (see the module docstring)."""

    name = "finite-skip"
    title = "finite-skip rate models: heterogeneous M/G/k, limited processor sharing, threshold parallelism"
    order = 30
    env_ids: tuple[str, ...] = ()

    def scenarios(self) -> list[tuple[str, str]]:
        return [(name, F.FIGURES[name].description) for name in F.RATE_MODEL_FIGURES]

    def owns(self, name: str) -> bool:
        return name in F.RATE_MODEL_FIGURES

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        model = F.load_finite_skip(name, overrides)
        fig = F.FIGURES[name]
        params = {"load": model.load} | {k: v for k, v in fig.params} | {
            k: v for k, v in overrides.items() if k != "load"}
        if "threshold" in params and params["threshold"] is None:  # default: the elastic jobs' P = k
            params["threshold"] = max(model.params)
        return api.Scenario(name=name, family=self.name, description=fig.description, params=params, model=model)

    def policies(self) -> Mapping[str, FiniteSkipPolicy]:
        return FINITE_SKIP_POLICIES

    def default_policy(self, scenario: api.Scenario) -> str:
        return F.FIGURES[scenario.name].policies[0]

    def validate(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> None:
        for key in run.options:
            raise MsjgymError(f"--{key.replace('_', '-')}: not for finite-skip scenarios")
        if not api.is_user_policy(policy):
            builtin_policy(scenario, policy)

    def run_length(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> tuple[int, int, int]:
        return _run_length(run)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        self.validate(scenario, policy, run)
        return FiniteSkipRuns(scenario, policy, run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        self.validate(scenario, policy, run)
        if api.is_user_policy(policy):
            own = FiniteSkipPolicy(name=policy, system=scenario.model.system, preemptive=True, wcfs=False,
                                   summary="user policy", source="user file")
            return F.references(scenario.model, own)
        return F.references(scenario.model, builtin_policy(scenario, policy))

    def judge(self, scenario: api.Scenario, references: list[Reference], result: Any) -> list[Reference]:
        return F.judge(references, result)

    def options(self) -> tuple[api.Option, ...]:
        """No switches of its own: ``msjgym evaluate``'s run-length options are all a finite-skip run takes."""
        return ()

    def command_aliases(self) -> tuple[str, ...]:
        """``msjgym finite-skip SCENARIO ...`` runs ``msjgym evaluate SCENARIO ...``: these models once had a command
        of their own, and scripts (and the golden outputs) still call it."""
        return ("finite-skip",)


FAMILY = FiniteSkipFamily()
