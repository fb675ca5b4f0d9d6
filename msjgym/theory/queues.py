"""Standard single-station queue formulas: Erlang B/C, M/M/c means, M/G/1 (Pollaczek–Khinchine).

Units: rates are per unit time, sizes and waits are times, offered loads are in Erlangs (a = λ/μ, the mean number of
busy servers). All results here are [exact] and standard (see e.g. Kleinrock, *Queueing Systems* Vol. 1, §§3.5–3.7
and §5.6; Harchol-Balter, *Performance Modeling and Design of Computer Systems*, Chs. 14 and 23).
"""
from __future__ import annotations


from msjgym.core.validation import require_count, require_nonnegative, require_positive, require_stable
# Erlang B / Erlang C


def erlang_b(servers: int, offered_load: float) -> float:
    """Blocking probability of the M/M/s/s (Erlang loss) system. [exact, standard]

    B(s, a) = (a^s/s!) / Σ_{k=0}^{s} a^k/k!, computed by the stable recursion
    B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)) (no factorials, no overflow; O(s)).

    Args:
        servers: s >= 0.
        offered_load: a = λ/μ >= 0, Erlangs.
    """
    s = require_count("servers", servers, minimum=0)
    a = require_nonnegative("offered_load", offered_load)
    b = 1.0
    for k in range(1, s + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arrival waits in the M/M/s queue (Erlang C). [exact, standard]

    C(s, a) = (a^s/s! · s/(s−a)) / (Σ_{k=0}^{s−1} a^k/k! + a^s/s! · s/(s−a)), requires a < s; computed stably from
    Erlang B as C = s·B / (s − a(1 − B)).

    Args:
        servers: s >= 1.
        offered_load: a = λ/μ in [0, s), Erlangs.
    """
    s = require_count("servers", servers)
    a = require_nonnegative("offered_load", offered_load)
    require_stable(a / s, f"erlang_c(servers={s}, offered_load={a!r})")
    b = erlang_b(s, a)
    return s * b / (s - a * (1.0 - b))


# ---------------------------------------------------------------------------------------------------------------------
# M/M/c means


def mmc_mean_wait(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean time in queue (before service) of the M/M/c queue. [exact, standard]

    E[W] = C(c, a) / (cμ − λ), a = λ/μ, requires ρ = λ/(cμ) < 1.

    Args:
        servers: c >= 1.
        arrival_rate: λ > 0, jobs per unit time.
        service_rate: μ > 0, per server, jobs per unit time.
    Returns:
        E[W], time units.
    """
    c, lam, mu = _mmc_args(servers, arrival_rate, service_rate)
    return erlang_c(c, lam / mu) / (c * mu - lam)


def mmc_mean_number_in_queue(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean number waiting (not in service) in the M/M/c queue. [exact, standard]

    E[N_Q] = λ·E[W] = C(c, a)·ρ/(1 − ρ) (Little's law), ρ = λ/(cμ) < 1. Arguments as :func:`mmc_mean_wait`.
    """
    c, lam, mu = _mmc_args(servers, arrival_rate, service_rate)
    return lam * mmc_mean_wait(c, lam, mu)


def mmc_mean_number_in_system(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean number in system (waiting + in service) of the M/M/c queue. [exact, standard]

    E[N] = E[N_Q] + a, a = λ/μ (mean number in service), ρ = λ/(cμ) < 1. Arguments as :func:`mmc_mean_wait`.
    """
    c, lam, mu = _mmc_args(servers, arrival_rate, service_rate)
    return mmc_mean_number_in_queue(c, lam, mu) + lam / mu


def _mmc_args(servers: int, arrival_rate: float, service_rate: float) -> tuple[int, float, float]:
    c = require_count("servers", servers)
    lam = require_positive("arrival_rate", arrival_rate)
    mu = require_positive("service_rate", service_rate)
    require_stable(lam / (c * mu), f"M/M/{c} with arrival_rate={lam!r}, service_rate={mu!r}")
    return c, lam, mu


# ---------------------------------------------------------------------------------------------------------------------
# M/G/1 (Pollaczek–Khinchine)


def mg1_mean_wait(arrival_rate: float, mean_size: float, second_moment: float) -> float:
    """Mean time in queue of the M/G/1/FCFS queue (Pollaczek–Khinchine). [exact, standard]

    E[W] = λE[S²] / (2(1 − ρ)), ρ = λE[S] < 1.

    Args:
        arrival_rate: λ > 0, jobs per unit time.
        mean_size: E[S] > 0, time units.
        second_moment: E[S²] >= E[S]², time units squared.
    Returns:
        E[W], time units.
    """
    lam, s1, s2 = _mg1_args(arrival_rate, mean_size, second_moment)
    return lam * s2 / (2.0 * (1.0 - lam * s1))


def mg1_mean_number_in_system(arrival_rate: float, mean_size: float, second_moment: float) -> float:
    """Mean number in system of the M/G/1/FCFS queue (Pollaczek–Khinchine). [exact, standard]

    E[N] = ρ + λ²E[S²] / (2(1 − ρ)), ρ = λE[S] < 1. Arguments as :func:`mg1_mean_wait`.
    """
    lam, s1, s2 = _mg1_args(arrival_rate, mean_size, second_moment)
    return lam * s1 + lam * mg1_mean_wait(lam, s1, s2)


def _mg1_args(arrival_rate: float, mean_size: float, second_moment: float) -> tuple[float, float, float]:
    lam = require_positive("arrival_rate", arrival_rate)
    s1 = require_positive("mean_size", mean_size)
    s2 = require_positive("second_moment", second_moment)
    if s2 < s1 * s1 * (1.0 - 1e-12):
        raise ValueError(f"second_moment = {s2!r}: must be >= mean_size² = {s1 * s1!r}")
    require_stable(lam * s1, f"M/G/1 with arrival_rate={lam!r}, mean_size={s1!r}")
    return lam, s1, s2
