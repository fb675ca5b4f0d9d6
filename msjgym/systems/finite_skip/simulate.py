"""Finite-skip systems as rate models: heterogeneous M/G/k, LPS(k), threshold parallelism, and the MSJ model.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§2, 4–7). Capacity
is normalised to 1: a job's *size* S is in capacity × time units and it completes when it has received S of service; a
job's *rate* is the fraction of capacity it gets (heterogeneous servers: its server's speed; LPS: 1/min(N, k); threshold
parallelism: q/k on q servers; MSJ: v/k while served, so S = vX/k for a duration X).

State: the jobs present, in arrival order, in flat arrays (a completion shifts the younger jobs down; N is small at
the loads studied). After every arrival and completion the policy's kernel (``FiniteSkipPolicy.allocate``, compiled
on its own and called at its address by the event loop, which is compiled once per machine) writes every job's rate; the next event is the earliest of the next arrival and the earliest rem/rate.

Front (Defs. 2.1, 2.2): a prefix of the arrival order that, while not *full* by the system's own definition, requests
the oldest queued job: het M/G/k and LPS: full with k jobs; threshold parallelism and MSJ: full when the thresholds /
needs in it sum to >= k; ServerFilling in the divisible setting: full when some need v has k/v jobs in it. It is
defined without looking at the rates, so "queue non-empty ⇒ total rate 1" (WCFS) and "only front jobs are served"
(finite skip) are real checks of a policy (acc A_GAP, A_OUTSIDE). For every job the kernel records the work in
system at its arrival W^A and the work in the front older than it when it enters the front W_F^F, so the pathwise
identity T_Q = W^A − W_F^F (proof of Thm 3.3) can be checked; and, over the measured window, the integrals of N, N_F, W,
W(1−B) and B for the work identity E[W] = E[W(1−B)]/(1−ρ) + λE[S²]/(2(1−ρ)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from msjgym.core.distributions import Distribution, encode_all
from msjgym.core.rng import seed_states
from msjgym.errors import PolicyError, ScenarioError
from msjgym.core.policy_registry import registered
from msjgym.systems.finite_skip.contract import (ALLOCATE, HET, KERNELS, LPS, MSJ, SF_DIV, SF_EXP,  # noqa: F401
                                                 SYSTEM_KINDS, SYSTEM_NAMES, THRESHOLD, FiniteSkipPolicy)
from msjgym.systems.finite_skip.loop import (  # noqa: F401 (re-exported: the layout of acc and rec)
    A_B, A_END, A_EVENTS, A_GAP, A_MAXNF, A_N, A_NARR, A_NEND, A_NF, A_OUTSIDE, A_SIZE, A_SIZE2,
    A_TIME, A_UNSTABLE, A_W, A_W1B, FULL_CLASS, FULL_COUNT, FULL_SUM, NACC, NREC, RUN, R_ARR, R_DONE, R_FRONT,
    R_SIZE, R_WA, R_WFF, _full, _run)


@dataclass(frozen=True)
class FiniteSkipModel:
    """One finite-skip system with Poisson arrivals.

    Attributes:
        system: HET, LPS, THRESHOLD or MSJ (``policies.finite_skip``).
        servers: k.
        arrival_rate: λ (jobs per time unit).
        probs: class probabilities. laws: per class, the law of the size S (capacity × time) — for MSJ the law of
            the duration X (time units, holding v servers). params: per class, the threshold P (THRESHOLD), the need
            v (MSJ), else 1.
        speeds: HET: the server speeds (fractions of capacity, any order, summing to 1); else k × 1/k.
        name: a label.
    """

    system: int
    servers: int
    arrival_rate: float
    probs: tuple[float, ...]
    laws: tuple[Distribution, ...]
    params: tuple[int, ...]
    speeds: tuple[float, ...] = field(default=())
    name: str = ""

    def __post_init__(self) -> None:
        validate_model(self)

    @property
    def kind(self) -> str:
        """The system's name as :mod:`msjgym.theory.finite_skip` reads it (``heterogeneous``, ``lps``,
        ``threshold``, ``msj``)."""
        return SYSTEM_KINDS[self.system]

    @property
    def size_scales(self) -> np.ndarray:
        """S = scale · (draw of the class law): v/k for MSJ, 1 otherwise."""
        if self.system == MSJ:
            return np.array([v / self.servers for v in self.params], dtype=np.float64)
        return np.ones(len(self.laws))

    @property
    def size_moments(self) -> tuple[float, float]:
        """(E[S], E[S²]) in capacity × time units."""
        sc = self.size_scales
        m1 = sum(p * s * d.mean for p, s, d in zip(self.probs, sc, self.laws))
        m2 = sum(p * s * s * d.second_moment for p, s, d in zip(self.probs, sc, self.laws))
        return float(m1), float(m2)

    @property
    def load(self) -> float:
        """ρ = λE[S]."""
        return self.arrival_rate * self.size_moments[0]


def validate_model(m: FiniteSkipModel) -> None:
    """Raise ``ScenarioError`` naming the parameter and its valid range."""
    if m.system not in SYSTEM_NAMES:
        raise ScenarioError(f"system = {m.system!r}: must be one of {sorted(SYSTEM_NAMES)}")
    if not (isinstance(m.servers, (int, np.integer)) and m.servers >= 1):
        raise ScenarioError(f"servers = {m.servers!r}: must be an integer >= 1")
    k = int(m.servers)
    if not (math.isfinite(m.arrival_rate) and m.arrival_rate > 0):
        raise ScenarioError(f"arrival_rate = {m.arrival_rate!r}: must be a finite number in (0, inf)")
    if not (len(m.probs) == len(m.laws) == len(m.params) >= 1):
        raise ScenarioError("probs, laws and params must have one entry per class (at least one class)")
    if any(not (0 < p <= 1) for p in m.probs) or abs(sum(m.probs) - 1) > 1e-9:
        raise ScenarioError(f"probs = {list(m.probs)}: each must lie in (0, 1] and they must sum to 1")
    if m.system == HET:
        if len(m.speeds) != k:
            raise ScenarioError(f"speeds = {list(m.speeds)}: must list one speed per server (servers={k})")
        for i, v in enumerate(m.speeds):
            if not (math.isfinite(v) and v > 0):
                raise ScenarioError(f"speeds[{i}] = {v!r}: must be a finite number in (0, 1] (speeds sum to 1)")
        if abs(sum(m.speeds) - 1) > 1e-9:
            raise ScenarioError(f"speeds = {list(m.speeds)}: must sum to 1 (capacity is normalised to 1); "
                                f"sum is {sum(m.speeds)!r}")
    name = "threshold" if m.system == THRESHOLD else "need"
    for i, p in enumerate(m.params):
        if not (isinstance(p, (int, np.integer)) and 1 <= p <= k):
            if m.system in (THRESHOLD, MSJ):
                raise ScenarioError(f"classes[{i}].{name} = {p!r}: must be an integer in [1, servers={k}]")
            if p != 1:
                raise ScenarioError(f"classes[{i}].param = {p!r}: must be 1 for {SYSTEM_NAMES[m.system]}")


def check_policy(model: FiniteSkipModel, policy: FiniteSkipPolicy) -> None:
    """Raise ``PolicyError`` if ``policy`` cannot run on ``model`` (wrong system, or ServerFilling's setting broken)."""
    if policy.system != model.system:
        valid = [p.name for p in registered("finite-skip").values() if p.system == model.system]
        raise PolicyError(f"policy {policy.name} runs on {SYSTEM_NAMES[policy.system]}, not on "
                          f"{SYSTEM_NAMES[model.system]}; valid: {', '.join(valid)}")
    if policy.name in (SF_EXP, SF_DIV):
        k = model.servers
        needs = sorted(set(model.params))
        bad = [v for v in needs if k % v]
        if bad:
            raise PolicyError(f"policy {policy.name}: every need must divide servers={k}; needs {bad} do not "
                              f"(valid needs: divisors of {k})")
        if policy.name == SF_EXP:
            for i, a in enumerate(needs):
                for b in needs[i + 1:]:
                    if b % a:
                        raise PolicyError(f"policy {policy.name}: every need must divide every larger need "
                                          f"(exponential setting); {a} does not divide {b} (needs={needs}); use "
                                          "server-filling-divisible")


def units(policy: FiniteSkipPolicy) -> list:
    """What a run of the built-in ``policy`` needs compiled (:class:`msjgym.core.compiling.Unit`): the event loop
    (once per machine) and the policy's kernel, for :data:`ALLOCATE` (the slot table
    :data:`~msjgym.systems.finite_skip.contract.KERNELS`)."""
    return KERNELS.units(policy, loops=[(_run, RUN)])


def prepare(policy: FiniteSkipPolicy) -> int:
    """Compile (or load from the cache) the event loop and ``policy``'s kernel; returns the kernel's address."""
    from msjgym.core.compiling import compile_units

    compile_units(units(policy))
    (alloc,) = KERNELS.addresses(policy)
    return alloc


@dataclass
class Replication:
    """One replication: ``acc`` (A_* fields) and, per measured job, ``rec`` (R_* fields)."""

    acc: np.ndarray
    rec: np.ndarray

    @property
    def stable(self) -> bool:
        return self.acc[A_UNSTABLE] == 0.0


CAPACITY = 3_000
"""The most jobs a replication holds: one whose number in system reaches it stops, flagged unstable."""


def replication(model: FiniteSkipModel, policy: FiniteSkipPolicy, *, jobs: int = 100_000, warmup: int | None = None,
                stream: np.random.SeedSequence, capacity: int = CAPACITY) -> Replication:
    """One replication of ``model`` under the built-in ``policy`` (a declaration: ``msjgym.api.policy_spec``), drawing
    from ``stream``: it discards the first ``warmup`` arrivals (default jobs // 5), measures the next ``jobs``
    arrivals, and runs until they have all completed, or until its number in system reaches ``capacity`` (flagged
    unstable). Replications and their statistics: :func:`msjgym.evaluate`."""
    check_policy(model, policy)
    warmup = jobs // 5 if warmup is None else warmup
    k = model.servers
    cumprob = np.cumsum(np.asarray(model.probs, dtype=np.float64))
    cumprob[-1] = 1.0
    prm = np.asarray(model.params, dtype=np.int64)
    scale = model.size_scales
    dkind, dstart, ddata = encode_all(model.laws)
    speeds = np.sort(np.asarray(model.speeds if model.system == HET else [1.0 / k] * k, dtype=np.float64))[::-1].copy()
    slots = getattr(policy, "parameter_slots", None)  # a compiled rule's parameters, after the k speeds
    if slots is not None:
        speeds = np.concatenate([speeds, np.asarray(slots(), dtype=np.float64)])
    levels = np.array(sorted(set(model.params), reverse=True), dtype=np.int64)
    rule = (FULL_COUNT if model.system in (HET, LPS) else FULL_CLASS if policy.name == SF_DIV else FULL_SUM)
    alloc = prepare(policy)
    rng = seed_states([stream])
    acc = np.zeros(NACC)
    rec = np.full((jobs, NREC), np.nan)
    arrays = (np.zeros(capacity, np.int64), np.zeros(capacity), np.zeros(capacity), np.full(capacity, -1, np.int64),
              np.zeros(capacity), np.zeros(max(k, levels.size), np.int64), np.zeros(capacity), np.zeros(capacity),
              np.zeros(capacity), np.zeros(capacity, np.int64), np.zeros(capacity))
    _run(alloc, int(k), float(model.arrival_rate), cumprob, prm, scale, dkind, dstart, ddata, speeds, levels,
         int(warmup), int(jobs), int(capacity), rng, acc, rec, *arrays, rule)
    return Replication(acc, rec)
