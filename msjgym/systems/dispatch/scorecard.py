"""Scorecard references for dispatch scenarios: the cavity queue, the paper's bounds and tables, the invariants.

What applies (HKV = Hellemans, Kielanski & Van Houdt; their errata are corrected, see docs/errata.md):
    * every policy: stability λ < 1 [condition]; busy fraction = λ (unit-rate servers, mean-1 jobs; not resource
      pooling, whose servers run at rate 1 − p) [exact]; the message rate = δ for push, pull and water filling
      [exact];
    * push, pull, water filling, resource pooling with a phase-type law: the cavity fixed point
      (:func:`msjgym.systems.dispatch.cavity.cavity`): E[R], E[Q], the maximum queue length and P[Q = k] [exact for the
      cavity queue, the N → ∞ limit as HKV conjecture]; a law that is not phase-type (det): the closed forms only;
    * push / water filling: Thm 4.7 (ceiling upper bound, erratum) on the max queue length, Thm 4.9 (floor on the
      lower side, erratum) and the distribution-free E[Q] bound on E[R]; pull: Thm 6.4; resource pooling: p*(λ)
      (Prop 7.2), the exponential max queue length and Prop 7.3's deterministic minimum [bound];
    * a run that matches a row of Tables 1–4: the paper's simulated E[R] at this N, judged within the combined 95 %
      CIs (water filling within 2 %: its runs vary strongly, docs/modelling-choices.md#lb-water-filling);
    * random routing: every server is an M/G/1 queue [exact at any N]; jsq-d with exponential sizes: the N → ∞
      mean-field E[R] = Σ_{i>=1} λ^{(d^i − d)/(d − 1)} [asymptotic]; jsq, jiq: E[R] → 1 as N → ∞ [asymptotic].

Bounds and values of the cavity queue are judged twice: the cavity value against the bound (theory), and the
simulation against both (a finite-N gap is expected: the paper's own rel. err. at this N is shown beside it).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from msjgym.core.distributions import Exponential
from msjgym.systems.dispatch.params import pull_update_rates
from msjgym.core.estimates import Estimate
from msjgym.core.references import Judged, Reference, judge_bound, percent, verdict_interval
from msjgym.core.references import judge as judge_references
from msjgym.systems.dispatch.model import DispatchModel
from msjgym.systems.dispatch.scenarios import DispatchSetting
from msjgym.systems.dispatch import cavity as cv
from msjgym.theory import queues
from msjgym.systems.dispatch.paper_tables import TableRow

PAPER_POLICIES = cv.POLICIES
WATER_FILLING_TOLERANCE = 0.02
"""Relative tolerance of the water-filling comparison with the paper (docs/modelling-choices.md#lb-water-filling)."""
MAX_LEVELS_SHOWN = 12
"""Queue-length levels P[Q = k] listed (k = 0, 1, ...)."""

_HKV = "HKV"
_SOURCES = {"push": "HKV §4.1–4.2, eq. (3), Thm 4.3",
            "pull": "HKV §6, eq. (26)–(28), erratum Q←_{m,m} (docs/errata.md#cavity-pull-block)",
            "water-filling": "HKV §5, eq. (19), Thm 5.1", "resource-pooling": "HKV §7, eq. (32)–(34), Thm 7.1"}


def level_metric(k: int) -> str:
    """Name of the metric P[Q = k] (time-average fraction of servers with k jobs)."""
    return f"P(Q={k})"


def _cavity_params(setting: DispatchSetting, policy: str) -> dict[str, float]:
    if policy == "resource-pooling":
        return {"p": float(setting.p)}
    if policy == "pull":
        if setting.delta0 is not None:  # the idle servers' rate given instead of the overall rate
            return {"delta0": float(setting.delta0), "delta1": float(setting.delta1 or 0.0)}
        return {"delta": float(setting.delta), "delta1": float(setting.delta1 or 0.0)}
    return {"delta": float(setting.delta)}


def _cavity(setting: DispatchSetting, policy: str) -> list[Reference]:
    """The cavity fixed point's E[R], E[Q], max queue length and P[Q = k] (phase-type laws only)."""
    fp = cv.cavity(policy, setting.lam, setting.dist, **_cavity_params(setting, policy))
    src = _SOURCES[policy]
    label = (f"cavity queue (N → ∞), {fp.unknown} = {fp.value:.6g}, m = {fp.m}; exact for the cavity, the N → ∞ "
             "limit as HKV conjecture")
    refs = [Reference("response_time", "exact", label, src, value=fp.mean_response_time),
            Reference("mean_queue_length", "exact", label, src, value=fp.mean_queue_length),
            Reference("max_queue_length", "exact", f"cavity max queue length (⌈m̃⌉; m̃ = "
                      f"{'n/a' if fp.m_tilde is None else f'{fp.m_tilde:.6g}'}); simulated: mass above it",
                      src, value=float(fp.max_queue_length))]
    for k in range(min(fp.max_queue_length + 2, MAX_LEVELS_SHOWN)):
        value = float(fp.queue_length_pmf[k]) if k < fp.queue_length_pmf.size else 0.0
        refs.append(Reference(level_metric(k), "exact", "cavity P[Q = k] (time-average fraction of servers with k "
                              "jobs)", src, value=value))
    return refs


def _y(setting: DispatchSetting) -> float:
    return cv.size_below_timer_probability(setting.dist, float(setting.delta))


def _push_bounds(setting: DispatchSetting, cavity_max: float | None) -> list[Reference]:
    lam, delta = setting.lam, float(setting.delta)
    y = _y(setting)
    m_tilde = cv.push_m_tilde(lam, delta, y)
    lo, hi = cv.push_max_queue_bounds(lam, delta)
    exact_max = max(math.ceil(m_tilde - 1e-12), 0)
    refs = [Reference("max_queue_length", "bound", "Thm 4.7 distribution-free bounds on ⌈m̃⌉ (erratum: ceiling in "
                      "the upper bound)", "HKV Thm 4.7, eq. (16); docs/errata.md#cavity-thm-4-7",
                      lower=float(lo), upper=float(hi),
                      verdict=_theory_inside(exact_max, lo, hi, "⌈m̃⌉"))]
    if cavity_max is None:   # not phase-type: Thm 4.3 holds for any law through y
        refs.append(Reference("max_queue_length", "exact", f"⌈m̃⌉, m̃ = {m_tilde:.6g} from y = E[e^(−δZ)] = {y:.6g} "
                              "(any law)", "HKV Thm 4.3, eq. (8)", value=float(exact_max)))
    q_lo, q_hi = cv.push_mean_queue_bounds(lam, delta, y)
    refs.append(Reference("response_time", "bound", "Thm 4.9 bounds on the cavity E[Q]/λ (erratum: ⌊m̃⌋ on the "
                          "lower side)", "HKV Thm 4.9; docs/errata.md#cavity-thm-4-9",
                          lower=q_lo / lam, upper=q_hi / lam))
    upper = cv.push_mean_queue_upper_bound(lam, delta) / lam
    refs.append(Reference("response_time", "bound", "distribution-free δu²/(1 + δu)/λ, u = ⌈λ/((1 − λ)δ)⌉",
                          "HKV §4.3 observation (4); docs/errata.md#cavity-observation-4", upper=upper))
    return refs


def _pull_bounds(setting: DispatchSetting) -> list[Reference]:
    lam = setting.lam
    if setting.delta0 is not None:
        delta0, delta1 = float(setting.delta0), float(setting.delta1 or 0.0)
    else:
        delta0, delta1 = pull_update_rates(lam, float(setting.delta), float(setting.delta1 or 0.0))
    m_tilde = cv.pull_m_tilde(lam, delta0, delta1)
    q_lo, q_hi = cv.pull_mean_queue_bounds(lam, delta0, delta1)
    return [Reference("max_queue_length", "exact", f"⌈m̃⌉, m̃ = {m_tilde:.6g} (δ₀ = {delta0:.6g}, δ₁ = {delta1:g}; "
                      "insensitive to the law)", "HKV Thm 6.2, eq. (28)", value=float(math.ceil(m_tilde - 1e-12))),
            Reference("response_time", "bound", "Thm 6.4 bounds q←(⌊m̃⌋)/λ <= E[R] <= q←(⌈m̃⌉)/λ (insensitive; "
                      "exact at integer m̃)", "HKV Thm 6.4, eq. (31)", lower=q_lo / lam, upper=q_hi / lam)]


def _pooling_bounds(setting: DispatchSetting, cavity_max: float | None) -> list[Reference]:
    lam, p = setting.lam, float(setting.p)
    star = cv.pooling_threshold(lam)
    if p >= lam:
        what = "p >= λ: the central server absorbs all work, the cavity queues are empty"
    elif p >= star:
        what = "p*(λ) <= p < λ: max queue length 1 for every law (insensitive)"
    else:
        what = "p < p*(λ): the max queue length depends on the law (unbounded over laws, Z(ε) → 0)"
    regime = "law-dependent" if p < star else "insensitive" if p < lam else "empty queues"
    refs = [Reference("p", "condition", f"p*(λ) = {star:.6g}: {what}", "HKV Prop 7.2", value=p,
                      upper=star, verdict=f"regime: {regime} (theory)"),
            Reference("utilization", "asymptotic", "busy fraction → 1 − (1 − λ)/(1 − p) as N → ∞ (flow balance)",
                      "HKV eq. (32)", value=max(0.0, (lam - p) / (1.0 - p)))]
    if star <= p < lam:
        refs.append(Reference("response_time", "exact", "E[R] = (λ − p)/(λ(1 − p)) (insensitive)", "HKV Prop 7.2",
                              value=cv.pooling_insensitive_response_time(lam, p)))
    if 0.0 < p < lam:
        det = cv.pooling_deterministic_max_queue_length(lam, p)
        refs.append(Reference("max_queue_length", "bound", "Prop 7.3: deterministic sizes minimise the max queue "
                              "length (M/D/1/n)", "HKV Prop 7.3", lower=float(det), verdict="theory only" if
                              cavity_max is None else _theory_inside(cavity_max, det, None, "cavity max")))
        if isinstance(setting.dist, Exponential):
            refs.append(Reference("max_queue_length", "exact", "exponential closed form ⌈x⌉ − 1, x = "
                                  "log(p/(1 − λ))/log(λ/(1 − p)) (erratum)",
                                  "HKV §7.2, [22]; docs/errata.md#cavity-pooling-exponential-max",
                                  value=float(cv.pooling_exponential_max_queue_length(lam, p))))
    return refs


def _theory_inside(value: float, lower: float | None, upper: float | None, name: str) -> str:
    inside = (lower is None or value >= lower) and (upper is None or value <= upper)
    return f"{name} = {value:g}: {'inside' if inside else 'OUTSIDE'}"


def _classics(setting: DispatchSetting, policy: str, d: int | None) -> list[Reference]:
    lam, dist = setting.lam, setting.dist
    if policy == "random":
        wait = queues.mg1_mean_wait(lam, dist.mean, dist.second_moment)
        return [Reference("response_time", "exact", "random routing: each server is an M/G/1 queue (P-K formula)",
                          "standard (Pollaczek–Khinchine)", value=dist.mean + wait)]
    if policy == "jsq-d" and isinstance(dist, Exponential) and d is not None and d >= 2:
        total, i = 0.0, 1
        while True:
            term = lam ** ((d**i - d) / (d - 1))
            total += term
            if term < 1e-15 or i > 60:
                break
            i += 1
        return [Reference("response_time", "asymptotic", f"JSQ({d}) mean field, N → ∞: Σ λ^((d^i − d)/(d − 1))",
                          "Vvedenskaya, Dobrushin & Karpelevich 1996; Mitzenmacher 2001", value=total)]
    if policy in ("jsq", "jiq"):
        return [Reference("response_time", "asymptotic", "vanishing waiting time as N → ∞: E[R] → E[size]",
                          "Stolyar 2015 (JIQ); Lu et al. 2011", value=dist.mean)]
    return []


def random_routing_response_time(lam: float, dist, speeds: tuple[float, ...]) -> float | None:
    """Random routing over servers with ``speeds``: each server i is an M/G/1 queue with arrival rate λ and service
    time S/s_i (mean E[S]/s_i, second moment E[S²]/s_i²), and a job joins each with probability 1/N, so
    E[R] = (1/N) Σ_i (E[S]/s_i + P-K wait_i); None when some server is overloaded (λ·E[S] >= s_i)."""
    if any(lam * dist.mean >= s for s in speeds):
        return None
    return math.fsum(dist.mean / s + queues.mg1_mean_wait(lam, dist.mean / s, dist.second_moment / (s * s))
                     for s in speeds) / len(speeds)


def _random_with_speeds(setting: DispatchSetting, policy: str, speeds: tuple[float, ...]) -> list[Reference]:
    if policy != "random":
        return []
    value = random_routing_response_time(setting.lam, setting.dist, speeds)
    if value is None:
        return [Reference("stability", "condition", "random routing overloads the slow servers (λ·E[size] >= their "
                          "speed): unstable under this policy", "standard (each server an M/G/1 queue)",
                          value=setting.lam * setting.dist.mean / min(speeds), upper=1.0, predicts_stable=False)]
    return [Reference("response_time", "exact", "random routing over the pools: each server an M/G/1 queue at its "
                      "speed (P-K formula), averaged over the servers", "standard (Pollaczek–Khinchine)",
                      value=value)]


def information_references(setting: DispatchSetting, model: DispatchModel) -> list[Reference]:
    """What holds for any dispatcher on ``setting`` with ``model``'s servers and information: stability λ < 1 and the
    designed message rate. (Busy fraction = λ·E[size] is a run-time check of every result, with the other
    invariants: :func:`msjgym.systems.dispatch.family.invariants`.)"""
    lam = setting.lam
    refs = [Reference("stability", "condition", f"λ = {lam:g} < 1: stable (capacity N, arrival rate λN)",
                      "HKV §2", value=setting.load, upper=1.0, predicts_stable=setting.load < 1.0,
                      threshold=lam / setting.load)]
    if model.message_rate is not None:
        refs.append(Reference("message_rate", "exact", "messages per server per unit time = the designed rate (push, water filling: δ; pull: "
                              "λδ₁ + (1 − λ)δ₀; d sampled per arrival: dλ)",
                              "HKV §2 (the policies' definitions)", value=model.message_rate))
    return refs


def references(setting: DispatchSetting, policy: str) -> list[Reference]:
    """Every reference that applies to ``policy`` on ``setting`` (before simulating)."""
    model = setting.model(policy)
    refs = information_references(setting, model)
    if model.speeds is not None:  # two pools: the paper's theory is for unit-rate servers
        return refs + _random_with_speeds(setting, policy, model.speeds)
    if policy not in PAPER_POLICIES:
        return refs + _classics(setting, policy, model.d)
    cavity_max = None
    if setting.dist.phase_type() is not None and not (policy == "resource-pooling" and setting.p == 0.0):
        cav = _cavity(setting, policy)
        cavity_max = next(r.value for r in cav if r.quantity == "max_queue_length")
        refs += cav
    if policy in ("push", "water-filling"):
        refs += _push_bounds(setting, cavity_max)
    elif policy == "pull":
        refs += _pull_bounds(setting)
    elif setting.p:
        refs += _pooling_bounds(setting, cavity_max)
    row = setting.paper_row(policy)
    if row is not None:
        tol = ("within 2 % (docs/modelling-choices.md#lb-water-filling)" if policy == "water-filling"
               else "within the combined 95 % CIs")
        refs.append(Reference("response_time", "paper-sim", f"the paper's simulation at N = {row.servers} "
                              f"({row.label}): {row.sim:.4f} ± {row.ci:.2e}; judged {tol}",
                              f"HKV Table {row.table}", value=row.sim))
        ours = next((r.value for r in refs if r.quantity == "response_time" and r.kind == "exact"), None)
        check = "" if ours is None else (f"ours {ours:.4f}: " + ("same to 4 dp" if f"{ours:.4f}" == f"{row.cavity:.4f}"
                                                                else "DIFFERS"))
        refs.append(Reference("response_time", "paper-cavity", f"the paper's cavity value '∞' (its rel. err. at "
                              f"N = {row.servers}: {row.rel_err:.4f} %)", f"HKV Table {row.table}", value=row.cavity,
                              verdict=check))
    return refs


def judge(refs: list[Reference], result: Judged, row: TableRow | None = None,
          queue_length_pmf: np.ndarray | None = None) -> list[Reference]:
    """Each reference with its verdict; the paper's values (``row``: the matching table row, for its CI), max queue
    lengths (against the mass of ``queue_length_pmf``, the simulated P[Q = k] at every level, above them) and bounds
    of the cavity have their own comparisons, the rest go through :func:`msjgym.core.references.judge`."""
    out = []
    for ref in refs:
        est = result.metrics.get(ref.quantity)
        if ref.quantity == "p":        # p*(λ): a statement about the theory's regime, judged before simulating
            out.append(ref)
        elif ref.kind == "paper-sim" and est is not None and row is not None:
            out.append(_judge_paper(ref, est, row))
        elif ref.kind == "paper-cavity" and est is not None:
            sim = f"simulation {100 * (est.mean - ref.value) / ref.value:+.4f} % from it"
            out.append(replace(ref, verdict=f"{ref.verdict}; {sim}" if ref.verdict else sim))
        elif ref.quantity == "max_queue_length" and ref.kind == "exact" and queue_length_pmf is not None:
            above = float(queue_length_pmf[int(ref.value) + 1:].sum())
            out.append(replace(ref, verdict=f"simulated mass above it {above:.3g}"))
        elif ref.kind == "exact" and ref.description.startswith("cavity") and est is not None:
            out.append(_judge_cavity(ref, est, result.params.get("servers")))
        elif ref.kind == "bound" and ref.quantity == "response_time" and est is not None:
            said = judge_bound(ref, est.mean, *verdict_interval(est, result))
            out.append(replace(ref, agrees=said["agrees"], verdict=f"simulation {said['verdict']} (a bound on the "
                                                                   "cavity queue)"))
        else:
            out.append(judge_references([ref], result)[0])
    return out


def _judge_cavity(ref: Reference, est: Estimate, servers: object) -> Reference:
    """The simulation against the cavity queue (N → ∞): outside the CI is a finite-N gap, not a contradiction."""
    err, half = est.mean - ref.value, est.ci95
    if not math.isfinite(half):
        return replace(ref, verdict=f"error {percent(err, ref.value)}; no CI (needs >= 2 replications)")
    covered = bool(abs(err) <= half)
    return replace(ref, agrees=covered, verdict=f"error {percent(err, ref.value)} (95% CI "
                   f"±{percent(half, ref.value)[1:]}): "
                   + ("within the CI" if covered else f"beyond the CI (finite-N gap at N = {servers})"))


def paper_agreement(ours: Estimate, row: TableRow) -> tuple[bool | None, str]:
    """Whether a simulated E[R] agrees with the paper's at the row's N, and how far off it is: within the combined
    95 % CIs (water filling: within 2 %, docs/modelling-choices.md#lb-water-filling). None: no CI to judge with (one
    replication)."""
    diff = ours.mean - row.sim
    if row.policy == "water-filling":
        return bool(abs(diff) <= WATER_FILLING_TOLERANCE * row.sim), f"{100 * diff / row.sim:+.2f} % (tolerance ±2 %)"
    if not math.isfinite(ours.ci95):
        return None, f"{diff:+.4f}; no CI (needs >= 2 replications)"
    half = math.hypot(ours.ci95, row.ci)
    return bool(abs(diff) <= half), f"{diff:+.4f} (combined 95 % CI ±{half:.4f})"


def _judge_paper(ref: Reference, est: Estimate, row: TableRow) -> Reference:
    agrees, how = paper_agreement(est, row)
    return replace(ref, agrees=agrees, verdict=how if agrees is None else
                   f"{how}: {'consistent' if agrees else 'INCONSISTENT'}")
