"""sed: shortest expected delay, a server minimising (q_i + 1)/s_i over all servers (an O(N) scan, for small N).

Selen, Adan, Kapodistria & van Leeuwaarden, "Steady-state analysis of shortest expected delay routing", Queueing
Systems 84(3):309–354, 2016 (two heterogeneous exponential servers, each with its own FCFS queue: exactly sed at
N = 2). With equal speeds sed is jsq in distribution.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.core.rng import below
from msjgym.systems.dispatch.contract import P_N, DispatchPolicy

from .common import expected_delay


@njit
def choose_sed(st, pr, b, now):
    """Shortest expected delay: a server minimising (q_i + 1)/s_i, uniformly among the tied (reservoir sampling: a
    draw only at a tie). O(N): every server is read."""
    n = pr.ints[P_N]
    best = 0
    eb = expected_delay(st, pr, 0)
    ties = 1
    for i in range(1, n):
        e = expected_delay(st, pr, i)
        if e < eb:
            best, eb, ties = i, e, 1
        elif e == eb:
            ties += 1
            if below(st.rng, b, ties) == 0:
                best = i
    return best


SED_POLICY = DispatchPolicy(
    name="sed", summary="shortest expected delay: least (q_i + 1)/speed_i over all servers (O(N) scan)",
    source="Selen, Adan, Kapodistria & van Leeuwaarden, 'Steady-state analysis of shortest expected delay routing', "
           "Queueing Systems 84(3), 2016", choose=choose_sed,
    not_expressible="scans the servers in index order with its own tie draws; the sampled observation with d = N "
                    "shows every server in random order, which is sed-d with d = N (the same rule in distribution)")
