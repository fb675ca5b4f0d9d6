"""A policy of your own for the loss scenarios (``msjgym/AdaptiveLoss-v0``): take d servers when the sample shows d
idle ones; when it shows fewer, accept on what is there only if the system is not busy (busy fraction < 0.9).

    msjgym evaluate loss-full-access --policy examples/loss_threshold_policy.py:Threshold --reps 5 --jobs 50000

Observation: [m = idle servers the sample shows (capped at d), busy servers / n, jobs in system / n];
action: the width, 0 = block, 1..m.
"""
import numpy as np


class Threshold:
    def __init__(self, spec):
        self.d = spec.d  # the environment's spec: spec.model is the LossModel (servers, d, k, lam)

    def act(self, observation: np.ndarray) -> int:
        m, busy = int(observation[0]), float(observation[1])
        if m == self.d:
            return m
        return m if busy < 0.9 else 0
