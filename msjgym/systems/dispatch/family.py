"""The large-scale dispatch family: N unit-rate FIFO servers behind one dispatcher (push, pull, water filling,
resource pooling, JSQ(d), JIQ, ...).

Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case of
Non-Exponential Job Sizes". The paper's protocol is the default: 20 replications of N·10⁴ arrivals from empty, the
first 10 % warm-up (``jobs`` counts arrivals per replication, warm-up included; ``warmup`` overrides the 10 %: that
many of the ``jobs`` arrivals are not measured). A built-in's parameters come from the scenario (``--param d=3``) or
are bound to its declaration (``policy_spec("dispatch", "jsq-d").bind(d=3)``: the same run). A dispatcher of the user's decides
through ``msjgym/Dispatch-v0``'s observation (``observation``, ``levels``) and defaults to 10 replications of 1,000
arrivals per server, since it decides in Python.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core.estimates import Estimate
from msjgym.core.limits import MAX_WINDOW
from msjgym.core.references import Reference
from msjgym.errors import MsjgymError
from msjgym.core.policy_registry import registered
from msjgym.systems.dispatch import scorecard
from msjgym.systems.dispatch.compiled import UserDispatcher, resolve as resolve_compiled
from msjgym.systems.dispatch.scenarios import (POLICY_KEYS, DispatchSetting, is_lb_scenario, list_lb_scenarios,
                                              load_lb_scenario)
from msjgym.systems.dispatch.simulation import METRICS, DispatchReplications, Replication

DEFAULT_REPS = 20
WARMUP_FRACTION = 0.1
AGENT_REPS = 10
AGENT_ARRIVALS_PER_SERVER = 1_000
AGENT_CHUNK = 4096
LEVEL_FLOOR = 1e-6
"""Queue-length levels are reported up to the last one whose mean fraction of servers is at least this."""
def _builtins() -> dict[str, Any]:
    """The built-in dispatchers, by name (from the registry: the system imports no policy)."""
    return registered("dispatch")


def resolve(scenario: api.Scenario, policy: Any) -> tuple[api.Scenario, Any]:
    """(the scenario, the policy) to run: a built-in's declaration with bound parameter values (``policy.bind(d=3)``)
    becomes its name on the scenario with those values (as ``--param d=3`` gives them); a compiled dispatcher of the
    user's (``FILE.py:NAME`` declared with ``msjgym.systems.dispatch.compiled.dispatcher``) its declaration;
    anything else is returned as given."""
    compiled = resolve_compiled(policy)
    if compiled is not None:
        return scenario, compiled
    if not isinstance(policy, api.PolicySpec):
        return scenario, policy
    if _builtins().get(policy.name) is None or policy.family != "dispatch":
        raise MsjgymError(f"--policy {policy.name!r}: not a dispatch policy; valid: {', '.join(_builtins())}")
    values = dict(getattr(policy, "values", ()))
    if not values:
        return scenario, policy.name
    setting = scenario.model.bound(values)
    return replace(scenario, model=setting, params=setting.params()), policy.name


def run_lengths(scenario: api.Scenario, policy: Any, run: api.RunSettings) -> tuple[int, int, int]:
    """(replications, arrivals per replication, arrivals of them not measured) of a run.

    ``run.jobs`` counts *measured* arrivals, the warm-up on top (as ``--jobs`` does in every family). Defaults: the
    paper's protocol for a built-in (20 replications of N·10⁴ arrivals, the first 10 % not measured: 9,000·N
    measured after 1,000·N of warm-up), 10 replications of 900 measured arrivals per server after 100 for a
    dispatcher of the user's; a warm-up not given is one ninth of the measured arrivals (10 % of the replication's
    arrivals, as the protocol discards)."""
    user = api.is_user_policy(policy)
    servers = scenario.model.servers
    reps = (AGENT_REPS if user else DEFAULT_REPS) if run.reps is None else run.reps
    if run.jobs is None:
        total = (AGENT_ARRIVALS_PER_SERVER if user else 10_000) * servers
        measured = total - int(round(WARMUP_FRACTION * total))
    else:
        measured = run.jobs
    if measured < 1:
        raise MsjgymError(f"jobs = {measured}: must be >= 1 (measured arrivals per replication; the warm-up comes on "
                          "top)")
    warmup = int(round(measured * WARMUP_FRACTION / (1 - WARMUP_FRACTION))) if run.warmup is None else run.warmup
    if warmup < 0:
        raise MsjgymError(f"warmup = {warmup}: must be >= 0 (arrivals not measured, before the jobs = {measured:,} "
                          "measured ones)")
    return reps, measured + warmup, warmup


class _DispatchRuns(api.Simulation):
    """What the built-in and agent paths share: one :class:`Replication` per replication, and its metrics."""

    unit = "arrival"

    def _setup(self, setting: DispatchSetting, name: str, lengths: tuple[int, int, int], pooling: bool,
               used: tuple[str, ...] = ()) -> None:
        self.setting, self.name, self.used = setting, name, used
        self.reps, self.per_rep, self.warmup = lengths
        self.resource_pooling = pooling
        self.jobs = self.per_rep - self.warmup
        self.results: list[Replication | None] = [None] * self.reps

    def status(self, rep: int) -> int:
        return api.RUNNING if self.results[rep] is None else api.DONE

    def events(self, rep: int) -> int:
        r = self.results[rep]
        return 0 if r is None else r.events

    def metrics(self, rep: int) -> dict[str, float]:
        """:data:`METRICS` and P(Q=k), k = 0, 1, ... up to the largest queue length of any replication."""
        r = self.results[rep]
        out = {name: float(getattr(r, name)) for name in METRICS}
        top = max(x.queue_length_distribution.size for x in self.results)
        pmf = r.queue_length_distribution
        for k in range(top):
            out[scorecard.level_metric(k)] = float(pmf[k]) if k < pmf.size else 0.0
        return out

    def summary_params(self) -> dict:
        return {"load": self.setting.load}

    def run_params(self) -> dict:
        """The setting's parameters the dispatcher runs with (its bound values; none of another policy's)."""
        return self.setting.params(self.used)

    def invariants(self) -> list[api.Invariant]:
        return invariants(self.setting, self.resource_pooling, self.jobs)

    def service_laws(self) -> list[tuple[str, Any]]:
        return [("dist (job size)", self.setting.dist)]


WINDOW_ALLOWANCE = 0.01
"""Relative slack of the checks that compare time averages with per-job means over a finite window: the jobs in
the servers at the window's two edges, O(E[Q] / measured jobs per server)."""


def invariants(setting: DispatchSetting, pooling: bool, measured: int) -> list[api.Invariant]:
    """The run-time checks of a dispatch run of ``measured`` arrivals after warm-up (:mod:`msjgym.evaluate.checks`):
    the busy fraction against the declared load λ·E[size] (HKV §2, unit-rate servers), the mean response time against
    the mean size, and Little's law (mean queue length / λ = mean response time). Under resource pooling the central
    server takes work from the queues, so only Little's law applies.

    Little's law over a window of length T = measured / (λN) misses the parts of the response times of the jobs in
    system at its two ends: a relative error of about 2·E[R]/T, which the allowance covers (3·E[R]/T, at least 1 %);
    with 40 arrivals per server, as in a short test run, that is several percent."""
    window = measured / (setting.lam * setting.servers)

    def edges(unit: Mapping[str, float]) -> float:
        return max(WINDOW_ALLOWANCE, 3.0 * unit["response_time"] / window)

    little = api.Invariant("little", "Little's law: mean queue length per server / λ = mean response time",
                           "little_response_time", "response_time", allowance=edges)
    if pooling:
        return [little]
    size = setting.dist.mean
    if setting.speeds is not None:  # the busy fraction depends on where the policy sends the jobs
        fastest = max(setting.speeds)
        return [api.Invariant("response>=service", f"mean response time >= E[size] / the fastest speed = "
                              f"{size / fastest:.4g}", "response_time", size / fastest, ">="), little]
    return [api.Invariant("utilization", f"busy fraction = the declared load λ·E[size] = {setting.load:.4g} (work "
                          "conservation, unit-rate servers)", "utilization", setting.load, allowance=WINDOW_ALLOWANCE),
            api.Invariant("response>=service", f"mean response time >= the mean job size E[size] = {size:.4g} "
                          "(unit-rate servers)", "response_time", size, ">="),
            little]


class BuiltinRuns(_DispatchRuns):
    """Replications of a built-in dispatch policy, each run to its end by the compiled loop."""

    def __init__(self, scenario: api.Scenario, policy: Any, run: api.RunSettings, seed: int, label: str) -> None:
        setting: DispatchSetting = scenario.model
        compiled = policy if isinstance(policy, UserDispatcher) else None
        model = setting.model("random" if compiled else policy)  # a compiled one: the setting alone (its own params)
        lengths = run_lengths(scenario, policy, run)
        self._setup(setting, label, lengths, policy == "resource-pooling", () if compiled else setting.keys_read(policy))
        reps, arrivals, warmup = lengths
        self.runs = DispatchReplications(model, arrivals, warmup, reps, seed, policy=compiled)

    def prepare(self) -> None:
        self.runs.prepare()

    def compile_note(self) -> str | None:
        return self.runs.compile_note()

    def advance(self, rep: int, max_events: int) -> int:
        self.results[rep] = self.runs.run(rep)
        return api.DONE

    def progress(self, rep: int) -> int:
        return self.per_rep if self.results[rep] is not None else 0


class AgentRuns(_DispatchRuns):
    """Replications whose arrivals a dispatcher of the user's places, through ``msjgym/Dispatch-v0``'s observation."""

    chunk = AGENT_CHUNK

    def __init__(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> None:
        from msjgym.systems.dispatch.agent import DispatchAgentReplications

        setting: DispatchSetting = scenario.model
        lengths = run_lengths(scenario, policy, run)
        reps, arrivals, warmup = lengths
        spec = replace(agent_spec(setting, run, arrivals), warmup=warmup)
        self.runner = DispatchAgentReplications(spec, policy, reps, seed)
        self._setup(setting, self.runner.name, lengths, False, tuple(_agent_info(setting, run)))

    def advance(self, rep: int, max_events: int) -> int:
        if self.runner.advance(rep, max_events):
            self.results[rep] = self.runner.batch.replication(rep, 0.0)
            return api.DONE
        return api.RUNNING

    def progress(self, rep: int) -> int:
        return self.runner.progress(rep)


def agent_spec(setting: DispatchSetting, run: api.RunSettings, arrivals: int | None = None) -> Any:
    """The ``msjgym/Dispatch-v0`` configuration a dispatcher of the user's decides through: what it sees in
    ``observation`` mode (``levels`` = the histogram length L): "sampled" (the queue lengths of ``d`` sampled servers,
    the scenario's ``d``, default 2), "histogram" (exact queue lengths) or "estimates" (push's estimates with the
    scenario's δ; pull's on ``lb-pull-table3``)."""
    from msjgym.systems.dispatch.agent import DispatchSpec

    observation = run.options.get("observation") or "histogram"
    levels = run.options.get("levels") or 8
    information = "pull" if setting.table == 3 and observation == "estimates" else "push"
    info: dict[str, Any] = dict(_agent_info(setting, run))
    if observation == "estimates":
        info["information"] = information
    arrivals = AGENT_ARRIVALS_PER_SERVER * setting.servers if arrivals is None else arrivals
    if setting.speeds is not None:
        info |= {"fast_fraction": setting.fast_fraction, "speed_ratio": setting.speed_ratio}
    return DispatchSpec.make(setting.servers, setting.lam, setting.dist, observation, levels=levels,
                             arrivals=arrivals, warmup_fraction=WARMUP_FRACTION, **info)


def _agent_info(setting: DispatchSetting, run: api.RunSettings) -> dict[str, Any]:
    """The policies' parameters of the setting that a dispatcher of the user's sees through its ``observation``
    mode (:func:`agent_spec`): ``d`` ("sampled"), ``delta`` (and pull's ``delta1``: "estimates"), none else."""
    observation = run.options.get("observation") or "histogram"
    if observation == "sampled":
        return {"d": setting.d}
    if observation == "estimates":
        return {"delta": setting.delta} | ({"delta1": setting.delta1} if setting.table == 3 else {})
    return {}


class DispatchFamily:
    """The large-scale dispatch family (see the module docstring)."""

    name = "dispatch"
    title = "large-scale load balancing: N FIFO servers behind one dispatcher (push, pull, water filling, JSQ(d), ...)"
    order = 20
    env_ids = ("msjgym/Dispatch-v0",)
    smoke = api.Smoke("lb-dispatch", "jsq-d", overrides={"servers": 20},  # the shared tests' tiny run
                      user_options={"observation": "sampled"})

    def scenarios(self) -> list[tuple[str, str]]:
        return list_lb_scenarios()

    def owns(self, name: str) -> bool:
        return is_lb_scenario(name)

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return load_lb_scenario(name, overrides)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`~msjgym.systems.dispatch.scenarios.DispatchSetting` (any job-size law, e.g.
        ``Erlang(k=3, rate=3.0)``) as a scenario named "model"."""
        if not isinstance(model, DispatchSetting):
            return None
        return api.Scenario("model", self.name, "a dispatch setting given as a model", model.params(), model)

    def policies(self) -> Mapping[str, Any]:
        return _builtins()

    def compiled_policy(self, policy: Any) -> UserDispatcher | None:
        """The declaration of a compiled dispatcher of the user's (``FILE.py:NAME``), whose ``--param`` keys bind its
        own parameters (:mod:`msjgym.systems.dispatch.compiled`); None for anything else."""
        return resolve_compiled(policy)

    def default_policy(self, scenario: api.Scenario) -> str | None:
        return scenario.model.default_policy

    def keys_not_read(self, scenario: api.Scenario, policy: Any) -> frozenset[str]:
        """The scenario's policy parameters (``d``, ``delta``, ``C``, ...) that built-in ``policy`` does not read on
        ``scenario``: its runs are the same whatever their values (:func:`msjgym.api.keys_not_read`); none for a
        dispatcher of the user's, which may read any."""
        scenario, policy = resolve(scenario, policy)
        if not isinstance(policy, str) or policy not in _builtins():
            return frozenset()
        read = set(scenario.model.keys_read(policy))
        if "batch_size" in read:
            read.add("C")  # C sets the batch size M = C·log10 N
        return frozenset(POLICY_KEYS) - read

    def validate(self, scenario: api.Scenario, policy: Any, run: api.RunSettings) -> None:
        scenario, policy = resolve(scenario, policy)
        user = api.is_user_policy(policy)
        api.check_options(self, run.options, user=user)
        if user or isinstance(policy, UserDispatcher):
            return
        if policy not in _builtins():
            raise MsjgymError(f"--policy {policy!r}: not a dispatch policy; valid on {scenario.name}: "
                              f"{', '.join(_builtins())}, or a dispatcher of your own (FILE.py:NAME, sb3:MODEL.zip, "
                              "rllib:CHECKPOINT_DIR)")
        scenario.model.model(policy)  # the policy's parameters

    def run_length(self, scenario: api.Scenario, policy: Any, run: api.RunSettings) -> tuple[int, int, int]:
        scenario, policy = resolve(scenario, policy)
        reps, arrivals, warmup = run_lengths(scenario, policy, run)
        return reps, arrivals - warmup, warmup

    def simulation(self, scenario: api.Scenario, policy: Any, run: api.RunSettings, seed: int) -> api.Simulation:
        label = getattr(policy, "label", None)  # a bound declaration is named with its values: jsq-d(d=3)
        scenario, policy = resolve(scenario, policy)
        if api.is_user_policy(policy):
            return AgentRuns(scenario, policy, run, seed)
        if isinstance(policy, UserDispatcher):
            return BuiltinRuns(scenario, policy, run, seed, policy.label)
        return BuiltinRuns(scenario, policy, run, seed, label or policy)

    def references(self, scenario: api.Scenario, policy: Any, run: api.RunSettings) -> list[Reference]:
        scenario, policy = resolve(scenario, policy)
        setting: DispatchSetting = scenario.model
        if isinstance(policy, UserDispatcher):  # no reference: the paper's tables are the built-ins'
            return []
        if api.is_user_policy(policy):  # what holds for any dispatcher: stability, busy fraction, message rate
            return scorecard.information_references(setting, agent_spec(setting, run).model)
        return scorecard.references(setting, policy)

    def judge(self, scenario: api.Scenario, references: list[Reference], result: Any) -> list[Reference]:
        setting: DispatchSetting = scenario.model
        levels = [k for k in range(scorecard.MAX_LEVELS_SHOWN + 1000)
                  if scorecard.level_metric(k) in result.metrics]
        pmf = np.array([result.metrics[scorecard.level_metric(k)].mean for k in levels])
        _show_levels(result, pmf, sum(r.quantity.startswith("P(Q=") for r in references))
        user = api.is_user_policy(result.policy) or result.policy not in _builtins()
        row = None if user else setting.paper_row(result.policy)
        return scorecard.judge(references, result, row, pmf)

    def options(self) -> tuple[api.Option, ...]:
        """The switches of ``msjgym evaluate``/``sweep`` for dispatch scenarios: what a dispatcher of your own sees
        (checked by :func:`msjgym.api.check_options`)."""
        return (
            api.Option("observation", "a dispatcher of your own: what it sees, as in msjgym/Dispatch-v0 (default "
                       "histogram)", str, choices=("sampled", "histogram", "estimates"), policies="user"),
            api.Option("levels", "a dispatcher of your own: histogram length L, in queue-length levels (default 8)",
                       int, low=1, high=MAX_WINDOW, metavar="L", policies="user"),
        )


def _show_levels(result: Any, pmf: np.ndarray, at_least: int) -> None:
    """Keep P(Q=k) for k = 0, 1, ... up to the last level holding at least :data:`LEVEL_FLOOR` of the servers, or
    ``at_least`` levels, at most :data:`~msjgym.systems.dispatch.scorecard.MAX_LEVELS_SHOWN`."""
    held = np.flatnonzero(pmf >= LEVEL_FLOOR)
    shown = min(max(int(held[-1]) + 1 if held.size else 0, at_least), scorecard.MAX_LEVELS_SHOWN)
    for k in range(max(pmf.size, shown)):
        name = scorecard.level_metric(k)
        if k >= shown:
            result.metrics.pop(name, None)
        elif name not in result.metrics:
            result.metrics[name] = Estimate(0.0, 0.0)


FAMILY = DispatchFamily()
