"""Parameter checks of the large-scale load-balancing models (push, pull, water filling, resource pooling).

Shared by the cavity theory (:mod:`msjgym.systems.dispatch.cavity`) and the dispatch simulator, so both reject the same inputs
with the same one-line message naming the parameter, its value and the valid range. All raise
:class:`~msjgym.errors.ScenarioError` (a ``ValueError``).

Units: ``lam`` is the arrival rate per server (jobs per unit time; servers have rate 1 and jobs mean 1, so it is also
the load); ``delta`` is the probe/update rate per server (messages per unit time); ``p`` is the fraction of the
capacity given to the central server under resource pooling.
"""
from __future__ import annotations

import math

from msjgym.core.validation import as_float, check_number, is_real, requirement, show
from msjgym.errors import ScenarioError

INTEGER_TOL = 1e-9
"""A float within this (relative) distance of an integer is that integer (e.g. 20·log10(1000) = 59.999...)."""


def require_load(lam: object, name: str = "lam") -> float:
    """λ in (0, 1): the arrival rate per unit-rate server; λ >= 1 is unstable under every policy."""
    ok = 0.0 < as_float(lam) < 1.0
    if not ok:
        unstable = is_real(lam) and lam >= 1.0
        raise ScenarioError(f"{name} = {show(lam)}: {requirement(0, 1, open_low=True, open_high=True)}" + (
            f"; the system is unstable for {name} >= 1 (total capacity N, arrival rate {name}·N)" if unstable else ""))
    return float(lam)


def require_rate(name: str, value: object) -> float:
    """A rate > 0 (per unit time), e.g. the probe rate ``delta``."""
    return check_number(name, value, 0.0, open_low=True, why="a rate per server per unit time", error=ScenarioError)


def require_probability(name: str, value: object, *, upper_open: bool = False) -> float:
    """A probability in [0, 1] (or [0, 1) with ``upper_open``)."""
    return check_number(name, value, 0.0, 1.0, open_high=upper_open, error=ScenarioError)


def require_pooled_fraction(p: object) -> float:
    """Resource pooling: the central server's share p of the capacity, in [0, 1) (servers run at rate 1 − p)."""
    return require_probability("p", p, upper_open=True)


def pull_update_rates(lam: float, delta: float, delta1: float = 0.0, busy: float | None = None) -> tuple[float, float]:
    """(δ₀, δ₁) of the pull policy with overall update rate δ = λδ₁ + (1 − busy)δ₀ per server (paper §6).

    ``busy`` is the fraction of time a server is busy, λ·E[size] (default λ: the paper's mean-1 sizes, where λ must
    lie in (0, 1)). δ₁ = 0 (the paper's Table 3 setting, docs/modelling-choices.md#lb-table-3-pull-rates) gives
    δ₀ = δ/(1 − λ). Valid δ₁: [0, min(1, δ/λ)].
    """
    lam = require_load(lam) if busy is None else require_rate("lam", lam)
    busy = lam if busy is None else require_load(busy, "lam·E[size]")
    delta = require_rate("delta", delta)
    delta1 = require_probability("delta1", delta1)
    if lam * delta1 > delta * (1.0 + 1e-12):
        raise ScenarioError(f"delta1 = {show(delta1)}: must be in [0, min(1, delta/lam)] = "
                            f"[0, {min(1.0, delta / lam):g}] (completion updates alone would exceed the update rate)")
    return max(0.0, (delta - lam * delta1) / (1.0 - busy)), delta1


def nearest_integer(name: str, value: float, why: str) -> int:
    """``value`` as an int if within INTEGER_TOL (relative) of one, else a ScenarioError explaining ``why``."""
    k = round(value)
    if not math.isfinite(value) or abs(value - k) > INTEGER_TOL * max(1.0, abs(value)):
        raise ScenarioError(f"{name} = {value:.10g}: {why}")
    return int(k)


def water_filling_sample_size(lam: float, delta: float, batch_size: object, servers: int | None = None) -> int:
    """K = (δ/λ)·M, the number of servers a batch of M tasks samples under water filling (paper §2, §5).

    Must be an integer >= 1 (and <= servers if given): the probe rate per server is then exactly δ. ``lam`` is the
    arrival rate per server (> 0; the load λ·E[size] is checked by the model).
    """
    lam = require_rate("lam", lam)
    delta = require_rate("delta", delta)
    m = check_number("batch_size", batch_size, 1, integer=True, why="tasks per batch, M", error=ScenarioError)
    k = nearest_integer(f"sampled servers K = (delta/lam)·batch_size = ({delta:g}/{lam:g})·{m}", delta / lam * m,
                        "must be an integer; choose batch_size M so that delta·M/lam is whole")
    if k < 1 or (servers is not None and k > servers):
        raise ScenarioError(f"sampled servers K = {k}: must be in [1, servers = {servers}] (batch_size = {m})")
    return k


def water_filling_batch_size(scale: float, servers: int) -> int:
    """M = C·log10(N), the batch size of the paper's Table 2 (C = ``scale``); must come out an integer >= 1."""
    c = require_rate("C", scale)
    check_number("servers", servers, 2, integer=True, error=ScenarioError)
    m = nearest_integer("batch_size M", c * math.log10(servers), f"M = C·log10(N) = {c:g}·log10({servers}) must be "
                        "an integer")
    if m < 1:
        raise ScenarioError(f"batch_size M = {m}: must be >= 1 (C = {c:g}, servers = {servers})")
    return m
