"""``msjgym reproduce NAME``: regenerate the papers' figures that msjgym's theory and simulator cover.

Each reproduction writes PNG figures and a CSV of every number plotted into ``Settings.out``. A reproduction is a
:class:`~msjgym.reproduce.common.Reproduction`: its description, its function, and its own options (declared in its
module as ``OPTIONS``; the command line builds ``msjgym reproduce NAME``'s flags from them).
"""
from __future__ import annotations

from msjgym.reproduce import finite_skip, lb_tables, loss_scaling, multilevel, zero_queueing
from msjgym.reproduce.common import Reproduction, Settings

REPRODUCTIONS: dict[str, Reproduction] = {
    "zero-queueing": Reproduction(
        "Wang, Xie & Harchol-Balter §7, Figs. 5–8: FCFS queueing probability vs n, Sets I–III (simulation)",
        zero_queueing.reproduce, zero_queueing.OPTIONS),
    "multilevel-n": Reproduction(
        "Grosof & Ayhan §9 / App. A, Figs. 2–4, 10–15: exact vs asymptotic μ and E[Δ(Y_d)] over n (closed forms, "
        "no simulation)", multilevel.reproduce_n),
    "multilevel-alpha": Reproduction(
        "Grosof & Ayhan §10, Figs. 5–9: exact α sweeps and simulated FCFS E[Q] vs α at n = 10",
        multilevel.reproduce_alpha),
    "loss-scaling": Reproduction(
        "Ghanbarian et al. (adaptive MSJ loss): greedy P_b and E[D] vs n per regime α, full access and k = n^α ln n, "
        "with exact / Theorem 4 / Halfin–Whitt / mean-field curves", loss_scaling.reproduce, loss_scaling.OPTIONS),
    "lb-tables": Reproduction(
        "Hellemans, Kielanski & Van Houdt §8, Tables 1–4: push, water filling, pull, resource pooling simulated at "
        "N = 100 and 1,000 (--servers), 20 replications, beside the cavity column (CSV + markdown)",
        lb_tables.reproduce, lb_tables.OPTIONS, reps=lb_tables.PAPER_REPS),
} | {name: Reproduction(*entry) for name, entry in finite_skip.REPRODUCTIONS.items()}

__all__ = ["REPRODUCTIONS", "Reproduction", "Settings"]
