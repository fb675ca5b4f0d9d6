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
FALSE_ALARM = 0.05
"""The false-alarm rate of a whole scorecard: a correct run gets an INCONSISTENT or OUTSIDE verdict in at most this
fraction of seeds. With k interval verdicts in one scorecard, each uses a (1 − FALSE_ALARM/k) interval (Bonferroni);
the evaluator sets the widening on the result (``verdict_scale``, ``verdict_level``; 1 and 95 % without it)."""

RULE_OF_THREE = 3.0
"""A probability no measured job showed, in N measured jobs, is known only to be below 3/N at 95 % (the rule of
three: (1 − 3/N)^N ≈ e^-3 = 0.05): the resolution of a run whose units all measured 0."""


def percent(x: float, ref: float) -> str:
    return f"{100 * x / ref:+.2f}%" if ref else f"{x:+.4g}"


def _error(err: float, value: float, half: float) -> str:
    """The error against ``value``: relative when the interval resolves the value (half-width below it), else
    absolute (a relative error against a value far below the run's resolution means nothing: −100 %, 10⁸² %)."""
    if value and math.isfinite(half) and half < abs(value):
        return percent(err, value)
    return f"{err:+.4g} (absolute)"


def _widening(result: Judged) -> tuple[float, float]:
    """(factor on the 95 % half-widths, level of the verdicts' intervals) for ``result``'s scorecard."""
    return float(getattr(result, "verdict_scale", 1.0)), float(getattr(result, "verdict_level", 0.95))


def _measured(result: Judged) -> int:
    """The jobs measured over the whole run (0 when the result does not say)."""
    jobs, reps = getattr(result, "jobs", 0), getattr(result, "reps", 0)
    return int(jobs) * int(reps) if isinstance(jobs, int) and isinstance(reps, int) else 0


def verdict_interval(est: Estimate, result: Judged) -> tuple[float, str]:
    """The half-width a verdict uses for ``est`` and how to say it: its CI at the scorecard's level (NaN: none)."""
    if est.ci95 is None or not math.isfinite(est.ci95):
        return math.nan, "no CI: one measurement unit"
    scale, level = _widening(result)
    half = est.ci95 * scale
    return half, f"{100 * level:.4g}% CI ±{half:.3g}"


def _compare_exact(ref: Reference, est: Estimate, result: Judged) -> dict[str, Any]:
    err = est.mean - ref.value
    half, said = verdict_interval(est, result)
    head = f"estimate {est.mean:.6g} vs {ref.value:.6g}: error "
    if math.isnan(half):
        return {"verdict": f"{head}{_error(err, ref.value, half)} ({said}: not judged)"}
    if half == 0.0:  # every unit measured the same value: an interval of width 0 says nothing of the resolution
        n = _measured(result)
        if abs(err) <= 1e-9 * max(abs(ref.value), abs(est.mean)):
            return {"agrees": True, "verdict": f"{head}{_error(err, ref.value, half)} (every unit measured the same "
                                               "value; equal up to rounding): consistent"}
        if est.mean == 0.0 and n and 0.0 < ref.value <= RULE_OF_THREE / n:
            return {"agrees": True, "verdict": (
                f"{head}{err:+.4g} (absolute): no occurrence in {n:,} measured jobs, and the value is below the "
                f"run's resolution 3/N = {RULE_OF_THREE / n:.2g} (rule of three): consistent")}
        return {"agrees": False, "verdict": f"{head}{_error(err, ref.value, half)} (every unit measured "
                                            f"{est.mean:.6g}; interval of width 0): INCONSISTENT"}
    covered = abs(err) <= half
    return {"agrees": bool(covered), "verdict": f"{head}{_error(err, ref.value, half)} ({said}): "
                                                + ("consistent" if covered else "INCONSISTENT")}


def judge_bound(ref: Reference, mean: float, half: float, said: str) -> dict[str, Any]:
    """A bound's verdict for an estimate ``mean`` ± ``half`` (``said``: how the interval was obtained): OUTSIDE only
    when the whole interval lies beyond the bound; a point estimate outside with an interval that meets the bound is
    not significant (agrees None); without an interval (NaN), the point estimate alone, said so."""
    where = f" ({mean / ref.upper:.3g} of the bound)" if ref.upper and ref.lower is None else ""
    point = (ref.lower is None or mean >= ref.lower) and (ref.upper is None or mean <= ref.upper)
    if math.isnan(half):
        return {"agrees": bool(point), "verdict": ("inside" if point else "OUTSIDE") + where
                + f": point estimate {mean:.4g} ({said})"}
    lo, hi = mean - half, mean + half
    beyond = (ref.lower is not None and hi < ref.lower) or (ref.upper is not None and lo > ref.upper)
    if beyond:
        return {"agrees": False, "verdict": f"OUTSIDE{where}: {mean:.4g}, interval [{lo:.4g}, {hi:.4g}] ({said})"}
    if point:
        return {"agrees": True, "verdict": f"inside{where}: {mean:.4g} ({said})"}
    return {"agrees": None, "verdict": f"point estimate {mean:.4g} outside, but its interval [{lo:.4g}, {hi:.4g}] "
                                      f"({said}) meets the bound: not significant (run longer)"}


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
        # the difference of two estimates of one run: its half-width is at most the sum of theirs, whatever their
        # correlation (sd(X − Y) <= sd(X) + sd(Y)), so this interval keeps the stated false-alarm rate
        h1, _ = verdict_interval(est, result)
        h2, said = verdict_interval(other, result)
        half = h1 + h2
        if not math.isnan(half):
            said = f"{said.split(' CI')[0]} CI ±{half:.3g}, the sum of the two half-widths"
        d = est.mean - other.mean
        diff = judge_bound(replace(ref, upper=0.0, lower=None), d, half, said)
        word = {True: "inside", False: "OUTSIDE", None: "not significant (run longer)"}[diff["agrees"]]
        return replace(ref, agrees=diff["agrees"], verdict=(
            f"{word}: {est.mean:.4g} vs {ref.upper_metric} {other.mean:.4g}, difference {d:+.3g} ({said})"))
    return replace(ref, **_compare(ref, est, result))


def _compare(ref: Reference, est: Estimate, result: Judged) -> dict[str, Any]:
    if ref.kind == "exact":
        return _compare_exact(ref, est, result)
    if ref.kind == "bound":
        return judge_bound(ref, est.mean, *verdict_interval(est, result))
    ratio = est.mean / ref.value if ref.value else math.nan
    return {"verdict": f"simulated/predicted = {ratio:.4g}"}


def interval_verdicts(refs: list[Reference], metrics: dict[str, Estimate]) -> int:
    """How many of ``refs`` get a verdict from an interval (exact values and bounds with an estimate, not judged
    before simulating): the k of :data:`FALSE_ALARM`'s Bonferroni rule."""
    return sum(1 for r in refs if r.kind in ("exact", "bound") and not r.verdict and r.quantity in metrics
               and (r.upper_metric is None or r.upper_metric in metrics))


def judge(refs: list[Reference], result: Judged) -> list[Reference]:
    """Each reference with its verdict against ``result``."""
    return [_judge_one(r, result) for r in refs]
