"""The validated parameters of a finite-skip system (:class:`FiniteSkipModel`), whether a policy can run on it
(:func:`check_policy`), and their compiled form (:class:`FiniteSkipParams`) that the event loop and the decision path
read.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§2, 4–7). Capacity
is normalised to 1: a job's *size* S is in capacity × time units and it completes when it has received S of service; a
job's *rate* is the fraction of capacity it gets (heterogeneous servers: its server's speed; LPS: 1/min(N, k); threshold
parallelism: q/k on q servers; MSJ: v/k while served, so S = vX/k for a duration X).

Front (Defs. 2.1, 2.2): a prefix of the arrival order that, while not *full* by the system's own definition, requests
the oldest queued job (:data:`FULL_COUNT`: het M/G/k and LPS, full with k jobs; :data:`FULL_SUM`: threshold parallelism
and MSJ, full when the thresholds / needs in it sum to >= k; :data:`FULL_CLASS`: ServerFilling in the divisible
setting, full when some need v has k/v jobs in it; §§4.2, 5.2, 6.2, 7.2, App. B.2;
docs/modelling-choices.md#finite-skip-front).
"""
from __future__ import annotations

import functools
import math
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import types

from msjgym.core.distributions import Distribution, encode_all
from msjgym.core.plug import record_type
from msjgym.core.policy_registry import registered
from msjgym.errors import PolicyError, ScenarioError
from msjgym.systems.finite_skip.contract import (HET, LPS, MSJ, SF_DIV, SF_EXP, SYSTEM_KINDS, SYSTEM_NAMES, THRESHOLD,
                                                 FiniteSkipPolicy)

# the front's fullness rules (params.ints[P_RULE])
FULL_COUNT = 0
FULL_SUM = 1
FULL_CLASS = 2

# params.ints[:]
P_SYSTEM = 0  # HET, LPS, THRESHOLD or MSJ
P_K = 1  # servers k
P_RULE = 2  # the front's fullness rule (FULL_*)
P_WARMUP = 3  # arrivals discarded before the measured ones
P_JOBS = 4  # measured arrivals (0: none, the decision path)
NPI = 5
# params.floats[:]
P_LAMBDA = 0  # arrival rate λ
NPF = 1

FiniteSkipParams = namedtuple("FiniteSkipParams", "ints floats cumprob prm scale dkind dstart ddata speeds levels")
FiniteSkipParams.__doc__ = """Read-only parameters of B systems of one model (:func:`compiled_params`).

``ints[NPI]`` (P_SYSTEM, P_K, P_RULE, P_WARMUP, P_JOBS), ``floats[NPF]`` (P_LAMBDA); per class: ``cumprob[K]``
(cumulative probabilities), ``prm[K]`` (threshold P, need v, else 1), ``scale[K]`` (S = scale · draw of the law),
``dkind``/``dstart``/``ddata`` (the encoded size laws); ``speeds`` the k server speeds, fastest first, then a compiled
rule's parameter slots (:mod:`msjgym.systems.finite_skip.compiled`); ``levels`` the distinct parameters, largest first.
"""


@dataclass(frozen=True)
class FiniteSkipModel:
    """One finite-skip system with Poisson arrivals.

    Attributes:
        system: HET, LPS, THRESHOLD or MSJ (:mod:`msjgym.systems.finite_skip.contract`).
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


def front_rule(model: FiniteSkipModel, policy: Any = None) -> int:
    """The front's fullness rule of ``model`` (module docstring), for ``policy`` (ServerFilling in the divisible
    setting has its own)."""
    if model.system in (HET, LPS):
        return FULL_COUNT
    return FULL_CLASS if getattr(policy, "name", None) == SF_DIV else FULL_SUM


def sorted_speeds(model: FiniteSkipModel) -> np.ndarray:
    """The k server speeds, fastest first (k × 1/k for the homogeneous systems)."""
    k = model.servers
    return np.sort(np.asarray(model.speeds if model.system == HET else [1.0 / k] * k, dtype=np.float64))[::-1].copy()


def compiled_params(model: FiniteSkipModel, *, rule: int, warmup: int = 0, jobs: int = 0,
                    slots: Sequence[float] = ()) -> FiniteSkipParams:
    """``model`` as the event loop reads it: front rule ``rule`` (FULL_*), ``warmup`` arrivals discarded, the next
    ``jobs`` measured (0: nothing measured), a compiled rule's parameter ``slots`` after the speeds."""
    cumprob = np.cumsum(np.asarray(model.probs, dtype=np.float64))
    cumprob[-1] = 1.0
    dkind, dstart, ddata = encode_all(model.laws)
    speeds = sorted_speeds(model)
    if len(slots):
        speeds = np.concatenate([speeds, np.asarray(slots, dtype=np.float64)])
    ints = np.zeros(NPI, np.int64)
    ints[P_SYSTEM], ints[P_K], ints[P_RULE], ints[P_WARMUP], ints[P_JOBS] = (model.system, model.servers, rule,
                                                                            warmup, jobs)
    return FiniteSkipParams(ints=ints, floats=np.array([float(model.arrival_rate)]), cumprob=cumprob,
                            prm=np.asarray(model.params, dtype=np.int64),
                            scale=np.ascontiguousarray(model.size_scales, dtype=np.float64), dkind=dkind,
                            dstart=dstart, ddata=ddata, speeds=speeds,
                            levels=np.array(sorted(set(model.params), reverse=True), dtype=np.int64))


@functools.lru_cache(maxsize=1)
def params_type() -> types.Type:
    """The numba type of the parameters record (every array C-contiguous)."""
    from msjgym.core.distributions import Exponential

    example = FiniteSkipModel(LPS, 1, 1.0, (1.0,), (Exponential(rate=1.0),), (1,))
    return record_type(compiled_params(example, rule=FULL_COUNT))
