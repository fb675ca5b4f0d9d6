"""What RL Zoo (rl_zoo3) saves beside a trained model that changes how the model acts, read for ``sb3:MODEL.zip``.

RL Zoo's layout for ``python -m rl_zoo3.train --algo ALGO --env ID`` (the id's "/" becomes "-" in ENV)::

    logs/ALGO/ENV_1/ENV.zip                   the final model (best_model.zip, rl_model_*_steps.zip beside it)
    logs/ALGO/ENV_1/ENV/config.yml            the hyperparameters (env_wrapper, normalize, frame_stack, ...)
    logs/ALGO/ENV_1/ENV/vecnormalize.pkl      VecNormalize's statistics (hyperparameter ``normalize``)

A model evaluated without what these files say would be a different policy, and its numbers wrong, so
:func:`read_run` returns what :mod:`msjgym.core.user_policy` must apply, or refuses with a ``PolicyError``:

* ``vecnormalize.pkl`` with observation normalization: the observation the model sees is
  ``clip((obs − mean) / sqrt(var + epsilon), −clip_obs, clip_obs)`` (as float32), exactly VecNormalize's; reward
  normalization does not change how a model acts and is ignored. A config asking for observation normalization
  without the file is refused.
* ``env_wrapper``: :class:`msjgym.envs.wrappers.MaskFallback` (older runs; the environments now fall back by
  themselves, ``invalid_action="fallback"``) is accepted: its rule is the one every PPO, A2C or DQN model is evaluated
  with anyway (a forbidden most likely action is replaced by the mask's default action, as in training; not for
  MaskablePPO, which never chose a forbidden action); any other wrapper is refused, since it may change the
  observations or the actions. ``env_kwargs`` (``invalid_action`` and its penalty included) change the system, not
  how the model acts: evaluate on the same system (the command's scenario options). ``frame_stack`` is refused. ``vec_env_wrapper`` may only be reward wrappers
  (:data:`REWARD_ONLY_WRAPPERS`).

The files are looked for in ``MODEL/`` (``MODEL.zip`` without ``.zip``: the final model's own folder), then beside
the zip, then in the one sub-folder beside it holding a ``config.yml`` (the run folder of ``best_model.zip`` and of
checkpoints). Loading ``vecnormalize.pkl`` unpickles it, which can run code, as loading the model does: load only
runs you trust (``docs/security.md``).
"""
from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.errors import PolicyError

FALLBACK_WRAPPER = "msjgym.envs.wrappers.MaskFallback"
REWARD_ONLY_WRAPPERS = frozenset({"msjgym.envs.sb3.AverageCostReward"})
"""``vec_env_wrapper`` classes that change only the rewards (training), never what the model sees or does."""

Transform = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ZooRun:
    """How a saved model acts, from the RL Zoo files beside it (all None/False for a model saved elsewhere).

    Attributes:
        config: the ``config.yml`` read (None if there is none).
        normalization: ``vecnormalize.pkl``'s file if it normalizes observations, else None.
        transform: float32 observation -> what the model sees (VecNormalize's observation normalization), or None.
        fallback: the config names ``MaskFallback`` (older RL Zoo runs; the rule is applied to every model but
            MaskablePPO's whatever this says, see :func:`msjgym.core.user_policy._sb3_policy`).
    """

    config: Path | None = None
    normalization: Path | None = None
    transform: Transform | None = None
    fallback: bool = False


def read_run(model: Path, observation_size: int) -> ZooRun:
    """The RL Zoo files beside ``model`` (a ``.zip``), checked against an observation of ``observation_size``; a
    ``PolicyError`` naming the file and the reason for anything that cannot be reproduced."""
    text = f"--policy sb3:{model}"
    folders = _folders(model, text)
    config_path = next((f / "config.yml" for f in folders if (f / "config.yml").is_file()), None)
    stats_path = next((f / "vecnormalize.pkl" for f in folders if (f / "vecnormalize.pkl").is_file()), None)
    config = _read_config(config_path, text) if config_path is not None else {}
    fallback = _check_wrappers(config, config_path, text)
    transform = None
    normalized = None
    if stats_path is not None:
        transform = _normalization(stats_path, observation_size, text)
        normalized = stats_path if transform is not None else None
    elif _normalizes_observations(config.get("normalize")):
        raise PolicyError(f"{text}: {config_path} says the model was trained on normalized observations "
                          f"(normalize: {config.get('normalize')!r}) but no vecnormalize.pkl was found in "
                          f"{', '.join(str(f) for f in folders)}; without its statistics the model cannot be "
                          "evaluated as trained")
    return ZooRun(config_path, normalized, transform, fallback)


def _folders(model: Path, text: str) -> list[Path]:
    own = model.with_suffix("")
    folders = [own] if own.is_dir() else []
    folders.append(model.parent)
    runs = sorted(f for f in model.parent.iterdir() if f.is_dir() and f != own and (f / "config.yml").is_file())
    if len(runs) > 1 and not (own / "config.yml").is_file():
        raise PolicyError(f"{text}: several RL Zoo run folders beside the model ({', '.join(f.name for f in runs)}): "
                          "cannot tell which config.yml / vecnormalize.pkl belong to it; move the model into its "
                          "run's folder")
    return folders + runs


def _read_config(path: Path, text: str) -> dict[str, Any]:
    """RL Zoo's ``config.yml`` (``yaml.dump`` of an OrderedDict), read with a safe loader."""
    try:
        import yaml
    except ImportError:
        raise PolicyError(f"{text}: reading {path} needs PyYAML (pip install pyyaml, or \"msjgym[rl]\")") from None

    class _Loader(yaml.SafeLoader):
        pass

    def ordered_dict(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        args = loader.construct_sequence(node, deep=True)
        return dict(args[0]) if args else {}

    _Loader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", ordered_dict)
    try:
        data = yaml.load(path.read_text(), Loader=_Loader)  # a SafeLoader with one extra constructor
    except (OSError, yaml.YAMLError, TypeError, ValueError) as exc:
        raise PolicyError(f"{text}: cannot read {path}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{text}: {path} is not an RL Zoo config (a mapping of hyperparameters)")
    return data


def _wrapper_names(value: Any) -> list[str]:
    """Class names of RL Zoo's ``env_wrapper`` / ``vec_env_wrapper`` value (a name, a {name: kwargs}, or a list)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    names = []
    for item in items:
        names.extend(item.keys() if isinstance(item, dict) else [item])
    return [str(name) for name in names]


def _check_wrappers(config: dict[str, Any], path: Path | None, text: str) -> bool:
    """True if the model was trained through ``MaskFallback``; PolicyError for anything else that changes what the
    model sees or does."""
    env = _wrapper_names(config.get("env_wrapper"))
    other = [name for name in env if name != FALLBACK_WRAPPER]
    if other:
        raise PolicyError(f"{text}: the model was trained through RL Zoo's env_wrapper {other[0]!r} ({path}), "
                          f"which msjgym evaluate cannot apply; only {FALLBACK_WRAPPER} is reproduced")
    vec = [name for name in _wrapper_names(config.get("vec_env_wrapper")) if name not in REWARD_ONLY_WRAPPERS]
    if vec:
        raise PolicyError(f"{text}: the model was trained through RL Zoo's vec_env_wrapper {vec[0]!r} ({path}), "
                          "which msjgym evaluate cannot apply; only reward wrappers "
                          f"({', '.join(sorted(REWARD_ONLY_WRAPPERS))}) are allowed")
    if config.get("frame_stack"):
        raise PolicyError(f"{text}: the model was trained on stacked frames (frame_stack: {config['frame_stack']!r}, "
                          f"{path}), which msjgym evaluate cannot apply")
    return bool(env)


def _normalizes_observations(value: Any) -> bool:
    """Whether RL Zoo's ``normalize`` hyperparameter (bool, dict or a "dict(...)" string) normalizes observations
    (VecNormalize's default ``norm_obs=True``)."""
    if value is None or value is False:
        return False
    if isinstance(value, dict):
        return bool(value.get("norm_obs", True))
    if isinstance(value, str):
        compact = "".join(value.split())
        return "norm_obs=False" not in compact and "'norm_obs':False" not in compact \
            and '"norm_obs":False' not in compact
    return bool(value)


def _normalization(path: Path, observation_size: int, text: str) -> Transform | None:
    """VecNormalize's observation normalization from its saved statistics, or None if it does not normalize them."""
    try:
        with path.open("rb") as f:
            stats = pickle.load(f)  # trusted like the model (see the module docstring)
    except Exception as exc:  # a foreign or broken file: one line
        raise PolicyError(f"{text}: cannot load {path}: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    if not getattr(stats, "norm_obs", False):
        return None
    rms = getattr(stats, "obs_rms", None)
    mean, var = (np.asarray(getattr(rms, key, None), dtype=np.float64) for key in ("mean", "var"))
    if mean.shape != (observation_size,) or var.shape != (observation_size,):
        raise PolicyError(f"{text}: {path} normalizes observations of shape {mean.shape}; this environment's have "
                          f"({observation_size},)")
    clip, eps = float(stats.clip_obs), float(stats.epsilon)
    scale = np.sqrt(var + eps)

    def transform(obs: np.ndarray) -> np.ndarray:
        return np.clip((obs.astype(np.float64) - mean) / scale, -clip, clip).astype(np.float32)

    return transform
