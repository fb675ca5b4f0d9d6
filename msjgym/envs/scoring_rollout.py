"""The rollout step of :class:`msjgym.envs.scoring.JobScoringPolicy` in numpy: the same network, the same masked
distribution, fewer and cheaper operations.

While MaskablePPO collects a rollout it calls the policy once per vector step, without gradients, on a small batch
(64 copies × K = 128 rows, a few present rows each): a few dozen tiny torch operations whose fixed cost (a few to
tens of microseconds each with one thread) is most of the step's time. :func:`rollout_step` computes the same
numbers with numpy on views of the policy's live parameters (no copy; each update is seen at once): the scoring MLP
on the present rows, the pooled critic (a per-row embedding, its mean over the present rows beside their fraction,
the value MLP), the masked log-softmax (forbidden actions at −10⁸, as :mod:`msjgym.envs.masked_categorical`), an
action per row (inverse CDF with one ``torch.rand`` number per row, so torch's seed governs it; or the argmax), and
its log-probability. All in float32, as torch: the results equal the torch path's to float rounding (the tests
compare them); the gradient epochs use the torch path.

Only the pick design without attention and with a ReLU or Tanh activation has this path (:func:`numpy_layers`
returns None otherwise; the policy then uses torch).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["numpy_layers", "rollout_step"]

Layers = list[tuple[str, Any, Any]]


def _layers(modules: Any) -> Layers | None:
    """[(kind, weight view, bias view)] of a sequence of Linear / ReLU / Tanh modules; None for anything else."""
    out: Layers = []
    for m in modules:
        if isinstance(m, torch.nn.Linear):
            out.append(("linear", m.weight, m.bias))
        elif isinstance(m, torch.nn.ReLU):
            out.append(("relu", None, None))
        elif isinstance(m, torch.nn.Tanh):
            out.append(("tanh", None, None))
        else:
            return None
    return out


def numpy_layers(policy: Any) -> dict[str, Layers] | None:
    """The layers :func:`rollout_step` runs (the parameters themselves: their numpy views are taken per call), or
    None when the policy has no numpy rollout path (attention, the inspect design, another activation, a GPU)."""
    net = policy.mlp_extractor
    if net.attention or not net.pick or not isinstance(policy.action_net, torch.nn.Identity):
        return None
    if any(p.device.type != "cpu" or p.dtype != torch.float32 for p in policy.parameters()):
        return None
    parts = {"score": _layers(net.score_net), "embed": _layers(net.value_embed),
             "head": _layers([*net.value_head, policy.value_net])}
    return None if any(layers is None for layers in parts.values()) else parts  # type: ignore[return-value]


def _run(layers: Layers, x: np.ndarray) -> np.ndarray:
    for kind, weight, bias in layers:
        if kind == "linear":
            x = x @ weight.detach().numpy().T + bias.detach().numpy()
        elif kind == "relu":
            x = np.maximum(x, np.float32(0.0))
        else:
            x = np.tanh(x)
    return x


def rollout_step(layers: dict[str, Layers], present_column: int, obs: np.ndarray, masks: np.ndarray | None,
                 deterministic: bool, absent_logit: float,
                 huge_neg: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(actions int64[B], values float32[B, 1], log-probabilities float32[B]) of the policy for float32[B, K, F]
    observations ``obs`` and bool[B, K] ``masks`` (None: every action allowed): what ``JobScoringPolicy.forward``
    returns, computed in numpy."""
    batch, rows = obs.shape[0], obs.shape[1]
    present = obs[:, :, present_column] > 0.5
    b, r = np.nonzero(present)
    x = obs[b, r]  # the present rows, float32[N, F], in (copy, row) order
    logits = np.full((batch, rows), absent_logit, np.float32)
    logits[b, r] = _run(layers["score"], x)[:, 0]
    # the critic: the mean of the present rows' embeddings (a [B, N] one-hot product), with the present fraction
    count = present.sum(axis=1).astype(np.float32)
    owner = (b[None, :] == np.arange(batch)[:, None]).astype(np.float32)
    pooled = (owner @ _run(layers["embed"], x)) / np.maximum(count, 1.0)[:, None]
    values = _run(layers["head"], np.concatenate([pooled, (count / rows)[:, None]], axis=1).astype(np.float32))
    if masks is not None:
        logits = np.where(np.asarray(masks, dtype=bool).reshape(batch, rows), logits, np.float32(huge_neg))
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    probs = np.exp(log_p)
    if deterministic:
        actions = probs.argmax(axis=1)
    else:  # inverse CDF, as MaskedLogits.sample: U·total < total, so the action found has probability > 0
        cdf = probs.cumsum(axis=1)
        total = cdf[:, -1]
        u = np.minimum(torch.rand(batch).numpy() * total, np.nextafter(total, np.float32(0.0)))
        actions = (cdf <= u[:, None]).sum(axis=1)
    chosen = log_p[np.arange(batch), actions]
    return (torch.from_numpy(actions.astype(np.int64)), torch.from_numpy(values.astype(np.float32, copy=False)),
            torch.from_numpy(chosen.astype(np.float32, copy=False)))
