"""Scorecard references of a finite-skip scenario (Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method
for multiserver analysis"), from :mod:`msjgym.theory.finite_skip`: the stability condition, Cor. 3.8 with generic and
exact constants and its components, the resource-pooled M/G/1, the heavy-traffic limit, the work identity,
Zhang–Zwart for LPS and the heterogeneous M/M/k chain; and their verdicts on a result.
"""
from __future__ import annotations

from typing import Any

from msjgym.core.distributions import Exponential
from msjgym.core.references import Reference
from msjgym.systems.finite_skip.contract import FiniteSkipPolicy
from msjgym.systems.finite_skip import simulation as fs
from msjgym.theory import finite_skip as theory

_GHS = "Grosof, Harchol-Balter & Scheller-Wolf, 'The finite-skip method for multiserver analysis'"


def references(model: fs.FiniteSkipModel, pol: FiniteSkipPolicy) -> list[Reference]:
    """Every reference of the finite-skip paper that applies to the policy ``pol`` (a built-in's declaration, or one
    describing a policy of the user's: not WCFS) on ``model``."""
    rho = model.load
    refs: list[Reference] = []
    if pol.wcfs:
        refs.append(Reference("stability", "condition", f"{pol.name} is WCFS: stable iff ρ < 1 (ρ = {rho:.4g})",
                              f"{_GHS} Lemma 3.4", value=rho, upper=1.0, predicts_stable=rho < 1,
                              threshold=model.arrival_rate / rho))
    else:
        refs.append(Reference("stability", "condition", f"capacity: ρ = {rho:.4g} < 1 is necessary",
                              "standard", value=rho, upper=1.0, predicts_stable=None if rho < 1 else False,
                              threshold=model.arrival_rate / rho))
    if rho >= 1:
        return refs
    refs.append(Reference("response_time", "approximation",
                          "resource-pooled M/G/1/FCFS λE[S²]/(2(1−ρ)) + E[S] (a comparison system, not a prediction)",
                          f"{_GHS} §3.4", value=theory.resource_pooled_mg1(model)))
    if pol.wcfs:
        for exact in (False, True):
            const = theory.wcfs_constants(model, pol, exact)
            if const is None:
                continue
            band = theory.wcfs_band(model, const)
            tag = (f"{const.label} constants: n={const.front}, w_nonfull={const.w_nonfull:.4g}, "
                   f"w_nonbusy={const.w_nonbusy:.4g}, r_min={const.r_min:.4g}")
            refs += [
                Reference("response_time", "bound", f"Cor. 3.8, {tag}", f"{_GHS} Cor. 3.8",
                          lower=band.response_lower, upper=band.response_upper),
                Reference("queueing_time", "bound", f"Thm 3.3 (time to the front), {const.label} constants",
                          f"{_GHS} Thm 3.3", lower=band.queueing_lower, upper=band.queueing_upper),
                Reference("front_time", "bound", f"Thm 3.7 (time in the front), {const.label} constants",
                          f"{_GHS} Thm 3.7", lower=band.front_lower, upper=band.front_upper),
            ]
            if const.w_nonbusy > 0:  # with w_nonbusy = 0 (LPS) the interval is the work identity itself
                refs.append(Reference("work", "bound", f"E[W] within [PK, PK + w_nonbusy], {const.label} constants",
                                      f"{_GHS} §3.2", lower=band.work_lower, upper=band.work_upper))
    if pol.wcfs:
        m1, m2 = model.size_moments
        refs.append(Reference("response_time", "asymptotic", "heavy traffic: (1−ρ)E[T] → E[S²]/(2E[S]) as ρ → 1",
                              f"{_GHS} §3.6 (from Cor. 3.8; constants do not depend on λ)",
                              value=m2 / (2 * m1 * (1 - rho))))
    refs.append(Reference("work_identity_residual", "exact",
                          "work identity E[W] − E[W(1−B)]/(1−ρ) − λE[S²]/(2(1−ρ)) = 0 (any system)",
                          f"{_GHS} §3.2 (rate conservation on W²)", value=0.0))
    if pol.name == "lps":
        refs.append(Reference("response_time", "approximation", "Zhang–Zwart LPS approximation",
                              f"{_GHS} §5.3.1, ref. [49]", value=theory.zhang_zwart_lps(model)))
    if (pol.name in ("fsf", "fsf-minmig", "ssf") and len(model.laws) == 1
            and isinstance(model.laws[0], Exponential)):
        refs.append(Reference("response_time", "exact", "heterogeneous M/M/k birth–death chain",
                              "Grosof, Harchol-Balter & Scheller-Wolf §4.3.1 (their ref. [1])",
                              value=theory.heterogeneous_mmk(model, fastest_first=pol.name != "ssf")))
    return refs


def judge(refs: list[Reference], result: Any) -> list[Reference]:
    """Each reference with its verdict on ``result`` (a :class:`msjgym.evaluate.result.Result`): the common rules of
    :func:`msjgym.core.references.judge` (a bound whose point estimate lies outside while its interval meets it is
    reported as not significant, agrees None)."""
    from msjgym.core.references import judge as _judge

    return _judge(refs, result)
