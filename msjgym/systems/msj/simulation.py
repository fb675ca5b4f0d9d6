"""The policy-independent transitions of the MSJ system, and ``MSJSimulation``, the Python handle that drives it.

The event loop itself (``run``: one call advances one system by up to ``max_events`` events, an arrival or the
completions at one instant, calling the policy's compiled scheduler after each) is in
:mod:`msjgym.systems.msj.loop`, compiled once; the policy's kernels are compiled on their own and plugged into it
(the family's kernel table, :data:`msjgym.systems.msj.contract.KERNELS`). Per-job and
time-average statistics are collected into measurement batches; an instability detector stops a system whose number
of jobs keeps growing.

Measurement window (open mode): arrivals ``warmup .. warmup + jobs - 1`` are measured; time averages cover the
interval from the first measured arrival to the first arrival after the window; the run continues (with arrivals)
until every measured job has completed, so per-job statistics are not biased toward short jobs.
Saturated mode (a closed system: the queue is refilled so it always holds ``backlog`` waiting jobs) measures
completions ``warmup .. warmup + jobs - 1`` instead, for the maximum throughput of a policy.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from msjgym.core import histogram, rng
from msjgym.core.distributions import encode_all
from msjgym.errors import MsjgymError
from msjgym.systems.msj import state as msj
from msjgym.systems.msj.contract import KERNELS, Policy, own_area
from msjgym.systems.msj.state import (
    INVARIANT, J_HPOS, NEED_CAPACITY, P_BACKLOG, P_DEBUG, P_DETECT, P_JOBS,
    P_K, P_LAMBDA, P_NBATCH, P_SATURATED, P_WARMUP, RUNNING, S_ERROR, S_EVENTS, S_NARR,
    S_NCOMP, S_NEXT_CHK, S_NFREE, S_STATUS, T_GROWTH, T_NEXT_ARR,
    check_invariants)
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.trace.arrivals import trace_arrays
from msjgym.systems.msj import loop as _loop
from msjgym.systems.msj.transitions import FIRST_CHECKPOINT

# ---------------------------------------------------------------- Python handle
DEFAULT_BSLD_THRESHOLD = 10.0
"""τ of the bounded slowdown, in the scenario's time unit: the literature's 10 s (Feitelson, Rudolph, Schwiegelshohn,
Sevcik & Wong 1997); the default of ``msjgym evaluate --bsld-threshold`` and of ``msjgym/MSJ-v0``'s
``bsld_threshold``."""


@dataclass(frozen=True)
class RunConfig:
    """How long to run and how to measure.

    Attributes:
        jobs: measured jobs per replication (arrivals; completions in saturated mode).
        warmup: jobs discarded before measuring.
        batches: measurement batches per replication (for batch-means CIs when there is one replication).
        saturated: run the closed system in which ``backlog`` jobs always wait (maximum throughput).
        backlog: waiting jobs kept in saturated mode (1 gives the saturated system of Grosof & Ayhan §3.2).
        detect_instability: stop a replication whose number of jobs keeps growing.
        debug: check the state's invariants after every event (slow; used by the tests).
        bsld_threshold: τ of the bounded slowdown max(1, response / max(duration, τ)), in the scenario's time unit
            (10: the HPC literature's 10 s; Feitelson, Rudolph, Schwiegelshohn, Sevcik & Wong 1997).
    """

    jobs: int = 100_000
    warmup: int = 10_000
    batches: int = 20
    saturated: bool = False
    backlog: int = 1
    detect_instability: bool = True
    debug: bool = False
    bsld_threshold: float = DEFAULT_BSLD_THRESHOLD

    def __post_init__(self) -> None:
        for key, low in (("jobs", 1), ("warmup", 0), ("batches", 1), ("backlog", 1)):
            value = getattr(self, key)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
                raise MsjgymError(f"{key} = {value!r}: must be an integer >= {low}")
        if self.batches > self.jobs:
            raise MsjgymError(f"jobs = {self.jobs}: at least {self.batches} jobs for the {self.batches} batch means "
                              f"(give more jobs, or set batches <= {self.jobs})")


def _need_groups(needs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group classes by need, groups ordered by decreasing need: (grp_need, grp_ptr, grp_cls).

    Group g holds the classes ``grp_cls[grp_ptr[g]:grp_ptr[g + 1]]`` (in class order), all of need ``grp_need[g]``.
    """
    grp_need = np.array(sorted(set(needs.tolist()), reverse=True), dtype=np.int64)
    grp_of = np.array([int(np.where(grp_need == m)[0][0]) for m in needs], dtype=np.int64)
    grp_cls = np.argsort(grp_of, kind="stable").astype(np.int64)
    grp_ptr = np.searchsorted(grp_of[grp_cls], np.arange(len(grp_need) + 1)).astype(np.int64)
    return grp_need, grp_ptr, grp_cls


def make_params(model: MSJModel, policy: Policy, config: RunConfig) -> msj.MSJParams:
    """Encode a model, a policy and a run configuration for the compiled kernels."""
    ints = np.zeros(msj.NPI, dtype=np.int64)
    grp_need, grp_ptr, grp_cls = _need_groups(model.needs)
    ints[msj.P_SERVERS] = model.servers
    ints[P_K] = model.num_classes
    ints[msj.P_PREEMPTIVE] = int(bool(policy.preemptive))
    ints[P_SATURATED] = int(config.saturated)
    ints[P_BACKLOG] = config.backlog
    ints[P_WARMUP] = config.warmup
    ints[P_JOBS] = config.jobs
    ints[P_NBATCH] = config.batches
    ints[P_DEBUG] = 0  # debug mode: the checks' address, set when they are compiled (MSJSimulation.prepare)
    ints[msj.P_GROUPS] = len(grp_need)
    ints[P_DETECT] = int(config.detect_instability and model.trace is None)  # a trace is finite: replay it all
    ints[msj.P_MMAX] = int(model.needs.max())
    ints[msj.P_TRACE] = int(model.trace is not None)
    floats = np.zeros(msj.NPF, dtype=np.float64)
    floats[P_LAMBDA] = model.arrival_rate
    floats[msj.P_TAU] = config.bsld_threshold
    floats[msj.P_T0] = 0.0 if model.trace is None else model.trace.origin
    args = policy.arguments()
    if len(args) > msj.NARG:
        raise MsjgymError(f"policy {policy.name}: {len(args)} parameters; the compiled scheduler has room for "
                          f"{msj.NARG} (msjgym.systems.msj.state.NARG)")
    for i, (param, value) in enumerate(zip(policy.params, args)):
        choices = getattr(param, "choices", None)
        if choices:  # a named option (msjgym.policies.Choice): the kernel reads its index in ``choices``
            value = choices.index(value)
        floats[msj.P_FARG + i] = float(value)
        ints[msj.P_ARG + i] = int(value) if float(value).is_integer() else 0
    dkind, dstart, ddata = encode_all([c.service for c in model.classes])
    trace_t, trace_c, trace_s, trace_e = trace_arrays(model)
    law = model.estimate
    ints[msj.P_EST] = {"exact": msj.EST_EXACT, "factor": msj.EST_FACTOR, "uniform": msj.EST_UNIFORM,
                       "requested": msj.EST_TRACE,
                       "tsafrir": msj.EST_TRACE}[law.kind]  # the model's estimates are the trace's (scenarios.py)
    floats[msj.P_EST_LOW] = law.low
    floats[msj.P_EST_HIGH] = law.high
    return msj.MSJParams(
        ints=ints, floats=floats, need=model.needs, offered=model.offered_servers_per_class,
        cumprob=np.cumsum(model.probabilities),
        dkind=dkind, dstart=dstart, ddata=ddata,
        grp_need=grp_need, grp_ptr=grp_ptr, grp_cls=grp_cls, trace_t=trace_t, trace_c=trace_c, trace_s=trace_s,
        trace_e=trace_e)


class MSJSimulation:
    """B independent replications of one MSJ model under one built-in policy, advanced by the compiled loop.

    Args:
        model: the system.
        policy: a built-in policy (validated against the model).
        config: run length and measurement settings.
        streams: ``uint64[B, 4]`` RNG states, one row per replication (see ``msjgym.core.rng.spawn_states``).
        capacity: initial job slots per replication (doubled as needed).
    """

    def __init__(self, model: MSJModel, policy: Policy, config: RunConfig, streams: np.ndarray,
                 capacity: int = 1024) -> None:
        policy.validate(model)
        self.model, self.policy, self.config = model, policy, config
        self.units = KERNELS.units(policy, loops=[(_loop.run, _loop.signature()["run"])]) + self.check_units(
            _loop.signature())
        self.hooks: tuple[int, int, int, int] | None = None
        self.params = make_params(model, policy, config)
        B = streams.shape[0]
        trace_jobs = 0 if model.trace is None else len(model.trace)
        if trace_jobs and config.warmup + config.jobs > trace_jobs:
            raise MsjgymError(f"warmup + jobs = {config.warmup + config.jobs}: the trace has {trace_jobs} jobs")
        self.own = functools.partial(own_area, policy, model)  # the policy's areas of the record, by capacity
        self.state = msj.new_state(
            B, model.num_classes, model.servers, capacity, config.batches, histogram.NBINS, streams.copy(), trace_jobs,
            self.own(capacity))
        for b in range(B):
            self.state.sys_i[b, S_NEXT_CHK] = FIRST_CHECKPOINT
            if config.saturated:
                first_arrival = np.inf
            elif trace_jobs:
                first_arrival = float(model.trace.arrival[0])
            else:
                first_arrival = rng.exponential(self.state.rng, b) / model.arrival_rate
            self.state.sys_f[b, T_NEXT_ARR] = first_arrival

    @property
    def batch(self) -> int:
        return self.state.sys_i.shape[0]

    def status(self, b: int = 0) -> int:
        return int(self.state.sys_i[b, S_STATUS])

    def advance(self, b: int, max_events: int) -> int:
        """Run replication b for up to ``max_events`` events (growing job storage as needed); returns its status."""
        while True:
            status = self._call(_loop.run, b, max_events, self._hooks())
            if status == NEED_CAPACITY:
                self.grow()
                self.state.sys_i[b, S_STATUS] = RUNNING
                continue
            if status == INVARIANT:
                code = int(self.state.sys_i[b, S_ERROR])
                raise AssertionError(
                    f"replication {b}: invariant violated after event {int(self.state.sys_i[b, S_EVENTS])}: "
                    f"{msj.INVARIANT_NAMES.get(code, code)}")
            return status

    def grow(self) -> None:
        """Double the job storage of every replication (the policy's areas sized again: ``msj.grow``)."""
        self.state = msj.grow(self.state, self.own)

    def prepare(self) -> float:
        """Compile (or load from the cache) the event loop and the policy's kernels; returns the seconds it took."""
        from msjgym.core.compiling import compile_units
        if getattr(self.policy, "compiled", None) is None:
            seconds = compile_units(self.units)
        else:
            from msjgym.systems.msj.compiled import policy_failure
            try:
                seconds = compile_units(self.units)
            except (Exception, SystemExit) as exc:  # the user's code does not compile: one line
                raise policy_failure(self.policy.name, exc, self.state, 0) from None
        self.hooks = KERNELS.addresses(self.policy)
        self.arm_checks(_loop.signature())
        return seconds

    def check_units(self, signatures: dict) -> list:
        """What debug mode adds to a run's compile: the invariant checks, compiled on their own for the record by
        reference (``signatures["check_invariants"]``, :func:`msjgym.systems.msj.loop.signatures`) and called by the
        loop at their address; nothing otherwise."""
        from msjgym.core.compiling import Unit
        if not self.config.debug:
            return []
        return [Unit("the invariant checks", f"{KERNELS.family} checks", check_invariants,
                     signatures["check_invariants"])]

    def arm_checks(self, signatures: dict) -> None:
        """Debug mode: give the loop the address of the compiled invariant checks (``params.ints[P_DEBUG]``)."""
        if self.config.debug:
            from msjgym.core.plug import address
            self.params.ints[P_DEBUG] = address(check_invariants, signatures["check_invariants"])

    def _hooks(self) -> tuple[int, int, int, int]:
        if self.hooks is None:
            self.prepare()
        return self.hooks

    @staticmethod
    def _entry(name: str):
        """The loop's entry point ``name``, compiled (or loaded) for its one signature on first use."""
        from msjgym.core.compiling import compile_units
        compile_units([loop_unit(name)])
        return getattr(_loop, name)

    def _call(self, kernel, b: int, *args):
        """``kernel(state, params, b, *args)``; a compiled policy of the user's that decides wrongly (or does not
        compile) raises one ``PolicyError`` naming the replication and the event."""
        if getattr(self.policy, "compiled", None) is None:
            return kernel(self.state, self.params, b, *args)
        from msjgym.systems.msj.compiled import policy_failure
        try:
            return kernel(self.state, self.params, b, *args)
        except (Exception, SystemExit) as exc:  # the user's code: one line naming where (not even sys.exit ends it)
            raise policy_failure(self.policy.name, exc, self.state, b) from None

    def compile_note(self) -> str | None:
        """A line to print before :meth:`prepare` compiles something (None: everything is cached)."""
        from msjgym.core.compiling import note
        return note(self.units)

    def events(self, b: int = 0) -> int:
        return int(self.state.sys_i[b, S_EVENTS])

    def progress(self, b: int = 0) -> int:
        """Jobs processed so far (arrivals; completions in saturated mode), for progress bars."""
        return int(self.state.sys_i[b, S_NCOMP if self.config.saturated else S_NARR])

    def completion_times(self, b: int = 0) -> np.ndarray:
        """A replayed trace's completion time of each job (NaN if it has not completed)."""
        return self.state.jobdone[b].copy()

    def wait_times(self, b: int = 0) -> np.ndarray:
        """A replayed trace's waiting time of each job (time not served usefully: queueing, preemptions, killed runs;
        NaN if it has not completed), accumulated from differences of event times, so exactly 0 for a job that
        started on arrival."""
        return self.state.jobwait[b].copy()

    def estimates(self, b: int = 0) -> np.ndarray:
        """A replayed trace's runtime estimate of each job, the one the scheduler planned with (the scenario's
        ``estimate`` law: the run time, a factor of it, or the trace's requested time; NaN if it has not arrived)."""
        return self.state.jobest[b].copy()

    def growth_rate(self, b: int = 0) -> float:
        """Growth rate of the number in system (jobs per unit time) of a replication flagged unstable."""
        return float(self.state.sys_f[b, T_GROWTH])

    # ---- direct control, for tests and environments
    def arrive(self, cls: int, size: float, b: int = 0) -> int:
        """A class-``cls`` job of duration ``size`` arrives now and the policy reacts; returns the job's slot."""
        if self.state.sys_i[b, S_NFREE] == 0:
            self.grow()
        return int(self._call(self._entry("force_arrival"), b, cls, size, self._hooks()))

    def complete(self, slot: int, b: int = 0) -> None:
        """The job in ``slot`` (which must be in service) completes now and the policy reacts."""
        if self.state.job_i[b, slot, J_HPOS] < 0:
            raise ValueError(f"job slot {slot} is not in service")
        self._call(self._entry("force_completion"), b, slot, self._hooks())

    def jobs(self, b: int = 0) -> list[tuple[int, int, bool]]:
        """All jobs in system in arrival order: (slot, class, in service)."""
        st = self.state
        out = []
        for c in range(self.model.num_classes):
            j = st.cls_i[b, c, msj.C_HEAD]
            while j >= 0:
                out.append((int(st.job_i[b, j, msj.J_SEQ]), int(j), c, bool(st.job_i[b, j, J_HPOS] >= 0)))
                j = st.job_i[b, j, msj.J_NEXT]
        return [(j, c, s) for _, j, c, s in sorted(out)]

    def check(self, b: int = 0) -> None:
        """Raise ``AssertionError`` if the state of replication b violates an invariant."""
        code = check_invariants(self.state, self.params, b)
        if code:
            raise AssertionError(msj.INVARIANT_NAMES[code])


# ---------------------------------------------------------------- what a run compiles
def loop_unit(entry: str):
    """The event loop's entry point ``entry`` (``run``; ``force_arrival`` and ``force_completion``, which only direct
    control uses, are compiled on their first use) as a :class:`msjgym.core.compiling.Unit`."""
    return KERNELS.loop_units([(getattr(_loop, entry), _loop.signature()[entry])])[0]
