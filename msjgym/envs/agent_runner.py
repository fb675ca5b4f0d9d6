"""Evaluate any policy — an object with ``act``, a callable, or a saved Stable-Baselines3 model — exactly like a
built-in one: the same replications, seeds, warm-up, statistics and scorecard as ``msjgym.evaluate``.

A policy file is named ``path/to/file.py:Name``: ``Name`` is a class (instantiated with the environment's
``EnvSpec`` if its constructor takes an argument, else with none), or an object or function already built. A saved
model is named ``sb3:path/to/model.zip`` (MaskablePPO models get the action mask). The policy sees what an agent of
``msjgym/MSJ-v0`` sees: ``act(observation)``, or ``act(observation, action_mask)`` if it takes two arguments.
Anything a policy does wrong — it raises, returns something that is not an action, or returns a masked action —
stops the evaluation with one error naming the replication, the step and the action.
"""
from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.api import Scenario
from msjgym.envs._core import MODES, Batch, EnvSpec
from msjgym.errors import PolicyError
from msjgym.systems.msj import control as msj_control

Decide = Callable[[np.ndarray, np.ndarray], Any]


def load_policy(text: Any, spec: Any) -> tuple[str, Decide]:
    """(display name, decide(observation, mask)) for ``file.py:Name``, ``sb3:model.zip``, or a policy object (a class,
    an object with ``act`` or a callable; its ``name`` attribute, if any, is its display name)."""
    if not isinstance(text, str):
        name = getattr(text, "name", None) or getattr(text, "__name__", None) or type(text).__name__
        return str(name), _decider(text, spec, str(name))
    if text.startswith("sb3:"):
        return text, _sb3_policy(Path(text[4:]), spec)
    path, sep, name = text.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise PolicyError(f"--policy {text!r}: expected a built-in name, FILE.py:NAME or sb3:MODEL.zip")
    return text, _decider(_load_object(Path(path), name, text), spec, text)


def _load_object(path: Path, name: str, text: str) -> Any:
    if not path.is_file():
        raise PolicyError(f"--policy {text!r}: no such file {str(path)!r}")
    module_spec = importlib.util.spec_from_file_location(f"_msjgym_policy_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: any failure is reported in one line
        raise PolicyError(f"--policy {text!r}: importing {path} failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, name):
        raise PolicyError(f"--policy {text!r}: {path} defines no {name!r}")
    return getattr(module, name)


def _decider(obj: Any, spec: EnvSpec, text: str) -> Decide:
    if inspect.isclass(obj):
        takes_spec = len(inspect.signature(obj).parameters) >= 1
        try:
            obj = obj(spec) if takes_spec else obj()
        except Exception as exc:
            raise PolicyError(f"--policy {text!r}: constructing it failed: {type(exc).__name__}: {exc}") from None
    act = getattr(obj, "act", obj)
    if not callable(act):
        raise PolicyError(f"--policy {text!r}: needs an act(observation) method or to be callable")
    params = [p for p in inspect.signature(act).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(params) >= 2:
        return lambda obs, mask: act(obs, mask)
    return lambda obs, mask: act(obs)


def _sb3_policy(path: Path, spec: EnvSpec, hint: str | None = None) -> Decide:
    """A saved model's greedy ``decide``; ``spec`` gives ``observation_size`` and ``action_count``, ``hint`` what
    to pass when they do not match (default: the MSJ environment's --mode and --window)."""
    if not path.is_file():
        raise PolicyError(f"--policy sb3:{path}: no such file")
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import A2C, DQN, PPO

        from msjgym.envs.sb3 import greedy_actor
    except ImportError:
        raise PolicyError("--policy sb3:...: needs stable-baselines3 and sb3-contrib (pip install torch==2.13.0 "
                          "then pip install \"msjgym[rl]\")") from None
    for cls in (MaskablePPO, PPO, A2C, DQN):
        try:
            model = cls.load(str(path), device="cpu")
        except Exception:  # not this algorithm's file
            continue
        shape, actions = model.observation_space.shape, getattr(model.action_space, "n", None)
        if shape != (spec.observation_size,) or actions != spec.action_count:
            if hint is None:
                hint = (f"this environment (mode={_mode_name(spec)!r}, window={spec.window}) has "
                        f"({spec.observation_size},) and {spec.action_count}: pass the --mode and --window it was "
                        "trained with")
            raise PolicyError(f"--policy sb3:{path}: the model was trained on observations of shape {shape} and "
                              f"{actions} actions; {hint}")
        try:
            return greedy_actor(model)  # numpy copy of the network: the same greedy actions, ~30x faster
        except ValueError:
            pass
        if cls is MaskablePPO:
            return lambda obs, mask: model.predict(obs, action_masks=mask, deterministic=True)[0]
        return lambda obs, mask: model.predict(obs, deterministic=True)[0]
    raise PolicyError(f"--policy sb3:{path}: not a saved MaskablePPO, PPO, A2C or DQN model")


def _mode_name(spec: EnvSpec) -> str:
    return next(name for name, code in MODES.items() if code == spec.mode)


class AgentReplications:
    """``reps`` replications of a multiserver-job scenario scheduled by ``policy`` (``FILE.py:NAME``,
    ``sb3:MODEL.zip`` or a policy object) through ``msjgym/MSJ-v0``'s interface, with the seeds of the built-in path
    (replication r: ``SeedSequence(seed).spawn(reps)[r]``). Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario: Scenario, policy: Any, *, mode: str = "start", window: int = 8, reps: int = 10,
                 jobs: int = 100_000, warmup: int = 0, batches: int = 20, seed: int = 0) -> None:
        spec = EnvSpec.make(scenario, mode, window, None, None, jobs, warmup, batches)
        self.name, self.decide = load_policy(policy, spec)
        self.batch = batch = Batch(spec, reps)
        batch.seed(np.random.SeedSequence(seed).spawn(reps))
        msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, np.zeros(reps, np.int64),
                               np.ones(reps, np.bool_), batch.obs, batch.masks, batch.codes)
        self.steps = [0] * reps

    def advance(self, b: int, max_steps: int) -> int:
        """Let the policy take up to ``max_steps`` decisions in replication b; returns its simulation status."""
        batch = self.batch
        for _ in range(max_steps):
            if batch.ended()[b]:
                break
            action = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, self.steps[b])
            batch.codes[b] = msj_control.step_system(batch.sim.state, batch.sim.params, batch.ctl, b, action,
                                                     batch.obs[b], batch.masks[b])
            batch.finish()
            self.steps[b] += 1
        return batch.sim.status(b)


def evaluate_agent(scenario: Scenario, name: str, decide: Decide, *, mode: str = "start", window: int = 8,
                   reps: int = 10, jobs: int = 100_000, warmup: int | None = None, seed: int | None = None,
                   batches: int = 20, progress: bool = False):
    """:func:`msjgym.evaluate.evaluate` of ``decide(observation, mask) -> action`` (shown as ``name``)."""
    from msjgym.evaluate.evaluator import evaluate

    return evaluate(scenario, _Named(name, decide), mode=mode, window=window, reps=reps, jobs=jobs, warmup=warmup,
                    seed=seed, batches=batches, progress=progress)


class _Named:
    """A decide function with a display name."""

    def __init__(self, name: str, decide: Decide) -> None:
        self.name, self.act = name, decide


def checked_action(decide: Decide, obs: np.ndarray, mask: np.ndarray, name: str, b: int, step: int) -> int:
    """``decide``'s action for replication b's step, or one ``PolicyError`` naming them if it raises, returns
    something that is not an action, or a masked action."""
    try:
        raw = decide(obs.copy(), mask.copy())
    except Exception as exc:  # the user's code: report it in one line
        raise PolicyError(f"policy {name}: replication {b}, step {step}: it raised {type(exc).__name__}: "
                          f"{exc}") from None
    action = _as_action(raw, mask.size, name, b, step)
    if not mask[action]:
        raise PolicyError(f"policy {name}: replication {b}, step {step}: action {action} is not allowed now "
                          f"(valid: {np.flatnonzero(mask).tolist()})")
    return action


def _as_action(raw: Any, count: int, name: str, b: int, step: int) -> int:
    value = np.asarray(raw)
    if value.size != 1 or not np.issubdtype(value.dtype, np.integer) and not (
            np.issubdtype(value.dtype, np.floating) and float(value.reshape(-1)[0]).is_integer()):
        raise PolicyError(f"policy {name}: replication {b}, step {step}: returned {raw!r}, not an action "
                          f"(an integer in [0, {count - 1}])")
    action = int(value.reshape(-1)[0])
    if not 0 <= action < count:
        raise PolicyError(f"policy {name}: replication {b}, step {step}: action {action} is out of range "
                          f"[0, {count - 1}]")
    return action
