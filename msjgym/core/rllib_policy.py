"""``--policy rllib:CHECKPOINT``: a PPO (or any discrete-action) RLModule trained with RLlib, acting greedily.

CHECKPOINT is an Algorithm checkpoint (``algo.save_to_path()``: the module is
``learner_group/learner/rl_module/default_policy`` inside it), a MultiRLModule checkpoint (``.../rl_module``), or one
RLModule's own checkpoint directory. The module is restored as ``RLModule.from_checkpoint`` does (:func:`restore`; no Ray cluster is
needed) and acts greedily: the argmax of its action-distribution logits over the allowed actions (the mask applied
here whatever the module does). Two observation layouts are accepted, checked against the environment's: a Box of
shape (D,) (a module trained on the plain environment, where every action was allowed), or the Dict
``{"observations": Box(D,), "action_mask": Box(A,)}`` of :class:`msjgym.envs.rllib.MaskInObservation` (RLlib's
action-masking RLModule). Observations are fed raw, as RLlib's default env-to-module pipeline does; an Algorithm
checkpoint whose pipeline has other connectors (an observation filter, say) is refused rather than mis-evaluated.

Decisions run through a numpy copy of the actor (encoder and pi head: Linear layers with Tanh/ReLU), used only
after it reproduced the module's own logits on random observations at load time; otherwise through
``forward_inference`` in torch (~0.2 ms a decision).

**Trust.** Every file of an RLlib checkpoint is a pickle, and unpickling can run code: load only checkpoints you
trust (``docs/security.md``). Ray is imported here only when an ``rllib:`` policy is loaded.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.core.numpy_net import Layer, mlp_forward, numpy_layer
from msjgym.core.paths import path_kind, shown
from msjgym.errors import PolicyError

MODULE_ID = "default_policy"
"""RLlib's id of a single-agent algorithm's module (``ray.rllib.core.DEFAULT_MODULE_ID``)."""
ALGORITHM_MODULE = Path("learner_group", "learner", "rl_module")
"""Where an Algorithm checkpoint keeps its MultiRLModule."""
DEFAULT_CONNECTORS = frozenset({
    "AddObservationsFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad", "AddStatesFromEpisodesToBatch",
    "AgentToModuleMapping", "BatchIndividualItems", "NumpyToTensor"})
"""RLlib's default env-to-module connectors: they batch observations without changing them."""
INSTALL = "pip install torch==2.13.0 then pip install \"msjgym[rllib]\""
CHECK_SAMPLES = 64
"""Random observations on which the numpy copy must reproduce the module's logits before it is used."""


def module_dir(path: Path, text: str) -> Path:
    """The RLModule checkpoint directory inside ``path`` (an Algorithm, MultiRLModule or RLModule checkpoint), or one
    ``PolicyError`` (``text``: the ``--policy`` value)."""
    kind, what = path_kind(path)
    if kind != "folder":
        what = {"file": "a file, not a checkpoint directory", "missing": "no such directory"}.get(kind, what)
        raise PolicyError(f"--policy {shown(text)}: {what} (expected an RLlib checkpoint directory, "
                          "e.g. what algo.save_to_path() wrote)")
    for candidate in (path / ALGORITHM_MODULE / MODULE_ID, path / MODULE_ID, path):
        if (candidate / "class_and_ctor_args.pkl").is_file() and any(candidate.glob("module_state*")):
            return candidate
    if (path / ALGORITHM_MODULE).is_dir():
        found = sorted(p.name for p in (path / ALGORITHM_MODULE).iterdir() if p.is_dir())
        raise PolicyError(f"--policy {text!r}: the checkpoint has no module {MODULE_ID!r} (modules: "
                          f"{', '.join(found) or 'none'}); pass the directory of the one to evaluate")
    raise PolicyError(f"--policy {text!r}: {path} is not an RLlib checkpoint (no rllib_checkpoint.json with "
                      f"{ALGORITHM_MODULE}/{MODULE_ID}, nor an RLModule's class_and_ctor_args.pkl and module_state)")


def _check_connectors(path: Path, text: str) -> None:
    """Refuse an Algorithm checkpoint whose env-to-module pipeline changes observations (beyond batching)."""
    file = path / "env_runner" / "env_to_module_connector" / "class_and_ctor_args.pkl"
    if not file.is_file():
        return
    with open(file, "rb") as f:
        ctor = pickle.load(f)  # trusted checkpoint (see the module docstring)
    try:
        connectors = ctor["ctor_args_and_kwargs"][1].get("connectors") or []
        names = [c[0].__name__ if isinstance(c, tuple) else type(c).__name__ for c in connectors]
    except (KeyError, IndexError, TypeError, AttributeError):
        return  # a layout this check does not know: nothing to say
    extra = [n for n in names if n not in DEFAULT_CONNECTORS]
    if extra:
        raise PolicyError(f"--policy {text!r}: the checkpoint's env-to-module pipeline has connectors that may "
                          f"transform observations ({', '.join(extra)}); this loader feeds raw observations, as "
                          "RLlib's default pipeline does")


def load_module(path: Path, text: str) -> Any:
    """The RLModule of checkpoint ``path``, restored on CPU; one ``PolicyError`` if Ray/torch are missing or it
    cannot be loaded."""
    directory = module_dir(path, text)
    try:
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
    except ImportError as exc:
        raise PolicyError(f"--policy {text!r}: needs Ray RLlib and torch ({INSTALL}): {exc}") from None
    _check_connectors(path, text)
    try:
        module = restore(directory)
    except Exception as exc:  # a damaged or foreign checkpoint: one line
        message = " ".join(str(exc).split())[:300]
        raise PolicyError(f"--policy {text!r}: loading the RLModule in {directory} failed: "
                          f"{type(exc).__name__}: {message}") from None
    if isinstance(module, MultiRLModule):
        if MODULE_ID not in module.keys():
            raise PolicyError(f"--policy {text!r}: the MultiRLModule has no {MODULE_ID!r} (modules: "
                              f"{', '.join(module.keys())})")
        module = module[MODULE_ID]
    return module


MOVED = {("msjgym.rllib_module", "Log1pActionMaskingTorchRLModule"):
         ("msjgym.core.rllib_module", "Log1pActionMaskingTorchRLModule")}
"""Classes that checkpoints name by an earlier path: (module, name) as pickled -> where it lives now. An RLlib
checkpoint pickles its RLModule's class by reference, so one trained before msjgym 0.1's RLModule moved from the
package's top level to :mod:`msjgym.core` names ``msjgym.rllib_module``; :class:`_Unpickler` maps it (no module is left
at the old path). docs/tutorials/rllib.md ("Older checkpoints")."""


class _Unpickler(pickle.Unpickler):
    """A pickle reader that finds a class moved since the checkpoint was written at its new place (:data:`MOVED`)."""

    def find_class(self, module: str, name: str) -> Any:
        module, name = MOVED.get((module, name), (module, name))
        return super().find_class(module, name)


def restore(directory: Path) -> Any:
    """The RLModule of an RLModule checkpoint ``directory``, as ``RLModule.from_checkpoint`` restores it (its class
    and constructor arguments from ``class_and_ctor_args.pkl``, then its state), except that the class file is read
    with :class:`_Unpickler`, so a checkpoint naming a moved class (:data:`MOVED`) loads."""
    with open(directory / "class_and_ctor_args.pkl", "rb") as f:
        ctor_info = _Unpickler(f).load()  # trusted checkpoint (see the module docstring)
    args, kwargs = ctor_info["ctor_args_and_kwargs"]
    module = ctor_info["class"](*(args if isinstance(args, (list, tuple)) else [args]), **kwargs)
    module.restore_from_path(str(directory))
    return module


def observation_layout(module: Any, text: str) -> tuple[tuple[int, ...] | None, int | None, bool]:
    """(observation shape, action count, whether the module takes the Dict with the action mask)."""
    import gymnasium as gym

    space, actions = module.observation_space, module.action_space
    n = int(actions.n) if isinstance(actions, gym.spaces.Discrete) else None
    if isinstance(space, gym.spaces.Dict) and "observations" in space.spaces and "action_mask" in space.spaces:
        return tuple(space["observations"].shape), n, True
    if isinstance(space, gym.spaces.Box):
        return tuple(space.shape), n, False
    raise PolicyError(f"--policy {text!r}: the module's observation space {space} is neither a Box nor the Dict "
                      "{'observations': Box, 'action_mask': Box} of msjgym.envs.rllib.MaskInObservation")


def rllib_policy(path: Path, spec: Any, text: str) -> Any:
    """``decide(observation, mask)``: the greedy action of the checkpoint's module, after checking its spaces
    against ``spec`` (the environment's: ``observation_size``, ``action_count``, ``describe()``)."""
    if spec.observation_size is None or spec.action_count is None:
        raise PolicyError(f"--policy {text!r}: this system's policies do not act on a vector observation with "
                          "discrete actions (no Gymnasium environment to train on); use FILE.py:NAME")
    module = load_module(path, text)
    shape, actions, masked = observation_layout(module, text)
    if shape != (spec.observation_size,) or actions != spec.action_count:
        raise PolicyError(f"--policy {text!r}: the module was trained on observations of shape {shape} and "
                          f"{actions} actions; this environment ({spec.describe()}) has ({spec.observation_size},) "
                          f"and {spec.action_count}: pass the options it was trained with")
    torch_logits = _torch_logits(module, masked)
    numpy_logits = numpy_actor(module)
    if numpy_logits is not None and _agrees(numpy_logits, torch_logits, spec.observation_size, spec.action_count):
        logits = numpy_logits
    else:
        logits = torch_logits

    def decide(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.argmax(np.where(mask, logits(obs, mask), -np.inf)))

    return decide


def _torch_logits(module: Any, masked: bool) -> Any:
    """``logits(obs, mask)``: the module's action-distribution inputs through ``forward_inference``."""
    import torch

    def logits(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32).reshape(1, -1))
        batch_obs: Any = x
        if masked:
            batch_obs = {"observations": x, "action_mask": torch.as_tensor(
                np.asarray(mask, dtype=np.float32).reshape(1, -1))}
        with torch.inference_mode():
            out = module.forward_inference({"obs": batch_obs})
        return out["action_dist_inputs"].numpy().reshape(-1).astype(np.float64)

    return logits


def numpy_actor(module: Any) -> Any:
    """``logits(obs, mask)`` in numpy from a copy of the actor (encoder, then pi head) when both are sequences of
    Linear / Tanh / ReLU layers, after log(1 + x) when the module declares ``features_transform = "log1p"``
    (:mod:`msjgym.core.rllib_module`); None otherwise (then torch is used)."""
    import torch

    encoder = getattr(module, "encoder", None)
    actor = getattr(encoder, "actor_encoder", None) or getattr(encoder, "encoder", None)
    pi = getattr(module, "pi", None)
    if actor is None or pi is None:
        return None
    log1p = getattr(module, "features_transform", None) == "log1p"  # msjgym.core.rllib_module's features
    layers: list[Layer] = []
    for part in (actor, pi):
        for layer in part.modules():
            copied = numpy_layer(layer)
            if copied is not None:
                layers.append(copied)
            elif not list(layer.children()) and list(layer.parameters(recurse=False)):
                return None  # a layer with weights this copy does not know (layer norm, convolution, ...)
            elif not list(layer.children()) and not isinstance(layer, (torch.nn.Identity, torch.nn.Flatten)):
                return None  # an activation or transform this copy does not know
    forward = mlp_forward(layers, log1p)
    return lambda obs, mask: forward(obs)


def _agrees(fast: Any, reference: Any, size: int, actions: int) -> bool:
    """Whether ``fast`` gives ``reference``'s logits (to 1e-4 relative) on random observations with every action
    allowed: the check that the numpy copy is the module's actor."""
    rng = np.random.default_rng(0)
    mask = np.ones(actions, dtype=bool)
    for _ in range(CHECK_SAMPLES):
        obs = rng.exponential(2.0, size) * (rng.random(size) < 0.7)
        a, b = fast(obs, mask), reference(obs, mask)
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-4):
            return False
    return True
