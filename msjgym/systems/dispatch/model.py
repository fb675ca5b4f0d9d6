"""The large-scale dispatch model and its validated parameters.

N servers, each with its own FIFO queue and one job in service at a time, serving at rate 1 (resource pooling:
1 − p; or per-server ``speeds``, e.g. a fast and a slow pool from :func:`pool_speeds`); arrivals Poisson with rate
λN (water filling: batches of M tasks at rate λN/M); job sizes i.i.d. from any msjgym
:class:`~msjgym.core.distributions.Distribution` (the paper's laws have mean 1, so λ is the load). The dispatcher's
information is part of the model (:mod:`msjgym.systems.dispatch.contract`); the built-in policies:
:mod:`msjgym.policies.dispatch`, reached through ``registered("dispatch")``.

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §2; choices the paper leaves open: docs/modelling-choices.md ("Load balancing").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from msjgym.core.distributions import Distribution, Exponential
from msjgym.systems.dispatch.params import pull_update_rates, require_probability, require_rate, water_filling_sample_size
from msjgym.core.limits import MAX_SERVERS
from msjgym.core.validation import check_int, check_time_spread
from msjgym.core.validation import check_number, is_finite, is_real, show
from msjgym.errors import PolicyError, ScenarioError
from msjgym.core.policy_registry import registered

REMOVE_MODES = ("last", "next", "random")
"""Resource pooling: which waiting job a token removes (the paper leaves it open,
docs/modelling-choices.md#lb-resource-pooling-removal)."""

MAX_SPEED_RATIO = 1000.0
"""The largest ratio of the fastest to the slowest server's speed (times a job takes stay within float64's exact
range whatever the time unit)."""


def _params_of(policy: str) -> tuple[str, ...]:
    """The built-in ``policy``'s parameters (its declaration's ``params``)."""
    return tuple(p.name for p in registered("dispatch")[policy].params)


def _integer(name: str, value: object, low: int, high: int, what: str) -> int:
    if not (is_real(value) and float(value).is_integer() and low <= value <= high):
        raise ScenarioError(f"{name} = {show(value)}: must be an integer in [{low}, {high}] ({what})")
    return int(value)


@dataclass(frozen=True)
class DispatchModel:
    """A validated dispatch system: policy, N servers, load and the policy's information parameters.

    Attributes:
        policy: a name of a built-in dispatch policy (``registered("dispatch")``).
        servers: N >= 1.
        lam: arrival rate per server λ (jobs per unit time); λ·E[size] must be in (0, 1).
        dist: job-size law (work, in time units at rate 1).
        delta: push probe rate per server; water filling: probe rate δ (sets K = (δ/λ)M); pull: overall update rate
            δ = λδ₁ + (1 − λ)δ₀ (alternative to giving delta0).
        delta0, delta1: pull update rate of an idle server, and update probability at a completion.
        d: servers sampled per arrival (jsq-d, least-loaded-d).
        batch_size: water filling tasks per batch M; ``sample_size`` K = (δ/λ)M is derived and must be an integer.
        p: resource pooling share of the central server, in [0, 1); servers run at rate 1 − p.
        remove: resource pooling, which waiting job a token removes: "last" (in line), "next" (to start), "random".
        speeds: None (every server at rate :attr:`speed`), or N server speeds (work per unit time, > 0; a job of size
            x takes x / speeds[i] time units at server i), e.g. :func:`pool_speeds`; not with resource pooling. The
            system is stable under some policy iff λ·E[size]·N < Σ speeds.
    """

    policy: str
    servers: int
    lam: float
    dist: Distribution
    delta: float | None = None
    delta0: float | None = None
    delta1: float | None = None
    d: int | None = None
    batch_size: int | None = None
    p: float | None = None
    remove: str | None = None
    speeds: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        builtins = registered("dispatch")
        if self.policy not in builtins:
            raise PolicyError(f"policy = {self.policy!r}: unknown dispatch policy; valid: {', '.join(builtins)}")
        n = check_int("servers", self.servers, 1, MAX_SERVERS, ScenarioError, "the engine keeps per-server state")
        object.__setattr__(self, "servers", n)
        if not isinstance(self.dist, Distribution):
            raise ScenarioError(f"dist = {show(self.dist)}: must be a msjgym Distribution (e.g. Exponential(rate=1))")
        lam = self.lam
        if not (is_finite(lam) and lam > 0):
            raise ScenarioError(f"lam = {show(lam)}: must be in (0, 1) (arrival rate per server)")
        mean = self.dist.mean
        if self.speeds is not None:
            self._check_speeds(n, lam, mean)
        elif not lam * mean < 1.0:
            raise ScenarioError(f"lam = {show(lam)}: must be in (0, {1.0 / mean:g}) = (0, 1/E[size]); the system is "
                                f"unstable for lam·E[size] >= 1 (total capacity N, arrival rate lam·N)")
        check_time_spread("lam", lam, 1.0 / (lam * n), mean, ScenarioError, "the mean job size")
        object.__setattr__(self, "lam", float(lam))
        allowed = _params_of(self.policy)
        for name in ("delta", "delta0", "delta1", "d", "batch_size", "p", "remove"):
            if getattr(self, name) is not None and name not in allowed:
                raise ScenarioError(f"{name} = {show(getattr(self, name))}: not a parameter of policy "
                                    f"'{self.policy}' (its parameters: {', '.join(allowed) or 'none'})")
        getattr(self, "_check_" + self.policy.replace("-", "_"), lambda: None)()

    def _check_speeds(self, n: int, lam: object, mean: float) -> None:
        """Per-server speeds: N finite numbers > 0, within a ratio of :data:`MAX_SPEED_RATIO`; stability."""
        speeds = self.speeds
        if isinstance(speeds, (str, bytes)) or not hasattr(speeds, "__len__") or len(speeds) != n:
            raise ScenarioError(f"speeds = {show(speeds)}: must be a sequence of servers = {n} speeds > 0 (work per "
                                "unit time)")
        out = tuple(check_number(f"speeds[{i}]", x, 0.0, open_low=True, why="a server's speed, work per unit time",
                                 error=ScenarioError) for i, x in enumerate(speeds))
        if max(out) > MAX_SPEED_RATIO * min(out):
            raise ScenarioError(f"speeds: fastest / slowest = {max(out) / min(out):g}; must be in [1, "
                                f"{MAX_SPEED_RATIO:g}]")
        if self.policy == "resource-pooling":
            raise ScenarioError("speeds: not with policy 'resource-pooling' (its servers run at rate 1 − p)")
        total = math.fsum(out)
        if is_finite(lam) and lam > 0 and not lam * mean * n < total:
            raise ScenarioError(f"lam = {show(lam)}: must be in (0, {total / (n * mean):g}) = "
                                "(0, Σ speeds / (N·E[size])); the system is unstable for lam·E[size]·N >= Σ speeds "
                                "(arrival rate lam·N)")
        object.__setattr__(self, "speeds", out)

    # ------------------------------------------------------------ per-policy checks
    def _set(self, **fields: object) -> None:
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def _need(self, name: str) -> object:
        value = getattr(self, name)
        if value is None:
            raise ScenarioError(f"{name}: missing; policy '{self.policy}' needs {', '.join(_params_of(self.policy))}")
        return value

    def _check_d(self) -> None:
        n = self.servers
        self._set(d=_integer("d", self._need("d"), 1, n, f"sampled servers, at most servers = {n}"))

    _check_jsq_d = _check_d
    _check_least_loaded_d = _check_d
    _check_sed_d = _check_d

    def _check_push(self) -> None:
        self._set(delta=require_rate("delta", self._need("delta")))

    def _check_pull(self) -> None:
        d1 = require_probability("delta1", 0.0 if self.delta1 is None else self.delta1)
        if self.delta0 is not None:
            if self.delta is not None:
                raise ScenarioError("delta, delta0: give one (pull: delta = lam·delta1 + (1 - lam·E[size])·delta0)")
            d0 = self.delta0
            if not (is_finite(d0) and d0 >= 0):
                raise ScenarioError(f"delta0 = {show(d0)}: must be a finite number >= 0 (updates per idle server "
                                    "per unit time)")
            d0 = float(d0)
        else:
            d0, d1 = pull_update_rates(self.lam, self._need("delta"), d1, busy=self.lam * self.dist.mean)
        if d0 == 0.0 and d1 == 0.0:
            raise ScenarioError("delta0 = 0 and delta1 = 0: the servers never update the dispatcher; give a rate > 0")
        self._set(delta0=d0, delta1=d1, delta=None)

    def _check_water_filling(self) -> None:
        delta = require_rate("delta", self._need("delta"))
        m = self._need("batch_size")
        water_filling_sample_size(self.lam, delta, m, self.servers)
        self._set(delta=delta, batch_size=int(m))

    def _check_resource_pooling(self) -> None:
        p = require_probability("p", self._need("p"), upper_open=True)
        remove = "last" if self.remove is None else self.remove
        if remove not in REMOVE_MODES:
            raise ScenarioError(f"remove = {show(remove)}: must be one of {', '.join(REMOVE_MODES)}")
        self._set(p=p, remove=remove)

    # ------------------------------------------------------------ derived
    @property
    def sample_size(self) -> int:
        """Water filling: servers sampled per batch K = (δ/λ)M (0 for other policies)."""
        if self.policy != "water-filling":
            return 0
        return round(self.delta / self.lam * self.batch_size)

    @property
    def speed(self) -> float:
        """Service rate of a server: 1, or 1 − p under resource pooling (per-server: :attr:`server_speeds`)."""
        return 1.0 - self.p if self.policy == "resource-pooling" else 1.0

    @property
    def server_speeds(self) -> tuple[float, ...]:
        """Every server's speed (work per unit time): ``speeds``, or :attr:`speed` for each."""
        return self.speeds if self.speeds is not None else (self.speed,) * self.servers

    @property
    def load(self) -> float:
        """The offered load λ·E[size]·N / Σ speeds (λ·E[size] with unit-rate servers): stable iff < 1 under a
        policy that uses every server in proportion to its speed."""
        if self.speeds is None:
            return self.lam * self.dist.mean
        return self.lam * self.dist.mean * self.servers / math.fsum(self.speeds)

    @property
    def message_rate(self) -> float | None:
        """Designed message rate per server: push δ; pull λδ₁ + (1 − λE[S])δ₀; water filling δ; jsq-d,
        least-loaded-d and sed-d dλ (d servers asked per arrival); else None."""
        if self.policy in ("push", "water-filling"):
            return self.delta
        if self.policy in ("jsq-d", "least-loaded-d", "sed-d"):
            return self.d * self.lam
        if self.policy == "pull":
            rho = self.lam * self.dist.mean
            return self.lam * self.delta1 + (1.0 - rho) * self.delta0
        return None


def default_dist() -> Distribution:
    """Exp(1), the paper's reference job-size law."""
    return Exponential(rate=1.0)


def pool_speeds(servers: int, fast_fraction: float, speed_ratio: float) -> tuple[float, ...]:
    """Two pools of servers: ``fast_fraction``·N fast servers (listed first), each ``speed_ratio`` times as fast as
    the rest, scaled so that the mean speed is 1 (Σ speeds = N: λ·E[size] stays the load).

    ``fast_fraction`` in (0, 1) with ``fast_fraction``·N an integer in [1, N − 1]; ``speed_ratio`` in
    [1, :data:`MAX_SPEED_RATIO`]. The slow speed is 1 / (f·r + 1 − f) and the fast one r times that.
    """
    n = check_int("servers", servers, 2, MAX_SERVERS, ScenarioError, "two pools need at least 2 servers")
    f = check_number("fast_fraction", fast_fraction, 0.0, 1.0, open_low=True, open_high=True,
                     why="the fraction of fast servers", error=ScenarioError)
    r = check_number("speed_ratio", speed_ratio, 1.0, MAX_SPEED_RATIO, why="fast speed / slow speed",
                     error=ScenarioError)
    fast = round(f * n)
    if abs(f * n - fast) > 1e-9 * n or not 1 <= fast <= n - 1:
        raise ScenarioError(f"fast_fraction = {show(fast_fraction)}: fast_fraction·servers = {f * n:g} must be an "
                            f"integer in [1, {n - 1}] (servers = {n})")
    slow = 1.0 / (fast / n * r + (n - fast) / n)
    return (r * slow,) * fast + (slow,) * (n - fast)
