"""A policy of your own for the loss scenarios (``msjgym/AdaptiveLoss-v0``): take d servers when the sample shows d
idle ones; when it shows fewer, accept on what is there only if the system is not busy (busy fraction < 0.9).

    msjgym evaluate loss-full-access --policy examples/loss_threshold_policy.py:Threshold --reps 5 --jobs 50000

Observation (``spec.view(observation)``): ``idle_sampled`` m (idle servers the sample shows, capped at d),
``busy_fraction``, ``jobs_per_server``; action: the width, 0 = block (``view.block``), 1..m.
"""
import numpy as np


class Threshold:
    def __init__(self, spec):
        self.spec = spec  # the environment's spec: spec.d, spec.model (the LossModel: servers, d, k, lam), spec.view

    def act(self, observation: np.ndarray) -> int:
        view = self.spec.view(observation)
        m = view.idle_sampled
        if m == self.spec.d:
            return m
        return m if view.busy_fraction < 0.9 else view.block
