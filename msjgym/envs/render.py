"""``render_mode="ansi"``: a text picture of a system's servers and queue, drawn from the observation's named view.

Every environment's ``render()`` returns :func:`render_text` of its current observation (what the agent sees, so the
picture shows exactly the agent's information: exact counts where the observation has them, fractions or estimates
where it has those). One line per fact, servers as a bar (``#`` busy, ``.`` free, at most :data:`WIDTH` cells; a
cell stands for several servers when there are more).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.systems.dispatch.observation import LevelsView, SampledView
from msjgym.systems.loss.observation import LossView
from msjgym.systems.msj.observation import PreemptiveView, StartView

WIDTH = 40
"""The widest bar, in characters."""

__all__ = ["render_text", "server_bar"]


def server_bar(busy: float, servers: int, width: int = WIDTH) -> str:
    """``[###.....] busy/servers busy``: ``busy`` of ``servers`` as a bar of at most ``width`` cells."""
    cells = min(servers, width)
    filled = int(round(cells * busy / servers)) if servers else 0
    count = f"{busy:g}" if float(busy).is_integer() else f"{busy:.2f}"
    return f"[{'#' * filled}{'.' * (cells - filled)}] {count}/{servers} busy"


def render_text(spec: Any, observation: np.ndarray | dict) -> str:
    """The text picture of one observation of the environment whose spec is ``spec`` (lines joined by newlines)."""
    view = spec.view(observation)
    if hasattr(view, "render_lines"):
        lines = view.render_lines()
    elif isinstance(view, StartView):
        n = view.layout.servers
        lines = [f"servers {server_bar(n - view.free_servers, n)}",
                 "in service per class " + _counts(view.in_service),
                 "waiting per class    " + _counts(view.waiting),
                 "queue (oldest first, needs) " + " ".join(f"[{v}]" for v in view.window_needs if v > 0)
                 + (" ..." if view.truncated else "")]
    elif isinstance(view, PreemptiveView):
        n = view.layout.servers
        lines = [f"servers chosen {server_bar(n - view.servers_left, n)}",
                 "present per class    " + _counts(view.present),
                 "in service per class " + _counts(view.in_service),
                 "chosen per class     " + _counts(view.chosen),
                 "jobs (oldest first; * in service) " + " ".join(
                     f"c{c}{'*' if s else ''}" for c, s in zip(view.sequence_classes, view.sequence_in_service)
                     if c >= 0) + (" ..." if view.truncated else "")]
    elif isinstance(view, SampledView):
        lines = ["arrival; sampled servers' queues: " + " ".join(f"[{'#' * int(q)}]{int(q)}"
                                                                  for q in view.queue_lengths)]
        if view.layout.speeds:
            lines.append("             their speeds: " + " ".join(f"{s:g}" for s in view.speeds))
    elif isinstance(view, LevelsView):
        what = "estimated" if view.estimated else "exact"
        counts = view.level_servers
        top = max(int(counts.max()), 1)
        lines = [f"arrival; servers by {what} queue length (N = {view.layout.servers}):"]
        for a, c in enumerate(counts):
            label = f">={a}" if a == counts.size - 1 else f"{a:>3}"
            lines.append(f"  {label:>4} | {'#' * int(round(WIDTH * c / top))} {int(c)}")
    elif isinstance(view, LossView):
        n = view.layout.servers
        lines = [f"servers {server_bar(view.busy_servers, n)}",
                 f"jobs in system {view.jobs}; arrival sees {view.idle_sampled} idle server(s) in its sample"]
    else:  # pragma: no cover - a new family's view without render_lines
        lines = [repr(view)]
    return "\n".join(lines)


def _counts(values: np.ndarray) -> str:
    return " ".join(f"{int(v):>3}" for v in values)
