"""The Python handle of the finite-skip event loop: one replication of a model under a built-in policy or a compiled
rule of the user's (:func:`replication`), and what it compiles (:func:`units`, :func:`prepare`).

The systems, their front and the statistics recorded: :mod:`msjgym.systems.finite_skip.loop` (Grosof, Harchol-Balter
& Scheller-Wolf, "The finite-skip method for multiserver analysis", §§2, 4–7); the model and its validation:
:mod:`msjgym.systems.finite_skip.model`; the state record: :mod:`msjgym.systems.finite_skip.state`, whose acc and rec
layouts (``A_*``, ``R_*``) are re-exported here with the model's names. A policy of the user's that decides in Python
runs the same loop one decision at a time (:mod:`msjgym.systems.finite_skip.agent`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msjgym.core.rng import seed_states
from msjgym.systems.finite_skip.contract import HET, KERNELS, LPS, MSJ, THRESHOLD, FiniteSkipPolicy  # noqa: F401
from msjgym.systems.finite_skip.loop import RUN, run, signatures
from msjgym.systems.finite_skip.model import (  # noqa: F401 (re-exported)
    FULL_CLASS, FULL_COUNT, FULL_SUM, FiniteSkipModel, check_policy, compiled_params, front_rule)
from msjgym.systems.finite_skip.state import (  # noqa: F401 (re-exported: the layout of acc and rec)
    A_B, A_END, A_EVENTS, A_GAP, A_MAXNF, A_N, A_NARR, A_NEND, A_NF, A_OUTSIDE, A_SIZE, A_SIZE2, A_TIME, A_UNSTABLE,
    A_W, A_W1B, NACC, NREC, R_ARR, R_DONE, R_FRONT, R_SIZE, R_WA, R_WFF, FiniteSkipState, new_state, rows)


def units(policy: FiniteSkipPolicy) -> list:
    """What a run of the built-in ``policy`` needs compiled (:class:`msjgym.core.compiling.Unit`): the event loop
    (once per machine) and the policy's kernel, for the slot table
    :data:`~msjgym.systems.finite_skip.contract.KERNELS`."""
    return KERNELS.units(policy, loops=[(run, signatures()["run"])])


def loop_units() -> list:
    """The event loop alone (once per machine), for the paths that run it one decision at a time: the agent path
    (:mod:`msjgym.systems.finite_skip.agent`, modes START and STEP) and the environment's decision path
    (:mod:`msjgym.systems.finite_skip.control`, modes RESET, ADVANCE and EPOCH). Compiled before
    ``control.step_batch``, so that its calls of the loop use this compiled signature, not one per mode."""
    return KERNELS.loop_units([(run, signatures()["run"])])


def prepare(policy: FiniteSkipPolicy) -> int:
    """Compile (or load from the cache) the event loop and ``policy``'s kernel; returns the kernel's address."""
    from msjgym.core.compiling import compile_units

    compile_units(units(policy))
    (alloc,) = KERNELS.addresses(policy)
    return alloc


@dataclass
class Replication:
    """One replication: ``acc`` (A_* fields) and, per measured job, ``rec`` (R_* fields)."""

    acc: np.ndarray
    rec: np.ndarray

    @property
    def stable(self) -> bool:
        return self.acc[A_UNSTABLE] == 0.0


CAPACITY = 3_000
"""The most jobs a replication holds: one whose number in system reaches it stops, flagged unstable."""


def replication_state(model: FiniteSkipModel, *, jobs: int, stream: np.random.SeedSequence,
                      capacity: int = CAPACITY) -> FiniteSkipState:
    """The state record of one replication (the batch of one) with room for ``capacity`` jobs present and ``jobs``
    measured jobs, its random stream seeded from ``stream``."""
    st = new_state(1, model.servers, len(set(model.params)), capacity, jobs)
    st.rng[:] = seed_states([stream])
    return st


def replication(model: FiniteSkipModel, policy: FiniteSkipPolicy, *, jobs: int = 100_000, warmup: int | None = None,
                stream: np.random.SeedSequence, capacity: int = CAPACITY) -> Replication:
    """One replication of ``model`` under the built-in ``policy`` (a declaration: ``msjgym.api.policy_spec``), drawing
    from ``stream``: it discards the first ``warmup`` arrivals (default jobs // 5), measures the next ``jobs``
    arrivals, and runs until they have all completed, or until its number in system reaches ``capacity`` (flagged
    unstable). Replications and their statistics: :func:`msjgym.evaluate`."""
    check_policy(model, policy)
    warmup = jobs // 5 if warmup is None else warmup
    slots = getattr(policy, "parameter_slots", None)  # a compiled rule's parameters, after the k speeds
    pr = compiled_params(model, rule=front_rule(model, policy), warmup=int(warmup), jobs=int(jobs),
                         slots=slots() if slots is not None else ())
    alloc = prepare(policy)
    st = replication_state(model, jobs=jobs, stream=stream, capacity=capacity)
    run(rows(st, 0), pr, alloc, RUN)
    return Replication(st.acc[0], st.rec[0])
