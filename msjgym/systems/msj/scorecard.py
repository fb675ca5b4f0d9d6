"""The multiserver-job scorecard: every theoretical reference that applies to a scenario and policy.

``references(model, policy)`` lists, before any simulation, what the theory says (exact values, bounds, asymptotic
predictions, approximations, stability conditions); :func:`msjgym.core.references.judge` gives each its verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from msjgym.core.distributions import Exponential
from msjgym.core.references import Reference
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj.model import MSJModel
from msjgym.theory import queues
from msjgym.systems.msj.theory import multilevel, server_filling, zero_queueing
from msjgym.systems.msj.theory.open_fcfs import solve_open_fcfs
from msjgym.theory.saturated import one_and_n_mean_relative_completions, one_and_n_throughput, saturated_fcfs
from msjgym.systems.msj.theory.zero_queueing import ScalingRegime

# Exact solvers are skipped beyond these sizes, so that listing the references takes about a second at most.
MAX_SATURATED_STATES = 100_000  # (configuration, blocked head) states of the generic saturated chain
MAX_OPEN_PHASES = 2_000  # (configuration, head) phases per queue level of the open chain (its LU fills in per level)
MAX_OPEN_STATES = 400_000  # states of the truncated open chain
THROUGHPUT_OPTIMAL = {
    "server-filling": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.2 (ServerFilling is WCFS)",
    "server-filling-divisible": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip App. B.2",
    "maxweight": "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (MaxWeight, after Maguluri et al.)",
}


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
        value=rho, upper=1.0, predicts_stable=None if rho < 1 else False, threshold=model.arrival_rate / rho)


def _throughput_optimal(model: MSJModel, policy: Policy) -> list[Reference]:
    """Stable iff the load is inside the capacity region: ρ < 1 when the needs pack the servers (every load ρ < 1 is
    a time-sharing of packings), else ρ below the packing LP's limit (n = 3, need 2: ρ < 2/3), from
    :func:`msjgym.theory.multi_resource.capacity_region` with one resource."""
    if policy.name not in THROUGHPUT_OPTIMAL:
        return []
    from msjgym.theory.multi_resource import capacity_region  # scipy.optimize: imported when a reference needs it

    rho = model.load
    try:
        region = capacity_region([model.servers], 1, [[int(m)] for m in model.needs], model.class_arrival_rates,
                                 model.mean_service)
    except ValueError as exc:  # too many configurations to enumerate (e.g. a trace with many sizes): no verdict
        return [Reference(
            quantity="stability", kind="condition",
            description=f"{policy.name} is throughput-optimal: stable iff the load is inside the capacity region, not "
                        f"computed here ({exc}); ρ = {rho:.4g}",
            source=THROUGHPUT_OPTIMAL[policy.name], value=rho, upper=1.0, predicts_stable=None if rho < 1 else False,
            threshold=model.arrival_rate / rho)]
    if not region.fragmented:
        return [Reference(
            quantity="stability", kind="condition",
            description=f"{policy.name} is throughput-optimal: stable iff ρ < 1 (ρ = {rho:.4g})",
            source=THROUGHPUT_OPTIMAL[policy.name], value=rho, upper=1.0, predicts_stable=rho < 1,
            threshold=model.arrival_rate / rho)]
    limit = region.packing_efficiency  # the load at the region's boundary for this class mix
    return [Reference(
        quantity="stability", kind="condition",
        description=f"{policy.name} is throughput-optimal: stable iff ρ < {limit:.4g}, the capacity region's limit for "
                    f"this mix (the needs do not pack the servers; ρ = {rho:.4g})",
        source=f"{THROUGHPUT_OPTIMAL[policy.name]}; region: packing LP (msjgym.theory.multi_resource)", value=rho,
        upper=limit, predicts_stable=None if region.verdict == "boundary" else region.verdict == "inside",
        threshold=model.arrival_rate * region.theta)]


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
    rho = model.load * model.servers / (m * s)  # = λ E[S] / s, from the model's load: a load given as 1 stays 1
    if rho >= 1:  # unstable: no finite value (the capacity condition says so)
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


def _server_filling(model: MSJModel, policy: Policy) -> list[Reference]:
    """ServerFilling is work-conserving finite-skip: the generic-constant bounds of Cor. 3.8 on E[T]."""
    if policy.name not in ("server-filling", "server-filling-divisible"):
        return []
    bounds = server_filling.server_filling_bounds(model, divisible=policy.name == "server-filling-divisible")
    if bounds is None:
        return []
    source = f"{_GSW}, Cor. 3.8 with §7.2 / App. B generic constants"
    return [
        Reference("response_time", "bound", f"WCFS bounds (front size n = {bounds.front}, rem_max = "
                  f"{bounds.rem_max:.4g}, generic constants)", source, lower=bounds.lower, upper=bounds.upper),
        Reference("response_time", "approximation", "resource-pooled M/G/1/FCFS with the same λ and job sizes "
                  "(a WCFS system is within an additive constant of it)", f"{_GSW}, §1.1, Cor. 3.8",
                  value=bounds.mg1)] + _server_filling_exact(model, policy)


def _server_filling_exact(model: MSJModel, policy: Policy) -> list[Reference]:
    """Cor. 3.8 with the exact constants of ServerFilling (docs/modelling-choices.md#finite-skip-constants)."""
    const = server_filling.server_filling_constants(model, divisible=policy.name == "server-filling-divisible")
    if const is None:
        return []
    band = server_filling.server_filling_band(model, const)
    return [Reference("response_time", "bound", f"WCFS bounds, exact constants (n = {const.front}, w_nonfull = "
                      f"{const.w_nonfull:.4g}, w_nonbusy = {const.w_nonbusy:.4g}, r_min = {const.r_min:.4g})",
                      f"{_GSW}, Cor. 3.8; constants from ServerFilling's definition "
                      "(docs/modelling-choices.md#finite-skip-constants)",
                      lower=band.response_lower, upper=band.response_upper)]


def _configurations(servers: int, needs: list[int], least: int = 0) -> int:
    """Number of vectors x >= 0 with least <= Σ_i needs_i x_i <= servers (configurations of jobs in service)."""
    ways = [1] + [0] * servers
    for m in needs:
        for total in range(m, servers + 1):
            ways[total] += ways[total - m]
    return sum(ways[max(least, 0):])


@dataclass(frozen=True)
class _FCFSTheory:
    """The saturated-system quantities of an FCFS model: μ (threshold) and E[Δ(Y_d)], with how they were computed."""

    throughput: float
    mean_relative_completions: float
    method: str
    one_and_n: bool


def _fcfs_theory(model: MSJModel, rates: list[float]) -> _FCFSTheory | None:
    n, needs, probs = model.servers, [int(m) for m in model.needs], list(model.probabilities)
    if len(needs) == 2 and sorted(needs) == [1, n] and n > 1:
        i = needs.index(n)
        args = (n, probs[i], rates[1 - i], rates[i])
        return _FCFSTheory(one_and_n_throughput(*args), one_and_n_mean_relative_completions(*args),
                           "Lemmas 5.3 and 5.5, closed forms", True)
    blocked = _configurations(n, needs, least=n - max(needs) + 1)  # a blocked head leaves < m_max servers free
    if blocked * len(needs) > MAX_SATURATED_STATES:
        return None
    sat = saturated_fcfs(n, needs, probs, rates)
    return _FCFSTheory(sat.throughput, sat.mean_relative_completions, "saturated-system CTMC", False)


_GA = "Grosof & Ayhan, 'Multiserver-job Response Time under Multilevel Scaling'"
_GSW = "Grosof, Harchol-Balter & Scheller-Wolf, 'The finite-skip method for multiserver analysis'"
_WXH = "Wang, Xie & Harchol-Balter, 'Zero Queueing for Multi-Server Jobs'"


def _fcfs_stability(model: MSJModel, theory: _FCFSTheory) -> list[Reference]:
    ratio = model.arrival_rate / theory.throughput
    refs = [Reference(
        "stability", "condition",
        f"FCFS stability threshold μ = {theory.throughput:.6g} jobs/time ({theory.method}): λ/μ = {ratio:.4g}",
        f"{_GA} §3.1–3.3 (saturated system)", value=ratio, upper=1.0, predicts_stable=ratio < 1,
        threshold=theory.throughput)]
    if ratio < 1:
        refs.append(Reference(
            "number_in_queue", "approximation",
            f"heavy-traffic law E[Q] ≈ (E[Δ(Y_d)] + 1)ρ/(1 − ρ) with E[Δ(Y_d)] = {theory.mean_relative_completions:.4g},"
            f" ρ = λ/μ (exact as ρ → 1; an additive O(1) error below)", f"{_GA} eq. (2)",
            value=(theory.mean_relative_completions + 1) * ratio / (1 - ratio)))
    return refs


def _multilevel_asymptotics(model: MSJModel, rates: list[float], theory: _FCFSTheory) -> list[Reference]:
    """For the '1 and n' system, Thms 4.1/4.2 (regime by α = ln(1/p_n)/ln n) beside the exact closed forms."""
    n = model.servers
    i = [int(m) for m in model.needs].index(n)
    p_n = float(model.probabilities[i])
    if not (0 < p_n < 1):
        return []
    regime = multilevel.classify_regime(math.log(1 / p_n) / math.log(n))
    mu_1, mu_n = rates[1 - i], rates[i]
    out = []
    for quantity, exact, predicted, source in (
            ("fcfs_threshold", theory.throughput, regime.throughput(n, mu_1, mu_n), regime.throughput_source),
            ("mean_relative_completions", theory.mean_relative_completions, regime.mean_relative_completions(n),
             regime.relative_completions_source)):
        out.append(Reference(
            quantity, "asymptotic",
            f"regime {regime.number} ({regime.name}, p_n = n^-α with α = {regime.alpha:.3g}) as n → ∞",
            f"{_GA} {source}", value=predicted,
            verdict=f"exact/asymptotic = {exact / predicted:.4g} (exact {exact:.6g})"))
    return out


def _open_fcfs_exact(model: MSJModel, rates: list[float]) -> list[Reference]:
    needs = [int(m) for m in model.needs]
    if _configurations(model.servers, needs) * len(needs) > MAX_OPEN_PHASES:
        return []
    try:
        sol = solve_open_fcfs(model.servers, model.needs, model.probabilities, rates, model.arrival_rate,
                              max_states=MAX_OPEN_STATES)
    except ValueError:  # state space too large (or unstable: reported by the stability condition)
        return []
    label = (f"exact FCFS CTMC, queue truncated at {sol.truncation_level} jobs "
             f"(boundary mass {sol.truncation_mass:.1e}, {sol.states:,} states)")
    source = f"{_GA} §2.1, §3.11 (deferred-decision chain); msjgym.systems.msj.theory.open_fcfs"
    lam = model.arrival_rate
    values = {"number_in_system": sol.mean_number_in_system, "number_in_queue": sol.mean_number_in_queue,
              "queueing_probability": sol.queueing_probability, "utilization": sol.utilization,
              "response_time": sol.mean_number_in_system / lam,  # Little's law
              "waiting_time": sol.mean_number_in_queue / lam}
    for c, name in enumerate(cls.name for cls in model.classes):
        values[f"number_in_system[{name}]"] = sol.mean_number_in_system_per_class[c]
        values[f"queueing_probability[{name}]"] = sol.queueing_probability_per_class[c]
        values[f"response_time[{name}]"] = sol.mean_number_in_system_per_class[c] / model.class_arrival_rates[c]
    return [Reference(q, "exact", label, source, value=v) for q, v in values.items()]


def _zero_queueing(model: MSJModel, regime: ScalingRegime | None) -> list[Reference]:
    n, needs, load = model.servers, [int(m) for m in model.needs], model.load
    m_max = max(needs)
    limit = zero_queueing.sufficient_load_limit(m_max, n)
    refs = [Reference(
        "stability", "condition", f"ρ = {load:.4g} {'<' if load < limit else '>='} 1 − m_max/n = {limit:.4g}"
        " (sufficient for FCFS stability)", f"{_WXH}, Thm 4.1", value=load, upper=limit,
        predicts_stable=True if load < limit else None, threshold=model.arrival_rate * limit / load)]
    if load < limit:
        bound = zero_queueing.queueing_probability_bound(load, needs, n)
        refs.append(Reference(
            "queueing_probability", "bound", "P_Q <= (3K√(m_max/n) + m_max/n)/(1 − ρ)"
            + (" — vacuous (> 1)" if bound.vacuous else ""), f"{_WXH}, Thm 4.2 eq. (5) (erratum of eq. (2))",
            upper=bound.value))
        refs.append(Reference(
            "queueing_probability", "bound", "P_Q <= [m_max + 3Σ_i √(n m_i)]/(n(1 − ρ))"
            + (" — vacuous (> 1)" if bound.combined_vacuous else ""), f"{_WXH}, eqs. (13)–(14)",
            upper=bound.combined))
    refs.append(Reference(
        "queueing_probability", "bound", "P_Q <= P(Σ_i m_i X_i > n − m_max), the simulated event probability",
        f"{_WXH}, eq. (3)", upper_metric="high_occupancy_probability"))
    for c in model.classes:
        refs.append(Reference(
            f"server_deficit[{c.name}]", "bound", "E[(nρ_i − m_i X_i)^+] <= 3√(n m_i)", f"{_WXH}, Lemma 5.4",
            upper=zero_queueing.lemma_5_4_bound(n, c.need)))
    if regime is not None:
        cls = regime.classify()
        trend = (f"P_Q → 0 as n → ∞, the bound decaying like n^-{cls.bound_exponent:.3g} (Thm 4.2, Cor. (6))"
                 if cls.diminishing else "P_Q need not vanish (proved for K = 1 only; Set II simulations)")
        refs.append(Reference(
            "queueing_probability", "asymptotic",
            f"scaling ρ = 1 − {regime.beta:g}n^-{regime.alpha:g}, m_max ≈ {regime.c:g}n^{regime.gamma:g}: region "
            f"{cls.region}, 2α + γ = {2 * regime.alpha + regime.gamma:.3g}: {trend}", f"{_WXH} §1, Thm 4.2",
            verdict="a trend over n, not a value at one n: see `msjgym reproduce zero-queueing`"))
    return refs


def _fcfs(model: MSJModel, policy: Policy, regime: ScalingRegime | None) -> list[Reference]:
    """FCFS with exponential durations: stability threshold, exact values, heavy traffic, zero queueing."""
    rates = _exponential_rates(model)
    if policy.name != "fcfs" or rates is None:
        return []
    theory = _fcfs_theory(model, rates)
    refs: list[Reference] = []
    if theory is not None:
        refs += _fcfs_stability(model, theory)
        if theory.one_and_n:
            refs += _multilevel_asymptotics(model, rates, theory)
        if model.arrival_rate < theory.throughput and len(set(int(m) for m in model.needs)) > 1:
            refs += _open_fcfs_exact(model, rates)
    return refs + _zero_queueing(model, regime)


def references(model: MSJModel, policy: Policy, regime: ScalingRegime | None = None,
               saturated: bool = False) -> list[Reference]:
    """Every reference that applies to ``model`` under ``policy`` (computed before any simulation).

    Args:
        regime: the scaling sequence the model belongs to, when known (zero-queueing built-ins).
        saturated: references for a saturated (closed) run instead: the FCFS saturated throughput.

    A replayed trace has none: the theory is about stationary Poisson systems, a trace is a finite sequence.
    """
    if model.trace is not None:
        return []
    if saturated:
        rates = _exponential_rates(model)
        theory = _fcfs_theory(model, rates) if policy.name == "fcfs" and rates else None
        return [] if theory is None else [Reference(
            "throughput", "exact", f"saturated FCFS throughput μ ({theory.method})", f"{_GA} §3.2–3.3",
            value=theory.throughput)]
    return ([_capacity(model)] + _throughput_optimal(model, policy) + _equal_needs(model)
            + _fcfs(model, policy, regime) + _server_filling(model, policy))
