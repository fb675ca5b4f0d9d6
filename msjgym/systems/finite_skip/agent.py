"""The agent path of the finite-skip systems: the event loop of :mod:`msjgym.systems.finite_skip.loop` in Python (one
replication, :func:`agent_replication`), its decisions taken by a policy of the user's.

It draws from the same random streams in the same order as the compiled loop, so a built-in policy's agent form
reproduces the compiled trajectory (``tests/test_finite_skip_agents.py``), and a policy of your own gets the same
statistics and pathwise diagnostics (is it work-conserving finite-skip on this path?). At each decision epoch (after
every arrival and completion) a *decider* gives every job's rate: :class:`RateDecider` asks a rate agent
(``act(observation) -> rates``, the observation of :mod:`msjgym.systems.finite_skip.observation`), and
:class:`msjgym.systems.finite_skip.env_agent.ChoiceDecider` asks a policy of ``msjgym/FiniteSkip-v0`` (``sb3:``
models included) for its choices. About 10⁴ events per second: :func:`msjgym.evaluate` runs it, one replication at a
time, for a policy of the user's.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import numpy as np

from msjgym.core.distributions import encode_all
from msjgym.core.rng import exponential, seed_states, uniform
from msjgym.core.sampling import sample
from msjgym.core.user_policy import UserPolicy, checked_rates
from msjgym.systems.finite_skip import simulate as fs
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
    definition (module docstring of :mod:`msjgym.systems.finite_skip.simulate`): threshold parallelism P/k (P servers
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
    """One replication as :func:`msjgym.systems.finite_skip.simulate.replication` runs it, the rates given by
    ``decider`` at every decision epoch; it draws from ``stream``. ``rule``: the front's fullness rule (default: the
    system's, see ``fs.FULL_*``). ``rep`` names the replication in a ``PolicyError``."""
    warmup = jobs // 5 if warmup is None else warmup
    k, lam = model.servers, model.arrival_rate
    cumprob = np.cumsum(np.asarray(model.probs, dtype=np.float64))
    cumprob[-1] = 1.0
    prm = np.asarray(model.params, dtype=np.int64)
    scale = model.size_scales
    dkind, dstart, ddata = encode_all(model.laws)
    levels = np.array(sorted(set(model.params), reverse=True), dtype=np.int64)
    if rule is None:
        rule = fs.FULL_COUNT if model.system in (fs.HET, fs.LPS) else fs.FULL_SUM
    return _one(lambda epoch, step: decider(epoch, rep, step), k, lam, cumprob, prm, scale, dkind, dstart, ddata,
                levels, warmup, jobs, capacity, rule, seed_states([stream]))


def _positional(fn: Any) -> int:
    """The number of positional parameters ``fn`` takes (2 or more: it also takes the action mask)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _one(decide, k, lam, cumprob, prm, scale, dkind, dstart, ddata, levels, warmup, jobs, capacity, rule, rng):
    acc = np.zeros(fs.NACC)
    rec = np.full((jobs, fs.NREC), np.nan)
    cls: list[int] = []
    rem: list[float] = []
    arr: list[float] = []
    srv: list[int] = []
    wa: list[float] = []
    wff: list[float] = []
    fent: list[float] = []
    seqs: list[int] = []
    sz: list[float] = []
    cnt = np.zeros(max(k, levels.size), np.int64)
    n = nf = seq = done = 0
    t, w, t_start, t_stop = 0.0, 0.0, -1.0, -1.0
    next_arr = exponential(rng, 0) / lam
    nk = cumprob.shape[0]
    while done < jobs:
        acc[fs.A_EVENTS] += 1.0
        while nf < n and not fs._full(rule, nf, np.asarray(cls, np.int64), prm, k, levels, cnt):
            fent[nf] = t
            wsum = 0.0
            for j in range(nf):
                wsum += rem[j]
            wff[nf] = wsum
            nf += 1
        classes = np.asarray(cls, np.int64)
        epoch = Epoch(t, classes, prm[classes] if n else np.zeros(0, np.int64), np.asarray(arr, np.float64),
                      np.asarray(srv, np.int64))
        rates, servers = decide(epoch, int(acc[fs.A_EVENTS]) - 1)
        rates = rates.tolist()
        if servers is not None:
            srv = servers
        b = 0.0
        for j in range(n):
            b += rates[j]
            if j >= nf and rates[j] > 0.0:
                acc[fs.A_OUTSIDE] += 1.0
        acc[fs.A_MAXNF] = max(acc[fs.A_MAXNF], nf)
        if n > nf and 1.0 - b > acc[fs.A_GAP]:
            acc[fs.A_GAP] = 1.0 - b
        dt, who = next_arr - t, -1
        for j in range(n):
            if rates[j] > 0.0:
                d = rem[j] / rates[j]
                if d < dt:
                    dt, who = d, j
        dt = max(dt, 0.0)
        if t_start >= 0.0:
            lo, hi = t, t + dt
            if t_stop >= 0.0 and hi > t_stop:
                hi = t_stop
            if hi > lo:
                u0, h = lo - t, hi - lo
                wint = (w - b * u0) * h - 0.5 * b * h * h
                acc[fs.A_TIME] += h
                acc[fs.A_N] += n * h
                acc[fs.A_NF] += nf * h
                acc[fs.A_W] += wint
                acc[fs.A_W1B] += (1.0 - b) * wint
                acc[fs.A_B] += b * h
        for j in range(n):
            if rates[j] > 0.0:
                rem[j] -= rates[j] * dt
        w -= b * dt
        t += dt
        if who < 0:
            if n == capacity:
                acc[fs.A_UNSTABLE] = 1.0
                break
            u = uniform(rng, 0)
            c = nk - 1
            for i in range(nk - 1):
                if u < cumprob[i]:
                    c = i
                    break
            s = scale[c] * sample(dkind[c], ddata, dstart[c], rng, 0)
            if seq == warmup:
                t_start = t
            if seq == warmup + jobs:
                t_stop = t
            if warmup <= seq < warmup + jobs:
                acc[fs.A_NARR] += 1
                acc[fs.A_SIZE] += s
                acc[fs.A_SIZE2] += s * s
            wsum = 0.0
            for j in range(n):
                wsum += rem[j]
            w = wsum
            cls.append(c), rem.append(s), arr.append(t), srv.append(-1), wa.append(wsum), wff.append(0.0)
            fent.append(-1.0), seqs.append(seq), sz.append(s)
            seq += 1
            n += 1
            w += s
            next_arr = t + exponential(rng, 0) / lam
        else:
            sq = seqs[who]
            if warmup <= sq < warmup + jobs:
                rec[sq - warmup] = (arr[who], fent[who], t, sz[who], wa[who], wff[who])
                done += 1
            w -= rem[who]
            if who < nf:
                nf -= 1
            elif warmup <= sq < warmup + jobs:
                rec[sq - warmup, fs.R_FRONT] = np.nan
            for lst in (cls, rem, arr, srv, wa, wff, fent, seqs, sz):
                del lst[who]
            n -= 1
    acc[fs.A_END] = t
    acc[fs.A_NEND] = n
    return fs.Replication(acc, rec)
