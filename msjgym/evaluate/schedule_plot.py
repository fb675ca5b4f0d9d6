"""Pictures of one replay's schedule (``msjgym plot --replay SCENARIO --policy P`` or ``msjgym plot --schedule FILE``):
a Gantt chart, the utilization and the queue length over time.

* **Gantt chart**: each job a rectangle from its start to its end, over the processors it held. The simulator counts
  free servers and does not name them, so processors are assigned here, for the picture only: at each start (in
  time order, completions at the same instant first), the job takes the lowest-numbered free processors, drawn as one
  rectangle per contiguous run of them. The colour is the job's waiting time (``--color wait``, a logarithmic
  scale) or its size in processors (``--color size``). Rectangles are one rasterized collection, without per-job
  labels, so a chart of 10,000 jobs stays a small, legible image.
* **Utilization**: busy processors / processors, a step function of time.
* **Queue length**: jobs that have arrived and not started, a step function of time.

A schedule of several windows (``--windows`` with ``--per-job``) draws one window (``--window W``, default 0): the
windows each have their own time origin.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.errors import MsjgymError

KINDS = ("all", "gantt", "utilization", "queue")
COLORS_BY = ("wait", "size")


@dataclass
class ScheduleRecord:
    """What :func:`plot_schedule` drew: the file, the jobs, the rectangles and any note."""

    path: Path
    jobs: int
    rectangles: int
    servers: int
    notes: list[str] = field(default_factory=list)


def assign_processors(start: np.ndarray, end: np.ndarray, need: np.ndarray, servers: int
                      ) -> tuple[list[tuple[int, int, int]], int]:
    """Processor ranges for each job: (job index, first processor, count) per contiguous run, lowest-numbered free
    processors first (module docstring); and the number of jobs that found too few free processors (an
    inconsistent schedule: they are drawn over the processors that were free)."""
    order = np.lexsort((np.zeros_like(start), start))
    events = [(float(end[j]), 0, j) for j in order] + [(float(start[j]), 1, j) for j in order]
    events.sort()  # at one instant, completions (0) before starts (1)
    free = np.ones(servers, dtype=bool)
    held: dict[int, np.ndarray] = {}
    runs: list[tuple[int, int, int]] = []
    short = 0
    for _, kind, j in events:
        if kind == 0:
            if j in held:
                free[held.pop(j)] = True
            continue
        idle = np.flatnonzero(free)
        take = idle[:int(need[j])]
        short += take.size < need[j]
        free[take] = False
        held[j] = take
        if take.size:
            breaks = np.flatnonzero(np.diff(take) != 1) + 1
            for part in np.split(take, breaks):
                runs.append((j, int(part[0]), int(part.size)))
    return runs, short


def step_series(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step function from (time, change) events: the times and the value from each time on (changes at one
    instant summed)."""
    order = np.argsort(times, kind="stable")
    t, d = times[order], deltas[order]
    unique, first = np.unique(t, return_index=True)
    sums = np.add.reduceat(d, first) if t.size else d
    return unique, np.cumsum(sums)


def plot_schedule(columns: Mapping[str, np.ndarray], servers: int | None, out: str | Path, *, kind: str = "all",
                  color: str = "wait", window: int | None = None, title: str = "") -> ScheduleRecord:
    """Draw a schedule (columns ``arrival_time``, ``start_time`` or ``waiting_time``, ``duration``, ``need``; a
    ``window`` column for several windows) on a machine of ``servers`` processors; writes ``out`` (PNG, SVG, PDF)."""
    from msjgym.evaluate.figures import FORMATS, pyplot, save_figure

    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise MsjgymError(f"--out {str(out)!r}: unsupported format; valid suffixes: {', '.join(FORMATS)}")
    if kind not in KINDS:
        raise MsjgymError(f"--kind {kind!r}: valid: {', '.join(KINDS)}")
    if color not in COLORS_BY:
        raise MsjgymError(f"--color {color!r}: valid: {', '.join(COLORS_BY)}")
    cols = {k: np.asarray(v) for k, v in columns.items()}
    notes = []
    if "window" in cols:
        windows = np.unique(cols["window"])
        chosen = int(windows[0]) if window is None else window
        if chosen not in set(int(w) for w in windows):
            raise MsjgymError(f"--window {chosen}: the schedule has windows {int(windows[0])}–{int(windows[-1])}")
        keep = cols["window"] == chosen
        cols = {k: v[keep] for k, v in cols.items()}
        notes.append(f"window {chosen} of {windows.size} drawn (--window W for another)")
    elif window is not None:
        raise MsjgymError("--window: only for a schedule of several windows")
    arrival = cols["arrival_time"].astype(float)
    start = cols["start_time"].astype(float) if "start_time" in cols else arrival + cols["waiting_time"]
    duration = cols["duration"].astype(float)
    need = cols["need"].astype(np.int64)
    done = np.isfinite(start)
    if not done.all():
        notes.append(f"{int((~done).sum()):,} jobs without a start left out")
        arrival, start, duration, need = arrival[done], start[done], duration[done], need[done]
    end = start + duration
    servers = int(servers) if servers else int(need.max())
    if servers < need.max():
        raise MsjgymError(f"the schedule has a job of {int(need.max())} processors on a machine of {servers}")
    wait = start - arrival

    plt = pyplot()
    panels = ["gantt", "utilization", "queue"] if kind == "all" else [kind]
    heights = {"gantt": 3.0, "utilization": 1.0, "queue": 1.0}
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(9, 1.6 * sum(heights[p] for p in panels) + 0.8),
                             gridspec_kw={"height_ratios": [heights[p] for p in panels]}, squeeze=False,
                             layout="constrained")
    axes = axes[:, 0]
    rectangles = 0
    for ax, panel in zip(axes, panels):
        if panel == "gantt":
            rectangles, collection, label = _gantt(ax, start, end, need, wait, servers, color, notes)
            fig.colorbar(collection, ax=list(axes), label=label, pad=0.01, fraction=0.03, aspect=40)
        elif panel == "utilization":
            t, busy = step_series(np.concatenate([start, end]), np.concatenate([need, -need]).astype(float))
            ax.step(t, busy / servers, where="post", lw=0.6, color="tab:blue")
            ax.set_ylim(0, 1.02)
            ax.set_ylabel("utilization")
        else:
            t, queued = step_series(np.concatenate([arrival, start]),
                                    np.concatenate([np.ones_like(arrival), -np.ones_like(start)]))
            ax.step(t, queued, where="post", lw=0.6, color="tab:red")
            ax.set_ylim(bottom=0)
            ax.set_ylabel("queued jobs")
        ax.grid(True, alpha=0.25)
    axes[-1].set_xlabel("time (trace time unit, from the first arrival)")
    axes[0].set_title(title or "schedule", fontsize=10)
    path = save_figure(fig, out)
    return ScheduleRecord(path, int(start.size), rectangles, servers, notes)


def _gantt(ax: Any, start: np.ndarray, end: np.ndarray, need: np.ndarray, wait: np.ndarray, servers: int,
           color: str, notes: list[str]) -> tuple[int, Any, str]:
    """The Gantt panel: one rasterized collection of rectangles; returns the rectangles drawn, the collection and
    its colour bar's label."""
    from matplotlib import colors as mcolors
    from matplotlib.collections import PolyCollection

    runs, short = assign_processors(start, end, need, servers)
    if short:
        notes.append(f"{short:,} jobs found fewer free processors than they need (an overlapping schedule)")
    job = np.array([r[0] for r in runs], dtype=np.int64)
    low = np.array([r[1] for r in runs], dtype=float)
    count = np.array([r[2] for r in runs], dtype=float)
    x0, x1 = start[job], end[job]
    verts = np.stack([np.stack([x0, low], 1), np.stack([x1, low], 1), np.stack([x1, low + count], 1),
                      np.stack([x0, low + count], 1)], axis=1)
    if color == "wait":
        values = np.maximum(wait[job], 0.0)
        positive = values[values > 0]
        norm = mcolors.LogNorm(vmin=max(1.0, float(positive.min())) if positive.size else 1.0,
                               vmax=max(10.0, float(values.max())), clip=True)
        values = np.maximum(values, norm.vmin)
        label = "waiting time (log scale; below its lower end: no or little wait)"
        cmap = "viridis"
    else:
        values = need[job].astype(float)
        norm = mcolors.LogNorm(vmin=1.0, vmax=max(2.0, float(need.max())))
        label = "job size (processors, log scale)"
        cmap = "plasma"
    collection = PolyCollection(verts, array=values, cmap=cmap, norm=norm, linewidths=0, rasterized=True)
    ax.add_collection(collection)
    ax.set_xlim(float(start.min(initial=0.0)), float(end.max(initial=1.0)))
    ax.set_ylim(0, servers)
    ax.set_ylabel("processor")
    return len(runs), collection, label
