"""Exact stationary analysis of small open FCFS multiserver-job systems, by solving the CTMC numerically.

The system: n identical servers; Poisson arrivals of rate λ (jobs per unit time); each job is of class i with
probability p_i, holds m_i servers at once for an Exp(μ_i) duration (time units); one central FCFS queue with
head-of-line blocking — a job starts only when nobody waits ahead of it and m_i servers are idle (Wang, Xie &
Harchol-Balter, "Zero Queueing for Multi-Server Jobs", §3; Grosof & Ayhan, "Multiserver-job Response Time under
Multilevel Scaling", §3.1). Neither paper gives this solver; it is msjgym's exact validation oracle for small
systems.

Markov state (deferred decisions). With exponential durations, the order of the jobs in service is irrelevant, and
the classes of the jobs waiting *behind* the head never influence the dynamics until they reach the head. Since the
classes are i.i.d. marks drawn independently of everything else, they can be drawn only when a job becomes the head.
The state is therefore

    (c, q, h):  c = (c_1, …, c_K) jobs in service per class (Σ_i m_i c_i ≤ n),
                q = number waiting (queue length, excluding jobs in service),
                h = class of the head job when q ≥ 1 (it does not fit: m_h > n − Σ_i m_i c_i).

Transitions: a class-i arrival (rate λp_i) with q = 0 starts at once if m_i servers are idle, else becomes the head
(q = 1, h = i); with q ≥ 1 it joins the queue (q + 1, rate λ in total, class not drawn). A class-j completion
(rate μ_j c_j) frees m_j servers; then while the head fits it starts, and the next head's class is drawn i.i.d. from
p — one completion can admit several jobs, so the chain is skip-free upwards in q and jumps down by several levels
(a GI/M/1-type chain). Levels q ≥ 1 share one set of phases (c, h).

Given the state, the q − 1 jobs behind the head are i.i.d. of class i with probability p_i, independent of the state
(their marks were never used), so the mean number of class-i jobs waiting is

    E[Q_i] = P(q ≥ 1, h = i) + p_i·E[(q − 1)^+]          (the head counted once, by its known class)

and E[X_i] = E[c_i] + E[Q_i]. Note E[Q_i] ≠ p_i·E[q] in general: the head is biased towards large needs.

Truncation: arrivals are blocked at q = Q (the truncated chain is finite and irreducible), and Q is grown until the
stationary mass at the boundary, P(q = Q), is at most ``tol``. The stationary equations πG = 0 are solved sparse
(scipy SuperLU) with the balance equation of the empty state replaced by π(empty) = 1 — a single unit entry, not a
dense row of ones — and π is normalised afterwards.

The open system is stable iff λ < μ_sat, the throughput of the *saturated* system (queue never empty: the level-∞
phase chain), computed here from the same phases (Grosof & Ayhan §§3.1–3.2). λ ≥ μ_sat is refused.

Implemented here:
    * :func:`solve_open_fcfs` — the stationary means, queueing probabilities and utilisation [exact up to the
      reported truncation error].
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from msjgym.theory.checks import require_count, require_positive
from msjgym.theory.saturated import fcfs_stability_threshold

_PROBABILITY_TOLERANCE = 1e-9
_FIRST_LEVEL = 32          # smallest truncation level tried
_MAX_GROWTH = 8            # at most this factor between successive truncation levels
_MIN_GROWTH = 1.25         # at least this factor between successive truncation levels

Transitions = tuple[np.ndarray, np.ndarray, np.ndarray]  # (rows, cols, rates) of off-diagonal generator entries


@dataclass(frozen=True)
class OpenFCFSSolution:
    """Stationary performance of an open FCFS multiserver-job system (time averages; counts are numbers of jobs).

    Attributes:
        mean_number_in_system: E[N], jobs waiting + in service.
        mean_number_in_queue: E[q], jobs waiting (not in service).
        queueing_probability: P_Q = Σ_i p_i P_{Q,i}, the probability that an arrival cannot start at once.
        queueing_probability_per_class: P_{Q,i} = P(q ≥ 1 or fewer than m_i idle servers) (PASTA).
        mean_number_in_system_per_class: E[X_i] = E[c_i] + P(q ≥ 1, h = i) + p_i E[(q − 1)^+] (module docstring).
        mean_number_in_service_per_class: E[c_i] (= λp_i/μ_i, Little's law, up to the truncation error).
        utilization: E[busy servers]/n = E[Σ_i m_i c_i]/n.
        stability_threshold: μ_sat, jobs per unit time: the system is stable iff λ < μ_sat.
        load: λ/μ_sat, the fraction of the FCFS stability region in use (not the utilisation).
        truncation_level: Q, the largest queue length kept (arrivals at q = Q were blocked).
        truncation_mass: P(q = Q) in the truncated chain (<= tol), the truncation error indicator.
        tail_decay_rate: r, estimated geometric decay P(q = k + 1)/P(q = k) near the boundary (nan if unknown).
        queue_error_estimate: estimated missing part of E[q] beyond Q, P(q = Q)·(Q r/(1−r) + r/(1−r)²)
            [approximation: assumes the geometric tail continues].
        truncation_trials: (Q, P(q = Q)) of every truncation level solved, in order: how Q was chosen.
        states: number of states of the final truncated chain.
    """

    mean_number_in_system: float
    mean_number_in_queue: float
    queueing_probability: float
    queueing_probability_per_class: tuple[float, ...]
    mean_number_in_system_per_class: tuple[float, ...]
    mean_number_in_service_per_class: tuple[float, ...]
    utilization: float
    stability_threshold: float
    load: float
    truncation_level: int
    truncation_mass: float
    tail_decay_rate: float
    queue_error_estimate: float
    truncation_trials: tuple[tuple[int, float], ...]
    states: int


# =====================================================================================================================
# Public entry points


def solve_open_fcfs(servers: int, needs: Sequence[int], probabilities: Sequence[float], rates: Sequence[float],
                    arrival_rate: float, tol: float = 1e-10, max_states: int = 2_000_000,
                    truncation_level: int | None = None) -> OpenFCFSSolution:
    """Stationary means of the open FCFS (head-of-line blocking) multiserver-job system with exponential durations.
    [exact up to the reported truncation error]

    Method (module docstring): the deferred-decision CTMC (c, q, h) truncated at queue length Q, solved sparse;
    Q starts at max(32, ⌈20/(1 − λ/μ_sat)⌉) and grows (extrapolating the geometric decay of P(q = k)) until
    P(q = Q) <= ``tol``. Every tried (Q, P(q = Q)) is reported. The error of E[q] is of order
    ``queue_error_estimate`` (≈ P(q = Q)·Q/(1 − r)); to compare with a closed form to 1e-9, use tol ≈ 1e-13.
    Below ≈ 1e-15 the boundary mass is round-off and Q grows until ``max_states`` refuses.

    Args:
        servers: n >= 1, identical servers.
        needs: m_i in [1, n], servers held at once by a class-i job (K classes).
        probabilities: p_i > 0, summing to 1 (within 1e-9), the class of an arrival.
        rates: μ_i > 0, class-i durations are Exp(μ_i), per unit time.
        arrival_rate: λ > 0, total Poisson arrival rate, jobs per unit time; must be < μ_sat (stability).
        tol: largest accepted stationary mass at the truncation boundary, in (0, 1).
        max_states: refuse truncated chains with more states than this.
        truncation_level: solve once at this fixed Q >= 1 instead of choosing Q (``tol`` is then not enforced;
            check ``truncation_mass``). The truncated chain is the exact lumping of the full-order FCFS chain whose
            arrivals are blocked when Q jobs wait (blocking ignores the class, so deferring the classes stays exact).
    Raises:
        ValueError: bad input; λ at or above the FCFS stability threshold μ_sat; or a truncated chain larger than
            ``max_states`` would be needed.
    """
    model = _Model.checked(servers, needs, probabilities, rates, arrival_rate)
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ValueError(f"tol = {tol!r}: must be a number in (0, 1)")
    max_states = require_count("max_states", max_states)
    space = _StateSpace.build(model, max_states)
    threshold = fcfs_stability_threshold(servers, needs, probabilities, rates)
    if model.arrival_rate >= threshold:
        raise ValueError(f"arrival_rate = {model.arrival_rate!r} >= the FCFS stability threshold "
                         f"μ_sat = {threshold!r} (saturated-system throughput): the open system is unstable")
    load = model.arrival_rate / threshold
    level, trials = max(_FIRST_LEVEL, math.ceil(20.0 / (1.0 - load))), []
    if truncation_level is not None:
        level, tol = require_count("truncation_level", truncation_level), 1.0
    while True:
        states = space.count(level)
        if states > max_states:
            raise ValueError(_too_large(level, states, max_states, trials))
        pi = _stationary(_generator(space, level), space.index(0, 0))
        masses = _level_masses(space, pi, level)
        trials.append((level, float(masses[-1])))
        if masses[-1] <= tol:
            return _solution(space, pi, level, masses, threshold, load, tuple(trials))
        level = _next_level(level, masses, tol)


# =====================================================================================================================
# Model and state space


@dataclass(frozen=True)
class _Model:
    servers: int
    needs: np.ndarray          # int64[K]
    probabilities: np.ndarray  # float64[K]
    rates: np.ndarray          # float64[K]
    arrival_rate: float

    @staticmethod
    def checked(servers: int, needs: Sequence[int], probabilities: Sequence[float], rates: Sequence[float],
                arrival_rate: float) -> _Model:
        n = require_count("servers", servers)
        m = [require_count(f"needs[{i}]", x) for i, x in enumerate(needs)]
        if not m:
            raise ValueError("needs = []: at least one class is required")
        if max(m) > n:
            raise ValueError(f"needs = {list(needs)!r}: every need must be in [1, servers={n}]")
        p = [require_positive(f"probabilities[{i}]", x) for i, x in enumerate(probabilities)]
        mu = [require_positive(f"rates[{i}]", x) for i, x in enumerate(rates)]
        if not len(p) == len(mu) == len(m):
            raise ValueError(f"needs, probabilities, rates have lengths {len(m)}, {len(p)}, {len(mu)}: "
                             f"must be equal (one entry per class)")
        if abs(math.fsum(p) - 1.0) > _PROBABILITY_TOLERANCE:
            raise ValueError(f"probabilities = {list(probabilities)!r}: must sum to 1 (within "
                             f"{_PROBABILITY_TOLERANCE:g}); sum is {math.fsum(p)!r}")
        lam = require_positive("arrival_rate", arrival_rate)
        return _Model(n, np.array(m, dtype=np.int64), np.array(p) / math.fsum(p), np.array(mu), lam)

    @property
    def classes(self) -> int:
        return len(self.needs)


class _Move(NamedTuple):
    """One completion outcome from a phase: rate, jobs admitted, and the destination phase (or level-0 config)."""

    rate: float
    admitted: int
    phase: int    # destination phase index, or -1 when the queue emptied
    config: int   # destination config index when the queue emptied, else -1


@dataclass
class _StateSpace:
    """Configs (level q = 0), phases (c, h) of the levels q >= 1, and the completion moves out of each phase.

    Global state index: level-0 config k -> k; level q >= 1, phase j -> len(configs) + (q − 1)·len(phases) + j.
    """

    model: _Model
    configs: np.ndarray            # int64[N0, K]
    free: np.ndarray               # int64[N0], idle servers
    config_index: dict[tuple[int, ...], int]
    phase_config: np.ndarray       # int64[NP]
    phase_head: np.ndarray         # int64[NP]
    phase_index: dict[tuple[int, int], int]
    max_admitted: int              # A = n // min(m): at most this many starts after one completion
    admission_memo: dict = field(default_factory=dict, repr=False)
    moves_memo: dict = field(default_factory=dict, repr=False)

    @staticmethod
    def build(model: _Model, max_states: int) -> _StateSpace:
        configs = _enumerate_configs(model.servers, model.needs, max_states)
        free = model.servers - configs @ model.needs
        pairs = [(k, h) for k in range(len(configs)) for h in range(model.classes) if model.needs[h] > free[k]]
        if len(configs) + len(pairs) > max_states:
            raise ValueError(f"the state space has more than max_states = {max_states} states even with a "
                             f"queue length of 1 ({len(configs)} configurations, {len(pairs)} phases)")
        return _StateSpace(
            model=model, configs=configs, free=free,
            config_index={tuple(int(x) for x in c): k for k, c in enumerate(configs)},
            phase_config=np.array([k for k, _ in pairs], dtype=np.int64),
            phase_head=np.array([h for _, h in pairs], dtype=np.int64),
            phase_index={pair: j for j, pair in enumerate(pairs)},
            max_admitted=model.servers // int(model.needs.min()))

    @property
    def n_configs(self) -> int:
        return len(self.configs)

    @property
    def n_phases(self) -> int:
        return len(self.phase_head)

    def count(self, level: int) -> int:
        """Number of states of the chain truncated at queue length ``level``."""
        return self.n_configs + level * self.n_phases

    def index(self, level: int, k: int) -> int:
        """Global index of config k at level 0, or of phase k at level >= 1."""
        return k if level == 0 else self.n_configs + (level - 1) * self.n_phases + k

    def moves(self, phase: int, waiting: int) -> list[_Move]:
        """Completion outcomes from ``phase`` with ``waiting`` jobs queued (only min(waiting, A + 1) matters)."""
        waiting = min(waiting, self.max_admitted + 1)
        if (phase, waiting) not in self.moves_memo:
            self.moves_memo[(phase, waiting)] = self._moves(phase, waiting)
        return self.moves_memo[(phase, waiting)]

    def _moves(self, phase: int, waiting: int) -> list[_Move]:
        m = self.model
        config = self.configs[self.phase_config[phase]]
        head = int(self.phase_head[phase])
        out = []
        for j in np.flatnonzero(config):
            rate = float(m.rates[j] * config[j])
            after = config.copy()
            after[j] -= 1
            for (cfg, admitted, new_head), prob in self._admit(tuple(int(x) for x in after), head, waiting).items():
                k = self.config_index[cfg]
                if new_head < 0:
                    out.append(_Move(rate * prob, admitted, -1, k))
                else:
                    out.append(_Move(rate * prob, admitted, self.phase_index[(k, new_head)], -1))
        return out

    def _admit(self, config: tuple[int, ...], head: int, waiting: int) -> dict[tuple[tuple[int, ...], int, int], float]:
        """Distribution of (config after, jobs started, new head or -1 if the queue emptied) of the admission loop.

        ``waiting`` >= 1 jobs are queued, the first of class ``head``; the classes of the later ones are drawn
        i.i.d. from p as each becomes the head (deferred decisions).
        """
        key = (config, head, waiting)
        if key in self.admission_memo:
            return self.admission_memo[key]
        m = self.model
        free = m.servers - int(np.dot(config, m.needs))
        if m.needs[head] > free:
            result = {(config, 0, head): 1.0}
        else:
            started = list(config)
            started[head] += 1
            started_t = tuple(started)
            if waiting == 1:
                result = {(started_t, 1, -1): 1.0}
            else:
                result = {}
                for i, p_i in enumerate(m.probabilities):
                    for (cfg, admitted, new_head), prob in self._admit(started_t, i, waiting - 1).items():
                        outcome = (cfg, admitted + 1, new_head)
                        result[outcome] = result.get(outcome, 0.0) + float(p_i) * prob
        self.admission_memo[key] = result
        return result


def _enumerate_configs(servers: int, needs: np.ndarray, max_states: int) -> np.ndarray:
    """All c in ℕ^K with Σ_i m_i c_i <= n, as ``int64[N0, K]`` (the empty config first)."""
    rows: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], free: int) -> None:
        if len(rows) > max_states:
            raise ValueError(f"more than max_states = {max_states} server configurations: the system is too large "
                             f"for the exact solver")
        if len(prefix) == len(needs):
            rows.append(prefix)
            return
        for count in range(free // int(needs[len(prefix)]) + 1):
            extend(prefix + (count,), free - count * int(needs[len(prefix)]))

    extend((), servers)
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(needs))


# =====================================================================================================================
# Generators and stationary solves


def _generator(space: _StateSpace, level: int) -> sp.csr_matrix:
    """Generator of the chain truncated at queue length ``level`` (arrivals blocked at q = level)."""
    parts = [_level0_transitions(space), _arrival_transitions(space, level)]
    top = min(space.max_admitted, level)
    for q in range(1, top + 1):
        parts.append(_completion_transitions(space, np.array([q]), q))
    if level > top:
        parts.append(_completion_transitions(space, np.arange(top + 1, level + 1), space.max_admitted + 1))
    rows, cols, vals = (np.concatenate(x) for x in zip(*parts))
    n = space.count(level)
    return _with_diagonal(sp.coo_matrix((vals, (rows, cols)), shape=(n, n)))



def _level0_transitions(space: _StateSpace) -> Transitions:
    """Arrivals and completions out of the configs with an empty queue."""
    m = space.model
    rows, cols, vals = [], [], []
    for k, config in enumerate(space.configs):
        for i in range(m.classes):
            rows.append(k)
            vals.append(m.arrival_rate * m.probabilities[i])
            if m.needs[i] <= space.free[k]:
                cols.append(space.config_index[_shifted(config, i, +1)])
            else:
                cols.append(space.index(1, space.phase_index[(k, i)]))
            if config[i] > 0:
                rows.append(k)
                vals.append(m.rates[i] * config[i])
                cols.append(space.config_index[_shifted(config, i, -1)])
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals, dtype=np.float64)


def _shifted(config: np.ndarray, i: int, delta: int) -> tuple[int, ...]:
    out = [int(x) for x in config]
    out[i] += delta
    return tuple(out)


def _arrival_transitions(space: _StateSpace, level: int) -> Transitions:
    """q -> q + 1 at rate λ for every phase of the levels 1 .. level − 1 (blocked at q = level)."""
    start = space.index(1, 0)
    rows = np.arange(start, start + (level - 1) * space.n_phases, dtype=np.int64)
    return rows, rows + space.n_phases, np.full(rows.size, space.model.arrival_rate)


def _completion_transitions(space: _StateSpace, levels: np.ndarray, waiting: int) -> Transitions:
    """Completion moves out of every phase of ``levels``, all with the same outcome law (``waiting`` capped)."""
    moves = [(j, mv) for j in range(space.n_phases) for mv in space.moves(j, waiting)]
    src = np.array([j for j, _ in moves], dtype=np.int64)
    rate = np.array([mv.rate for _, mv in moves])
    drop = np.array([mv.admitted for _, mv in moves], dtype=np.int64)
    emptied = np.array([mv.phase < 0 for _, mv in moves])
    dst = np.array([mv.config if mv.phase < 0 else mv.phase for _, mv in moves], dtype=np.int64)
    q = levels[:, None]
    base = space.n_configs
    rows = base + (q - 1) * space.n_phases + src[None, :]
    cols = np.where(emptied[None, :], dst[None, :], base + (q - drop[None, :] - 1) * space.n_phases + dst[None, :])
    return rows.ravel(), cols.ravel(), np.broadcast_to(rate, rows.shape).ravel()


def _with_diagonal(offdiagonal: sp.coo_matrix) -> sp.csr_matrix:
    """Generator from off-diagonal rates (duplicates summed): G_ss = −Σ_{s'≠s} G_ss'."""
    g = offdiagonal.tocsr()
    g.sum_duplicates()
    g.setdiag(0.0)
    g.eliminate_zeros()
    return (g - sp.diags(np.asarray(g.sum(axis=1)).ravel())).tocsr()


def _stationary(generator: sp.csr_matrix, anchor: int) -> np.ndarray:
    """Solve πG = 0, Σπ = 1 with the balance equation of state ``anchor`` replaced by π(anchor) = 1, then normalise.

    ``anchor`` must be recurrent; transient states get π = 0.
    """
    g = generator.transpose().tocoo()
    keep = g.row != anchor
    rows = np.append(g.row[keep], anchor)
    cols = np.append(g.col[keep], anchor)
    vals = np.append(g.data[keep], 1.0)
    system = sp.csc_matrix((vals, (rows, cols)), shape=g.shape)
    rhs = np.zeros(g.shape[0])
    rhs[anchor] = 1.0
    x = spla.spsolve(system, rhs)
    if not np.all(np.isfinite(x)):
        raise ValueError("the stationary equations could not be solved (singular truncated chain)")
    x = np.maximum(x, 0.0)  # round-off below 0 in states of negligible mass
    return x / x.sum()


# =====================================================================================================================
# Truncation control and metrics


def _level_masses(space: _StateSpace, pi: np.ndarray, level: int) -> np.ndarray:
    """P(q = k), k = 0 .. level."""
    upper = pi[space.n_configs:].reshape(level, space.n_phases).sum(axis=1)
    return np.concatenate(([pi[:space.n_configs].sum()], upper))


def _decay_rate(masses: np.ndarray) -> float:
    """Geometric decay r of P(q = k) between k ≈ Q/2 and k ≈ 7Q/8 (away from the boundary); nan if not estimable."""
    top = len(masses) - 1
    lo, hi = max(1, top // 2), top - max(1, top // 8)
    if hi <= lo or masses[lo] <= 0 or masses[hi] <= 0:
        return math.nan
    return float((masses[hi] / masses[lo]) ** (1.0 / (hi - lo)))


def _next_level(level: int, masses: np.ndarray, tol: float) -> int:
    """Next truncation level: extrapolate P(q = Q)·r^ΔQ <= tol/2 from the decay r, within [1.25Q, 8Q]."""
    r = _decay_rate(masses)
    if not 0.0 < r < 1.0:
        return level * 2
    wanted = level + math.log(tol / (2.0 * masses[-1])) / math.log(r)
    return int(min(max(math.ceil(wanted), math.ceil(level * _MIN_GROWTH)), level * _MAX_GROWTH))


def _too_large(level: int, states: int, max_states: int, trials: list[tuple[int, float]]) -> str:
    tried = ", ".join(f"Q={q}: P(q=Q)={m:.3g}" for q, m in trials) or "none"
    return (f"truncation level Q = {level} needs {states} states > max_states = {max_states} (tried {tried}); "
            f"the load is too close to the stability threshold for this tolerance: raise max_states or tol")


def _solution(space: _StateSpace, pi: np.ndarray, level: int, masses: np.ndarray, threshold: float, load: float,
              trials: tuple[tuple[int, float], ...]) -> OpenFCFSSolution:
    m = space.model
    pi0 = pi[:space.n_configs]
    phase_mass = pi[space.n_configs:].reshape(level, space.n_phases).sum(axis=0)
    in_service = pi0 @ space.configs + phase_mass @ space.configs[space.phase_config]
    head = np.bincount(space.phase_head, weights=phase_mass, minlength=m.classes)
    p_waiting = float(masses[1:].sum())
    mean_queue = float(np.arange(level + 1) @ masses)
    per_class = in_service + head + m.probabilities * (mean_queue - p_waiting)
    p_queue = np.array([p_waiting + pi0[space.free < need].sum() for need in m.needs])
    r = _decay_rate(masses)
    boundary = float(masses[-1])
    error = boundary * (level * r / (1 - r) + r / (1 - r) ** 2) if 0 < r < 1 else math.nan
    return OpenFCFSSolution(
        mean_number_in_system=float(in_service.sum()) + mean_queue,
        mean_number_in_queue=mean_queue,
        queueing_probability=float(m.probabilities @ p_queue),
        queueing_probability_per_class=tuple(float(x) for x in p_queue),
        mean_number_in_system_per_class=tuple(float(x) for x in per_class),
        mean_number_in_service_per_class=tuple(float(x) for x in in_service),
        utilization=float(in_service @ m.needs) / m.servers,
        stability_threshold=threshold, load=load,
        truncation_level=level, truncation_mass=boundary, tail_decay_rate=r, queue_error_estimate=error,
        truncation_trials=trials, states=space.count(level))
