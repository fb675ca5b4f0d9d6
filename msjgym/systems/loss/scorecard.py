"""Scorecard references for loss scenarios (``msjgym.systems.loss.theory``), judged by ``msjgym.core.references.judge``.

What applies:
    * every policy: GMGM's identities (eqs. (1), (2), per-width balance, PASTA, Lemma 1 eq. (9)) as exact zero
      residuals; E[D] >= 1/d; the exact count chain when it is small;
    * greedy (and fixed-width) with full access: the exact solution (Erlang B on n/d super-servers, the (m, p) chain);
    * greedy with full access: Theorem 4's bounds and the Halfin–Whitt limit of √n·P_b;
    * greedy with sampling: Corollary 8's bounds; the fixed-k fixed point (constant k);
    * a verdict on asymptotic optimality (``asymptotic_optimality``), decided from the theorems' hypotheses only:
      "proved" needs Theorem 4 (full access) or Theorem 9 (k = n^α ln n and its β condition); constant k and
      k = Θ(n^α) are reported as not asymptotically optimal / not shown (docs/errata.md#loss-thm-9-alpha-0,
      docs/errata.md#loss-k-omega).
"""
from __future__ import annotations

from msjgym.core.references import Reference
from msjgym.systems.loss.contract import LossPolicy
from msjgym.systems.loss.model import LossModel
from msjgym.systems.loss import theory as th

MAX_EXACT_STATES = 5_000
_G = "GMGM"  # Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar (see msjgym.systems.loss.theory)


def _configurations(n: int, d: int) -> int:
    ways = [1] + [0] * n
    for m in range(1, d + 1):
        for total in range(m, n + 1):
            ways[total] += ways[total - m]
    return sum(ways)


def _identities(model: LossModel, known: bool = True) -> list[Reference]:
    src = f"{_G} eqs. (1), (2), Lemma 1 eq. (9); per width: docs/derivations.md#loss-identities"
    desc = "identity residual, zero in steady state for any Markovian scheme"
    names = ("residual_work", "residual_little") + (("residual_pasta", "residual_stein") if known else ())
    refs = [Reference(q, "exact", desc, src, value=0.0) for q in names]
    refs += [Reference(f"residual_width[w{i}]", "exact", desc, src, value=0.0) for i in range(1, model.d + 1)]
    refs.append(Reference("response_time", "bound", f"E[D] >= 1/d = {1 / model.d:.4g} (no job runs on > d servers)",
                          f"{_G} §2", lower=1.0 / model.d))
    return refs


def _exact(model: LossModel, policy: LossPolicy) -> list[Reference]:
    n, d, lam = model.servers, model.d, model.lam
    if model.full_access and policy.name == "greedy":
        sol = th.greedy_full_access(n, d, lam)
        how = "Erlang B on n/d super-servers" if n % d == 0 else f"(m, p) chain, partial job of {n % d} servers"
        label = f"greedy, full access, exact ({how})"
        src = "docs/derivations.md#loss-full-access-exact (supplementary)"
        return [Reference("blocking_probability", "exact", label, src, value=sol.blocking),
                Reference("response_time", "exact", label, src, value=sol.response_time)]
    if model.full_access and policy.name == "fixed-width":
        label = f"fixed-width, full access: Erlang B on ⌊n/d⌋ = {n // d} super-servers, E[D] = 1/d"
        return [Reference("blocking_probability", "exact", label, "standard (Erlang B)",
                          value=th.fixed_width_full_access(n, d, lam)),
                Reference("response_time", "exact", label, "standard", value=1.0 / d)]
    if _configurations(n, d) > MAX_EXACT_STATES:
        return []
    chain = th.exact_chain(n, d, model.k, lam, policy.name)
    label = f"exact count chain (X_1..X_d), {chain.states} states"
    src = f"{_G} eqs. (7)–(8) corrected (docs/errata.md#loss-eq-8); msjgym.systems.loss.theory.exact_chain"
    return [Reference("blocking_probability", "exact", label, src, value=chain.blocking),
            Reference("response_time", "exact", label, src, value=chain.response_time),
            Reference("utilization", "exact", label, src, value=chain.busy_fraction)]


def _theorem4(model: LossModel) -> list[Reference]:
    n, d, lam = model.servers, model.d, model.lam
    t4 = th.theorem4_bounds(n, d, lam)
    cond = ("condition λ <= 1 − 2d/n (βn^(1−α) >= 2d) holds" if t4.condition_holds
            else "condition λ <= 1 − 2d/n (βn^(1−α) >= 2d) FAILS: not proved at this n")
    src = f"{_G} Thm 4, Cor. 3 eq. (17); the condition from Lemma 2's proof"
    refs = [Reference("blocking_probability", "bound", f"P_b <= √(d/(nλ)) ({cond})", src, upper=t4.blocking_upper),
            Reference("stein_lhs", "bound", f"E[(λ − d x_d)²] <= dλ/n ({cond})", src, upper=t4.stein_upper)]
    if t4.response_upper < float("inf"):
        refs.append(Reference("response_time", "bound", f"E[D] <= 1/d + 1/(nλ(1 − P_b)), P_b at its bound ({cond})",
                              src, upper=t4.response_upper))
    if model.alpha is not None:
        a, b = model.alpha, model.beta
        lim = th.sqrt_n_blocking_limit(a, b, d)
        if a >= 0.5:
            what = "√d φ(β/√d)/Φ(β/√d) (Halfin–Whitt)" if a == 0.5 else "√(2d/π) (super-HW, slow convergence)"
            refs.append(Reference("sqrt_n_blocking", "asymptotic", f"√n P_b → {what} as n → ∞",
                                  "docs/derivations.md#loss-halfin-whitt (Jagerman; supplementary)", value=lim))
        else:
            refs.append(Reference("sqrt_n_blocking", "asymptotic", "α < ½: P_b super-polynomially small, √n P_b → 0",
                                  "docs/derivations.md#loss-halfin-whitt", value=0.0,
                                  verdict="a trend over n (Theorem 4's n^-1/2 rate is not tight for α < ½)"))
    return refs


def _sampled(model: LossModel, policy: LossPolicy) -> list[Reference]:
    n, d, k, lam = model.servers, model.d, model.k, model.lam
    refs: list[Reference] = []
    if model.alpha is not None and policy.name == "greedy" and (model.alpha > 0 or model.beta < 1):
        c8 = th.corollary8_bound(n, d, k, model.alpha, model.beta)
        src = f"{_G} Cor. 8 eq. (34), (35) ('for all n sufficiently large')"
        refs.append(Reference("stein_lhs", "bound", "E[(λ − d x_d)²] <= RHS of (34)", src, upper=c8.stein_upper))
        refs.append(Reference("blocking_probability", "bound", "P_b <= √RHS(34)/λ" +
                              (" — vacuous (>= 1)" if c8.blocking_upper >= 1 else ""), src, upper=c8.blocking_upper))
    if not model.k_rule and k < n:
        fp = th.fixed_point(k, d, lam, policy.name)
        src = "docs/derivations.md#loss-fixed-point (binomial limit of eq. (8); supplementary)"
        label = f"fixed-k mean-field fixed point q = λ(1 − q^k), q = {fp.busy_fraction:.4g} (n → ∞)"
        refs += [Reference("blocking_probability", "approximation", label, src, value=fp.blocking),
                 Reference("response_time", "approximation", label, src, value=fp.response_time)]
    elif k < n:
        mf = th.mean_field_blocking(n, k, d, lam, policy.name)
        label = "finite-n mean field (idle count at its mean; crude when it is O(√n))"
        src = "msjgym.systems.loss.theory.mean_field_blocking (supplementary)"
        refs += [Reference("blocking_probability", "approximation", label, src, value=mf.blocking),
                 Reference("response_time", "approximation", label, src, value=mf.response_time)]
    return refs


def optimality(model: LossModel, policy: LossPolicy) -> tuple[str, str]:
    """(verdict, source) on asymptotic optimality of the scenario's family (E[x] → x* as n → ∞)."""
    if policy.name != "greedy":
        return (f"no result: GMGM studies greedy only ({policy.name} is a comparison baseline)", f"{_G} §2")
    if model.full_access:
        if model.alpha is None:
            return ("fixed λ given directly: not a scaling family; Theorem 4 needs λ = 1 − βn^(−α)", f"{_G} Thm 4")
        return ("asymptotically optimal: PROVED (Theorem 4, full access): P_b = O(n^-1/2), E[D] − 1/d = O(1/n)",
                f"{_G} Thm 4")
    rule, a = model.k_rule, model.alpha
    if not rule:
        return (f"NOT asymptotically optimal: constant k = {k_text(model)} gives P_b → q^k > 0 (fixed point)",
                "docs/derivations.md#loss-fixed-point")
    if a is None:
        return ("fixed λ given directly: not a scaling family", f"{_G} Thm 9")
    thm9_rule = rule == "n^alpha log n" or (rule == "log n" and a == 0) or (rule == "sqrt n log n" and a == 0.5)
    if thm9_rule:
        t9 = th.theorem9(a, model.beta, model.d)
        if not t9.applies:
            return (f"NOT SHOWN: Theorem 9's hypotheses fail ({t9.note})", f"{_G} Thm 9")
        if t9.blocking_rate_exponent is None:
            return (f"asymptotically optimal (P_b → 0 by (35)), but the rate is NOT proved: {t9.note}",
                    f"{_G} Thm 9; docs/errata.md#loss-thm-9-alpha-0")
        return (f"asymptotically optimal: PROVED (Theorem 9): {t9.note}", f"{_G} Thm 9")
    theta = rule == "n^alpha" or (rule == "sqrt n" and a == 0.5)
    if theta:
        return ("NOT SHOWN: k = Θ(n^α) is outside Theorem 9 and the paper's 'k = ω(n^α) suffices' is unproved; "
                "simulation and the mean-field heuristic show n^α·P_b GROWING with n (like ln n): the full-access "
                "rate is lost, whether P_b → 0 is not proved",
                "docs/errata.md#loss-k-omega; msjgym.systems.loss.theory.mean_field_blocking")
    return (f"NOT SHOWN: k rule {rule!r} with α = {a:g} is not covered by Theorem 9", f"{_G} Thm 9")


def k_text(model: LossModel) -> str:
    return str(model.k)


def _general_service(model: LossModel, policy: LossPolicy) -> list[Reference]:  # noqa: C901
    """Sizes not Exp(1): outside GMGM. The distribution-free identities hold (Little; PASTA; work conservation with
    mean size 1); Lemma 1's Stein identity does not (it uses the Markov generator). Erlang B is insensitive: full
    access with rigid width d (fixed-width, or greedy when d | n) keeps its exact value."""
    src = f"{_G} eqs. (1), (2) (distribution-free: Little's law, PASTA, mean size 1)"
    desc = f"identity residual, zero in steady state (service {model.service}: outside GMGM, which assumes Exp(1))"
    refs = [Reference(q, "exact", desc, src, value=0.0) for q in ("residual_work", "residual_little",
                                                                   "residual_pasta")]
    refs += [Reference(f"residual_width[w{i}]", "exact", desc, src, value=0.0) for i in range(1, model.d + 1)]
    n, d, lam = model.servers, model.d, model.lam
    if model.full_access and (policy.name == "fixed-width" or (policy.name == "greedy" and n % d == 0)):
        label = f"Erlang B on ⌊n/d⌋ = {n // d} super-servers, insensitive to the size law; E[D] = 1/d"
        refs += [Reference("blocking_probability", "exact", label, "standard (Erlang B insensitivity)",
                           value=th.fixed_width_full_access(n, d, lam)),
                 Reference("response_time", "exact", label, "standard", value=1.0 / d)]
    refs.append(Reference("asymptotic_optimality", "asymptotic", "GMGM's theorems assume Exp(1) sizes", f"{_G} §2",
                          verdict=f"no result: service {model.service} is outside GMGM's theory"))
    return refs


def references(model: LossModel, policy: LossPolicy | None, law_known: bool = False) -> list[Reference]:
    """Every reference that applies to ``model`` under ``policy`` (before simulating); ``None``: a policy of the
    user's own (an agent, or a compiled rule): only the policy-free identities (with the PASTA and Stein residuals
    when ``law_known``: the rule declared P(block | state), P(width d | state)) and the comparison with greedy's exact
    value."""
    if policy is None:
        refs = _identities(model, known=law_known)
        if model.full_access and model.service is None:
            g = th.greedy_full_access(model.servers, model.d, model.lam)
            refs.append(Reference("blocking_probability", "approximation",
                                  "greedy's exact P_b (a comparison, not a prediction for this policy)",
                                  "docs/derivations.md#loss-full-access-exact", value=g.blocking))
        return refs
    if model.service is not None:
        return _general_service(model, policy)
    refs = _identities(model) + _exact(model, policy)
    if policy.name == "greedy" and model.full_access:
        refs += _theorem4(model)
    elif not model.full_access:
        refs += _sampled(model, policy)
    verdict, source = optimality(model, policy)
    refs.append(Reference("asymptotic_optimality", "asymptotic",
                          f"E[x] → x* = (0, …, 0, λ/d) as n → ∞ for this family (k rule: "
                          f"{model.k_rule or 'constant k = ' + str(model.k)})", source, verdict=verdict))
    return refs
