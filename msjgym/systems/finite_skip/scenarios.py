"""Finite-skip scenarios (Figs. 2–7 of Grosof, Harchol-Balter & Scheller-Wolf), their estimates and scorecard.

``load_finite_skip(name, {"load": ρ})`` builds the system of a figure (the paper's §4.5, §5.5, §6.5, §7.5):

* ``finite-skip-fig2``: heterogeneous M/G/4, speeds (0.4, 0.3, 0.2, 0.1), S ~ H2 (Exp(2) or Exp(2/3) w.p. 1/2);
* ``finite-skip-fig3``: LPS(4), the same S;
* ``finite-skip-fig4a`` / ``-fig4b``: threshold parallelism, k = 8, (P, S) = (1, Exp(2)) / (8, Exp(2/3)) each w.p. 1/2
  (4b: the rates swapped);
* ``finite-skip-fig6`` / ``-fig7``: the MSJ built-ins of :mod:`msjgym.systems.msj.scenarios` as rate models.

``summarize(model, reps)`` turns replications into estimates with 95 % CIs (Student t over replications), including
the work-identity residual and the pathwise-invariant diagnostics; ``references`` lists the theory (Cor. 3.8 with
generic and exact constants, its components, the resource-pooled M/G/1, Zhang–Zwart, the het M/M/k chain);
``judge`` is :func:`msjgym.core.references.judge`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from msjgym.core.distributions import Distribution, Exponential, HyperExponential
from msjgym.core.limits import MAX_SERVERS, check_int
from msjgym.errors import ScenarioError, UnknownParameter
from msjgym.core.references import Reference
from msjgym.core.estimates import Estimate, estimates
from msjgym.policies.finite_skip import FINITE_SKIP_POLICIES, HET, LPS, MSJ, THRESHOLD, FiniteSkipPolicy
from msjgym.systems.finite_skip import simulate as fs
from msjgym.theory import finite_skip as theory

_GHS = "Grosof, Harchol-Balter & Scheller-Wolf, 'The finite-skip method for multiserver analysis'"
_H2 = HyperExponential(rates=(2.0, 2.0 / 3.0), probs=(0.5, 0.5))  # E[S] = 1, E[S²] = 2.5 (Figs. 2–4)


@dataclass(frozen=True)
class FiniteSkipFigure:
    """A figure: its description, model builder (from ρ), the policies it plots, and which are simulated on the
    multiserver-job engine instead (MaxWeight exists only there)."""

    description: str
    build: Callable[..., fs.FiniteSkipModel]
    policies: tuple[str, ...]
    msj_policies: tuple[str, ...] = ()
    params: tuple[tuple[str, object], ...] = ()  # extra parameters (name, default) beside ``load``


def _servers(value: object) -> int:
    return check_int("servers", value, 1, MAX_SERVERS, ScenarioError, "the kernel keeps per-server state")


def _het(load: float, speeds: object = (0.4, 0.3, 0.2, 0.1)) -> fs.FiniteSkipModel:
    """Speeds in any positive units, normalised to sum to 1 (capacity 1); k = their number."""
    if not isinstance(speeds, (list, tuple)) or not speeds:
        raise ScenarioError(f"speeds = {speeds!r}: must be a non-empty list of numbers in (0, inf)")
    for i, v in enumerate(speeds):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
            raise ScenarioError(f"speeds[{i}] = {v!r}: must be a finite number in (0, inf) (speeds are normalised "
                                "to sum to 1)")
    total = math.fsum(speeds)
    return fs.FiniteSkipModel(HET, len(speeds), load, (1.0,), (_H2,), (1,),
                              speeds=tuple(v / total for v in speeds), name="fig2")


def _lps(load: float, servers: object = 4) -> fs.FiniteSkipModel:
    return fs.FiniteSkipModel(LPS, _servers(servers), load, (1.0,), (_H2,), (1,), name="fig3")


def _threshold(inelastic_rate: float, elastic_rate: float, name: str) -> Callable[..., fs.FiniteSkipModel]:
    def build(load: float, servers: object = 8, threshold: object = None) -> fs.FiniteSkipModel:
        """Inelastic jobs P = 1, elastic jobs P = ``threshold`` (default: servers, as in the paper)."""
        k = _servers(servers)
        laws = (Exponential(rate=inelastic_rate), Exponential(rate=elastic_rate))
        mean = 0.5 / inelastic_rate + 0.5 / elastic_rate
        p = k if threshold is None else threshold
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= k:
            raise ScenarioError(f"threshold = {p!r}: must be an integer in [1, servers={k}]")
        return fs.FiniteSkipModel(THRESHOLD, k, load / mean, (0.5, 0.5), laws, (1, p), name=name)
    return build


def _msj(figure: str) -> Callable[..., fs.FiniteSkipModel]:
    def build(load: float) -> fs.FiniteSkipModel:
        from msjgym.api import load_scenario
        model = load_scenario(figure, {"load": load}).model
        return msj_as_finite_skip(model, figure)
    return build


def msj_as_finite_skip(model, name: str = "") -> fs.FiniteSkipModel:
    """An :class:`~msjgym.systems.msj.model.MSJModel` as a rate model (durations X; S = vX/k)."""
    return fs.FiniteSkipModel(MSJ, int(model.servers), float(model.arrival_rate),
                              tuple(float(c.probability) for c in model.classes),
                              tuple(c.service for c in model.classes), tuple(int(c.need) for c in model.classes),
                              name=name)


_HET_POLICIES = ("fsf", "fsf-minmig", "fsf-np", "ssf", "ssf-np", "random")
_TP_POLICIES = ("tp-fcfs", "inelastic-first", "elastic-first")
_MSJ_POLICIES = ("server-filling", "server-filling-divisible", "fcfs", "preemptive-first-fit", "msf", "lsf")
FIGURES: dict[str, FiniteSkipFigure] = {
    "finite-skip-fig2": FiniteSkipFigure(
        f"{_GHS} Fig. 2: heterogeneous M/G/4, speeds (0.4, 0.3, 0.2, 0.1), S ~ H2 (E[S]=1, E[S²]=2.5)",
        _het, _HET_POLICIES, params=(("speeds", [0.4, 0.3, 0.2, 0.1]),)),
    "finite-skip-fig3": FiniteSkipFigure(f"{_GHS} Fig. 3: LPS(4), S ~ H2 (E[S]=1, E[S²]=2.5)", _lps, ("lps",),
                                         params=(("servers", 4),)),
    "finite-skip-fig4a": FiniteSkipFigure(
        f"{_GHS} Fig. 4a: threshold parallelism, k=8, (P, S) = (1, Exp(2)), (8, Exp(2/3)) each w.p. 1/2",
        _threshold(2.0, 2.0 / 3.0, "fig4a"), _TP_POLICIES, params=(("servers", 8), ("threshold", None))),
    "finite-skip-fig4b": FiniteSkipFigure(
        f"{_GHS} Fig. 4b: threshold parallelism, k=8, (P, S) = (1, Exp(2/3)), (8, Exp(2)) each w.p. 1/2",
        _threshold(2.0 / 3.0, 2.0, "fig4b"), _TP_POLICIES, params=(("servers", 8), ("threshold", None))),
    "finite-skip-fig6": FiniteSkipFigure(
        f"{_GHS} Fig. 6: MSJ, k=4, (v, X) = (1, Exp(5)), (2, Exp(2)), (4, Exp(0.5)) each w.p. 1/3",
        _msj("finite-skip-fig6"), _MSJ_POLICIES, ("maxweight",)),
    "finite-skip-fig7": FiniteSkipFigure(
        f"{_GHS} Fig. 7: MSJ, k=4, (v, X) = (1, Exp(1)) 4/7, (2, Exp(8)) 2/7, (4, Exp(64)) 1/7",
        _msj("finite-skip-fig7"), _MSJ_POLICIES, ("maxweight",)),
}

RATE_MODEL_FIGURES = ("finite-skip-fig2", "finite-skip-fig3", "finite-skip-fig4a", "finite-skip-fig4b")
"""The figures whose systems are rate models of their own (the finite-skip family's scenarios); Figs. 6–7 are the
multiserver-job setting, simulated on the multiserver-job engine as built-ins of that family."""


def load_finite_skip(name: str, overrides: Mapping[str, object] | None = None) -> fs.FiniteSkipModel:
    """The model of figure ``name`` with ``overrides`` (``load``, default 0.6, and the figure's own parameters:
    fig2 ``speeds``, fig3 ``servers``, fig4a/b ``servers`` and ``threshold``); ScenarioError naming the parameter and
    its valid range otherwise."""
    if name not in FIGURES:
        raise ScenarioError(f"finite-skip scenario {name!r}: unknown; valid: {', '.join(FIGURES)}")
    fig = FIGURES[name]
    overrides = dict(overrides or {})
    valid = {"load": 0.6} | dict(fig.params)
    unknown = [k for k in overrides if k not in valid]
    if unknown:
        shown = ", ".join(f"{k}={v}" for k, v in valid.items())
        raise UnknownParameter(f"{name}: unknown parameter {unknown[0]!r}; valid parameters (defaults): {shown}")
    load = overrides.pop("load", 0.6)
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not (math.isfinite(load) and load > 0):
        raise ScenarioError(f"{name}: load = {load!r}: must be a finite number in (0, inf) (ρ = λE[S])")
    try:
        return fig.build(float(load), **overrides)
    except ScenarioError as exc:
        raise ScenarioError(f"{name}: {exc}") from None


# ---------------------------------------------------------------- estimates
@dataclass(frozen=True)
class FiniteSkipSummary:
    """Estimates (95 % CIs over replications) of one policy on one model.

    ``metrics``: response_time, queueing_time (T_Q: arrival to front entry), front_time, number_in_system,
    number_in_front, work (E[W]), work_nonbusy (E[W(1−B)]), utilization (E[B]), work_identity_residual
    (E[W] − E[W(1−B)]/(1−ρ) − λE[S²]/(2(1−ρ)), with the model's exact λ, ρ, E[S²]). Empty if unstable.
    ``invariants``: over all replications, the largest |T_Q − (W^A − W_F^F)| over measured jobs that entered the
    front, the largest front size, the largest 1 − B seen while the queue was non-empty, and the number of events at
    which a job outside the front was served (all zero, up to rounding, for a WCFS policy); when unstable, also
    ``growth_rate`` (jobs per unit time: the capacity reached over the time it took, averaged over unstable runs).
    """

    stable: bool
    metrics: dict[str, Estimate]
    invariants: dict[str, float]
    reps: int


FRONT_METRICS = ("queueing_time", "front_time")
"""The metrics defined only when every measured job went through the front (a WCFS policy's jobs always do)."""


def through_front(r: fs.Replication) -> bool:
    """Whether every measured job of replication ``r`` entered the front before it was served."""
    return not np.isnan(r.rec[:, fs.R_FRONT]).any()


def replications_metrics(model: fs.FiniteSkipModel, reps: list[fs.Replication]) -> list[dict[str, float]]:
    """:func:`replication_metrics` of every (stable) replication, with :data:`FRONT_METRICS` in none of them unless
    every measured job of every replication went through the front: averaging them over the replications where it
    happened would select replications by their outcome (a biased estimate, with the wrong number of replications)."""
    units = [replication_metrics(model, r) for r in reps]
    if not all(through_front(r) for r in reps):
        units = [{k: v for k, v in u.items() if k not in FRONT_METRICS} for u in units]
    return units


def replication_metrics(model: fs.FiniteSkipModel, r: fs.Replication) -> dict[str, float]:
    """One stable replication's metric values (see :class:`FiniteSkipSummary`); ``queueing_time`` and ``front_time``
    only when every measured job went through the front (with several replications: see
    :func:`replications_metrics`)."""
    lam = model.arrival_rate
    m1, m2 = model.size_moments
    rho = lam * m1
    a, rec = r.acc, r.rec
    time = a[fs.A_TIME]
    out = {"response_time": float(np.mean(rec[:, fs.R_DONE] - rec[:, fs.R_ARR]))}
    if through_front(r):
        out["queueing_time"] = float(np.mean(rec[:, fs.R_FRONT] - rec[:, fs.R_ARR]))
        out["front_time"] = float(np.mean(rec[:, fs.R_DONE] - rec[:, fs.R_FRONT]))
    out["number_in_system"] = a[fs.A_N] / time
    out["number_in_front"] = a[fs.A_NF] / time
    out["work"] = a[fs.A_W] / time
    out["work_nonbusy"] = a[fs.A_W1B] / time
    out["utilization"] = a[fs.A_B] / time
    if rho < 1:
        out["work_identity_residual"] = a[fs.A_W] / time - a[fs.A_W1B] / time / (1 - rho) - lam * m2 / (2 * (1 - rho))
    return out


def pathwise_invariants(reps: list[fs.Replication]) -> dict[str, float]:
    """Over all replications: the largest |T_Q − (W^A − W_F^F)| over measured jobs that entered the front (stable
    replications), the largest front size, the largest 1 − B seen while the queue was non-empty, and the number of
    events at which a job outside the front was served (all zero, up to rounding, for a WCFS policy)."""
    inv = {"identity_error": 0.0, "max_front": 0.0, "max_rate_gap": 0.0, "served_outside_front": 0.0}
    for r in reps:
        inv["max_front"] = max(inv["max_front"], float(r.acc[fs.A_MAXNF]))
        inv["max_rate_gap"] = max(inv["max_rate_gap"], float(r.acc[fs.A_GAP]))
        inv["served_outside_front"] += float(r.acc[fs.A_OUTSIDE])
        if r.stable:
            tq = r.rec[:, fs.R_FRONT] - r.rec[:, fs.R_ARR]
            err = np.abs(tq - (r.rec[:, fs.R_WA] - r.rec[:, fs.R_WFF]))
            err = err[np.isfinite(err)]  # jobs served outside the front never entered it: no identity for them
            inv["identity_error"] = max(inv["identity_error"], float(err.max()) if err.size else 0.0)
    return inv


def growth_rate(r: fs.Replication) -> float:
    """An unstable replication's growth rate of the number in system: the capacity reached over the time it took
    (jobs per unit time)."""
    return float(r.acc[fs.A_NEND] / r.acc[fs.A_END])


def summarize(model: fs.FiniteSkipModel, reps: list[fs.Replication]) -> FiniteSkipSummary:
    """Estimates with 95 % CIs over ``reps`` (see :class:`FiniteSkipSummary`)."""
    inv = pathwise_invariants(reps)
    if not all(r.stable for r in reps):
        inv["growth_rate"] = float(np.mean([growth_rate(r) for r in reps if not r.stable]))
        return FiniteSkipSummary(False, {}, inv, len(reps))
    return FiniteSkipSummary(True, estimates(replications_metrics(model, reps)), inv, len(reps))


def run(model: fs.FiniteSkipModel, policy: str, *, jobs: int = 100_000, reps: int = 10, seed: int = 0,
        warmup: int | None = None) -> FiniteSkipSummary:
    """Simulate and summarise (see :func:`msjgym.systems.finite_skip.simulate.simulate`)."""
    return summarize(model, fs.simulate(model, policy, jobs=jobs, reps=reps, seed=seed, warmup=warmup))


# ---------------------------------------------------------------- references
def references(model: fs.FiniteSkipModel, policy: FiniteSkipPolicy | str) -> list[Reference]:
    """Every reference of the finite-skip paper that applies to ``policy`` on ``model``."""
    pol = FINITE_SKIP_POLICIES[policy] if isinstance(policy, str) else policy
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


def judge(refs: list[Reference], summary: FiniteSkipSummary) -> list[Reference]:
    """Each reference with its verdict (the scorecard's own rules), except that a bound whose point estimate lies
    outside while the 95 % CI meets it is reported as not significant (agrees None), not as a violation."""
    from dataclasses import replace

    from msjgym.core.references import judge as _judge
    out = []
    for ref in _judge(refs, summary):  # type: ignore[arg-type]
        est = summary.metrics.get(ref.quantity)
        if ref.kind == "bound" and ref.agrees is False and est is not None and math.isfinite(est.ci95):
            lo, hi = est.mean - est.ci95, est.mean + est.ci95
            if (ref.lower is None or hi >= ref.lower) and (ref.upper is None or lo <= ref.upper):
                ref = replace(ref, agrees=None, verdict=f"point estimate outside, but its 95% CI [{lo:.4g}, {hi:.4g}] "
                                                        "meets the bound: not significant (run longer)")
        out.append(ref)
    return out


__all__ = ["FIGURES", "load_finite_skip", "msj_as_finite_skip", "run", "summarize", "references", "judge",
           "FiniteSkipSummary", "Distribution"]


def msj_fcfs_stability_load(model: fs.FiniteSkipModel) -> float:
    """The load ρ* = μ_sat·E[S] above which MSJ FCFS is unstable (μ_sat: throughput of the saturated FCFS system,
    exponential durations; Grosof & Ayhan §3 via :func:`msjgym.theory.saturated.saturated_fcfs`). [exact]"""
    from msjgym.theory.saturated import saturated_fcfs
    if model.system != MSJ or not all(isinstance(d, Exponential) for d in model.laws):
        raise ValueError("the saturated-system threshold needs an MSJ model with exponential durations")
    sat = saturated_fcfs(model.servers, list(model.params), list(model.probs), [d.rate for d in model.laws])
    return sat.throughput * model.size_moments[0]
