"""The finite-skip family: heterogeneous M/G/k, limited processor sharing and threshold parallelism as rate models.

Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (Figs. 2–4). Capacity is
normalised to 1 and ``load`` is ρ = λE[S]. Each replication discards the first ``warmup`` arrivals (default jobs/5),
measures the next ``jobs`` and runs until they have completed. The paper's multiserver-job setting (Figs. 6–7) runs
on the multiserver-job engine: its scenarios belong to the ``msj`` family.

A policy of the user's decides in Python (:mod:`msjgym.systems.finite_skip.agent`), in one of two modes (the option
``mode``): ``"rates"`` (the default for ``FILE.py:NAME`` and objects): ``act(observation) -> rates`` for the jobs
present (:mod:`msjgym.systems.finite_skip.contract` documents the observation); ``"choose"`` (the default, and the only
mode, for ``sb3:`` and ``rllib:`` models; implied by ``window``): the decisions of ``msjgym/FiniteSkip-v0``, one job
chosen at a time among the ``window`` oldest (default 8, the environment's), so a policy trained on the environment
evaluates on what it was trained on (:class:`msjgym.systems.finite_skip.env_agent.ChoiceDecider`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core.limits import MAX_WINDOW
from msjgym.core.policy_registry import registered
from msjgym.core.references import Reference
from msjgym.core.user_policy import load_user_policy
from msjgym.errors import MsjgymError
from msjgym.systems.finite_skip import metrics as M
from msjgym.systems.finite_skip import scenarios as F
from msjgym.systems.finite_skip import scorecard
from msjgym.systems.finite_skip import simulation as fs
from msjgym.systems.finite_skip.agent import FiniteSkipSpec, RateDecider, agent_replication
from msjgym.systems.finite_skip.compiled import UserRateRule, resolve as resolve_compiled
from msjgym.systems.finite_skip.contract import FiniteSkipPolicy

DEFAULT_REPS = 10
DEFAULT_JOBS = 100_000
MODES = ("rates", "choose")
"""How a policy of the user's decides (module docstring)."""
DEFAULT_WINDOW = 8
"""The jobs a policy sees and can choose in mode "choose" (``msjgym/FiniteSkip-v0``'s default window)."""


class FiniteSkipRuns(api.Simulation):
    """Replications of a finite-skip model under a built-in policy (compiled) or a policy of the user's (Python),
    each run to its end in one call."""

    unit = "job"

    def __init__(self, scenario: api.Scenario, policy: str | FiniteSkipPolicy | Any, run: api.RunSettings,
                 seed: int) -> None:
        self.model: fs.FiniteSkipModel = scenario.model
        self.reps, self.jobs, self.warmup = _run_length(run)
        self.per_rep = self.warmup + self.jobs
        self.seeds = np.random.SeedSequence(seed).spawn(self.reps)
        self.results: list[fs.Replication | None] = [None] * self.reps
        if _agent(policy):
            self.decider = decider(scenario, policy, run)
            self.name = self.decider.name
        else:
            self.decider = None
            self.policy = builtin_policy(scenario, policy)
            self.name = self.policy.label

    def compile_note(self) -> str | None:
        """A line to print before :meth:`prepare` compiles something (None: cached)."""
        from msjgym.core.compiling import note
        return note(self._units())

    def prepare(self) -> None:
        """Compile (or load from the cache) what the run calls: the event loop and the built-in policy's kernel, or,
        for a policy of the user's (deciding in Python), the loop's stepping entry points it drives."""
        from msjgym.core.compiling import compile_units
        if self.decider is None:
            fs.prepare(self.policy)
        else:
            compile_units(self._units())

    def _units(self) -> list:
        return fs.units(self.policy) if self.decider is None else fs.loop_units()

    def advance(self, rep: int, max_events: int) -> int:
        if self.decider is None:
            r = fs.replication(self.model, self.policy, jobs=self.jobs, warmup=self.warmup, stream=self.seeds[rep])
        else:
            r = agent_replication(self.model, self.decider, jobs=self.jobs, warmup=self.warmup,
                                  stream=self.seeds[rep], rep=rep)
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
        return M.growth_rate(self.results[rep])

    def metrics(self, rep: int) -> dict[str, float]:
        r = self.results[rep]
        if not r.stable:
            return {}
        out = M.replication_metrics(self.model, r)
        if not all(M.through_front(x) for x in self.results if x is not None and x.stable):
            for key in M.FRONT_METRICS:  # not in every replication: in none (selecting replications by their
                out.pop(key, None)  # outcome would bias the estimate)
        return out

    def diagnostics(self) -> dict[str, float]:
        return M.pathwise_invariants(self.results)

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


def builtin_policy(scenario: api.Scenario, policy: str | FiniteSkipPolicy) -> FiniteSkipPolicy:
    """The built-in policy ``policy`` (a name, or a declaration as given: ``policy_spec(...).bind(...)``, or a
    compiled rule of the user's: ``FILE.py:NAME``, :mod:`msjgym.systems.finite_skip.compiled`), checked against the
    scenario's system."""
    if not isinstance(policy, FiniteSkipPolicy):
        policy = resolve_compiled(policy) or api.policy_spec(FAMILY, policy)
    fs.check_policy(scenario.model, policy)
    return policy


def _agent(policy: Any) -> bool:
    """Whether ``policy`` decides in Python (a policy of the user's that is not a compiled rate rule)."""
    return api.is_user_policy(policy) and resolve_compiled(policy) is None


def _mode(policy: Any, run: api.RunSettings) -> tuple[str, int]:
    """How a policy of the user's decides, and the window of mode "choose" (module docstring); a one-line
    ``MsjgymError`` for an option out of its range or that does not fit the policy."""
    mode, window = run.options.get("mode"), run.options.get("window")  # each checked from its declaration
    learned = isinstance(policy, str) and policy.startswith(("sb3:", "rllib:"))
    if mode is None:
        mode = "choose" if learned or window is not None else "rates"
    if mode == "rates" and learned:
        raise MsjgymError(f"mode = 'rates': {policy.split(':')[0]}: models decide msjgym/FiniteSkip-v0's actions "
                          "(mode choose)")
    if mode == "rates" and window is not None:
        raise MsjgymError("window: only with mode choose (a policy of mode rates sees every job present)")
    return mode, DEFAULT_WINDOW if window is None else window


def decider(scenario: api.Scenario, policy: Any, run: api.RunSettings) -> Any:
    """A policy of the user's (``FILE.py:NAME``, ``sb3:MODEL.zip``, ``rllib:DIR`` or an object), loaded as every
    family's policies are (:func:`msjgym.core.user_policy.load_user_policy`) with the spec of its mode, as the decider
    of :func:`msjgym.systems.finite_skip.agent.agent_replication`."""
    from msjgym.systems.finite_skip.env_agent import ChoiceDecider, FiniteSkipEnvSpec

    model = scenario.model
    mode, window = _mode(policy, run)
    if mode == "rates":
        return RateDecider(model, load_user_policy(policy, FiniteSkipSpec(model))[1])
    spec = FiniteSkipEnvSpec(scenario.name, model, window, horizon_jobs=1, capacity=fs.CAPACITY)
    return ChoiceDecider(spec, load_user_policy(policy, spec)[1], fs.CAPACITY)


class FiniteSkipFamily:
    """The finite-skip family (see the module docstring)."""

    name = "finite-skip"
    title = "finite-skip rate models: heterogeneous M/G/k, limited processor sharing, threshold parallelism"
    order = 30
    env_ids = ("msjgym/FiniteSkip-v0",)
    smoke = api.Smoke("finite-skip-fig3", "lps", user_options={})  # the shared tests' tiny run

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

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`~msjgym.systems.finite_skip.model.FiniteSkipModel` as a scenario named "model"."""
        if not isinstance(model, fs.FiniteSkipModel):
            return None
        return api.Scenario("model", self.name, model.name, {"load": model.load}, model)

    def policies(self) -> Mapping[str, FiniteSkipPolicy]:
        return registered("finite-skip")

    def compiled_policy(self, policy: Any) -> UserRateRule | None:
        """The declaration of a compiled rate rule of the user's (``FILE.py:NAME``), whose ``--param`` keys bind its
        own parameters (:mod:`msjgym.systems.finite_skip.compiled`); None for anything else."""
        return resolve_compiled(policy)

    def default_policy(self, scenario: api.Scenario) -> str:
        if scenario.name in F.FIGURES:
            return F.FIGURES[scenario.name].policies[0]
        return next(p.name for p in registered("finite-skip").values() if p.system == scenario.model.system)

    def validate(self, scenario: api.Scenario, policy: str | FiniteSkipPolicy | Any, run: api.RunSettings) -> None:
        api.check_options(self, run.options, user=_agent(policy))  # from the declarations (options())
        if _agent(policy):
            _mode(policy, run)
        else:
            builtin_policy(scenario, policy)

    def run_length(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> tuple[int, int, int]:
        return _run_length(run)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        return FiniteSkipRuns(scenario, policy, run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        if _agent(policy):
            own = FiniteSkipPolicy(name=str(getattr(policy, "name", policy)), system=scenario.model.system,
                                   preemptive=True, wcfs=False, summary="user policy", source="user file")
            return scorecard.references(scenario.model, own)
        return scorecard.references(scenario.model, builtin_policy(scenario, policy))

    def judge(self, scenario: api.Scenario, references: list[Reference], result: Any) -> list[Reference]:
        return scorecard.judge(references, result)

    def options(self) -> tuple[api.Option, ...]:
        """Its switches beyond the run length: how a policy of the user's decides (module docstring)."""
        return (
            api.Option("mode", "a policy of your own: rates (act(observation) -> rates) or choose (the decisions of "
                       "msjgym/FiniteSkip-v0; implied by --window and for sb3:/rllib: models; default rates)", str,
                       choices=MODES, policies="user"),
            api.Option("window", f"a policy of your own, mode choose: the oldest jobs it sees and can choose (default "
                       f"{DEFAULT_WINDOW})", int, low=1, high=MAX_WINDOW, metavar="JOBS", policies="user"),
        )

    def command_aliases(self) -> tuple[str, ...]:
        """``msjgym finite-skip SCENARIO ...`` runs ``msjgym evaluate SCENARIO ...``: these models once had a command
        of their own, and scripts (and the golden outputs) still call it."""
        return ("finite-skip",)


FAMILY = FiniteSkipFamily()
