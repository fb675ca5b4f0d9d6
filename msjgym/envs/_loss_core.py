"""The batch of loss systems behind ``msjgym/AdaptiveLoss-v0`` and the loss agent runner (no gymnasium needed)."""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.envs._batch_env import StepBuffers
from msjgym.errors import MsjgymError
from msjgym.api import Scenario, load_scenario
from msjgym.systems.loss import kernel as ls
from msjgym.systems.loss import control as lc
from msjgym.systems.loss.model import LossModel


class LossBatch(StepBuffers):
    """B loss systems and the buffers of their steps."""

    def __init__(self, scenario: str | Scenario, horizon_jobs: int | None, blocking_penalty: float, num: int,
                 params: dict[str, Any], warmup: int = 0, batches: int = 1) -> None:
        sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, params)
        if not isinstance(sc.model, LossModel):
            raise MsjgymError(f"scenario = {scenario!r}: not a loss scenario (use loss-full-access or loss-sampled)")
        if horizon_jobs is not None and (not isinstance(horizon_jobs, int) or horizon_jobs < 1):
            raise MsjgymError(f"horizon_jobs = {horizon_jobs!r}: must be an integer >= 1 or None")
        if not (isinstance(blocking_penalty, (int, float)) and np.isfinite(blocking_penalty)
                and blocking_penalty >= 0):
            raise MsjgymError(f"blocking_penalty = {blocking_penalty!r}: must be a finite number >= 0")
        if sc.model.service is not None:
            raise MsjgymError(f"service = {sc.model.service}: msjgym/AdaptiveLoss-v0 simulates Exp(1) sizes only "
                              "(the count chain); use msjgym evaluate for other laws")
        self.scenario, self.model = sc, sc.model
        self.horizon = lc.NO_HORIZON if horizon_jobs is None else horizon_jobs
        self.warmup, self.batches = warmup, batches
        self.penalty = float(blocking_penalty)
        m = self.model
        self.state = ls.new_state(m, np.zeros((num, 4), np.uint64) + np.uint64(1), batches)
        self._buffers(num, lc.OBS_SIZE, m.d + 1)

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        st, m = self.state, self.model
        lc.step_batch(st.x, st.ints, st.flts, st.pmf, st.stats, st.rng, st.trace, st.logfact, m.servers, m.d, m.k,
                      m.lam, ls.GREEDY, self.warmup, self.horizon, self.batches, self.penalty, actions, resetting,
                      self.obs, self.masks, self.rewards, self.dts, self.ended, self.codes)


