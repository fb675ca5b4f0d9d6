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
from msjgym.core.traces import Trace
from msjgym.errors import ScenarioError


@dataclass(frozen=True)
class JobClass:
    """One job class: its name, server need (servers held at once), arrival probability and service duration law."""

    name: str
    need: int
    probability: float
    service: Distribution


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
    """

    servers: int
    arrival_rate: float
    classes: tuple[JobClass, ...]
    trace: Trace | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.servers, (int, np.integer)) or isinstance(self.servers, bool) or self.servers < 1:
            raise ScenarioError(f"servers = {self.servers!r}: must be an integer >= 1")
        if not (isinstance(self.arrival_rate, (int, float)) and math.isfinite(self.arrival_rate)
                and self.arrival_rate > 0):
            raise ScenarioError(f"arrival_rate = {self.arrival_rate!r}: must be a finite number > 0")
        if not self.classes:
            raise ScenarioError("classes: at least one job class is required")
        names = [c.name for c in self.classes]
        for i, c in enumerate(self.classes):
            if not isinstance(c.need, (int, np.integer)) or isinstance(c.need, bool) or not 1 <= c.need <= self.servers:
                raise ScenarioError(f"classes[{i}].need = {c.need!r}: must be an integer in [1, servers={self.servers}]")
            if not (math.isfinite(c.probability) and 0 < c.probability <= 1):
                raise ScenarioError(f"classes[{i}].probability = {c.probability!r}: must be in (0, 1]")
            if names.count(c.name) > 1:
                raise ScenarioError(f"classes[{i}].name = {c.name!r}: class names must be unique")
        total = sum(c.probability for c in self.classes)
        if abs(total - 1.0) > 1e-9:
            raise ScenarioError(f"classes[*].probability sum to {total!r}: must sum to 1 (within 1e-9)")

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
        """λ_i m_i E[S_i]: the time-average number of servers class i occupies under any stable policy."""
        return self.class_arrival_rates * self.needs * self.mean_service

    @property
    def offered_servers(self) -> float:
        """λ Σ_i p_i m_i E[S_i]: the time-average number of busy servers of any stable policy."""
        return float(self.offered_servers_per_class.sum())

    @property
    def load(self) -> float:
        """ρ = λ Σ_i p_i m_i E[S_i] / n: the long-run fraction of busy servers (no policy is stable at ρ >= 1)."""
        return self.offered_servers / self.servers

    @property
    def job_size_moments(self) -> tuple[float, float]:
        """E[S], E[S²] of the job size S = need × duration / n (system-capacity × time, the finite-skip units)."""
        p, m, n = self.probabilities, self.needs, self.servers
        m1 = np.array([c.service.mean for c in self.classes])
        m2 = np.array([c.service.second_moment for c in self.classes])
        return float(np.sum(p * m * m1) / n), float(np.sum(p * m * m * m2) / n**2)
