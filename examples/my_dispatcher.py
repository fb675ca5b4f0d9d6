"""A dispatcher of your own for ``msjgym/Dispatch-v0`` (observation "sampled"): evaluate it like a built-in one.

    msjgym evaluate lb-dispatch --param d=2 --policy examples/my_dispatcher.py:JoinBelowThreshold \
        --observation sampled --reps 5 --jobs 100000 --seed 1

or from Python, ``msjgym.evaluate("lb-dispatch", "examples/my_dispatcher.py:JoinBelowThreshold",
observation="sampled", reps=5, jobs=100_000, seed=1)`` (the same replications, statistics and scorecard as a built-in).

The observation is the queue lengths of the d servers sampled for this arrival (``spec.view(observation)
.queue_lengths``); the action is the index of the chosen one. ``act(observation, action_mask)`` also works (the mask
is all True in this mode).
"""
import numpy as np


class JoinBelowThreshold:
    """The first sampled server with fewer than ``threshold`` jobs, else the shortest of the sample.

    The constructor receives the environment's ``DispatchSpec`` (servers, load, d, ...; ``view``).
    """

    threshold = 2

    def __init__(self, spec) -> None:
        self.spec = spec

    def act(self, observation: np.ndarray) -> int:
        view = self.spec.view(observation)
        below = np.flatnonzero(view.queue_lengths < self.threshold)
        return int(below[0]) if below.size else view.shortest
