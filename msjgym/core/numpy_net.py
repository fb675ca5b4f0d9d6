"""A float64 numpy copy of a small policy network (Linear / Tanh / ReLU layers), for fast greedy decisions.

Used by the loaders of saved models (``sb3:``, :mod:`msjgym.core.user_policy`; ``rllib:``,
:mod:`msjgym.core.rllib_policy`); each loader checks the copy against the framework's own network before using it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Layer = tuple[str, np.ndarray, np.ndarray]
"""A layer of a numpy copy of a network: ("linear", W, b) (y = x W + b), or ("tanh" | "relu", empty, empty)."""


def numpy_layer(module: Any) -> Layer | None:
    """A float64 copy of a torch ``Linear``, ``Tanh`` or ``ReLU`` layer; None for any other module."""
    import torch

    if isinstance(module, torch.nn.Linear):
        return ("linear", module.weight.detach().numpy().T.astype(np.float64),
                module.bias.detach().numpy().astype(np.float64))
    if isinstance(module, (torch.nn.Tanh, torch.nn.ReLU)):
        return (type(module).__name__.lower(), np.empty(0), np.empty(0))
    return None


def mlp_forward(layers: list[Layer], log1p: bool) -> Callable[[np.ndarray], np.ndarray]:
    """``x ↦`` the network's output in float64 for one observation (any shape, flattened; the input is read as
    float32, as the torch network sees it), after log(1 + max(x, 0)) when ``log1p``."""

    def forward(obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32).reshape(-1).astype(np.float64)
        if log1p:
            x = np.log1p(np.maximum(x, 0.0))
        for kind, w, b in layers:
            x = x @ w + b if kind == "linear" else np.tanh(x) if kind == "tanh" else np.maximum(x, 0.0)
        return x

    return forward
