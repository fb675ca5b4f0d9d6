"""Balanced-Splitting (Anselmi & Doncel): the static partition, the routing probabilities to the helper set and a
stability condition for FCFS on the helper set.

Source: J. Anselmi & J. Doncel, "Balanced Splitting: A Framework for Achieving Zero-Wait in the Multiserver-Job
Model", IEEE Trans. Parallel and Distributed Systems 36(1):43–54, 2025 (arXiv:2409.18557), §3 (the framework and the
policy) and §4 (its connection with the M/GI/s/s queue and Erlang's loss formula; stability).

Notation: n servers; class i has need n_i, arrival rate λ_i and mean duration E[S_i]; its offered load in jobs is
a_i = λ_i E[S_i] (Erlangs) and in servers n_i a_i (``MSJModel.offered_servers_per_class``). The partition gives class
i the set A_i of |A_i| = n_i s_i servers (s_i job "slots") and leaves the helper set H of |H| = n − Σ_i n_i s_i.

What is the paper's and what is ours (``docs/modelling-choices.md#balanced-splitting``): the paper's full text was
not available to us while writing this; the partition rule s_i = ⌊a_i⌋ (each class gets the servers its load
occupies on average, the spare capacity goes to H) and the routing (an arrival joins A_i iff fewer than s_i class-i
jobs are there, else it is sent to H for good) are our reading of its §3, and are what make A_i an M/GI/s_i/s_i loss
system, the connection the paper's analysis rests on. ``scale`` ψ (s_i = ⌊ψ a_i⌋) is an msjgym knob (ψ = 1 is the
rule above; ψ = 0 puts every server in H). The stability condition below is derived here (a standard argument for
FCFS), not quoted from the paper's Proposition 1.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from msjgym.theory.checks import require_nonnegative
from msjgym.theory.queues import erlang_b


def balanced_slots(needs: Sequence[int], offered_servers: Sequence[float], scale: float = 1.0) -> list[int]:
    """The job slots s_i = ⌊ψ · a_i⌋ of each class's set A_i (|A_i| = n_i s_i servers). [definition]

    a_i = (offered servers of class i) / n_i = λ_i E[S_i], computed in this order (the compiled kernel computes
    ``floor(scale * (offered[c] / need[c]))`` with the same float operations, so both agree at integer boundaries).

    Args:
        needs: n_i, servers per class-i job.
        offered_servers: n_i λ_i E[S_i] per class (servers).
        scale: ψ >= 0 (1: the balanced rule, our reading of the paper's §3).
    """
    require_nonnegative("scale", scale)
    return [int(math.floor(scale * (float(o) / int(m)))) for m, o in zip(needs, offered_servers)]


def helper_servers(servers: int, needs: Sequence[int], slots: Sequence[int]) -> int:
    """|H| = n − Σ_i n_i s_i: the servers left to the helper set (negative: the partition does not fit). [definition]"""
    return int(servers) - sum(int(m) * int(s) for m, s in zip(needs, slots))


def helper_probability(slots: int, offered_load: float) -> float:
    """P(a class-i arrival is sent to the helper set H) = B(s_i, a_i), Erlang's loss formula. [exact]

    Anselmi & Doncel §4: A_i only ever takes class-i arrivals that find one of its s_i slots free and serves them at
    once, so it is an M/GI/s_i/s_i loss system fed by the class's Poisson stream, whatever H does; the arrivals it
    turns away go to H. By the insensitivity of the Erlang loss system, the fraction turned away is B(s_i, a_i) for
    any duration law with mean E[S_i] (Poisson arrivals; a replayed trace is not covered).

    Args:
        slots: s_i >= 0.
        offered_load: a_i = λ_i E[S_i] (Erlangs).
    """
    return erlang_b(slots, offered_load)


def helper_offered_servers(needs: Sequence[int], offered_servers: Sequence[float], slots: Sequence[int]) -> float:
    """Σ_i n_i a_i B(s_i, a_i): the time-average number of servers the jobs sent to H occupy (in a stable system).
    [exact]

    The work sent to H per unit time is Σ_i λ_i B(s_i, a_i) · n_i E[S_i] (server-time), by ``helper_probability``.
    """
    return float(sum(float(o) * helper_probability(int(s), float(o) / int(m))
                     for m, o, s in zip(needs, offered_servers, slots)))


def fcfs_helper_stable(servers: int, needs: Sequence[int], offered_servers: Sequence[float],
                       slots: Sequence[int]) -> bool:
    """Sufficient condition for stability of Balanced-Splitting with FCFS on H: the load sent to H is below
    |H| − max_i n_i + 1. [bound]

    Derived here (not the paper's Proposition 1, see the module docstring): the sets A_i never queue, and while H
    has a queue FCFS keeps at least |H| − n_head + 1 >= |H| − max_i n_i + 1 of its servers busy (the job at the head
    does not fit in the idle ones), so H drains when the servers its arrivals occupy on average,
    ``helper_offered_servers``, are fewer. With one need (n_i = 1) this is the exact condition (load of H below |H|).
    """
    h = helper_servers(servers, needs, slots)
    return h >= max(int(m) for m in needs) and \
        helper_offered_servers(needs, offered_servers, slots) < h - max(int(m) for m in needs) + 1
