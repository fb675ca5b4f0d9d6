"""The agent path of the finite-skip systems: one replication of the compiled event loop of
:mod:`msjgym.systems.finite_skip.loop`, stepped one decision epoch at a time (:func:`agent_replication`), its decisions
taken in Python by a policy of the user's.

It runs the event loop itself (``loop.run`` in modes START and STEP), so a built-in policy's agent form reproduces the
compiled trajectory (``tests/test_finite_skip_agents.py``), and a policy of your own gets the same statistics and
pathwise diagnostics (is it work-conserving finite-skip on this path?). At each decision epoch (after every arrival
and completion) a *decider* gives every job's rate: :class:`RateDecider` asks a rate agent
(``act(observation) -> rates``, the observation of :mod:`msjgym.systems.finite_skip.observation`), and
:class:`msjgym.systems.finite_skip.env_agent.ChoiceDecider` asks a policy of ``msjgym/FiniteSkip-v0`` (``sb3:``
models included) for its choices. :func:`msjgym.evaluate` runs it, one replication at a time, for a policy of the
user's; its speed is the decider's (a Python call per epoch).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import numpy as np

from msjgym.core.fast_call import FastCall
from msjgym.core.user_policy import UserPolicy, checked_rates
from msjgym.systems.finite_skip import simulation as fs
from msjgym.systems.finite_skip.loop import START, STEP, run
from msjgym.systems.finite_skip.model import compiled_params, front_rule
from msjgym.systems.finite_skip.state import A_EVENTS, F_TIME, I_N, rows
from msjgym.systems.finite_skip.observation import FiniteSkipLayout, FiniteSkipView, make_observation


@dataclass(frozen=True)
class FiniteSkipSpec:
    """What a finite-skip rate policy of the user's is constructed with (the spec of every family's policy contract,
    :mod:`msjgym.core.user_policy`): ``model`` (also ``servers`` = k). The observation is a dict of variable size
    (:mod:`msjgym.systems.finite_skip.observation`; ``view(observation)`` names it) and the action N rates, so
    ``observation_size`` and ``action_count`` are None (a learned policy decides through ``msjgym/FiniteSkip-v0``
    instead: :class:`~msjgym.systems.finite_skip.env_agent.FiniteSkipEnvSpec`)."""

    model: fs.FiniteSkipModel
    observation_size: None = None
    action_count: None = None

    @property
    def servers(self) -> int:
        return self.model.servers

    def describe(self) -> str:
        return f"k={self.model.servers}"

    def view(self, observation: dict) -> FiniteSkipView:
        """The named view of an observation (the jobs present, in arrival order)."""
        return self.layout.view(observation)

    @cached_property
    def layout(self) -> FiniteSkipLayout:
        speeds = self.model.speeds or (1.0 / self.model.servers,) * self.model.servers
        return FiniteSkipLayout(self.model.servers, tuple(sorted(speeds, reverse=True)))


def rate_caps(model: fs.FiniteSkipModel) -> Any:
    """``caps(params) -> float64[N]``: the most of the capacity (1) each job present can use, by the system's
    definition (module docstring of :mod:`msjgym.systems.finite_skip.model`): threshold parallelism P/k (P servers
    at 1/k each), MSJ v/k, heterogeneous M/G/k the fastest server's speed (a job runs on one server), LPS 1 (a job
    alone gets the whole capacity)."""
    k = model.servers
    if model.system in (fs.THRESHOLD, fs.MSJ):
        return lambda params: params.astype(np.float64) / k
    top = max(model.speeds) if model.system == fs.HET else 1.0
    return lambda params: np.full(params.size, top)


class Epoch(NamedTuple):
    """What a decider sees at a decision epoch: the N jobs present, in arrival order."""

    time: float
    """The current time (time units)."""
    classes: np.ndarray
    """int64[N]: each job's class."""
    params: np.ndarray
    """int64[N]: each job's threshold P (threshold parallelism) or need v (multiserver jobs), else 1."""
    arrivals: np.ndarray
    """float64[N]: each job's arrival time."""
    servers: np.ndarray
    """int64[N]: heterogeneous servers, the server each job holds (-1: none); else all -1."""


class Decider(Protocol):
    """``decider(epoch, rep, step) -> (rates, servers)``: every job's rate (float64[N], fractions of the capacity)
    and, for heterogeneous servers, the server each now holds (None: unchanged). ``rep`` and ``step`` (the epoch's
    index in the replication) name the decision in a ``PolicyError``."""

    name: str

    def __call__(self, epoch: Epoch, rep: int, step: int) -> tuple[np.ndarray, list[int] | None]: ...


class RateDecider:
    """A rate agent as a decider: ``act(observation) -> rates`` (or ``act(observation, action_mask)``, given None:
    the action is a rate vector, nothing is masked), with the observation of
    :mod:`msjgym.systems.finite_skip.observation`; a heterogeneous-server agent reports the servers it assigned in
    ``last_servers``. A :class:`~msjgym.core.user_policy.UserPolicy` (loaded with a :class:`FiniteSkipSpec`) is
    called the same way.

    Every decision goes through the one wrapper of every family (:func:`msjgym.core.user_policy.checked_rates`): if
    the agent raises, or returns anything but N finite rates >= 0, each at most what its job can use
    (:func:`rate_caps`) and summing to at most 1, the run stops with one ``PolicyError`` naming the agent, the
    replication, the step and the value. Nothing is clipped.
    """

    def __init__(self, model: fs.FiniteSkipModel, agent: Any) -> None:
        if isinstance(agent, UserPolicy):
            name, act, agent = agent.name, (lambda observation, _decide=agent: _decide(observation, None)), agent.policy
        else:
            name = getattr(agent, "name", None)
            if not isinstance(name, str):
                name = getattr(agent, "__name__", None) or type(agent).__name__
            act = agent.act if hasattr(agent, "act") else agent
            if _positional(act) >= 2:  # act(observation, action_mask): nothing is masked (the action is rates)
                two, act = act, lambda observation: two(observation, None)
        self.name, self.agent, self._act, self._caps = name, agent, act, rate_caps(model)

    def __call__(self, epoch: Epoch, rep: int, step: int) -> tuple[np.ndarray, list[int] | None]:
        observation = make_observation(epoch.params, epoch.servers)
        rates = checked_rates(lambda obs, _mask: self._act(obs), observation, self._caps(epoch.params), self.name,
                              rep, step)
        last = getattr(self.agent, "last_servers", None)
        servers = [int(x) for x in last] if last is not None and len(last) == len(epoch.params) else None
        return rates, servers


def agent_replication(model: fs.FiniteSkipModel, decider: Decider, *, jobs: int = 10_000, warmup: int | None = None,
                      stream: np.random.SeedSequence, capacity: int = fs.CAPACITY, rule: int | None = None,
                      rep: int = 0) -> fs.Replication:
    """One replication as :func:`msjgym.systems.finite_skip.simulation.replication` runs it (the same compiled
    transitions), the rates given by ``decider`` at every decision epoch; it draws from ``stream``. ``rule``: the
    front's fullness rule (default: the system's, see ``fs.FULL_*``). ``rep`` names the replication in a
    ``PolicyError``."""
    warmup = jobs // 5 if warmup is None else warmup
    pr = compiled_params(model, rule=front_rule(model) if rule is None else rule, warmup=int(warmup), jobs=int(jobs))
    st = fs.replication_state(model, jobs=jobs, stream=stream, capacity=capacity)
    s = rows(st, 0)
    advance = FastCall(run, (s, pr, 0, STEP))  # the records typed once, not at every epoch
    due = run(s, pr, 0, START)
    while due:
        n = int(st.ints[0, I_N])
        classes = st.cls[0, :n].copy()
        epoch = Epoch(float(st.flts[0, F_TIME]), classes, pr.prm[classes], st.arr[0, :n].copy(),
                      st.srv[0, :n].copy())
        rates, servers = decider(epoch, rep, int(st.acc[0, A_EVENTS]) - 1)
        st.rates[0, :n] = rates
        if servers is not None:
            st.srv[0, :n] = servers
        due = advance()
    return fs.Replication(st.acc[0], st.rec[0])


def _positional(fn: Any) -> int:
    """The number of positional parameters ``fn`` takes (2 or more: it also takes the action mask)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
