"""Loss systems with adaptive multiserver jobs: exact solutions, bounds and asymptotics.

Model (Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, "On the Performance of Large Loss Systems with Adaptive
Multiserver Jobs", §2; below "GMGM"): n unit-rate servers, no waiting room, Poisson arrivals at rate nλ,
λ = λ(n) = 1 − βn^(−α); Exp(1) inherent sizes; a job placed on i <= d servers leaves at rate i (D = E/i). Each
arrival samples k servers without replacement (k = n: full access) and, under greedy, takes min(d, l) of the l idle
sampled servers (blocked if l = 0). Times are in units of the mean inherent size; rates per unit time.

Each function states its kind: [exact], [bound], [asymptotic] (n → ∞) or [approximation]. Formulas marked
"supplementary" are not in the paper; they follow from the model (derivations: docs/derivations.md).
Errata that apply (docs/errata.md) are stated where they matter: in particular Theorem 9's α = 0 rate (eqs. 36, 38)
does not follow from (35) and is never returned as a valid bound here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from msjgym.theory.queues import erlang_b

GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"
POLICIES = ("greedy", "fixed-width", "random-width")


def arrival_fraction(n: int, alpha: float, beta: float) -> float:
    """λ(n) = 1 − βn^(−α), the per-server arrival rate (GMGM §2). [exact, definition]"""
    return 1.0 - beta * float(n) ** (-alpha)


# ----------------------------------------------------------------------------------------------------- full access
@dataclass(frozen=True)
class FullAccessGreedy:
    """Exact stationary quantities of greedy with full access (start empty; the recurrent class of Lemma 2).

    Attributes:
        blocking: P_b, the blocking probability (per arrival, PASTA).
        response_time: E[D] of accepted jobs, time units.
        partial_probability: P(a partial job of n mod d servers is present) (0 when d | n).
        super_servers: M = ⌊n/d⌋.
    """

    blocking: float
    response_time: float
    partial_probability: float
    super_servers: int


def greedy_full_access(n: int, d: int, lam: float) -> FullAccessGreedy:
    """Greedy with full access (k = n), exactly. [exact, supplementary; docs/derivations.md#loss-full-access-exact]

    d | n: Erlang B on M = n/d super-servers of rate d, offered load nλ/d: P_b = B(n/d, nλ/d), E[D] = 1/d.
    d ∤ n: the (m, p) chain (m d-jobs, p ∈ {0, 1} partial job of r = n mod d servers); m is truncated Poisson(nλ/d)
    on {0..M}; P_b = B/(1 + rG_M/(a g_M)) with g_{m+1} = (a g_m + r G_m)/(d(m+1)), computed rescaled.
    """
    _check_model(n, d, lam)
    M, r = divmod(n, d)
    a = n * lam
    B = erlang_b(M, a / d)
    if r == 0:
        return FullAccessGreedy(B, 1.0 / d, 0.0, M)
    G = 1.0  # G_m / g_m, with g rescaled to 1 at every step
    for m in range(M):
        gn = (a + r * G) / (d * (m + 1))  # g_{m+1}/g_m
        G = G / gn + 1.0
    pb = B / (1.0 + r * G / a)
    pi_m0 = B - pb
    ed = ((1.0 - pb - pi_m0) / d + pi_m0 / r) / (1.0 - pb)
    return FullAccessGreedy(pb, ed, a * pi_m0 / r, M)


def fixed_width_full_access(n: int, d: int, lam: float) -> float:
    """Blocking of fixed-width (exactly d servers or block) with full access: Erlang B on ⌊n/d⌋ super-servers of
    rate d with offered load nλ/d; E[D] = 1/d. [exact, supplementary]"""
    _check_model(n, d, lam)
    return erlang_b(n // d, n * lam / d)


# ----------------------------------------------------------------------------------------------------- small-n CTMC
@dataclass(frozen=True)
class ExactChain:
    """Stationary quantities of the count chain (X_1..X_d) for one policy and sample size. Times in time units.

    Attributes:
        blocking: P_b = E[A_0(x)].
        response_time: E[D] = Σ_i (1/i)E[A_i] / (1 − P_b).
        width_probability: E[A_i], i = 0..d (i = 0: blocked).
        mean_jobs: E[X_i], i = 1..d (index 0 unused, 0).
        busy_fraction: E[q_1].
        stein_lhs: E[(λ − d x_d)²].
        stein_rhs: (d/n)λE[A_d] + λE[(1 − A_d)(λ − d x_d)], A_d = P(width d | x) (Lemma 1 eq. (9): equal to
            ``stein_lhs`` for every policy, since the identity only uses the dynamics of x_d).
        states: states of the chain.
    """

    blocking: float
    response_time: float
    width_probability: np.ndarray
    mean_jobs: np.ndarray
    busy_fraction: float
    stein_lhs: float
    stein_rhs: float
    states: int


def censored_hypergeometric(n: int, idle: int, k: int, d: int) -> np.ndarray:
    """P(min(l, d) = j), j = 0..d, for l ~ Hypergeometric(population n, idle successes, k draws). [exact]

    GMGM eq. (8), corrected (docs/errata.md#loss-eq-8): A_i = C(idle, i)C(n − idle, k − i)/C(n, k) for i < d,
    A_d = 1 − Σ_{i<d} A_i.
    """
    out = np.zeros(d + 1)
    lo = max(0, k - (n - idle))
    hi = min(k, idle)
    lc = _logc
    total = lc(n, k)
    for j in range(lo, min(hi, d - 1) + 1):
        out[j] = math.exp(lc(idle, j) + lc(n - idle, k - j) - total)
    out[d] = max(0.0, 1.0 - out[:d].sum()) if hi >= d else 0.0
    return out


def width_distribution(policy: str, m: int, d: int) -> np.ndarray:
    """P(width = i), i = 0..d, that ``policy`` assigns when the sample shows m = min(l, d) idle servers."""
    out = np.zeros(d + 1)
    if policy == "greedy":
        out[m] = 1.0
    elif policy == "fixed-width":
        out[d if m == d else 0] = 1.0
    elif policy == "random-width":
        if m == 0:
            out[0] = 1.0
        else:
            out[1:m + 1] = 1.0 / m
    else:
        raise ValueError(f"policy = {policy!r}: must be one of {', '.join(POLICIES)}")
    return out


def exact_chain(n: int, d: int, k: int, lam: float, policy: str = "greedy",
                max_states: int = 200_000) -> ExactChain:
    """Solve the count chain x → x + e_i at rate nλ·P(width i | x), x → x − e_i at rate i·X_i. [exact, small n]

    Valid for any policy that decides from m = min(l, d) (greedy, fixed-width, random-width) and any k <= n;
    the stationary law is on the class reachable from the empty state (transient states get mass 0).
    """
    _check_model(n, d, lam)
    if not 1 <= k <= n:
        raise ValueError(f"k = {k}: must be in [1, n={n}]")
    states = _reachable_states(n, d, k, policy)
    if len(states) > max_states:
        raise ValueError(f"{len(states)} states > max_states = {max_states}")
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve
    index = {s: j for j, s in enumerate(states)}
    rows, cols, vals = [], [], []
    widths = np.zeros((len(states), d + 1))
    for j, s in enumerate(states):
        busy = sum((i + 1) * x for i, x in enumerate(s))
        pw = np.zeros(d + 1)
        hyp = censored_hypergeometric(n, n - busy, k, d)
        for m in range(d + 1):
            if hyp[m] > 0:
                pw += hyp[m] * width_distribution(policy, m, d)
        widths[j] = pw
        for i in range(1, d + 1):
            if pw[i] > 0:
                t = list(s)
                t[i - 1] += 1
                _add(rows, cols, vals, j, index[tuple(t)], n * lam * pw[i])
            if s[i - 1] > 0:
                t = list(s)
                t[i - 1] -= 1
                _add(rows, cols, vals, j, index[tuple(t)], i * s[i - 1])
    size = len(states)
    q = coo_matrix((vals, (rows, cols)), shape=(size, size)).tocsr()
    q = q - coo_matrix((np.asarray(q.sum(axis=1)).ravel(), (range(size), range(size))), shape=(size, size))
    a = q.T.tolil()
    a[0, :] = np.ones(size)
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = spsolve(a.tocsr(), rhs)
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    arr = np.array(states, dtype=float).reshape(size, d)
    wp = pi @ widths
    mean_jobs = np.concatenate([[0.0], pi @ arr])
    busy = arr @ np.arange(1, d + 1)
    dev = lam - d * arr[:, d - 1] / n
    pb = float(wp[0])
    ed = _mean_response(wp)
    ad = widths[:, d]
    rhs = (d / n) * lam * float(pi @ ad) + lam * float(pi @ ((1.0 - ad) * dev))
    return ExactChain(pb, ed, wp, mean_jobs, float(pi @ busy) / n, float(pi @ dev ** 2), rhs, size)


def _add(rows: list, cols: list, vals: list, i: int, j: int, v: float) -> None:
    rows.append(i)
    cols.append(j)
    vals.append(v)


def _reachable_states(n: int, d: int, k: int, policy: str) -> list[tuple[int, ...]]:
    """States reachable from empty (breadth-first), empty first."""
    start = (0,) * d
    seen = {start: None}
    order = [start]
    head = 0
    while head < len(order):
        s = order[head]
        head += 1
        busy = sum((i + 1) * x for i, x in enumerate(s))
        idle = n - busy
        can = set()
        lo = max(0, k - (n - idle))
        for m in range(min(lo, d), min(k, idle, d) + 1):
            for i in np.nonzero(width_distribution(policy, m, d))[0]:
                can.add(int(i))
        succ = []
        for i in range(1, d + 1):
            if i in can:
                t = list(s)
                t[i - 1] += 1
                succ.append(tuple(t))
            if s[i - 1] > 0:
                t = list(s)
                t[i - 1] -= 1
                succ.append(tuple(t))
        for t in succ:
            if t not in seen:
                seen[t] = None
                order.append(t)
    return order


# ----------------------------------------------------------------------------------------------------- identities
def conservation_residuals(lam: float, blocking: float, busy_fraction: float, response_time: float,
                           jobs_fraction: float) -> tuple[float, float]:
    """Residuals of GMGM eqs. (1) and (2), zero in steady state for every Markovian scheme. [exact]

    (1) λ(1 − P_b) − E[q_1] (accepted work rate = busy fraction); (2) λ(1 − P_b)E[D] − E[Σ_i x_i] (Little).
    ``jobs_fraction`` is E[Σ_i x_i] = E[jobs in system]/n.
    """
    return lam * (1.0 - blocking) - busy_fraction, lam * (1.0 - blocking) * response_time - jobs_fraction


# ----------------------------------------------------------------------------------------------------- Theorem 4
@dataclass(frozen=True)
class Theorem4:
    """GMGM Theorem 4 (full access, greedy) at one n. [bound]

    Attributes:
        blocking_upper: √(d/(nλ)) (P_b² <= d/(nλ), from Cor. 3 eq. (17)).
        response_upper: 1/d + 1/(nλ(1 − P_b)) evaluated with P_b at ``blocking_upper`` (inf if that is >= 1).
        stein_upper: d λ / n, the Cor. 3 bound on E[(λ − d x_d)²].
        condition_holds: βn^(1−α) >= 2d, i.e. λ <= 1 − 2d/n: the "n sufficiently large" of Lemma 2's proof (there
            d x_d > 1 − 2d/n >= λ). The bounds are proved only when it holds (they may hold below it).
    """

    blocking_upper: float
    response_upper: float
    stein_upper: float
    condition_holds: bool


def theorem4_bounds(n: int, d: int, lam: float) -> Theorem4:
    """Theorem 4's explicit bounds (GMGM §3, eqs. (17)–(21), before their O(·) simplifications). [bound]"""
    _check_model(n, d, lam)
    pb = math.sqrt(d / (n * lam))
    ed = 1.0 / d + 1.0 / (n * lam * (1.0 - pb)) if pb < 1 else math.inf
    return Theorem4(pb, ed, d * lam / n, lam <= 1.0 - 2.0 * d / n)


def theorem4_response_bound(n: int, d: int, lam: float, blocking: float) -> float:
    """E[D] <= 1/d + 1/(nλ(1 − P_b)) with the measured (or exact) P_b (GMGM Thm 4 proof). [bound]"""
    return 1.0 / d + 1.0 / (n * lam * (1.0 - blocking))


# ----------------------------------------------------------------------------------------------------- limited access
@dataclass(frozen=True)
class Corollary8:
    """GMGM Corollary 8, eq. (34), and the implied P_b bound. [bound, "for all n sufficiently large"]

    Attributes:
        stein_upper: RHS of (34), a bound on E[(λ − d x_d)²].
        blocking_upper: √(RHS)/λ (P_b² <= E[(λ − d x_d)²]/λ², eq. (35)).
        response_upper: 1/d + √(RHS)/(λ(1 − P_b)) with P_b at ``blocking_upper`` (inf if >= 1).
        exponential_term: λ² d k^d (1 − β/(2n^α))^(k−d), the sampling term.
    """

    stein_upper: float
    blocking_upper: float
    response_upper: float
    exponential_term: float


def corollary8_bound(n: int, d: int, k: int, alpha: float, beta: float) -> Corollary8:
    """E[(λ − d x_d)²] <= (2d/n)λ(1 + 2n^α/β) + λ² d k^d (1 − β/(2n^α))^(k−d)  (GMGM eq. (34)). [bound]

    Holds "for all n sufficiently large" (Lemma 7's indicator step is heuristic near the threshold,
    docs/errata.md#loss-lemma-7);
    with α = 0 it needs β < 1 (λ > 0). Not a rate claim: see :func:`theorem9`.
    """
    lam = arrival_fraction(n, alpha, beta)
    _check_model(n, d, lam)
    na = float(n) ** alpha
    base = 1.0 - beta / (2.0 * na)
    expo = lam * lam * d * float(k) ** d * (base ** (k - d) if base > 0 else 0.0)
    rhs = (2.0 * d / n) * lam * (1.0 + 2.0 * na / beta) + expo
    pb = math.sqrt(rhs) / lam
    ed = 1.0 / d + math.sqrt(rhs) / (lam * (1.0 - pb)) if pb < 1 else math.inf
    return Corollary8(rhs, pb, ed, expo)


@dataclass(frozen=True)
class Theorem9:
    """What GMGM Theorem 9 proves for given (α, β, d) with k(n) = n^α ln n. [asymptotic]

    Attributes:
        applies: the theorem's hypotheses hold (α ∈ [0, 1); β > 0; α > 0 ⇒ β > 2(α(d−1)+1); α = 0 ⇒ β < 1).
        blocking_rate_exponent: e with P_b = O(n^(−e)) proved ((1 − α)/2), or None when not proved.
        note: the reason, including the erratum for α = 0.
    """

    applies: bool
    blocking_rate_exponent: float | None
    note: str


def theorem9(alpha: float, beta: float, d: int) -> Theorem9:
    """Theorem 9's conclusions, with the erratum for α = 0 (docs/errata.md#loss-thm-9-alpha-0). [asymptotic]

    α > 0 and β > 2(α(d−1)+1): P_b and E[D] − 1/d are O(n^(−(1−α)/2)) (eqs. (37), (39)).
    α = 0: the paper claims O(n^(−1/2)) (eqs. (36), (38)), but the sampling term of (35) is about
    d(ln n)^d n^(ln(1−β/2)), not o(1/n): the rate does NOT follow. P_b → 0 still follows from (35).
    """
    if not (0.0 <= alpha < 1.0 and beta > 0):
        return Theorem9(False, None, "outside α ∈ [0, 1), β > 0")
    if alpha == 0.0:
        if beta >= 1.0:
            return Theorem9(False, None, "α = 0 needs β < 1 (λ > 0)")
        return Theorem9(True, None, "α = 0: P_b → 0 follows from (35); the O(n^-1/2) rate of eqs. (36)/(38) does "
                                    "NOT follow (erratum, docs/errata.md#loss-thm-9-alpha-0: the sampling term "
                                    "≈ d(ln n)^d n^(ln(1−β/2)) is not o(1/n))")
    need = 2.0 * (alpha * (d - 1) + 1.0)
    if beta <= need:
        return Theorem9(False, None, f"α > 0 needs β > 2(α(d−1)+1) = {need:.4g} (β = {beta:g}); sufficient only")
    return Theorem9(True, (1.0 - alpha) / 2.0, f"P_b, E[D] − 1/d = O(n^-{(1 - alpha) / 2:.3g}) (eqs. (37), (39))")


# ----------------------------------------------------------------------------------------------------- fixed point
@dataclass(frozen=True)
class FixedPoint:
    """Large-n mean-field fixed point for a fixed sample size k (binomial limit of eq. (8)). [approximation]

    Attributes:
        busy_fraction: q_1 solving q_1 = λ(1 − q_1^k).
        blocking: q_1^k.
        response_time: Σ_i (A_i/i) / (1 − A_0) with A_i the binomial censored at d.
    """

    busy_fraction: float
    blocking: float
    response_time: float


def fixed_point(k: int, d: int, lam: float, policy: str = "greedy") -> FixedPoint:
    """Fixed point of dx_i/dt = λA_i(q_0) − i x_i with A from Binomial(k, q_0) (docs/derivations.md#loss-fixed-point).
    [approximation, supplementary]; for fixed k as n → ∞. Greedy: q_1 = λ(1 − q_1^k). Other policies:
    q_1 = λ Σ_i i·A_i/… solved by bisection on the work balance q_1 = λ Σ_i P(width i | q_1) (each accepted job
    brings one unit of work)."""
    if not 0 < lam < 1:
        raise ValueError(f"λ = {lam!r}: must be in (0, 1)")
    from scipy.stats import binom

    def accept_probs(q1: float) -> np.ndarray:
        pm = np.zeros(d + 1)
        pmf = binom.pmf(np.arange(k + 1), k, 1.0 - q1)
        for j in range(k + 1):
            pm[min(j, d)] += pmf[j]
        out = np.zeros(d + 1)
        for m in range(d + 1):
            out += pm[m] * width_distribution(policy, m, d)
        return out

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if lam * (1.0 - accept_probs(mid)[0]) - mid > 0:
            lo = mid
        else:
            hi = mid
    q1 = 0.5 * (lo + hi)
    a = accept_probs(q1)
    return FixedPoint(q1, float(a[0]), _mean_response(a))


# ----------------------------------------------------------------------------------------------------- Halfin-Whitt
def sqrt_n_blocking_limit(alpha: float, beta: float, d: int) -> float:
    """lim √n·P_b for greedy with full access, λ = 1 − βn^(−α). [asymptotic, supplementary; Jagerman;
    docs/derivations.md#loss-halfin-whitt]

    α = ½: √d·φ(β/√d)/Φ(β/√d); α > ½: √(2d/π) (slow convergence); α < ½: 0 (P_b super-polynomially small).
    Only for full access; Theorem 4's O(n^-1/2) is tight only for α >= ½.
    """
    if alpha < 0.5:
        return 0.0
    if alpha > 0.5:
        return math.sqrt(2.0 * d / math.pi)
    x = beta / math.sqrt(d)
    phi = math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * math.erfc(-x / math.sqrt(2.0))
    return math.sqrt(d) * phi / cdf


# ----------------------------------------------------------------------------------------------------- helpers
def _mean_response(width_probability: np.ndarray) -> float:
    """E[D] = Σ_i (A_i / Σ_{j>=1} A_j)/i: exactly 1/i (in floating point) when one width i carries every job."""
    accepted = float(width_probability[1:].sum())
    if accepted <= 0:
        return math.nan
    return float(sum((width_probability[i] / accepted) / i for i in range(1, len(width_probability))))


def _logc(a: int, b: int) -> float:
    if b < 0 or b > a:
        return -math.inf
    return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)


def _check_model(n: int, d: int, lam: float) -> None:
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n = {n!r}: must be an integer >= 1")
    if not (isinstance(d, (int, np.integer)) and 1 <= d <= n):
        raise ValueError(f"d = {d!r}: must be an integer in [1, n={n}]")
    if not 0 < lam < 1:
        raise ValueError(f"λ = {lam!r}: must be in (0, 1)")


def mean_field_blocking(n: int, k: int, d: int, lam: float, policy: str = "greedy") -> FixedPoint:
    """Finite-n mean-field approximation for any sample size k <= n. [approximation, supplementary]

    Replaces the random idle count by its mean I = n(1 − q_1) and solves the work balance
    q_1 = λ Σ_{i>=1} P(width i | I) with the exact hypergeometric sample law of eq. (8) (corrected) at I (linear
    interpolation between integers). It ignores the O(√n) fluctuations of the idle count, so it is crude when the
    mean idle count is itself O(√n) (Halfin–Whitt) and near-exact for constant k as n → ∞, where it tends to
    :func:`fixed_point`. For k = c·n^α, λ = 1 − βn^(−α) it gives P_b ≈ y/n^α with y·e^(cλy) ≈ n^α e^(−cβ): P_b → 0
    but n^α·P_b grows like ln(n^α)/c (a heuristic, not a theorem; see msjgym.systems.loss.scorecard).
    """
    _check_model(n, d, lam)

    def probs(q1: float) -> np.ndarray:
        idle = n * (1.0 - q1)
        lo = int(math.floor(idle))
        w = idle - lo
        out = np.zeros(d + 1)
        for i, weight in ((lo, 1.0 - w), (min(lo + 1, n), w)):
            if weight > 0:
                pm = censored_hypergeometric(n, i, k, d)
                for m in range(d + 1):
                    out += weight * pm[m] * width_distribution(policy, m, d)
        return out

    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if lam * (1.0 - probs(mid)[0]) - mid > 0:
            lo = mid
        else:
            hi = mid
    q1 = 0.5 * (lo + hi)
    a = probs(q1)
    return FixedPoint(q1, float(a[0]), _mean_response(a))


def blocking_asymptotic(n: int, d: int, alpha: float, beta: float) -> float:
    """Leading-order P_b of greedy with full access, λ = 1 − βn^(−α), as n → ∞. [asymptotic, supplementary;
    docs/derivations.md#loss-halfin-whitt]

    α >= ½: lim(√n P_b)/√n (:func:`sqrt_n_blocking_limit`). α < ½ (sub-Halfin–Whitt and mean-field): with M = n/d
    super-servers and ε = βn^(−α), P_b ≈ exp(M(ε + ln(1 − ε)))/√(2πM) — super-polynomially small, so Theorem 4's
    O(n^-1/2) is a loose one-sided statement there. Leading order only: expect ratios to the exact
    value that tend to 1 slowly.
    """
    if alpha >= 0.5:
        return sqrt_n_blocking_limit(alpha, beta, d) / math.sqrt(n)
    m = n / d
    eps = beta * float(n) ** (-alpha)
    if not 0 < eps < 1:
        raise ValueError(f"βn^(−α) = {eps!r}: must be in (0, 1)")
    return math.exp(m * (eps + math.log1p(-eps))) / math.sqrt(2 * math.pi * m)
