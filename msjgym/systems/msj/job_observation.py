"""The observation of ``msjgym/JobScheduling-v0``: K rows (the shown waiting jobs) of F normalised features, defined
once (the compiled decision path, :mod:`msjgym.systems.msj.job_control`, writes with these column indices), and its
named view :class:`JobView`.

Row i is the i-th shown waiting job: the K best waiting jobs under the environment's ``base_order`` (the orders of
the ``priority`` policy, :mod:`msjgym.systems.msj.backfilling`), best first; rows past the waiting jobs are empty
(``PRESENT`` = 0, every job column 0). The machine columns (``FREE`` .. ``HEAD_DELAY``) are the same in every row, empty
ones included, so that one network shared by the rows sees them (as RLScheduler's per-job network does: Zhang, Dai,
He, Bao & Xie, "RLScheduler: an automated HPC batch job scheduler using reinforcement learning", SC'20, §4).

Every column is scale-free or a fixed transform, so one model runs on any trace, machine size or Poisson scenario:
servers as a fraction of the machine's n, times t (in the scenario's time unit) as log(1 + t / T) with T the
environment's ``time_scale`` (default :data:`DEFAULT_TIME_SCALE` = 3600, one hour of a trace in seconds), or as ratios.
No column depends on a trace's maxima or on its job classes. Requested times are the jobs' runtime estimates (a
trace's SWF field 9, else the scenario's ``estimate`` law, exact by default); the jobs' actual run times are never
shown.

With ``estimate_accuracy=True`` three columns follow (F = :data:`FEATURES_ACCURACY` = 17; default off, F = 14, so the
recorded models keep their observation): how accurate the requested times have been on this machine, from what a
real scheduler knows at the decision, the jobs completed so far in the episode (their run time is known once they
end). Tsafrir, Etsion & Feitelson ("Backfilling using system-generated predictions rather than user runtime
estimates", IEEE TPDS 18(6), 2007, §3) show users' requested times are mostly a few round values far above the run
times, and that predicting a job's run time from completed jobs helps the scheduler; RLBackfilling (Kolker-Hicks,
Zhang & Dai, PMBS at SC'23, §5) reports the largest gains of a learned scheduler when estimates are inaccurate. The
columns: the mean accuracy a = min(1, run / requested) of the completed jobs (one exact pseudo-job as a prior, so
1 before any completion; every row), and per job the run time predicted from its requested time r, r · a_r, with a_r
the mean accuracy of the completed jobs whose requested time fell in r's half-octave bucket (shrunk to a by one
pseudo-job), as log(1 + r · a_r / T) and as w / (w + r · a_r). With exact requested times a = a_r = 1 and the columns
repeat ``requested`` and ``wait_ratio``; with users' estimates they tell a model how far to trust them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msjgym.core.observation import ObservationView

# ---------------------------------------------------------------- the columns (the compiled path writes with them)
PRESENT = 0  # 1 if the row holds a waiting job
NEED = 1  # servers it needs / n
REQUESTED = 2  # log(1 + r / T): its requested time r
WAIT = 3  # log(1 + w / T): its waiting time so far w
WAIT_RATIO = 4  # w / (w + r) (0 if w + r = 0): the share of its expected response spent waiting so far
REQUESTED_RELATIVE = 5  # r / (r + mean r of the shown jobs) (0.5 if both are 0)
FITS = 6  # 1 if it fits in the servers free now
START_DELAY = 7  # log(1 + (s − now) / T), s its earliest start by the running jobs' estimated ends (0 if it fits)
RESERVED = 8  # 1 if it is the reserved head (picked, did not fit, still waits)
HEURISTIC = 9  # 1 for the base order's best job (row 0): the job action="inspect" accepts or delays
FREE = 10  # machine: free servers / n
QUEUE = 11  # machine: waiting jobs / K (above 1: more jobs wait than are shown)
QUEUE_NEED = 12  # machine: Σ need of the waiting jobs / n
HEAD_DELAY = 13  # machine: the reserved head's log(1 + (s − now) / T) with a backfilling rule (its shadow time); 0 else
FEATURES = 14
# with estimate_accuracy=True (F = FEATURES_ACCURACY)
ACCURACY = 14  # machine: mean min(1, run / requested) of the completed jobs, with one exact pseudo-job (1 before any)
PREDICTED = 15  # log(1 + r · a_r / T): its run time predicted from completed jobs of requested times like its own
PREDICTED_WAIT_RATIO = 16  # w / (w + r · a_r) (0 if w + r · a_r = 0)
FEATURES_ACCURACY = 17
ACCURACY_BUCKETS = 40
"""Buckets of requested times for a_r: half-octaves of r / T, bucket floor(2 log2(r / T)) + 20 clipped to [0, 39]
(r / T from 2^-10 to 2^10: 3.5 s to 1,024 h with T = 1 h)."""

DEFAULT_TIME_SCALE = 3600.0
"""T of the time columns log(1 + t / T), in the scenario's time unit: an hour of a trace in seconds."""

COLUMNS: tuple[tuple[str, str], ...] = (
    ("present", "1 if the row holds a waiting job, else 0 (and every job column 0)"),
    ("need", "servers it needs / n (n: the machine's servers)"),
    ("requested", "log(1 + r / T), r its requested time (runtime estimate), T = ``time_scale``"),
    ("wait", "log(1 + w / T), w its waiting time so far"),
    ("wait_ratio", "w / (w + r), in [0, 1) (0 if w + r = 0)"),
    ("requested_relative", "r / (r + mean r of the shown jobs), in (0, 1) (0.5 if both are 0)"),
    ("fits", "1 if it fits in the servers free now"),
    ("start_delay", "log(1 + (s − now) / T), s the earliest time enough servers are free for it by the running jobs' "
                    "estimated ends (its shadow time if it were the head); 0 if it fits now"),
    ("reserved", "1 if it is the reserved head: the last job picked that did not fit, still waiting"),
    ("heuristic", "1 for row 0, the base order's best job (the job ``action=\"inspect\"`` accepts or delays)"),
    ("free", "machine: free servers / n (every row)"),
    ("queue", "machine: waiting jobs / K (every row; above 1 when more jobs wait than are shown)"),
    ("queue_need", "machine: Σ servers needed by the waiting jobs / n (every row)"),
    ("head_delay", "machine: with a backfilling rule, the reserved head's log(1 + (s − now) / T), s its shadow time "
                   "(conservative: its reservation); 0 without a reserved head or with ``backfill=\"none\"`` (every "
                   "row)"),
)
"""(name, meaning) of each column, in order: the environment page's table and :class:`JobView`'s names."""
assert len(COLUMNS) == FEATURES

ACCURACY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("accuracy", "``estimate_accuracy=True`` only; machine: a = (1 + Σ min(1, run / requested)) / (1 + completed "
                 "jobs), over the jobs completed so far in the episode (1 before any; requested 0 counts as 1): how "
                 "accurate requested times have been (every row)"),
    ("predicted", "``estimate_accuracy=True`` only: log(1 + r · a_r / T), its run time predicted from its requested "
                  "time r; a_r = (a + Σ min(1, run / requested)) / (1 + n_r) over the n_r completed jobs whose "
                  "requested time is in r's bucket (half-octaves of r / T)"),
    ("predicted_wait_ratio", "``estimate_accuracy=True`` only: w / (w + r · a_r), in [0, 1) (0 if w + r · a_r = 0)"),
)
"""The columns ``estimate_accuracy=True`` adds after :data:`COLUMNS` (Tsafrir et al.'s point: predict run times from
completed jobs when requested times are users' estimates)."""
assert len(COLUMNS) + len(ACCURACY_COLUMNS) == FEATURES_ACCURACY


def accuracy_bucket(r: float, time_scale: float) -> int:
    """The bucket of requested time r for a_r (:data:`ACCURACY_BUCKETS`; r <= 0: bucket 0). The compiled path
    computes the same."""
    if r <= 0.0:
        return 0
    return int(min(max(np.floor(2.0 * np.log2(r / time_scale)) + 20.0, 0.0), ACCURACY_BUCKETS - 1.0))


@dataclass(frozen=True)
class JobLayout:
    """The layout of one environment's observations: ``window`` rows (K) of :data:`FEATURES` columns
    (:data:`FEATURES_ACCURACY` with ``estimate_accuracy``), on a machine of ``servers`` servers, times over
    ``time_scale``."""

    window: int
    servers: int
    time_scale: float = DEFAULT_TIME_SCALE
    estimate_accuracy: bool = False

    @property
    def features(self) -> int:
        """F: columns per row."""
        return FEATURES_ACCURACY if self.estimate_accuracy else FEATURES

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        """(name, meaning) of each of the F columns."""
        return COLUMNS + ACCURACY_COLUMNS if self.estimate_accuracy else COLUMNS

    @property
    def shape(self) -> tuple[int, int]:
        return (self.window, self.features)

    @property
    def size(self) -> int:
        return self.window * self.features

    def describe(self) -> str:
        return f"msjgym/JobScheduling-v0 window={self.window}" + (
            ", estimate_accuracy=True" if self.estimate_accuracy else "")

    def view(self, observation: np.ndarray) -> JobView:
        return JobView(observation, self)


class JobView(ObservationView):
    """A ``msjgym/JobScheduling-v0`` observation by name: ``column(name)`` (float32[K]) for any column of
    :data:`COLUMNS`, ``col(name)`` its index; the properties below decode the common ones (times back in the
    scenario's time unit, servers as counts)."""

    __slots__ = ()
    fields = ("shown", "free_servers", "waiting")

    def __init__(self, observation: object, layout: JobLayout) -> None:
        obs = np.asarray(observation)
        if obs.shape != layout.shape:
            raise ValueError(f"observation of shape {obs.shape}: expected {layout.shape} for {layout.describe()}")
        obs = obs.view()
        obs.flags.writeable = False
        object.__setattr__(self, "observation", obs)
        object.__setattr__(self, "layout", layout)

    @staticmethod
    def col(name: str) -> int:
        """The index of column ``name`` (:data:`COLUMNS`, then :data:`ACCURACY_COLUMNS`); ValueError naming the valid
        ones."""
        for i, (column, _) in enumerate(COLUMNS + ACCURACY_COLUMNS):
            if column == name:
                return i
        raise ValueError(f"column {name!r}: one of {', '.join(c for c, _ in COLUMNS + ACCURACY_COLUMNS)}")

    def column(self, name: str) -> np.ndarray:
        """float32[K]: column ``name`` of every row (the accuracy columns only with ``estimate_accuracy``)."""
        i = self.col(name)
        if i >= self.layout.features:
            raise ValueError(f"column {name!r}: only with estimate_accuracy=True (this layout has "
                             f"{self.layout.features} columns)")
        return self.observation[:, i]

    @property
    def present(self) -> np.ndarray:
        """bool[K]: the rows holding a waiting job (the first ``shown``)."""
        return self.observation[:, PRESENT] > 0.5

    @property
    def shown(self) -> int:
        """Waiting jobs shown (at most K)."""
        return int(self.present.sum())

    @property
    def free_servers(self) -> int:
        """Servers free now."""
        return int(round(float(self.observation[0, FREE]) * self.layout.servers))

    @property
    def waiting(self) -> int:
        """Jobs waiting (shown or not)."""
        return int(round(float(self.observation[0, QUEUE]) * self.layout.window))

    @property
    def needs(self) -> np.ndarray:
        """int64[K]: the servers each shown job needs (0: empty row)."""
        return np.rint(self.observation[:, NEED].astype(np.float64) * self.layout.servers).astype(np.int64)

    @property
    def requested(self) -> np.ndarray:
        """float64[K]: each shown job's requested time (time units; float32 precision; 0: empty row)."""
        return np.expm1(self.observation[:, REQUESTED].astype(np.float64)) * self.layout.time_scale

    @property
    def waits(self) -> np.ndarray:
        """float64[K]: each shown job's waiting time so far (time units; float32 precision; 0: empty row)."""
        return np.expm1(self.observation[:, WAIT].astype(np.float64)) * self.layout.time_scale

    @property
    def fits(self) -> np.ndarray:
        """bool[K]: the shown jobs that fit in the servers free now."""
        return self.observation[:, FITS] > 0.5

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): the servers, then each shown job's need, requested time
        and wait so far (the agent's information)."""
        n = self.layout.servers
        lines = [f"servers {n - self.free_servers}/{n} busy; queue: {self.waiting} waiting, {self.shown} shown"]
        needs, requested, waits, fits = self.needs, self.requested, self.waits, self.fits
        for i in range(self.shown):
            lines.append(f"  [{i}] need {needs[i]}, requested {requested[i]:.6g}, waited {waits[i]:.6g}"
                         + (" (fits)" if fits[i] else ""))
        return lines

    def pick(self, i: int) -> int:
        """``action="pick"``: the action that picks row i's job."""
        if not 0 <= i < self.layout.window:
            raise ValueError(f"row {i}: must be in [0, {self.layout.window})")
        return int(i)

    accept = 0
    """``action="inspect"``: accept the base order's pick (row 0)."""
    delay = 1
    """``action="inspect"``: delay it: nothing starts now; the next decision comes after the next event."""
