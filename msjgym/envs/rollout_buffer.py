"""sb3-contrib's MaskablePPO rollout buffer without its per-rollout copies (for large observations such as the
K × F job windows of ``msjgym/JobScheduling-v0``).

``MaskableRolloutBuffer`` allocates its arrays afresh at every rollout (``np.zeros``: the pages are faulted in again
while the rollout writes them), copies every array once more to swap its (step, copy) axes before the updates, and
copies every minibatch a second time into a tensor (``torch.tensor``). With K = 128 rows of 14 float32 features and
8,192 decisions per rollout that is about 60 MB per copy, a fifth of the training time measured by
``benchmarks/bench_train.py``. :class:`LeanMaskableRolloutBuffer` keeps the same samples with

* its arrays allocated once and reused by every rollout (each slot is written before it is read);
* the (step, copy) axes flattened without the swap (a view): a minibatch is drawn by a uniformly random permutation
  of the flat indices, so the order of flattening changes which transitions share a minibatch by a fixed
  relabelling only, not their distribution; every array is flattened the same way, so a sample's observation,
  action, mask, value, advantage and return stay together;
* the minibatch (a fresh array, numpy fancy indexing) handed to torch without a second copy;
* the action masks stored as bool (sb3-contrib's are float32, converted back to bool by the distribution);
* each transition's arrays copied once into the buffer (SB3's ``add`` copies the observation twice).

Use: ``MaskablePPO(policy, env, rollout_buffer_class=LeanMaskableRolloutBuffer, ...)``.
"""
from __future__ import annotations

import numpy as np
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

__all__ = ["LeanMaskableRolloutBuffer"]

_STORED = ("observations", "actions", "rewards", "returns", "episode_starts", "values", "log_probs", "advantages",
           "action_masks")


class LeanMaskableRolloutBuffer(MaskableRolloutBuffer):
    """``MaskableRolloutBuffer`` with arrays reused across rollouts, no axis swap and no second minibatch copy."""

    _storage: dict[str, np.ndarray] | None = None

    def reset(self) -> None:
        if self._storage is None:
            super().reset()  # allocates (sb3-contrib's reset also sets the mask width)
            self.action_masks = np.ones(self.action_masks.shape, dtype=bool)
            self._storage = {name: self.__dict__[name] for name in _STORED}
        else:
            self.__dict__.update(self._storage)  # get() replaced them by flat views; returns by a new array
            self.pos, self.full, self.generator_ready = 0, False, False

    @staticmethod
    def swap_and_flatten(arr: np.ndarray) -> np.ndarray:
        """[steps, copies, ...] → [steps·copies, ...] (a view; [steps·copies, 1] for 2-dimensional arrays, as SB3)."""
        shape = arr.shape
        if len(shape) < 3:
            shape = (*shape, 1)
        return arr.reshape(shape[0] * shape[1], *shape[2:])

    def add(self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, episode_start: np.ndarray,
            value: torch.Tensor, log_prob: torch.Tensor, action_masks: np.ndarray | None = None) -> None:
        """``MaskableRolloutBuffer.add`` with each array copied once (SB3's copies the observation twice,
        ``np.array(obs)`` first)."""
        pos = self.pos
        if action_masks is not None:
            self.action_masks[pos] = np.asarray(action_masks).reshape(self.n_envs, self.mask_dims)
        self.observations[pos] = np.asarray(obs).reshape(self.n_envs, *self.obs_shape)
        self.actions[pos] = np.asarray(action).reshape(self.n_envs, self.action_dim)
        self.rewards[pos] = reward
        self.episode_starts[pos] = episode_start
        self.values[pos] = value.detach().cpu().numpy().reshape(-1)
        self.log_probs[pos] = log_prob.detach().cpu().numpy().reshape(-1)
        self.pos += 1
        if self.pos == self.buffer_size:
            self.full = True

    def to_torch(self, array: np.ndarray, copy: bool = False) -> torch.Tensor:
        """The minibatch arrays are fresh copies already (fancy indexing): shared with torch, not copied again."""
        return torch.as_tensor(array, device=self.device)

