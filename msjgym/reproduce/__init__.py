"""``msjgym reproduce NAME``: regenerate the papers' figures that msjgym's theory and simulator cover.

Each reproduction writes PNG figures and a CSV of every number plotted into ``Settings.out``.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from msjgym.reproduce import zero_queueing
from msjgym.reproduce.common import Settings

REPRODUCTIONS: dict[str, tuple[str, Callable[[Settings], list[Path]]]] = {
    "zero-queueing": ("Wang, Xie & Harchol-Balter §7, Figs. 5–8: FCFS queueing probability vs n, Sets I–III "
                      "(simulation)", zero_queueing.reproduce),
}

__all__ = ["REPRODUCTIONS", "Settings"]
