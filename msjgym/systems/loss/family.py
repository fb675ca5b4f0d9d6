"""The loss family: n servers, no waiting room, jobs that adapt their width (servers) to what their sample finds.

Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, "Large Loss Systems with Adaptive Multiserver Jobs". Run length is
counted in arrivals; the default warm-up is max(jobs/10, 20n) arrivals, i.e. at least about 20 time units (the count
chain relaxes at rate >= 1 per time unit; jobs/10 alone would be a fraction of a time unit at large n). A policy of
the user's decides each arrival's width through ``msjgym/AdaptiveLoss-v0``'s observation.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core import rng
from msjgym.core.policy_registry import registered
from msjgym.core.references import Reference, judge
from msjgym.errors import MsjgymError
from msjgym.systems.loss import scorecard
from msjgym.systems.loss.compiled import UserWidthRule, resolve as resolve_compiled
from msjgym.systems.loss.contract import LossPolicy
from msjgym.systems.loss.metrics import default_warmup, loss_metrics
from msjgym.systems.loss.model import LossModel
from msjgym.systems.loss.scenarios import is_loss_scenario, list_loss_scenarios, load_loss_scenario, resolved_params
from msjgym.systems.loss.simulation import LossSimulation
from msjgym.systems.loss.state import I_ARRIVALS, I_EVENTS, LossState

DEFAULT_REPS = 10
DEFAULT_JOBS = 100_000
AGENT_CHUNK = 4096
"""Decisions per call between progress-bar updates when a policy of the user's decides in Python."""


def _run_length(scenario: api.Scenario, run: api.RunSettings) -> tuple[int, int, int]:
    reps = DEFAULT_REPS if run.reps is None else run.reps
    jobs = DEFAULT_JOBS if run.jobs is None else run.jobs
    if jobs < run.batches:
        raise MsjgymError(f"jobs = {jobs}: at least {run.batches} jobs for the {run.batches} batch means "
                          f"(give more jobs, or set batches <= {jobs})")
    return reps, jobs, default_warmup(scenario.model, jobs) if run.warmup is None else run.warmup


class _LossRuns(api.Simulation):
    """What the built-in and agent paths share: the statistics array of B replications and its metrics."""

    unit = "arrival"
    policy_known = True

    def _setup(self, scenario: api.Scenario, name: str, run: api.RunSettings) -> None:
        self.scenario, self.model, self.name = scenario, scenario.model, name
        self.reps, self.jobs, self.warmup = _run_length(scenario, run)
        self.batches = run.batches
        self.per_rep = self.warmup + self.jobs

    @property
    def _state(self) -> LossState:
        raise NotImplementedError

    def progress(self, rep: int) -> int:
        return int(self._state.ints[rep, I_ARRIVALS])

    def events(self, rep: int) -> int:
        return int(self._state.ints[rep, I_EVENTS])

    def _metrics(self, row: np.ndarray) -> dict[str, float]:
        out = loss_metrics(row, self.model)
        if not self.policy_known:  # the PASTA and Stein residuals need the policy's law P(width | state)
            out.pop("residual_pasta", None)
            out.pop("residual_stein", None)
        return out

    def metrics(self, rep: int) -> dict[str, float]:
        return self._metrics(self._state.stats[rep].sum(axis=0))

    def batch_metrics(self, rep: int) -> list[dict[str, float]]:
        return [self._metrics(self._state.stats[rep, i]) for i in range(self.batches)]

    def summary_params(self) -> dict:
        return {"lam": self.model.lam}

    def invariants(self) -> list[api.Invariant]:
        return invariants(self.model)

    def service_laws(self) -> list[tuple[str, Any]]:
        return [] if self.model.service is None else [("service", self.model.service)]


WINDOW_ALLOWANCE = 0.01
"""Relative slack of the checks that compare time averages with per-job means over a finite window (the jobs in
service at the window's two edges)."""


def invariants(model: Any) -> list[api.Invariant]:
    """The run-time checks of a loss run (:mod:`msjgym.evaluate.checks`): the busy fraction against the carried load
    λ(1 − P_b)·E[S] (GMGM eq. (1): work is conserved, whatever the widths; E[S] = 1), the mean service time against
    its floor E[S]/d (no job gets more than d servers), and Little's law for the jobs in service (no waiting room:
    number in system = accepted jobs per unit time × mean service time)."""
    return [
        api.Invariant("utilization", "busy fraction = the carried load λ(1 − P_b)·E[S] (per server; E[S] = 1)",
                      "utilization", lambda u: u["utilization"] - u["residual_work"], allowance=WINDOW_ALLOWANCE),
        api.Invariant("response>=service", f"mean service time E[D] >= E[S]/d = {1.0 / model.d:.4g} (a job gets "
                      f"at most d = {model.d} servers)", "response_time", 1.0 / model.d, ">="),
        api.Invariant("little", "Little's law: time-average number in system = throughput × mean response time",
                      "number_in_system", lambda u: u["throughput"] * u["response_time"],
                      allowance=WINDOW_ALLOWANCE),
    ]


class BuiltinRuns(_LossRuns):
    """Replications of a built-in policy, advanced by the compiled loop."""

    def __init__(self, scenario: api.Scenario, policy: LossPolicy, run: api.RunSettings, seed: int) -> None:
        self._setup(scenario, policy.label, run)
        self.policy_known = not isinstance(policy, UserWidthRule) or policy.law_known
        streams, _ = rng.spawn_states(seed, self.reps)
        self.sim = LossSimulation(self.model, policy, self.warmup, self.jobs, self.batches, streams)
        self._done = np.zeros(self.reps, np.bool_)

    @property
    def _state(self) -> LossState:
        return self.sim.state

    def prepare(self) -> None:
        self.sim.prepare()

    def compile_note(self) -> str | None:
        from msjgym.core.compiling import note
        return note(self.sim.units())

    def advance(self, rep: int, max_events: int) -> int:
        self._done[rep] = self.sim.advance(rep, max_events)
        return self.status(rep)

    def status(self, rep: int) -> int:
        return api.DONE if self._done[rep] else api.RUNNING


class AgentRuns(_LossRuns):
    """Replications whose widths a policy of the user's decides, through ``msjgym/AdaptiveLoss-v0``'s observation."""

    chunk = AGENT_CHUNK
    policy_known = False

    def __init__(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> None:
        from msjgym.systems.loss.agent import LossAgentReplications

        self._setup(scenario, policy, run)
        self.runner = LossAgentReplications(scenario, policy, reps=self.reps, jobs=self.jobs, warmup=self.warmup,
                                            batches=self.batches, seed=seed)

    @property
    def _state(self) -> LossState:
        return self.runner.batch.state

    def advance(self, rep: int, max_events: int) -> int:
        return api.DONE if self.runner.advance(rep, max_events) else api.RUNNING

    def status(self, rep: int) -> int:
        return api.DONE if self.runner.ended(rep) else api.RUNNING


class LossFamily:
    """The loss family (see the module docstring)."""

    name = "loss"
    title = "loss systems with adaptive multiserver jobs: no waiting room, a job's width adapts to idle servers"
    order = 10
    env_ids = ("msjgym/AdaptiveLoss-v0",)
    smoke = api.Smoke("loss-sampled", "greedy", user_options={})  # the shared tests' tiny run

    def scenarios(self) -> list[tuple[str, str]]:
        return list_loss_scenarios()

    def owns(self, name: str) -> bool:
        return is_loss_scenario(name)

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return load_loss_scenario(name, overrides)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`~msjgym.systems.loss.model.LossModel` as a scenario named "model"."""
        if not isinstance(model, LossModel):
            return None
        return api.Scenario("model", self.name, "", resolved_params(model), model)

    def policies(self) -> Mapping[str, LossPolicy]:
        return registered("loss")

    def builtin(self, policy: str | LossPolicy) -> LossPolicy:
        """A built-in policy by name, or its declaration as given (``policy_spec(...).bind(...)``, or a compiled
        width rule of the user's: ``FILE.py:NAME``, :mod:`msjgym.systems.loss.compiled`)."""
        if isinstance(policy, LossPolicy):
            return policy
        return resolve_compiled(policy) or api.policy_spec(self, policy)

    def compiled_policy(self, policy: Any) -> UserWidthRule | None:
        """The declaration of a compiled width rule of the user's (``FILE.py:NAME``), whose ``--param`` keys bind its
        own parameters (:mod:`msjgym.systems.loss.compiled`); None for anything else."""
        return resolve_compiled(policy)

    def _agent(self, policy: Any) -> bool:
        """Whether ``policy`` decides in Python (a policy of the user's that is not a compiled width rule)."""
        return api.is_user_policy(policy) and resolve_compiled(policy) is None

    def validate(self, scenario: api.Scenario, policy: str | LossPolicy, run: api.RunSettings) -> None:
        api.check_options(self, run.options)  # it declares none: any option is refused, naming who has it
        if not self._agent(policy):
            self.builtin(policy)

    def run_length(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> tuple[int, int, int]:
        return _run_length(scenario, run)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        if self._agent(policy):
            return AgentRuns(scenario, policy, run, seed)
        return BuiltinRuns(scenario, self.builtin(policy), run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        known = None if self._agent(policy) else self.builtin(policy)
        if isinstance(known, UserWidthRule):  # the paper's values are the built-ins': the policy-free references
            return scorecard.references(scenario.model, None, law_known=known.law_known)
        return scorecard.references(scenario.model, known)

    def default_policy(self, scenario: api.Scenario) -> str:
        return "greedy"

    def judge(self, scenario: api.Scenario, references: list[Reference], result: Any) -> list[Reference]:
        return judge(references, result)

    def options(self) -> tuple[api.Option, ...]:
        """No switches of its own: ``msjgym evaluate``'s run-length options are all a loss run takes."""
        return ()


FAMILY = LossFamily()
