"""An RLlib RLModule for msjgym's environments: RLlib's action-masking PPO module on log(1 + x) features.

Imports Ray RLlib and torch (the ``rllib`` extra): nothing in msjgym imports this module except the RLlib example
and the checkpoints that name it. msjgym's observations are counts and ages that grow without bound when a policy
falls behind; a tanh network fed raw values saturates there, far outside the states training visits, and a scheduler
that was fine on short episodes loses control once a queue builds up. ``log(1 + x)`` (x >= 0) keeps those inputs in
a range the network has seen, as the Stable-Baselines3 baseline's ``msjgym.envs.sb3.Log1pExtractor`` does. The
transform lives in the module, so a checkpoint carries it: ``--policy rllib:DIR`` applies it without being told.
"""
from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

__all__ = ["Log1pActionMaskingTorchRLModule"]


class Log1pActionMaskingTorchRLModule(ActionMaskingTorchRLModule):
    """RLlib's ``ActionMaskingTorchRLModule`` (Dict observation ``{"observations", "action_mask"}``, log(mask) added
    to the logits) whose networks see ``log1p(max(observation, 0))``. The transform is applied where the module
    splits the Dict into observation and mask (``_preprocess_batch``), which every forward pass (inference,
    exploration, and the value pass that precedes training) goes through exactly once."""

    features_transform = "log1p"
    """Read by the numpy copy of ``msjgym.core.rllib_policy`` (the same convention as SB3's ``Log1pExtractor``)."""

    def _preprocess_batch(self, batch: dict[str, Any], **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        action_mask, batch = super()._preprocess_batch(batch, **kwargs)
        batch[Columns.OBS] = torch.log1p(torch.clamp(batch[Columns.OBS], min=0.0))
        return action_mask, batch
