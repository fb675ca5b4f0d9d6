"""The valid ranges of msjgym's numeric inputs, in one place (their checkers are in :mod:`msjgym.core.validation`).

Every range also bounds what a run can cost: an input outside it is refused with a one-line error naming the input
and its range *before* anything is allocated, compiled or simulated (so a typo such as ``servers=1e308`` never
locks the machine, and Ctrl-C is never needed). The limits are generous for research use; each constant says in one
line why it is where it is. ``docs/limits.md`` tables them for users.
"""
from __future__ import annotations

MAX_SERVERS = 10**7
"""Servers n (or N) of any family: the engines allocate per-server state (the MSJ heap, dispatch buckets, the loss
occupancy), about 8-100 bytes a server and replication; 10^7 servers is a datacentre and about 1 GB of state."""

MAX_CLASSES = 10**4
"""Job classes K: the engines keep per-class counters and draw the next event in O(K) per event."""

MAX_PHASES = 1000
"""Phases of an Erlang, hyper-Erlang or PH law: a kernel draws one uniform per phase per job, and the theory builds
the dense phases × phases PH matrix (1000 phases: 8 MB; SCV down to 1/1000)."""

MAX_WINDOW = 10**4
"""``--window`` (jobs a policy of your own sees): the observation is rebuilt in Python at every decision, in
O(window); 10^4 slots is far beyond any scheduler's look-ahead."""

MAX_JOBS = 10**12
"""Measured (and warm-up) jobs or arrivals per replication: at the ceiling of ~6·10^7 events per second, 10^12 jobs
is several hours of one core; counters are int64 (9.2·10^18)."""

MAX_REPS = 10**4
"""Replications: their states are allocated side by side (a batch axis), so the state grows with reps."""

MAX_BATCHES = 10**4
"""Measurement batches per replication: per-batch statistics (and histograms) are allocated per batch."""

MAX_STATE_BYTES = 4 * 2**30
"""The state of all replications of a run, allocated side by side before it starts (per-server arrays, per-batch
histograms): 4 GiB leaves room for several runs on a workstation; each limit above can be within range while their
product (replications × batches × classes × histogram bins, replications × servers) is not."""

MAX_SEED = 2**128 - 1
"""Root seed: numpy's SeedSequence takes any non-negative integer; 128 bits is all the entropy it keeps."""

MAX_GRID_POINTS = 10**6
"""Points of a sweep grid (the product of its axes' lengths): the grid is listed in memory, with one results row per
point × policy × replication; beyond 10^6 points a sweep is a job for a cluster scheduler, not a grid."""

MAX_NESTING = 64
"""Brackets and braces nested in one value a user writes (a TOML scenario file, ``--param``, ``--grid``): a scenario
needs a few levels; thousands would exhaust Python's recursion in the TOML parser (a ``RecursionError``)."""

MAX_SWEEP_TASKS = 10**7
"""Tasks of a sweep (points × policies × replications): each is a row of the plan in memory and of the results
store; 10^7 tasks of the default 10^5 jobs is already ~10^12 jobs, months of one core."""

JOBS_PER_SECOND_CEILING = 2 * 10**7
"""Jobs one core simulates per second at best (~60 million events per second, at least about 3 events a job: see
``benchmarks/bench_events.py``); a cost said before a long run divides by it, so it is a lower bound."""

TIME_RANGE = (1e-15, 1e15)
"""Mean service times (and a law's time scale) in the scenario's time unit: inside it, second moments and the sums
of 10^12 times stay far inside float64, so no moment or metric over- or underflows (ns to 30 Myears in seconds)."""

MAX_TIME_SPREAD = 1e9
"""The mean interarrival time over the shortest mean service time: the clock runs ~jobs interarrival times, and
float64 (16 digits) must still resolve the shortest service on it (above this the shortest jobs are rounded to 0
time: zero utilization, negative waits)."""


def duration(seconds: float) -> str:
    """A duration for a cost estimate: seconds, minutes, hours, days or years."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.0f} s"
