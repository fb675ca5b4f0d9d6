"""The scorecard: every theoretical reference that applies to a scenario and policy, and a verdict for each.

``references(model, policy)`` lists, before any simulation, what the theory says: exact values, bounds, asymptotic
predictions, approximations, and stability conditions (which already carry a prediction). ``judge(refs, result)``
then puts each beside the simulated estimate:

* exact value: the error, and whether the simulation's 95 % CI covers the value;
* bound: whether the estimate lies inside;
* asymptotic prediction or approximation: the ratio of the estimate to the prediction;
* stability condition: whether the run confirmed the predicted stability or instability.

A reference's ``quantity`` is a metric name of ``msjgym evaluate`` (e.g. ``number_in_system``), ``stability``, or a
theoretical quantity without a simulated counterpart (e.g. ``fcfs_threshold``: then the verdict compares it with the
exact value, when there is one).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from msjgym.core.distributions import Exponential
from msjgym.evaluate.statistics import Estimate
from msjgym.policies import Policy
from msjgym.systems.msj_model import MSJModel
from msjgym.theory import queues

if TYPE_CHECKING:
    from msjgym.evaluate.runner import EvaluationResult

KINDS = ("exact", "bound", "asymptotic", "approximation", "condition")
THROUGHPUT_OPTIMAL = {
    "server-filling": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.2 (ServerFilling is WCFS)",
    "server-filling-divisible": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip App. B.2",
    "maxweight": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (MaxWeight, after Maguluri et al.)",
}


@dataclass(frozen=True)
class Reference:
    """One theoretical reference for a scenario and policy.

    Attributes:
        quantity: the metric it predicts (``number_in_system``, ``queueing_probability[c1]``, ...), ``stability``,
            or a theoretical quantity (``fcfs_threshold``).
        kind: exact, bound, asymptotic, approximation or condition.
        description: what the reference is, in a few words.
        source: paper and equation (or "standard").
        value: the predicted value (exact, asymptotic, approximation).
        lower, upper: the interval of a bound (None: unbounded on that side).
        predicts_stable: for a condition, its prediction.
        verdict: the comparison with the simulation (empty until judged).
        agrees: whether the simulation agrees (None: nothing to compare, or not judged yet).
    """

    quantity: str
    kind: str
    description: str
    source: str
    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    predicts_stable: bool | None = None
    verdict: str = ""
    agrees: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


# ---------------------------------------------------------------- applicability
def _exponential_rates(model: MSJModel) -> list[float] | None:
    """The classes' exponential rates, or None if some duration is not exponential."""
    if all(isinstance(c.service, Exponential) for c in model.classes):
        return [c.service.rate for c in model.classes]
    return None


def _capacity(model: MSJModel) -> Reference:
    rho = model.load
    return Reference(
        quantity="stability", kind="condition",
        description=f"capacity: load ρ = {rho:.4g} {'<' if rho < 1 else '>='} 1 (no policy is stable at ρ >= 1)",
        source="standard (busy servers average λ Σ p_i m_i E[S_i] under any stable policy)",
        value=rho, upper=1.0, predicts_stable=None if rho < 1 else False)


def _throughput_optimal(model: MSJModel, policy: Policy) -> list[Reference]:
    if policy.name not in THROUGHPUT_OPTIMAL:
        return []
    rho = model.load
    return [Reference(
        quantity="stability", kind="condition",
        description=f"{policy.name} is throughput-optimal: stable iff ρ < 1 (ρ = {rho:.4g})",
        source=THROUGHPUT_OPTIMAL[policy.name], value=rho, upper=1.0, predicts_stable=rho < 1)]


def _equal_needs(model: MSJModel) -> list[Reference]:
    """All classes need the same m: every built-in policy serves the ⌊n/m⌋ oldest jobs, an M/G/⌊n/m⌋ FCFS queue."""
    needs = set(int(m) for m in model.needs)
    if len(needs) != 1:
        return []
    m = needs.pop()
    s = model.servers // m
    lam = model.arrival_rate
    mean = float(sum(c.probability * c.service.mean for c in model.classes))
    second = float(sum(c.probability * c.service.second_moment for c in model.classes))
    rho = lam * mean / s
    if rho >= 1:
        return []
    rates = _exponential_rates(model)
    where = f"every job needs {m} of {model.servers} servers, so every built-in policy is an M/G/{s} FCFS queue"
    if s == 1:
        wait = queues.mg1_mean_wait(lam, mean, second)
        source = "Pollaczek–Khinchine (standard)"
        label = f"{where} with one effective server"
        p_wait = rho
    elif rates is not None and len(set(rates)) == 1:
        mu = rates[0]
        wait = queues.mmc_mean_wait(s, lam, mu)
        p_wait = queues.erlang_c(s, lam / mu)
        source = "Erlang C (standard); Wang, Xie & Harchol-Balter §1.5 (single class ≡ M/M/⌊n/m⌋)"
        label = f"{where}, exponential: M/M/{s}"
    else:
        return []
    refs = [
        Reference("queueing_probability", "exact", label, source, value=p_wait),
        Reference("waiting_time", "exact", label, source, value=wait),
        Reference("response_time", "exact", label, source, value=wait + mean),
        Reference("number_in_queue", "exact", label, source, value=lam * wait),
        Reference("number_in_system", "exact", label, source, value=lam * (wait + mean)),
    ]
    for c in model.classes:
        refs.append(Reference(f"waiting_time[{c.name}]", "exact", label, source, value=wait))
    return refs


PROVIDERS: list[Callable[[MSJModel, Policy], list[Reference]]] = [
    lambda model, policy: [_capacity(model)],
    _throughput_optimal,
    lambda model, policy: _equal_needs(model),
]


def references(model: MSJModel, policy: Policy) -> list[Reference]:
    """Every reference that applies to ``model`` under ``policy`` (computed before any simulation)."""
    return [r for provider in PROVIDERS for r in provider(model, policy)]


def unstable_predictions(refs: list[Reference]) -> list[Reference]:
    """The stability conditions among ``refs`` that predict instability."""
    return [r for r in refs if r.kind == "condition" and r.predicts_stable is False]


# ---------------------------------------------------------------- verdicts
def _pct(x: float, ref: float) -> str:
    return f"{100 * x / ref:+.2f}%" if ref else f"{x:+.4g}"


def _judge_one(ref: Reference, result: EvaluationResult) -> Reference:
    if ref.kind == "condition":
        if ref.predicts_stable is None:
            return replace(ref, verdict="satisfied (necessary only)" if result.stable else
                           "satisfied, but the run was unstable (the condition is necessary, not sufficient)")
        agrees = ref.predicts_stable == result.stable
        what = "stable" if result.stable else "unstable"
        return replace(ref, agrees=agrees,
                       verdict=f"run {what}: {'confirmed' if agrees else 'CONTRADICTED'}")
    est = result.metrics.get(ref.quantity)
    if est is None:
        return replace(ref, verdict="no simulated estimate" + ("" if result.stable else " (run unstable)"))
    return replace(ref, **_compare(ref, est))


def _compare(ref: Reference, est: Estimate) -> dict[str, Any]:
    half = est.ci95 if est.ci95 is not None and math.isfinite(est.ci95) else math.nan
    if ref.kind == "exact":
        err = est.mean - ref.value
        covered = abs(err) <= half
        return {"agrees": bool(covered), "verdict": (
            f"error {_pct(err, ref.value)} (95% CI ±{_pct(half, ref.value)[1:]}): "
            + ("consistent" if covered else "INCONSISTENT"))}
    if ref.kind == "bound":
        inside = (ref.lower is None or est.mean >= ref.lower) and (ref.upper is None or est.mean <= ref.upper)
        return {"agrees": bool(inside), "verdict": "inside" if inside else "OUTSIDE"}
    ratio = est.mean / ref.value if ref.value else math.nan
    return {"verdict": f"simulated/predicted = {ratio:.4g}"}


def judge(refs: list[Reference], result: EvaluationResult) -> list[Reference]:
    """Each reference with its verdict against ``result``."""
    return [_judge_one(r, result) for r in refs]
