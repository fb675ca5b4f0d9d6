"""The loss system with adaptive multiserver jobs as validated data: n, d, λ, k and the sampling rule.

Every error is a :class:`~msjgym.errors.ScenarioError` naming the parameter, the value and the valid range; nothing
is clamped silently. A sample-size *rule* (``k = "n^alpha log n"``, ...) is a documented formula of n (and α): its
definition includes ``min(n, ·)`` and ⌈·⌉ (docs/modelling-choices.md#loss-k-rule); an explicit integer k > n is an
error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from msjgym.core.distributions import Distribution, Exponential, from_spec
from msjgym.core.limits import MAX_SERVERS
from msjgym.core.validation import check_int, check_time_spread
from msjgym.core.validation import is_finite, show
from msjgym.errors import ScenarioError

# name -> (formula shown to users, k as a real number of (n, alpha)); natural log throughout
# (docs/modelling-choices.md#loss-k-rule)
K_RULES = {
    "n": ("n (full access)", lambda n, a: float(n)),
    "full": ("n (full access)", lambda n, a: float(n)),
    "n^alpha log n": ("min(n, ⌈n^α ln n⌉) (GMGM Theorem 9)", lambda n, a: n ** a * math.log(n)),
    "n^alpha": ("min(n, ⌈n^α⌉)", lambda n, a: n ** a),
    "sqrt n": ("min(n, ⌈√n⌉)", lambda n, a: math.sqrt(n)),
    "sqrt n log n": ("min(n, ⌈√n ln n⌉)", lambda n, a: math.sqrt(n) * math.log(n)),
    "log n": ("min(n, ⌈ln n⌉)", lambda n, a: math.log(n)),
}


@dataclass(frozen=True)
class LossModel:
    """n unit-rate servers, no waiting room, Poisson(nλ) arrivals, Exp(1) inherent sizes, widths 1..d, samples of k.

    Attributes:
        servers: n >= 1.
        d: maximum width, 1 <= d <= n.
        lam: λ, the per-server arrival rate (total rate nλ per unit time), 0 < λ < 1.
        k: servers sampled per arrival, d-independent, 1 <= k <= n (k = n: full access).
        alpha, beta: the scaling λ = 1 − βn^(−α) when λ came from it (None when λ was given directly).
        k_rule: the rule k came from ("" for an explicit integer).
        service: the inherent-size law when it is not Exp(1) (mean 1; outside GMGM's theory, simulated per job);
            None: Exp(1), simulated exactly by the count chain.
    """

    servers: int
    d: int
    lam: float
    k: int
    alpha: float | None = None
    beta: float | None = None
    k_rule: str = ""
    service: Distribution | None = None

    @property
    def full_access(self) -> bool:
        return self.k == self.servers

    @property
    def arrival_rate(self) -> float:
        """Total arrival rate nλ, jobs per unit time."""
        return self.servers * self.lam

    @property
    def load(self) -> float:
        """Offered load per server, λ (each job brings one unit of work on average)."""
        return self.lam

    trace = None  # loss scenarios never replay a trace (keeps the MSJ model's interface where shared code looks)


def _bad(name: str, value: object, requirement: str) -> ScenarioError:
    return ScenarioError(f"{name} = {show(value)}: {requirement}")


def _int(value: object, name: str, low: int, high: int | None = None, high_name: str = "") -> int:
    ok = is_finite(value) and float(value).is_integer() and value >= low \
        and (high is None or value <= high)
    if not ok:
        rng = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high_name or high}]"
        raise _bad(name, value, f"must be {rng}")
    return int(value)


def _real(value: object, name: str) -> float:
    if not (is_finite(value)):
        raise _bad(name, value, "must be a finite number")
    return float(value)


def make_loss_model(servers: object, d: object, k: object = "n", *, alpha: object = None, beta: object = None,
                    lam: object = None, service: object = None) -> LossModel:
    """Validate the parameters and build a :class:`LossModel`.

    Give the load either as ``lam`` (λ in (0, 1)) or as ``alpha`` ∈ [0, 1) and ``beta`` > 0 (λ = 1 − βn^(−α), which
    must be > 0). ``k`` is an integer in [1, n] or a rule name from :data:`K_RULES`. ``service``: None or "exp"
    (Exp(1)), or a distribution (table or :class:`Distribution`) of mean 1 — the time unit is the mean inherent size.
    """
    n = check_int("servers", servers, 1, MAX_SERVERS, ScenarioError, "the engine keeps per-server state")
    width = _int(d, "d", 1, n, f"servers={n}")
    a = b = None
    if lam is not None:
        if alpha is not None or beta is not None:
            raise ScenarioError(f"lam = {show(lam)}: give either lam or (alpha, beta), not both")
        rate = _real(lam, "lam")
        if not 0 < rate < 1:
            raise _bad("lam", lam, "must be in (0, 1) (λ >= 1 is not a loss system of this model)")
    else:
        if alpha is None or beta is None:
            raise ScenarioError("alpha, beta: both required when lam is not given")
        a = _real(alpha, "alpha")
        if not 0 <= a < 1:
            raise _bad("alpha", alpha, "must be in [0, 1)")
        b = _real(beta, "beta")
        if not b > 0:
            raise _bad("beta", beta, "must be > 0")
        rate = 1.0 - b * n ** (-a)
        if rate <= 0:
            raise ScenarioError(f"beta = {show(beta)}, alpha = {show(alpha)}, servers = {n}: λ(n) = 1 − βn^(−α) = "
                                f"{rate:.6g} must be > 0 (need β < n^α = {n ** a:.6g})")
    check_time_spread("lam" if lam is not None else "beta", lam if lam is not None else beta, 1.0 / (n * rate),
                      1.0 / width, ScenarioError, "the shortest mean service time (1/d)")
    rule = ""
    if isinstance(k, str):
        if k not in K_RULES:
            raise _bad("k", k, f"must be an integer in [1, servers={n}] or one of {', '.join(repr(r) for r in K_RULES)}")
        if "alpha" in k and a is None:
            raise _bad("k", k, "this rule needs alpha (give alpha and beta instead of lam)")
        rule = k
        value = min(n, math.ceil(K_RULES[k][1](n, a) - 1e-9))
        size = max(1, value)
    else:
        size = _int(k, "k", 1, n, f"servers={n}")
    return LossModel(servers=n, d=width, lam=rate, k=size, alpha=a, beta=b, k_rule=rule, service=_service(service))


def _service(service: object) -> Distribution | None:
    if service is None or service == "exp":
        return None
    law = service if isinstance(service, Distribution) else from_spec(service, where="service")
    if not math.isclose(law.mean, 1.0, rel_tol=1e-9):
        raise ScenarioError(f"service = {law}: its mean is {law.mean:.10g}; must be 1 (the time unit is the mean "
                            "inherent size, as in GMGM: rescale the law)")
    if isinstance(law, Exponential):
        return None
    return law
