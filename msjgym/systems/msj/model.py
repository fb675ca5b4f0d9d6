"""The multiserver-job (MSJ) model: n servers, K job classes, Poisson arrivals.

A class-i job holds ``need_i`` servers at once for its whole service duration S_i (a time, in the scenario's time
unit). Arrivals are Poisson with total rate λ (jobs per unit time); each arrival is of class i with probability p_i.
Sources: Wang, Xie & Harchol-Balter, "Zero Queueing for Multi-Server Jobs" (2021), §3; Grosof, Harchol-Balter &
Scheller-Wolf, "The finite-skip method for multiserver analysis", §2.1.4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from msjgym.core.distributions import Distribution
from msjgym.core.limits import MAX_CLASSES, MAX_SERVERS
from msjgym.core.validation import check_int, check_time_spread
from msjgym.systems.msj.trace.files import Trace
from msjgym.systems.msj.trace.user_estimates import TsafrirModel
from msjgym.errors import ScenarioError


@dataclass(frozen=True)
class JobClass:
    """One job class: its name, server need (servers held at once), arrival probability and service duration law."""

    name: str
    need: int
    probability: float
    service: Distribution


ESTIMATE_KINDS = ("exact", "factor", "uniform", "requested", "tsafrir")


@dataclass(frozen=True)
class EstimateLaw:
    """How the scheduler's runtime estimate of a job relates to its true duration S (the scenario's ``estimate``).

    Backfilling policies plan with estimates; every other policy ignores them. The estimate is drawn when the job
    arrives and never changes.

    Attributes:
        kind: "exact" (estimate = S, the default), "factor" (estimate = low · S), "uniform" (estimate = f · S with f
            uniform on [low, high], Mu'alem & Feitelson's model with low = 1, high = F), or "requested" (a replayed
            trace's requested time, SWF field 9 or CSV ``requested``, where known, even below the run time; else
            the run time), or "tsafrir" (a replayed trace's estimates drawn once from the model of Tsafrir, Etsion &
            Feitelson, JSSPP 2005: :mod:`msjgym.systems.msj.trace.user_estimates`, with the parameters ``model``).
        low, high: the factor, or the ends of its uniform law.
        allow_underestimate: whether a factor below 1 is allowed (a job may then run past its estimate: msjgym lets
            it run to completion, the scheduler seeing 0 estimated time left; real schedulers kill it).
        model: the estimate model's parameters (kind "tsafrir" only).
    """

    kind: str = "exact"
    low: float = 1.0
    high: float = 1.0
    allow_underestimate: bool = False
    model: TsafrirModel | None = None

    def __post_init__(self) -> None:
        if self.kind not in ESTIMATE_KINDS:
            raise ScenarioError(f"estimate: kind {self.kind!r}; valid: {', '.join(ESTIMATE_KINDS)}")
        floor = 0.0 if self.allow_underestimate else 1.0
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low <= self.high
                and (self.low > floor if self.allow_underestimate else self.low >= floor)):
            raise ScenarioError(f"estimate: factor range [{self.low!r}, {self.high!r}] must be finite with "
                                f"{'0 <' if self.allow_underestimate else '1 <='} low <= high")

    def __str__(self) -> str:
        if self.kind == "factor":
            return f"estimate = {self.low:g} × duration"
        if self.kind == "uniform":
            return f"estimate = f × duration, f ~ Uniform[{self.low:g}, {self.high:g}]"
        if self.kind == "requested":
            return "estimate = the trace's requested time"
        if self.kind == "tsafrir":
            return f"estimate = drawn from the {self.model}"
        return "exact estimates"


@dataclass(frozen=True)
class MSJModel:
    """n identical servers, Poisson(λ) arrivals split over K classes, jobs holding ``need`` servers at once.

    Attributes:
        servers: number of identical servers n (>= 1).
        arrival_rate: total Poisson arrival rate λ, jobs per unit time (> 0).
        classes: the K job classes; their probabilities sum to 1.
        trace: when given, the arrivals are this trace's jobs, replayed exactly (class i is the jobs of the i-th
            need, in increasing order); λ, the probabilities and the duration laws are then the trace's empirical
            ones, used only by the theory and for the load.
        estimate: how the scheduler's runtime estimates are made (only backfilling policies use them); default
            exact.
        given_load: the load ρ the scenario gave (``load = ...``), from which λ was computed; :attr:`load` is then
            this value exactly (λ Σ p m E[S] / n recomputed from the rounded λ can miss it by an ulp: a load of 1
            would become 1 − 2⁻⁵³, and the theory would print finite values where they are infinite). None: λ given.
    """

    servers: int
    arrival_rate: float
    classes: tuple[JobClass, ...]
    trace: Trace | None = None
    estimate: EstimateLaw = EstimateLaw()
    given_load: float | None = None

    def __post_init__(self) -> None:
        check_int("servers", self.servers, 1, MAX_SERVERS, ScenarioError, "the engine keeps per-server state")
        if not isinstance(self.servers, (int, np.integer)):
            raise ScenarioError(f"servers = {self.servers!r}: must be an integer in [1, {MAX_SERVERS:,}]")
        if not (isinstance(self.arrival_rate, (int, float)) and math.isfinite(self.arrival_rate)
                and self.arrival_rate > 0):
            raise ScenarioError(f"arrival_rate = {self.arrival_rate!r}: must be a finite number > 0")
        if not self.classes:
            raise ScenarioError("classes: at least one job class is required")
        if len(self.classes) > MAX_CLASSES:
            raise ScenarioError(f"classes: {len(self.classes):,} classes; must be at most {MAX_CLASSES:,} (the engine "
                                "draws the next event over the classes)")
        names = [c.name for c in self.classes]
        for i, c in enumerate(self.classes):
            if not isinstance(c.need, (int, np.integer)) or isinstance(c.need, bool) or not 1 <= c.need <= self.servers:
                raise ScenarioError(f"classes[{i}].need = {c.need!r}: must be an integer in [1, servers={self.servers}]")
            if not (math.isfinite(c.probability) and 0 < c.probability <= 1):
                raise ScenarioError(f"classes[{i}].probability = {c.probability!r}: must be in (0, 1]")
            if c.name in names[:i]:  # the later entry is the duplicate: name it, and the first one
                first = names.index(c.name)
                raise ScenarioError(f"classes[{i}].name = {c.name!r}: class names must be unique (classes[{first}] "
                                    "has this name too)")
        if self.estimate.kind in ("requested", "tsafrir") and self.trace is None:
            raise ScenarioError(f"estimate = \"{self.estimate.kind}\": only for a replayed trace (arrivals = "
                                "{trace = ...} or {model = ...})")
        total = sum(c.probability for c in self.classes)
        if abs(total - 1.0) > 1e-9:
            raise ScenarioError(f"classes[*].probability sum to {total!r}: must sum to 1 (within 1e-9)")
        self._check_time_scales()

    def _check_time_scales(self) -> None:
        """The mean interarrival time 1/λ at most :data:`~msjgym.core.limits.MAX_TIME_SPREAD` shortest mean
        service times: the clock advances by ~1/λ per job, and float64 must still resolve the shortest service on it
        (beyond that the shortest jobs take 0 time on the clock: zero utilization, negative waits, silently)."""
        if self.trace is not None:
            return
        shortest = min(range(len(self.classes)), key=lambda i: self.classes[i].service.mean)
        check_time_spread("arrival_rate", self.arrival_rate, 1.0 / self.arrival_rate,
                          self.classes[shortest].service.mean, ScenarioError,
                          f"the mean service time of classes[{shortest}]")

    def trace_classes(self) -> np.ndarray:
        """int64[n]: the class of each job of the replayed trace (the class of its need; a derived family's model
        maps its own job attributes)."""
        class_of_need = {int(c.need): k for k, c in enumerate(self.classes)}
        return np.array([class_of_need[int(m)] for m in self.trace.need], dtype=np.int64)

    @property
    def num_classes(self) -> int:
        """K, the number of job classes."""
        return len(self.classes)

    @property
    def needs(self) -> np.ndarray:
        """Server needs m_i, ``int64[K]``."""
        return np.array([c.need for c in self.classes], dtype=np.int64)

    @property
    def probabilities(self) -> np.ndarray:
        """Class probabilities p_i, ``float64[K]``."""
        return np.array([c.probability for c in self.classes], dtype=np.float64)

    @property
    def class_arrival_rates(self) -> np.ndarray:
        """λ_i = λ p_i, jobs per unit time."""
        return self.arrival_rate * self.probabilities

    @property
    def mean_service(self) -> np.ndarray:
        """E[S_i], time units."""
        return np.array([c.service.mean for c in self.classes], dtype=np.float64)

    @property
    def offered_servers_per_class(self) -> np.ndarray:
        """λ_i m_i E[S_i]: the time-average number of servers class i occupies under any stable policy (inf where the
        product exceeds the largest float: an arrival rate that large makes every policy unstable, which is the
        answer, not a warning)."""
        with np.errstate(over="ignore"):
            return self.class_arrival_rates * self.needs * self.mean_service

    @property
    def offered_servers(self) -> float:
        """λ Σ_i p_i m_i E[S_i]: the time-average number of busy servers of any stable policy (inf on overflow)."""
        with np.errstate(over="ignore"):
            return float(self.offered_servers_per_class.sum())

    @property
    def load(self) -> float:
        """ρ = λ Σ_i p_i m_i E[S_i] / n: the long-run fraction of busy servers (no policy is stable at ρ >= 1); the
        scenario's own value when it gave the load (``given_load``)."""
        return self.given_load if self.given_load is not None else self.offered_servers / self.servers

    @property
    def job_size_moments(self) -> tuple[float, float]:
        """E[S], E[S²] of the job size S = need × duration / n (system-capacity × time, the finite-skip units)."""
        p, m, n = self.probabilities, self.needs, self.servers
        m1 = np.array([c.service.mean for c in self.classes])
        m2 = np.array([c.service.second_moment for c in self.classes])
        return float(np.sum(p * m * m1) / n), float(np.sum(p * m * m * m2) / n**2)
