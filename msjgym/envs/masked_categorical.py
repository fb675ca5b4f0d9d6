"""A lean masked categorical distribution for MaskablePPO: sb3-contrib's ``MaskableCategorical`` computed directly.

sb3-contrib's ``MaskableCategoricalDistribution`` builds a ``torch.distributions.Categorical`` for the raw logits,
then again for the masked ones (each construction normalises the logits with ``logsumexp`` and checks its
arguments), and samples with ``torch.multinomial``. With K = 128 actions and one torch thread that was the largest
single cost of training :class:`msjgym.envs.scoring.JobScoringPolicy` (``logsumexp`` is about ten times slower than
``log_softmax`` on a float[64, 128] tensor). :class:`MaskedLogits` gives the same distribution with one
``log_softmax``, computed when first needed:

* the masked logits: a forbidden action's logit is replaced by −10⁸ (sb3-contrib's ``HUGE_NEG``), then
  normalised, ``logits = log_softmax(masked)`` (``Categorical`` keeps ``logits − logsumexp(logits)``: the same
  numbers to float rounding);
* ``probs = softmax(logits)``, ``log_prob(a) = logits[a]``;
* ``entropy = −Σ_{allowed a} p(a)·logits[a]`` (sb3-contrib's: forbidden actions contribute 0);
* ``sample()``: inverse-CDF sampling, one uniform number per row (the first action whose cumulative probability
  exceeds U·total; an action of probability 0 is never returned); ``mode()``: ``argmax(probs)`` as sb3-contrib.

:class:`LeanMaskableCategoricalDistribution` is a ``MaskableCategoricalDistribution`` (the SB3 wrapper MaskablePPO
and ``get_distribution`` users see) whose ``distribution`` is a :class:`MaskedLogits`: ``.distribution.logits``,
``.probs``, ``.masks`` mean what they mean on sb3-contrib's. Nothing of it is saved in a model file.
"""
from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

__all__ = ["MaskedLogits", "LeanMaskableCategoricalDistribution", "HUGE_NEG"]

HUGE_NEG = -1e8
"""The logit given to a forbidden action (sb3-contrib's value): exp(−10⁸ − max) is exactly 0 in float32."""


class MaskedLogits:
    """A categorical distribution over the last axis of ``raw`` (float[batch, A] unnormalised logits) with optional
    masks (bool[batch, A], True = allowed; anything ``torch.as_tensor`` takes, reshaped to ``raw``'s shape)."""

    def __init__(self, raw: torch.Tensor, masks: Any = None) -> None:
        self.raw = raw
        self.apply_masking(masks)

    def apply_masking(self, masks: Any) -> None:
        """Mask out the actions where ``masks`` is False; None removes any mask (sb3-contrib's semantics)."""
        if masks is None:
            self.masks = None
        else:
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=self.raw.device).reshape(self.raw.shape)
        self._logits: torch.Tensor | None = None
        self._probs: torch.Tensor | None = None

    @property
    def logits(self) -> torch.Tensor:
        """float[batch, A]: the normalised log-probabilities (forbidden actions about −10⁸)."""
        if self._logits is None:
            x = self.raw if self.masks is None else torch.where(self.masks, self.raw, self._huge_neg())
            self._logits = torch.log_softmax(x, dim=-1)
        return self._logits

    def _huge_neg(self) -> torch.Tensor:
        return torch.tensor(HUGE_NEG, dtype=self.raw.dtype, device=self.raw.device)

    @property
    def probs(self) -> torch.Tensor:
        """float[batch, A]: the probabilities (exactly 0 for forbidden actions)."""
        if self._probs is None:
            self._probs = torch.softmax(self.logits, dim=-1)
        return self._probs

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """float[batch]: log p(actions) (``actions``: int or float[batch], one action per row)."""
        return self.logits.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        """float[batch]: −Σ p log p over the allowed actions (all actions without a mask)."""
        logits = self.logits
        if self.masks is None:
            logits = logits.clamp(min=torch.finfo(logits.dtype).min)  # as torch's Categorical.entropy
            return -(logits * self.probs).sum(-1)
        return -(logits * self.probs).masked_fill(~self.masks, 0.0).sum(-1)

    def sample(self) -> torch.Tensor:
        """int64[batch]: one action per row drawn from ``probs`` (inverse CDF, one ``torch.rand`` number per row)."""
        cdf = self.probs.cumsum(-1)
        total = cdf[:, -1:]
        # U·total < total strictly (the product may round up to total): the result is then < A, and the action
        # found has cdf[a] > U·total >= cdf[a-1], so p(a) > 0
        u = torch.minimum(torch.rand(total.shape, dtype=cdf.dtype, device=cdf.device) * total,
                          torch.nextafter(total, torch.zeros_like(total)))
        return torch.searchsorted(cdf, u, right=True).squeeze(-1)

    def mode(self) -> torch.Tensor:
        """int64[batch]: the most likely action of each row (``argmax(probs)``, as sb3-contrib)."""
        return torch.argmax(self.probs, dim=1)


class LeanMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's ``MaskableCategoricalDistribution`` with a :class:`MaskedLogits` as its ``distribution``."""

    distribution: MaskedLogits  # type: ignore[assignment]

    def proba_distribution(self, action_logits: torch.Tensor,  # type: ignore[override]
                           masks: Any = None) -> LeanMaskableCategoricalDistribution:
        self.distribution = MaskedLogits(action_logits.view(-1, self.action_dim), masks)
        return self

    def mode(self) -> torch.Tensor:
        return self.distribution.mode()

