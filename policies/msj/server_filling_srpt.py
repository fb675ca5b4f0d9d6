"""ServerFilling-SRPT and ServerFilling-Gittins: preemptive, job-level multiserver-job policies for mean response time.

Source: I. Grosof, Z. Scully, M. Harchol-Balter & A. Scheller-Wolf, "Optimal Scheduling in the Multiserver-job Model
under Heavy Traffic", Proc. ACM Meas. Anal. Comput. Syst. (POMACS) 6(3), art. 51, 2022 (SIGMETRICS 2023),
doi:10.1145/3570612, arXiv:2211.02762: the definitions of ServerFilling-SRPT and ServerFilling-Gittins, in the
setting where every server need and the number of servers n are powers of 2 (msjgym accepts the slightly wider
*exponential setting* of ServerFilling: every need divides every larger need and n, ``require_divisible(chain=True)``).

ServerFilling-SRPT (after every arrival and completion):

1. order all jobs present by remaining duration, shortest first (SRPT order; ties: the older job first);
2. M is the shortest prefix of that order whose needs sum to at least n (all jobs if they need fewer);
3. serve M's jobs largest need first (within a need, in SRPT order) while they fit: ServerFilling applied to M, which
   fills all n servers whenever M needs n or more (ServerFilling's Lemma 7.1, in the exponential setting).

Jobs not chosen wait (preempt-resume: a preempted job keeps its remaining duration). "Size" is a job's duration, the
time it holds its ``need`` servers (not need × duration). Whether the paper ranks by duration or by work (need ×
duration, the convention of the same author's finite-skip paper) could not be checked against its text:
docs/modelling-choices.md#sf-srpt-size.

ServerFilling-Gittins replaces the remaining duration by the job's Gittins *rank*, 1 / G_c(a), where a is the job's
attained service (duration minus remaining) and G_c the Gittins index of its class's duration law S:

    G(a) = sup_{Δ>0} P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a].

The policy is size-blind: the rank depends on the law and the age only. Exact closed forms (docs/derivations.md,
"Gittins index"): increasing hazard rate (exp, det, erlang, uniform): G(a) = 1 / E[S − a | S > a], so the rank is the
mean residual life (for det it is the remaining duration d − a); decreasing hazard rate (exp, hyperexp): G(a) = h(a),
the hazard rate. Other laws (ph, hypererlang, lognormal, bpareto, empirical) have a non-monotone hazard in general and
raise ``PolicyError``. With exponential classes the rank is the constant mean 1/μ_c: SF-Gittins is then ServerFilling
with a preemptive priority to the classes of larger rate; with equal rates it *is* ServerFilling, bit for bit
(``tests/test_server_filling_srpt.py``).

Neither decision can be expressed through ``msjgym/MSJ-v0``: its preemptive mode chooses per-class counts of the
*oldest* jobs of each class, and its observation shows neither remaining durations nor attained service; the agent
form raises a ``PolicyError`` saying so, and the tests drive the kernel event by event against a pure-Python
reference of the definition instead of the twin test.

This file is the whole policy: its compiled kernel, its (refusing) agent form, its declarations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from msjgym.core import sampling
from msjgym.core.distributions import Deterministic, Erlang, Exponential, HyperExponential, Uniform
from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import (
    C_HEAD, J_CLS, J_HPOS, J_NEXT, J_REM, J_SEQ, J_SIZE, J_START, NJF, P_GROUPS, P_K, P_SERVERS, S_HEAPN, T_NOW,
    preempt_job, start_job)
from msjgym.systems.msj.contract import OwnState, Policy, Sizes

from .agent_forms import NotExpressibleAgent
from .common import require_divisible

SOURCE = ("Grosof, Scully, Harchol-Balter & Scheller-Wolf, \"Optimal Scheduling in the Multiserver-job Model under "
          "Heavy Traffic\", POMACS 6(3) 2022 (SIGMETRICS 2023), arXiv:2211.02762")

J_KEY = NJF  # the policy's own entry per job: its sort key at the last decision
SELECTED = -1.0  # J_KEY of a job chosen for service at this decision (keys are > 0)


def _two_heaps(sizes: Sizes) -> int:
    return 2 * sizes.servers


STATE = OwnState(ints=_two_heaps, job_floats=1)
"""The policy's own state: the sorted candidates and the jobs to preempt (n each, ``own_i``), and each job's key."""


# ---------------------------------------------------------------- keys
@njit(inline="always")
def remaining(st, b, j, now):
    """Job j's remaining duration now.

    In service it is computed as ``preempt_job`` would store it (remaining at the last start minus the service since),
    not as completion time minus now: a job started now then has exactly its stored remaining duration (0 attained
    service), so equal keys stay equal and ties go to the older job instead of to rounding.
    """
    if st.job_i[b, j, J_HPOS] >= 0:
        return st.job_f[b, j, J_REM] - (now - st.job_f[b, j, J_START])
    return st.job_f[b, j, J_REM]


@njit
def gittins_rank(kind, data, start, age):
    """1 / G(age) for the law encoded at ``data[start:]`` (kinds exp, det, erlang, uniform, hyperexp; NaN else).

    Time units; the lower the rank, the sooner the job is served. See the module docstring and
    docs/derivations.md ("Gittins index") for the closed forms.
    """
    if kind == sampling.EXP:
        return data[start]  # the mean 1/μ, whatever the age
    if kind == sampling.DET:
        return max(data[start] - age, 0.0)
    if kind == sampling.UNIFORM:  # mean residual life of U[low, low + width]
        low = data[start]
        high = low + data[start + 1]
        if age < low:
            return 0.5 * (low + high) - age
        return max(0.5 * (high - age), 0.0)
    if kind == sampling.ERLANG:  # mean residual life θ Σ_{i<k} (k−i) x^i/i! / Σ_{i<k} x^i/i!, x = age/θ
        k = int(data[start])
        theta = data[start + 1]
        x = age / theta
        top = min(k - 1, int(x))  # the largest term: scale it to 1, every other term is <= 1 (no overflow)
        num = float(k - top)
        den = 1.0
        t = 1.0
        for i in range(top + 1, k):
            t *= x / i
            num += (k - i) * t
            den += t
        t = 1.0
        for i in range(top, 0, -1):
            t *= i / x
            num += (k - i + 1) * t
            den += t
        return theta * num / den
    if kind == sampling.HYPEREXP:  # 1 / hazard rate: Σ p_i e^{−μ_i a} / Σ p_i μ_i e^{−μ_i a}
        n = int(data[start])
        low = math.inf
        for i in range(n):
            low = min(low, 1.0 / data[start + 1 + n + i])
        num = 0.0
        den = 0.0
        prev = 0.0
        for i in range(n):
            p = data[start + 1 + i] - prev
            prev = data[start + 1 + i]
            mu = 1.0 / data[start + 1 + n + i]
            w = p * math.exp(-(mu - low) * age)
            num += w
            den += w * mu
        return num / den
    return math.nan


@njit(inline="always")
def _key(st, pr, b, j, now, gittins):
    r = remaining(st, b, j, now)
    if not gittins:
        return r
    c = st.job_i[b, j, J_CLS]
    return gittins_rank(pr.dkind[c], pr.ddata, pr.dstart[c], st.job_f[b, j, J_SIZE] - r)


@njit(inline="always")
def _after(st, b, i, j):
    """Does job i come after job j in the order (key, then arrival)?"""
    ki = st.job_f[b, i, J_KEY]
    kj = st.job_f[b, j, J_KEY]
    return ki > kj or (ki == kj and st.job_i[b, i, J_SEQ] > st.job_i[b, j, J_SEQ])


@njit(inline="always")
def _sift_down(st, b, base, pos, size):
    """Max-heap (the job coming last on top) in ``own_i[b, base:base + size]``: move entry ``pos`` down."""
    sc = st.own_i
    j = sc[b, base + pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and _after(st, b, sc[b, base + child + 1], sc[b, base + child]):
            child += 1
        cj = sc[b, base + child]
        if not _after(st, b, cj, j):
            break
        sc[b, base + pos] = cj
        pos = child
    sc[b, base + pos] = j


@njit(inline="always")
def _sift_up(st, b, base, pos):
    sc = st.own_i
    j = sc[b, base + pos]
    while pos > 0:
        parent = (pos - 1) >> 1
        p = sc[b, base + parent]
        if not _after(st, b, j, p):
            break
        sc[b, base + pos] = p
        pos = parent
    sc[b, base + pos] = j


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule_ranked(st, pr, b, gittins):
    """ServerFilling on the shortest prefix, in key order, of the jobs present whose needs reach n.

    Keys (``J_KEY``): remaining duration (``gittins = False``) or Gittins rank (``True``); ties to the older job.
    Cost per event, with N jobs present and n servers: O(N log n) to keep the n first jobs in a bounded max-heap
    (the prefix M holds at most n jobs, every need being >= 1), O(n log n) to sort them, O(G·n) to place M.
    Own state (``STATE``): ``own_i[b, 0:n]`` the sorted candidates, ``[n, 2n)`` the jobs to preempt; ``J_KEY`` per job.
    """
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    now = st.sys_f[b, T_NOW]
    sc = st.own_i
    base = 0
    # 1. the n first jobs in (key, arrival) order, in a bounded max-heap
    size = 0
    for c in range(K):
        j = st.cls_i[b, c, C_HEAD]
        while j >= 0:
            st.job_f[b, j, J_KEY] = _key(st, pr, b, j, now, gittins)
            if size < n:
                sc[b, base + size] = j
                _sift_up(st, b, base, size)
                size += 1
            elif _after(st, b, sc[b, base], j):
                sc[b, base] = j
                _sift_down(st, b, base, 0, size)
            j = st.job_i[b, j, J_NEXT]
    # 2. heapsort in place: own_i[base:base + size] in increasing order
    for end in range(size - 1, 0, -1):
        top = sc[b, base]
        sc[b, base] = sc[b, base + end]
        sc[b, base + end] = top
        _sift_down(st, b, base, 0, end)
    # 3. M: the shortest prefix whose needs reach n
    m = 0
    total = 0
    while m < size and total < n:
        total += pr.need[st.job_i[b, sc[b, base + m], J_CLS]]
        m += 1
    # 4. ServerFilling on M: largest need first, in key order within a need, while they fit
    free = n
    for g in range(pr.ints[P_GROUPS]):
        v = pr.grp_need[g]
        if v > free:
            continue
        for i in range(m):
            j = sc[b, base + i]
            if pr.need[st.job_i[b, j, J_CLS]] == v:
                st.job_f[b, j, J_KEY] = SELECTED
                free -= v
                if v > free:
                    break
    # 5. preempt the jobs in service not chosen, then start the chosen ones waiting
    out = base + n
    count = 0
    for pos in range(st.sys_i[b, S_HEAPN]):
        j = st.heap[b, pos]
        if st.job_f[b, j, J_KEY] != SELECTED:
            sc[b, out + count] = j
            count += 1
    for i in range(count):
        preempt_job(st, pr, b, sc[b, out + i])
    for i in range(m):
        j = sc[b, base + i]
        if st.job_f[b, j, J_KEY] == SELECTED and st.job_i[b, j, J_HPOS] < 0:
            start_job(st, pr, b, j)


@njit
def schedule_srpt(st, pr, b):
    """ServerFilling-SRPT: keys are remaining durations."""
    schedule_ranked(st, pr, b, False)


@njit
def schedule_gittins(st, pr, b):
    """ServerFilling-Gittins: keys are Gittins ranks (1 / index) from each class's law and the job's age."""
    schedule_ranked(st, pr, b, True)


# ---------------------------------------------------------------- agent form
_WHY = ("its decisions are per job (the jobs of least remaining duration / Gittins rank, whichever their class's "
        "arrival order), while msjgym/MSJ-v0's preemptive action serves the oldest jobs of each class and its "
        "observation shows no remaining durations or attained service; evaluate it through the compiled kernel "
        "(msjgym.evaluate / msjgym evaluate)")


class ServerFillingSRPTAgent(NotExpressibleAgent):
    policy_name = "server-filling-srpt"
    not_expressible = _WHY


class ServerFillingGittinsAgent(NotExpressibleAgent):
    policy_name = "server-filling-gittins"
    not_expressible = _WHY


# ---------------------------------------------------------------- declarations
GITTINS_LAWS = (Exponential, Deterministic, Erlang, Uniform, HyperExponential)


@dataclass(frozen=True, kw_only=True)
class _Ranked(Policy):
    gittins: bool = False

    def validate(self, model: MSJModel) -> None:
        require_divisible(self.name, model, chain=True, instead=None)
        if self.gittins:
            for c in model.classes:
                if not isinstance(c.service, GITTINS_LAWS):
                    raise PolicyError(
                        f"policy {self.name}: class {c.name!r} has duration law {c.service}; the Gittins index is "
                        f"implemented exactly for laws with a monotone hazard rate only: "
                        f"{', '.join(law.name for law in GITTINS_LAWS)}")


SERVER_FILLING_SRPT = _Ranked(
    name="server-filling-srpt",
    summary="ServerFilling-SRPT (preemptive, knows sizes): ServerFilling on the shortest-remaining-duration prefix "
            "whose needs reach n",
    preemptive=True,
    source=f"{SOURCE}, ServerFilling-SRPT",
    schedule=schedule_srpt,
    agent_class=ServerFillingSRPTAgent,
    state=STATE,
)

SERVER_FILLING_GITTINS = _Ranked(
    name="server-filling-gittins",
    summary="ServerFilling-Gittins (preemptive, size-blind): ServerFilling on the lowest-Gittins-rank prefix whose "
            "needs reach n",
    preemptive=True,
    source=f"{SOURCE}, ServerFilling-Gittins",
    gittins=True,
    schedule=schedule_gittins,
    agent_class=ServerFillingGittinsAgent,
    state=STATE,
)
