"""Finite-skip systems as rate models: heterogeneous M/G/k, LPS(k), threshold parallelism, and the MSJ model.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§2, 4–7). Capacity
is normalised to 1: a job's *size* S is in capacity × time units and it completes when it has received S of service; a
job's *rate* is the fraction of capacity it gets (heterogeneous servers: its server's speed; LPS: 1/min(N, k); threshold
parallelism: q/k on q servers; MSJ: v/k while served, so S = vX/k for a duration X).

State: the jobs present, in arrival order, in flat arrays (a completion shifts the younger jobs down; N is small at
the loads studied). After every arrival and completion the policy's kernel (``FiniteSkipPolicy.allocate``, compiled
on its own and called at its address by the event loop, which is compiled once per machine) writes every job's rate; the next event is the earliest of the next arrival and the earliest rem/rate.

Front (Defs. 2.1, 2.2): a prefix of the arrival order that, while not *full* by the system's own definition, requests
the oldest queued job: het M/G/k and LPS: full with k jobs; threshold parallelism and MSJ: full when the thresholds /
needs in it sum to >= k; ServerFilling in the divisible setting: full when some need v has k/v jobs in it. It is
defined without looking at the rates, so "queue non-empty ⇒ total rate 1" (WCFS) and "only front jobs are served"
(finite skip) are real checks of a policy (acc A_GAP, A_OUTSIDE). For every job the kernel records the work in
system at its arrival W^A and the work in the front older than it when it enters the front W_F^F, so the pathwise
identity T_Q = W^A − W_F^F (proof of Thm 3.3) can be checked; and, over the measured window, the integrals of N, N_F, W,
W(1−B) and B for the work identity E[W] = E[W(1−B)]/(1−ρ) + λE[S²]/(2(1−ρ)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import types

from msjgym.core.distributions import Distribution, encode_all
from msjgym.core.jit import njit
from msjgym.core.plug import call
from msjgym.core.rng import exponential, seed_states, uniform
from msjgym.core.sampling import sample
from msjgym.errors import PolicyError, ScenarioError
from msjgym.policies.finite_skip import (FINITE_SKIP_POLICIES, HET, LPS, MSJ, SF_DIV, SF_EXP, SYSTEM_NAMES,
                                         THRESHOLD, FiniteSkipPolicy)


# per-replication accumulators acc[:]
A_TIME = 0  # measured time (from the warmup-th arrival to the (warmup + jobs)-th)
A_N = 1  # ∫ N dt
A_NF = 2  # ∫ N_F dt
A_W = 3  # ∫ W dt
A_W1B = 4  # ∫ W (1 − B) dt
A_B = 5  # ∫ B dt
A_NARR = 6  # arrivals in the window
A_MAXNF = 7  # largest front size seen (whole run)
A_GAP = 8  # largest 1 − B while the queue is non-empty (whole run)
A_UNSTABLE = 9  # 1 if the job arrays overflowed
A_END = 10  # simulated time at the end
A_NEND = 11  # jobs in system at the end
A_SIZE2 = 12  # Σ S² over arrivals in the window
A_SIZE = 13  # Σ S over arrivals in the window
A_OUTSIDE = 14  # events at which a job outside the front was served (0 for a finite-skip policy)
A_EVENTS = 15  # events simulated (arrivals and completions, whole run)
NACC = 16

# per measured job rec[i, :]
R_ARR = 0
R_FRONT = 1  # time it entered the front
R_DONE = 2
R_SIZE = 3
R_WA = 4  # work in system seen at arrival (excluding itself)
R_WFF = 5  # work in the front, of jobs older than it, when it entered the front
NREC = 6


@dataclass(frozen=True)
class FiniteSkipModel:
    """One finite-skip system with Poisson arrivals.

    Attributes:
        system: HET, LPS, THRESHOLD or MSJ (``policies.finite_skip``).
        servers: k.
        arrival_rate: λ (jobs per time unit).
        probs: class probabilities. laws: per class, the law of the size S (capacity × time) — for MSJ the law of
            the duration X (time units, holding v servers). params: per class, the threshold P (THRESHOLD), the need
            v (MSJ), else 1.
        speeds: HET: the server speeds (fractions of capacity, any order, summing to 1); else k × 1/k.
        name: a label.
    """

    system: int
    servers: int
    arrival_rate: float
    probs: tuple[float, ...]
    laws: tuple[Distribution, ...]
    params: tuple[int, ...]
    speeds: tuple[float, ...] = field(default=())
    name: str = ""

    def __post_init__(self) -> None:
        validate_model(self)

    @property
    def size_scales(self) -> np.ndarray:
        """S = scale · (draw of the class law): v/k for MSJ, 1 otherwise."""
        if self.system == MSJ:
            return np.array([v / self.servers for v in self.params], dtype=np.float64)
        return np.ones(len(self.laws))

    @property
    def size_moments(self) -> tuple[float, float]:
        """(E[S], E[S²]) in capacity × time units."""
        sc = self.size_scales
        m1 = sum(p * s * d.mean for p, s, d in zip(self.probs, sc, self.laws))
        m2 = sum(p * s * s * d.second_moment for p, s, d in zip(self.probs, sc, self.laws))
        return float(m1), float(m2)

    @property
    def load(self) -> float:
        """ρ = λE[S]."""
        return self.arrival_rate * self.size_moments[0]


def validate_model(m: FiniteSkipModel) -> None:
    """Raise ``ScenarioError`` naming the parameter and its valid range."""
    if m.system not in SYSTEM_NAMES:
        raise ScenarioError(f"system = {m.system!r}: must be one of {sorted(SYSTEM_NAMES)}")
    if not (isinstance(m.servers, (int, np.integer)) and m.servers >= 1):
        raise ScenarioError(f"servers = {m.servers!r}: must be an integer >= 1")
    k = int(m.servers)
    if not (math.isfinite(m.arrival_rate) and m.arrival_rate > 0):
        raise ScenarioError(f"arrival_rate = {m.arrival_rate!r}: must be a finite number in (0, inf)")
    if not (len(m.probs) == len(m.laws) == len(m.params) >= 1):
        raise ScenarioError("probs, laws and params must have one entry per class (at least one class)")
    if any(not (0 < p <= 1) for p in m.probs) or abs(sum(m.probs) - 1) > 1e-9:
        raise ScenarioError(f"probs = {list(m.probs)}: each must lie in (0, 1] and they must sum to 1")
    if m.system == HET:
        if len(m.speeds) != k:
            raise ScenarioError(f"speeds = {list(m.speeds)}: must list one speed per server (servers={k})")
        for i, v in enumerate(m.speeds):
            if not (math.isfinite(v) and v > 0):
                raise ScenarioError(f"speeds[{i}] = {v!r}: must be a finite number in (0, 1] (speeds sum to 1)")
        if abs(sum(m.speeds) - 1) > 1e-9:
            raise ScenarioError(f"speeds = {list(m.speeds)}: must sum to 1 (capacity is normalised to 1); "
                                f"sum is {sum(m.speeds)!r}")
    name = "threshold" if m.system == THRESHOLD else "need"
    for i, p in enumerate(m.params):
        if not (isinstance(p, (int, np.integer)) and 1 <= p <= k):
            if m.system in (THRESHOLD, MSJ):
                raise ScenarioError(f"classes[{i}].{name} = {p!r}: must be an integer in [1, servers={k}]")
            if p != 1:
                raise ScenarioError(f"classes[{i}].param = {p!r}: must be 1 for {SYSTEM_NAMES[m.system]}")


def check_policy(model: FiniteSkipModel, policy: FiniteSkipPolicy) -> None:
    """Raise ``PolicyError`` if ``policy`` cannot run on ``model`` (wrong system, or ServerFilling's setting broken)."""
    if policy.system != model.system:
        valid = [p.name for p in FINITE_SKIP_POLICIES.values() if p.system == model.system]
        raise PolicyError(f"policy {policy.name} runs on {SYSTEM_NAMES[policy.system]}, not on "
                          f"{SYSTEM_NAMES[model.system]}; valid: {', '.join(valid)}")
    if policy.name in (SF_EXP, SF_DIV):
        k = model.servers
        needs = sorted(set(model.params))
        bad = [v for v in needs if k % v]
        if bad:
            raise PolicyError(f"policy {policy.name}: every need must divide servers={k}; needs {bad} do not "
                              f"(valid needs: divisors of {k})")
        if policy.name == SF_EXP:
            for i, a in enumerate(needs):
                for b in needs[i + 1:]:
                    if b % a:
                        raise PolicyError(f"policy {policy.name}: every need must divide every larger need "
                                          f"(exponential setting); {a} does not divide {b} (needs={needs}); use "
                                          "server-filling-divisible")


def get_finite_skip_policy(name: str) -> FiniteSkipPolicy:
    try:
        return FINITE_SKIP_POLICIES[name]
    except KeyError:
        raise PolicyError(f"policy {name!r}: unknown; valid: {', '.join(FINITE_SKIP_POLICIES)}") from None


# ---------------------------------------------------------------- compiled event loop
_I, _F, _I1, _F1 = types.int64, types.float64, types.int64[::1], types.float64[::1]
ALLOCATE = types.void(_I, _I1, _I1, _I1, _F1, _I, _I1, _I1, _F1, types.uint64[:, ::1])
"""The signature a policy's kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` is compiled
for, on its own (cached by its file); the event loop calls it at its address."""
RUN = types.void(_I, _I, _F, _F1, _I1, _F1, _I1, _I1, _F1, _F1, _I1, _I, _I, _I, types.uint64[:, ::1], _F1,
                 types.float64[:, ::1], _I1, _F1, _F1, _I1, _F1, _I1, _F1, _F1, _F1, _I1, _F1, _I)
"""The signature the event loop ``_run`` is compiled for, once per machine (cached), whatever the policy."""

FULL_COUNT = 0
FULL_SUM = 1
FULL_CLASS = 2


@njit
def _full(rule, nf, cls, prm, k, levels, cnt):
    """Is the front made of the ``nf`` oldest jobs full (Def. 2.2, by the system's definition: §§4.2, 5.2, 6.2,
    7.2, App. B.2; docs/modelling-choices.md#finite-skip-front)?"""
    if rule == FULL_COUNT:
        return nf >= k
    if rule == FULL_SUM:
        total = 0
        for j in range(nf):
            total += prm[cls[j]]
        return total >= k
    for i in range(levels.shape[0]):
        cnt[i] = 0
    for j in range(nf):
        v = prm[cls[j]]
        for i in range(levels.shape[0]):
            if levels[i] == v:
                cnt[i] += 1
                if cnt[i] * v >= k:
                    return True
    return False


@njit
def _run(alloc, k, lam, cumprob, prm, scale, dkind, dstart, ddata, speeds, levels, warmup, jobs, cap, rng,
         acc, rec, cls, rem, arr, srv, rates, taken, wa, wff, fent, seqs, sz, rule):
    """Simulate one replication until every measured job (arrivals warmup .. warmup + jobs − 1) has completed, the
    rates written by the policy's kernel at address ``alloc`` (:data:`ALLOCATE`).

    ``rule`` says when the front (the first ``nf`` jobs) is full: FULL_COUNT (k jobs), FULL_SUM (their thresholds or
    needs sum to >= k) or FULL_CLASS (some need v has k/v jobs in it: ServerFilling, divisible setting)."""
    n = 0
    nf = 0
    t = 0.0
    seq = 0
    done_meas = 0
    nk = cumprob.shape[0]
    next_arr = exponential(rng, 0) / lam
    w = 0.0
    t_start = -1.0
    t_stop = -1.0
    while done_meas < jobs:
        acc[A_EVENTS] += 1.0
        # front (Defs. 2.1, 2.2): a prefix of the arrival order; while not full it requests the oldest queued job
        while nf < n and not _full(rule, nf, cls, prm, k, levels, taken):
            fent[nf] = t
            wsum = 0.0
            for j in range(nf):
                wsum += rem[j]
            wff[nf] = wsum
            nf += 1
        for j in range(n):
            rates[j] = 0.0
        if n > 0:
            call(alloc, n, cls, prm, srv, speeds, k, levels, taken, rates, rng)
        b = 0.0
        for j in range(n):
            b += rates[j]
            if j >= nf and rates[j] > 0.0:
                acc[A_OUTSIDE] += 1.0
        if nf > acc[A_MAXNF]:
            acc[A_MAXNF] = nf
        if n > nf and 1.0 - b > acc[A_GAP]:
            acc[A_GAP] = 1.0 - b
        # next event
        dt = next_arr - t
        who = -1
        for j in range(n):
            if rates[j] > 0.0:
                d = rem[j] / rates[j]
                if d < dt:
                    dt = d
                    who = j
        if dt < 0.0:
            dt = 0.0
        # integrate over the measured window [t_start, t_stop]
        if t_start >= 0.0:
            lo = t
            hi = t + dt
            if t_stop >= 0.0 and hi > t_stop:
                hi = t_stop
            if hi > lo:
                u0 = lo - t
                h = hi - lo
                wint = (w - b * u0) * h - 0.5 * b * h * h
                acc[A_TIME] += h
                acc[A_N] += n * h
                acc[A_NF] += nf * h
                acc[A_W] += wint
                acc[A_W1B] += (1.0 - b) * wint
                acc[A_B] += b * h
        for j in range(n):
            if rates[j] > 0.0:
                rem[j] -= rates[j] * dt
        w -= b * dt
        t += dt
        if who < 0:  # arrival
            if n == cap:
                acc[A_UNSTABLE] = 1.0
                break
            u = uniform(rng, 0)
            c = nk - 1
            for i in range(nk - 1):
                if u < cumprob[i]:
                    c = i
                    break
            s = scale[c] * sample(dkind[c], ddata, dstart[c], rng, 0)
            if seq == warmup:
                t_start = t
            if seq == warmup + jobs:
                t_stop = t
            if warmup <= seq < warmup + jobs:
                acc[A_NARR] += 1
                acc[A_SIZE] += s
                acc[A_SIZE2] += s * s
            cls[n] = c
            rem[n] = s
            arr[n] = t
            srv[n] = -1
            wsum = 0.0
            for j in range(n):
                wsum += rem[j]
            w = wsum  # resynchronise the running total (no drift)
            wa[n] = wsum
            wff[n] = 0.0
            fent[n] = -1.0
            seqs[n] = seq
            sz[n] = s
            seq += 1
            n += 1
            w += s
            next_arr = t + exponential(rng, 0) / lam
        else:  # completion of job `who`
            sq = seqs[who]
            if warmup <= sq < warmup + jobs:
                i = sq - warmup
                rec[i, R_ARR] = arr[who]
                rec[i, R_FRONT] = fent[who]
                rec[i, R_DONE] = t
                rec[i, R_SIZE] = sz[who]
                rec[i, R_WA] = wa[who]
                rec[i, R_WFF] = wff[who]
                done_meas += 1
            w -= rem[who]
            if who < nf:
                nf -= 1
            elif warmup <= sq < warmup + jobs:
                rec[sq - warmup, R_FRONT] = np.nan  # served outside the front: the policy is not finite-skip
            for j in range(who, n - 1):
                cls[j] = cls[j + 1]
                rem[j] = rem[j + 1]
                arr[j] = arr[j + 1]
                srv[j] = srv[j + 1]
                wa[j] = wa[j + 1]
                wff[j] = wff[j + 1]
                fent[j] = fent[j + 1]
                seqs[j] = seqs[j + 1]
                sz[j] = sz[j + 1]
            n -= 1
    acc[A_END] = t
    acc[A_NEND] = n


def units(policy: FiniteSkipPolicy) -> list:
    """What a run of the built-in ``policy`` needs compiled (:class:`msjgym.core.compiling.Unit`): the event loop
    (once per machine) and the policy's kernel, for :data:`ALLOCATE`."""
    from msjgym.core.compiling import Unit

    return [Unit("the finite-skip event loop", "finite-skip loop", _run, RUN),
            Unit(f"policy {policy.name}", "finite-skip policy", policy.allocate, ALLOCATE)]


def prepare(policy: FiniteSkipPolicy) -> int:
    """Compile (or load from the cache) the event loop and ``policy``'s kernel; returns the kernel's address."""
    from msjgym.core.compiling import compile_units
    from msjgym.core.plug import address

    compile_units(units(policy))
    return address(policy.allocate, ALLOCATE)


@dataclass
class Replication:
    """One replication: ``acc`` (A_* fields) and, per measured job, ``rec`` (R_* fields)."""

    acc: np.ndarray
    rec: np.ndarray

    @property
    def stable(self) -> bool:
        return self.acc[A_UNSTABLE] == 0.0


def simulate(model: FiniteSkipModel, policy: FiniteSkipPolicy | str, *, jobs: int = 100_000,
             warmup: int | None = None, reps: int = 10, seed: int = 0, capacity: int = 3_000,
             seeds: list[np.random.SeedSequence] | None = None) -> list[Replication]:
    """``reps`` independent replications (streams from ``SeedSequence(seed).spawn(reps)``, or one per ``seeds``).

    Each discards the first ``warmup`` arrivals (default jobs // 5), measures the next ``jobs`` arrivals, and runs
    until they have all completed. A replication whose number in system reaches ``capacity`` stops, flagged unstable.
    """
    if isinstance(policy, str):
        policy = get_finite_skip_policy(policy)
    check_policy(model, policy)
    warmup = jobs // 5 if warmup is None else warmup
    k = model.servers
    cumprob = np.cumsum(np.asarray(model.probs, dtype=np.float64))
    cumprob[-1] = 1.0
    prm = np.asarray(model.params, dtype=np.int64)
    scale = model.size_scales
    dkind, dstart, ddata = encode_all(model.laws)
    speeds = np.sort(np.asarray(model.speeds if model.system == HET else [1.0 / k] * k, dtype=np.float64))[::-1].copy()
    levels = np.array(sorted(set(model.params), reverse=True), dtype=np.int64)
    rule = (FULL_COUNT if model.system in (HET, LPS) else FULL_CLASS if policy.name == SF_DIV else FULL_SUM)
    alloc = prepare(policy)
    if seeds is None:
        seeds = np.random.SeedSequence(seed).spawn(reps)
    out = []
    for ss in seeds:
        rng = seed_states([ss])
        acc = np.zeros(NACC)
        rec = np.full((jobs, NREC), np.nan)
        arrays = (np.zeros(capacity, np.int64), np.zeros(capacity), np.zeros(capacity), np.full(capacity, -1, np.int64),
                  np.zeros(capacity), np.zeros(max(k, levels.size), np.int64), np.zeros(capacity), np.zeros(capacity),
                  np.zeros(capacity), np.zeros(capacity, np.int64), np.zeros(capacity))
        _run(alloc, int(k), float(model.arrival_rate), cumprob, prm, scale, dkind, dstart, ddata, speeds, levels,
             int(warmup), int(jobs), int(capacity), rng, acc, rec, *arrays, rule)
        out.append(Replication(acc, rec))
    return out
