"""References: what the theory says about a metric, and the verdict a simulation gets against it.

A family lists, before any simulation, its references for a scenario and policy (exact values, bounds, asymptotic
predictions, approximations, stability conditions); :func:`judge` then puts each beside the simulated estimate:

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
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from msjgym.core.estimates import Estimate


class Judged(Protocol):
    """What a verdict reads of a result: whether the run was stable, and its estimates by metric name."""

    stable: bool
    metrics: dict[str, Estimate]


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
        upper_metric: for a bound given by another simulated quantity (``upper`` is then None).
        predicts_stable: for a condition, its prediction (None: the condition says nothing either way).
        verdict: the comparison with the simulation (empty until judged).
        agrees: whether the simulation agrees (None: nothing to compare, or not judged yet).
        threshold: for a stability condition, the critical arrival rate λ* (jobs per unit time; per server in a
            dispatch system) at which it changes: the quantity the theory gives, beside ``value``/``upper`` (the
            scenario's ρ-like ratio and its limit).
    """

    quantity: str
    kind: str
    description: str
    source: str
    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    upper_metric: str | None = None
    predicts_stable: bool | None = None
    verdict: str = ""
    agrees: bool | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def unstable_predictions(refs: list[Reference]) -> list[Reference]:
    """The stability conditions among ``refs`` that predict instability."""
    return [r for r in refs if r.kind == "condition" and r.predicts_stable is False]


# ---------------------------------------------------------------- verdicts
def percent(x: float, ref: float) -> str:
    return f"{100 * x / ref:+.2f}%" if ref else f"{x:+.4g}"


def _judge_one(ref: Reference, result: Judged) -> Reference:
    if ref.kind == "condition":
        what = "stable" if result.stable else "unstable"
        if ref.predicts_stable is None:
            holds = ref.upper is None or ref.value < ref.upper
            return replace(ref, verdict=f"{'holds' if holds else 'does not hold'}, which predicts nothing here "
                                        f"(run {what})")
        agrees = ref.predicts_stable == result.stable
        if agrees:
            outcome = "confirmed"
        elif result.stable:  # the detector needs the growth to stand out of the noise within the run
            outcome = "NOT CONFIRMED: no growth detected in this run length (slow growth needs more jobs)"
        else:
            outcome = "CONTRADICTED"
        return replace(ref, agrees=agrees,
                       verdict=f"predicts {'stable' if ref.predicts_stable else 'unstable'}; run {what}: {outcome}")
    if ref.verdict:  # judged before simulating (a theoretical quantity, or a trend over n)
        return ref
    est = result.metrics.get(ref.quantity)
    if est is None:
        return replace(ref, verdict="no simulated estimate" + ("" if result.stable else " (run unstable)"))
    if ref.upper_metric is not None:
        other = result.metrics.get(ref.upper_metric)
        if other is None:
            return replace(ref, verdict=f"no simulated {ref.upper_metric}")
        ref = replace(ref, upper=other.mean)
        inside = est.mean <= other.mean
        return replace(ref, agrees=inside, verdict=(
            f"{'inside' if inside else 'OUTSIDE'}: {est.mean:.4g} vs {ref.upper_metric} {other.mean:.4g}"))
    return replace(ref, **_compare(ref, est))


def _compare(ref: Reference, est: Estimate) -> dict[str, Any]:
    half = est.ci95 if est.ci95 is not None and math.isfinite(est.ci95) else math.nan
    if ref.kind == "exact":
        err = est.mean - ref.value
        if math.isnan(half):  # one replication without batch means: nothing to judge the error against
            return {"verdict": f"error {percent(err, ref.value)} (no CI: one replication)"}
        covered = abs(err) <= half
        return {"agrees": bool(covered), "verdict": (
            f"error {percent(err, ref.value)} (95% CI ±{percent(half, ref.value)[1:]}): "
            + ("consistent" if covered else "INCONSISTENT"))}
    if ref.kind == "bound":
        inside = (ref.lower is None or est.mean >= ref.lower) and (ref.upper is None or est.mean <= ref.upper)
        where = f" ({est.mean / ref.upper:.3g} of the bound)" if ref.upper and ref.lower is None else ""
        return {"agrees": bool(inside), "verdict": ("inside" if inside else "OUTSIDE") + where}
    ratio = est.mean / ref.value if ref.value else math.nan
    return {"verdict": f"simulated/predicted = {ratio:.4g}"}


def judge(refs: list[Reference], result: Judged) -> list[Reference]:
    """Each reference with its verdict against ``result``."""
    return [_judge_one(r, result) for r in refs]
