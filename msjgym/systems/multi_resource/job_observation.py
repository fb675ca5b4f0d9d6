"""The observation of ``msjgym/MultiResourceJobs-v0``: K rows (the shown waiting jobs) of F = 11 + 3R normalised
features on a machine of R resources, defined once (the compiled decision path,
:mod:`msjgym.systems.multi_resource.job_control`, writes with these column indices), and its named view
:class:`ResourceJobView`.

The job-feature view of the multiserver-job family's ``msjgym/JobScheduling-v0``
(:mod:`msjgym.systems.msj.job_observation`: its time columns, its ``time_scale``, its rows the K best waiting jobs
under ``base_order``, its machine columns repeated in every row so one network shared by the rows sees them, as
RLScheduler's per-job network does: Zhang, Dai, He, Bao & Xie, SC'20, §4), with each job's demand vector and the
machine's free vector in place of the servers: every amount is a fraction of a capacity (a job's demand d_r of one
node's capacity C_r; free and queued amounts of the machine's N·C_r), so one model runs unchanged on any machine
size, any trace or Poisson scenario with the same resources (R, in the same order, fixes F). Two summaries do not
depend on R's order: a job's dominant share max_r d_r / C_r (Ghodsi et al., "Dominant Resource Fairness", NSDI 2011)
and its alignment with the free vector Σ_r (d_r / C_r)(free_r / (N·C_r)) (Tetris's score: Grandl et al., SIGCOMM
2014).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msjgym.core.observation import ObservationView
from msjgym.systems.msj.job_observation import DEFAULT_TIME_SCALE

# ---------------------------------------------------------------- the columns (the compiled path writes with them)
PRESENT = 0  # 1 if the row holds a waiting job
REQUESTED = 1  # log(1 + r / T): its requested time r
WAIT = 2  # log(1 + w / T): its waiting time so far w
WAIT_RATIO = 3  # w / (w + r) (0 if w + r = 0)
REQUESTED_RELATIVE = 4  # r / (r + mean r of the shown jobs) (0.5 if both are 0)
FITS = 5  # 1 if it fits some node now
RESERVED = 6  # 1 if it is the reserved head (picked, did not fit, still waits)
HEURISTIC = 7  # 1 for the base order's best job (row 0)
DOMINANT = 8  # max_r d_r / C_r: its dominant share of one node
ALIGNMENT = 9  # Σ_r (d_r / C_r) · free_r / (N·C_r)
QUEUE = 10  # machine: waiting jobs / K
FIXED = 11
"""Columns before the per-resource blocks: DEMAND (R), FREE (R), QUEUE_DEMAND (R), each in the resources' order."""

FIXED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("present", "1 if the row holds a waiting job, else 0 (and every job column 0)"),
    ("requested", "log(1 + r / T), r its requested time (runtime estimate), T = ``time_scale``"),
    ("wait", "log(1 + w / T), w its waiting time so far"),
    ("wait_ratio", "w / (w + r), in [0, 1) (0 if w + r = 0)"),
    ("requested_relative", "r / (r + mean r of the shown jobs), in (0, 1) (0.5 if both are 0)"),
    ("fits", "1 if it fits the free amounts of some node now"),
    ("reserved", "1 if it is the reserved head: the last job picked that did not fit, still waiting"),
    ("heuristic", "1 for row 0, the base order's best job"),
    ("dominant", "max_r d_r / C_r: its dominant share of one node (d its demand, C a node's capacity)"),
    ("alignment", "Σ_r (d_r / C_r) · free_r / (N·C_r): its demand against the machine's free vector (Tetris's score)"),
    ("queue", "machine: waiting jobs / K (every row; above 1 when more jobs wait than are shown)"),
)
RESOURCE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("demand", "d_r / C_r: its demand of resource r as a fraction of one node's capacity"),
    ("free", "machine: free_r / (N·C_r), the free amount of resource r over all N nodes (every row)"),
    ("queue_demand", "machine: Σ d_r of the waiting jobs / (N·C_r) (every row)"),
)
assert len(FIXED_COLUMNS) == FIXED


def features(resources: int) -> int:
    """F, the columns of a row on a machine of ``resources`` resources."""
    return FIXED + 3 * resources


def column_names(resources: tuple[str, ...]) -> list[str]:
    """Every column's name, in order: the fixed ones, then ``demand[NAME]``, ``free[NAME]``, ``queue_demand[NAME]``."""
    return [n for n, _ in FIXED_COLUMNS] + [f"{kind}[{r}]" for kind, _ in RESOURCE_COLUMNS for r in resources]


@dataclass(frozen=True)
class ResourceJobLayout:
    """One environment's observations: ``window`` rows (K) of :func:`features` columns, on ``nodes`` nodes of
    ``capacity`` (per resource, named ``resources``), times over ``time_scale``."""

    window: int
    resources: tuple[str, ...]
    capacity: tuple[int, ...]
    nodes: int = 1
    time_scale: float = DEFAULT_TIME_SCALE

    @property
    def shape(self) -> tuple[int, int]:
        return (self.window, features(len(self.resources)))

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    def describe(self) -> str:
        return f"msjgym/MultiResourceJobs-v0 window={self.window}, resources={','.join(self.resources)}"

    def view(self, observation: np.ndarray) -> ResourceJobView:
        return ResourceJobView(observation, self)


class ResourceJobView(ObservationView):
    """A ``msjgym/MultiResourceJobs-v0`` observation by name: ``column(name)`` (float32[K]) for any column of
    :func:`column_names`; the properties decode the common ones (amounts back in the resources' units)."""

    __slots__ = ()
    fields = ("shown", "waiting")

    def __init__(self, observation: object, layout: ResourceJobLayout) -> None:
        obs = np.asarray(observation)
        if obs.shape != layout.shape:
            raise ValueError(f"observation of shape {obs.shape}: expected {layout.shape} for {layout.describe()}")
        obs = obs.view()
        obs.flags.writeable = False
        object.__setattr__(self, "observation", obs)
        object.__setattr__(self, "layout", layout)

    def col(self, name: str) -> int:
        """The index of column ``name``; ValueError naming the valid ones."""
        names = column_names(self.layout.resources)
        if name not in names:
            raise ValueError(f"column {name!r}: one of {', '.join(names)}")
        return names.index(name)

    def column(self, name: str) -> np.ndarray:
        """float32[K]: column ``name`` of every row."""
        return self.observation[:, self.col(name)]

    @property
    def present(self) -> np.ndarray:
        return self.observation[:, PRESENT] > 0.5

    @property
    def shown(self) -> int:
        """Waiting jobs shown (at most K)."""
        return int(self.present.sum())

    @property
    def waiting(self) -> int:
        """Jobs waiting (shown or not)."""
        return int(round(float(self.observation[0, QUEUE]) * self.layout.window))

    @property
    def demands(self) -> np.ndarray:
        """int64[K, R]: each shown job's demand (0: empty row)."""
        R = len(self.layout.resources)
        share = self.observation[:, FIXED:FIXED + R].astype(np.float64)
        return np.rint(share * np.array(self.layout.capacity, dtype=np.float64)).astype(np.int64)

    @property
    def free(self) -> np.ndarray:
        """int64[R]: the machine's free amounts (over all nodes)."""
        R = len(self.layout.resources)
        total = self.layout.nodes * np.array(self.layout.capacity, dtype=np.float64)
        return np.rint(self.observation[0, FIXED + R:FIXED + 2 * R].astype(np.float64) * total).astype(np.int64)

    @property
    def requested(self) -> np.ndarray:
        """float64[K]: each shown job's requested time (time units; float32 precision; 0: empty row)."""
        return np.expm1(self.observation[:, REQUESTED].astype(np.float64)) * self.layout.time_scale

    @property
    def fits(self) -> np.ndarray:
        """bool[K]: the shown jobs that fit some node now."""
        return self.observation[:, FITS] > 0.5

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"``: the free vector, then each shown job's demand, requested time and whether it fits."""
        names = self.layout.resources
        free = ", ".join(f"{n} {a}" for n, a in zip(names, self.free))
        lines = [f"free: {free}; queue: {self.waiting} waiting, {self.shown} shown"]
        demands, requested, fits = self.demands, self.requested, self.fits
        for i in range(self.shown):
            need = ", ".join(f"{n} {a}" for n, a in zip(names, demands[i]) if a)
            lines.append(f"  [{i}] {need}; requested {requested[i]:.6g}" + (" (fits)" if fits[i] else ""))
        return lines

    def pick(self, i: int) -> int:
        """The action that picks row i's job."""
        if not 0 <= i < self.layout.window:
            raise ValueError(f"row {i}: must be in [0, {self.layout.window})")
        return int(i)
