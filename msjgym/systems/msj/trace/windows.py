"""The windows of a replayed trace: how many jobs a replay runs, where each window starts, and each replication's
scenario.

A replayed trace runs as one exact replay of its first warmup + jobs jobs (the later ones never arriving,
docs/modelling-choices.md#trace-replay-prefix); or, with ``--windows N --window-jobs M``, as N replications, each a
window of warmup + M consecutive jobs replayed from an empty machine, placed uniformly at random in the trace
(:func:`window_starts`, docs/modelling-choices.md#trace-windows); or, with ``--reps R`` on a synthetic trace, as R
traces drawn from its workload model. :func:`trace_run_length` checks the combination and gives (reps, jobs, warmup);
:func:`trace_parts` the scenario of each replication. An environment's episodes are windows too: their start is drawn
in the compiled code (:func:`msjgym.systems.msj.trace.arrivals.first_job`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from msjgym import api
from msjgym.core import limits
from msjgym.core.validation import check_int
from msjgym.errors import MsjgymError
from msjgym.systems.msj.scenarios import model_of_trace
from msjgym.systems.msj.trace.files import Trace

MIN_WINDOWS = 2
"""Windows of a trace replicated for CIs: a t-interval needs two."""
MIN_WINDOW_JOBS = 10
"""Measured jobs per window: each window starts from an empty machine, and a window of a few jobs measures little
but that start."""


def trace_run_length(trace: Trace, run: api.RunSettings, saturated: bool, windows: int | None,
                      window_jobs: int | None) -> tuple[int, int, int]:
    """(reps, jobs, warmup) of a replayed trace: one exact replay, ``windows`` windows, or (``--reps`` on a
    synthetic trace) traces drawn from its workload model; every inconsistent combination is a one-line error."""
    replicated = run.reps is not None and run.reps != 1  # --reps 1 is the one exact replay
    if replicated and trace.generator is not None and not saturated and windows is None:
        check_int("--reps", run.reps, MIN_WINDOWS, limits.MAX_REPS, MsjgymError,
                  "independent traces drawn from the workload model, for CIs across them (no --reps: one exact "
                  "replay of the scenario's own trace)")
        warmup = 0 if run.warmup is None else run.warmup
        return run.reps, len(trace) if run.jobs is None else run.jobs, warmup
    if replicated or saturated:
        raise MsjgymError(f"{'--saturated' if saturated else f'--reps {run.reps}'}: a trace replay is deterministic "
                          "and open (one replay: exact values); for confidence intervals replicate over windows of "
                          "the trace: --windows N --window-jobs M")
    warmup = 0 if run.warmup is None else run.warmup
    if (windows is None) != (window_jobs is None):
        raise MsjgymError("--windows and --window-jobs go together: N windows of M jobs each (e.g. --windows 10 "
                          "--window-jobs 2048)")
    if windows is not None:  # each within its declared range (the family's options, msjgym.api.check_options)
        if run.jobs is not None:
            raise MsjgymError("--jobs: not with --windows (each window measures --window-jobs jobs)")
        if warmup + window_jobs > len(trace):
            raise MsjgymError(f"--window-jobs {window_jobs:,}" + (f" + --warmup {warmup:,}" if warmup else "") +
                              f": the trace has {len(trace):,} jobs; a window must fit in it (at most "
                              f"--window-jobs {len(trace) - warmup:,})")
        return windows, window_jobs, warmup
    if warmup >= len(trace):
        raise MsjgymError(f"--warmup {warmup:,}: the trace has {len(trace):,} jobs; the warm-up must leave at "
                          f"least one to measure (at most --warmup {len(trace) - 1:,})")
    jobs = len(trace) - warmup if run.jobs is None else run.jobs
    if warmup + jobs > len(trace):
        raise MsjgymError(f"--jobs {jobs:,}: the trace has {len(trace):,} jobs" + (f" ({warmup:,} of them warm-up)"
                          if warmup else "") + f"; at most --jobs {len(trace) - warmup:,}")
    return 1, jobs, warmup


def window_starts(jobs: int, windows: int, length: int, seed: int) -> list[tuple[int, np.random.SeedSequence]]:
    """Where each of ``windows`` windows of ``length`` consecutive jobs starts in a trace of ``jobs`` jobs, and the
    seed sequence of its replay's own streams (for estimates drawn at random).

    Window w's start is uniform on {0, ..., jobs − length}, drawn from the first child of
    ``SeedSequence(seed).spawn(windows)[w]`` (its second child seeds the replay): the windows are independent draws,
    so the t-interval over them is a CI for the mean over a uniformly placed window of the trace. Windows may
    overlap (as they do when they are many or long); window w's start does not depend on how many windows run
    (docs/modelling-choices.md#trace-windows).
    """
    out = []
    for child in np.random.SeedSequence(seed).spawn(windows):
        place, streams = child.spawn(2)
        out.append((int(np.random.default_rng(place).integers(0, jobs - length + 1)), streams))
    return out


def trace_parts(scenario: api.Scenario, reps: int, jobs: int, warmup: int, seed: int, draws: bool
                 ) -> tuple[list[api.Scenario], list[int], list[Trace] | None, list[np.random.SeedSequence] | None]:
    """The scenario of each replication of a replayed trace (the whole replay: its first warmup + jobs jobs, the later
    ones never arriving, docs/modelling-choices.md#trace-replay-prefix; windows:
    each window's; ``draws``: a trace drawn from the scenario's workload model per replication, each with the classes
    of its own needs), the windows' starts, the replications' traces (None for one replay), and their seed sequences
    (None for one replay, whose streams are those of replication 0 of ``seed``)."""
    model, trace = scenario.model, scenario.model.trace
    length = warmup + jobs
    if draws:
        seqs = np.random.SeedSequence(seed).spawn(reps)  # trace r: drawn from the model with child r
        parts = [trace.generator(length, seq) for seq in seqs]
        scenarios = [replace(scenario, model=model_of_trace(part, model.servers, model.estimate)) for part in parts]
        return scenarios, [], parts, seqs
    if reps == 1:
        parts, starts, windows, seqs = [trace.window(0, length)], [0], None, None
    else:
        placed = window_starts(len(trace), reps, length, seed)
        starts, seqs = [s for s, _ in placed], [q for _, q in placed]
        parts = windows = [trace.window(s, length) for s in starts]
    scenarios = [replace(scenario, model=replace(model, trace=part)) for part in parts]
    return scenarios, starts, windows, seqs
