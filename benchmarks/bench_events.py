"""Events per second through ``msjgym.evaluate.evaluate``, against a minimal compiled FCFS kernel.

Model: 32 servers; a job needs 1 server with probability 0.9 or all 32 with probability 0.1; durations Exp(1)
for both; Poisson arrivals at λ = 0.35 · 32 / (0.9 · 1 + 0.1 · 32) ≈ 2.73, so load 0.35.

Measured: ``evaluate`` (statistics, batch means and instability detection included) for the policies ``fcfs``,
``server-filling``, ``first-fit``, and the compiled first-fit of ``examples/compiled_first_fit.py`` (a policy of the
user's, written outside the package: its ratio to the built-in first-fit is printed, and whether both simulated the
same events and mean response time), 1 replication of ``--jobs`` measured jobs plus 10 % warm-up, timed with ``time.perf_counter``.
An event is an arrival or the completions at one instant (``Result.events``). numba's one-time
compilation is excluded: a short untimed warm-up call runs first.

Ceiling: ``reference_fcfs`` below, a minimal numba-compiled FCFS multiserver-job simulator of the same model with
no statistics: per-class counts in service, a FIFO ring buffer of waiting job classes, competing exponential clocks
(one Exp(λ + Σ_c n_c μ_c) draw to the next event, one uniform draw to pick which), msjgym's xoshiro256** stream.
It runs the same number of arrivals and is timed the same way.

Stated references (not measured here): msjgym's target ≥ 5 million events/s on one core through
``msjgym evaluate``; a minimal compiled FCFS kernel reaches about 20 million on this machine; a C++ simulator of
this field does about 0.8 million. Each run is repeated ``--repeat`` times with the same seed and the fastest is
reported. Prints only; it asserts nothing.

    python benchmarks/bench_events.py [--jobs 5000000] [--reps 1] [--seed 1] [--repeat 3]
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numba
import numpy as np

from msjgym.core import rng
from msjgym.core.distributions import from_spec
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj.model import JobClass, MSJModel

SERVERS, LOAD = 32, 0.35
NEEDS, PROBS, RATES = (1, 32), (0.9, 0.1), (1.0, 1.0)
LAM = LOAD * SERVERS / sum(p * m / mu for m, p, mu in zip(NEEDS, PROBS, RATES))
USER_FIRST_FIT = f"{Path(__file__).resolve().parents[1] / 'examples' / 'compiled_first_fit.py'}:first_fit"
POLICIES = ("fcfs", "server-filling", "first-fit", USER_FIRST_FIT)
"""Built-ins, and a compiled first-fit of the user's (``examples/compiled_first_fit.py``) beside the built-in."""
TARGET = 5e6  # events/s through msjgym evaluate (msjgym's target)
CPP_REFERENCE = 0.8e6  # events/s of a C++ simulator of this field, as stated (not measured)
STATED_KERNEL = 20e6  # events/s of a minimal compiled FCFS kernel on this machine, as stated
QUEUE_CAPACITY = 1 << 22  # ring buffer of waiting classes (a power of two)


def label(policy: str) -> str:
    """A policy's row label: the built-in's name, or "user FILE:NAME" for a policy file."""
    return f"user {Path(policy).name}" if ".py:" in policy else policy


def fastest(run, repeat: int) -> tuple:
    """The result of ``run()`` with the smallest wall seconds (its second entry) over ``repeat`` calls."""
    return min((run() for _ in range(repeat)), key=lambda result: result[1])


def model() -> MSJModel:
    classes = tuple(JobClass(str(m), m, p, from_spec({"dist": "exp", "rate": mu}))
                    for m, p, mu in zip(NEEDS, PROBS, RATES))
    return MSJModel(SERVERS, LAM, classes)


@numba.njit(error_model="numpy")
def reference_fcfs(servers, lam, need, cumprob, mu, arrivals, state):
    """FCFS multiserver-job kernel without statistics; returns (events simulated, final simulated time).

    An event is an arrival or a completion. Stops after ``arrivals`` arrivals; events = -1 if the waiting queue
    overflows its buffer.
    """
    K = need.shape[0]
    in_service = np.zeros(K, dtype=np.int64)
    queue = np.empty(QUEUE_CAPACITY, dtype=np.int64)
    head = 0
    length = 0
    free = servers
    now = 0.0
    n_arr = 0
    events = 0
    mask = QUEUE_CAPACITY - 1
    while n_arr < arrivals:
        rate = lam
        for c in range(K):
            rate += in_service[c] * mu[c]
        now += rng.exponential(state, 0) / rate
        u = rng.uniform(state, 0) * rate
        if u < lam:  # an arrival: draw its class and queue it
            v = rng.uniform(state, 0)
            c = K - 1
            for k in range(K - 1):
                if v < cumprob[k]:
                    c = k
                    break
            if length == QUEUE_CAPACITY:
                return -1, now
            queue[(head + length) & mask] = c
            length += 1
            n_arr += 1
        else:  # a completion of class c, picked with probability n_c mu_c / (rate - lam)
            u -= lam
            c = K - 1
            for k in range(K - 1):
                u -= in_service[k] * mu[k]
                if u < 0.0:
                    c = k
                    break
            in_service[c] -= 1
            free += need[c]
        while length > 0 and need[queue[head]] <= free:  # FCFS: start jobs in order until the head does not fit
            c = queue[head]
            head = (head + 1) & mask
            length -= 1
            in_service[c] += 1
            free -= need[c]
        events += 1
    return events, now


def run_reference(arrivals: int, seed: int) -> tuple[int, float, float]:
    """(events, wall seconds, simulated time) of the reference kernel, after an untimed compiling call."""
    args = (SERVERS, LAM, np.array(NEEDS, dtype=np.int64), np.cumsum(PROBS), np.array(RATES))
    reference_fcfs(*args, 1000, rng.spawn_states(seed, 1)[0])
    state = rng.spawn_states(seed, 1)[0]
    start = time.perf_counter()
    events, now = reference_fcfs(*args, arrivals, state)
    return events, time.perf_counter() - start, now


def run_msjgym(policy: str, jobs: int, reps: int, seed: int) -> tuple[int, float, float]:
    """(events, wall seconds, mean response time) of ``evaluate``, after an untimed warm-up call."""
    evaluate(model(), policy, reps=1, jobs=1000, seed=seed)
    start = time.perf_counter()
    result = evaluate(model(), policy, reps=reps, jobs=jobs, seed=seed)
    wall = time.perf_counter() - start
    return result.events, wall, result.metrics["response_time"].mean if result.stable else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5_000_000, help="measured jobs per replication")
    parser.add_argument("--reps", type=int, default=1, help="replications")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs each; the fastest is reported")
    args = parser.parse_args()

    arrivals = args.reps * (args.jobs + args.jobs // 10)  # evaluate's warm-up is jobs // 10
    print(f"MSJ: {SERVERS} servers, needs {NEEDS} w.p. {PROBS}, Exp{RATES} durations, λ = {LAM:.4f}, "
          f"load {LOAD:g}")
    print(f"{args.reps} replication(s) x {args.jobs:,} jobs (+10 % warm-up); seed {args.seed}; "
          f"numba compilation excluded (untimed warm-up calls); fastest of {args.repeat} timed runs each\n")
    ref_events, ref_wall, ref_time = fastest(lambda: run_reference(arrivals, args.seed), args.repeat)
    if ref_events < 0:
        raise SystemExit(f"reference kernel: the waiting queue outgrew {QUEUE_CAPACITY:,} jobs")
    ceiling = ref_events / ref_wall
    rows = [(f"evaluate {label(p)}", *fastest(lambda: run_msjgym(p, args.jobs, args.reps, args.seed),
                                                args.repeat)) for p in POLICIES]
    print(f"{'run':<46}{'events':>13}{'wall s':>9}{'events/s':>14}{'of ceiling':>12}{'mean resp.':>12}")
    for name, events, wall, resp in rows:
        rate = events / wall
        print(f"{name:<46}{events:>13,}{wall:>9.3f}{rate:>14,.0f}{rate / ceiling:>11.0%}{resp:>12.3f}")
    print(f"{'reference FCFS (ceiling)':<46}{ref_events:>13,}{ref_wall:>9.3f}{ceiling:>14,.0f}{1:>11.0%}"
          f"{'-':>12}")
    print(f"{'C++ simulator (stated)':<46}{'-':>13}{'-':>9}{CPP_REFERENCE:>14,.0f}"
          f"{CPP_REFERENCE / ceiling:>11.0%}{'-':>12}")
    print(f"(reference sanity: {arrivals:,} arrivals in simulated time {ref_time:,.0f}, rate "
          f"{arrivals / ref_time:.4f} vs λ = {LAM:.4f}; {ref_events / arrivals:.3f} events per job)")
    print(f"(stated, not measured: about {STATED_KERNEL / 1e6:g}M events/s for a minimal compiled FCFS kernel on this "
          f"machine; the one above measured {ceiling / 1e6:.1f}M)\n")
    (_, b_events, b_wall, b_resp), (_, u_events, u_wall, u_resp) = rows[-2:]
    same = "identical" if (b_events, b_resp) == (u_events, u_resp) else "DIFFERENT"
    print(f"compiled user first-fit / built-in first-fit: {(u_events / u_wall) / (b_events / b_wall):.2f}x the "
          f"events/s; events and mean response time {same}\n")
    for name, events, wall, _ in rows:
        rate = events / wall
        verdict = "met" if rate >= TARGET else "NOT met"
        print(f"target >= {TARGET / 1e6:g}M events/s ({name}): {verdict} ({rate / 1e6:.1f}M; "
              f"{rate / CPP_REFERENCE:.0f}x the stated C++ figure)")


if __name__ == "__main__":
    main()
