"""The one batched environment base: every family's Gymnasium environment is a subclass pair of these.

* :class:`BatchedVectorEnv` — ``num_envs`` independent copies advanced together (a leading batch axis, one compiled
  call per step): spaces, ``reset(seed=s)`` (copy i draws from ``SeedSequence(s).spawn(num_envs)[i]``), the
  NEXT_STEP autoreset, ``action_masks()`` (sb3-contrib's convention), the one action check, and ``reset_ended()``
  (what :func:`msjgym.envs.to_sb3` needs for SB3's same-step autoreset).
* :class:`BatchedEnv` — the single environment, which *is* its vector environment with one copy: the two give the
  same trajectories for the same seeds.

A family's environment supplies only what is specific to it: its spec type (the validated arguments:
``spec_type.make(*args, **kwargs)``, with ``observation_size`` and ``action_count``), its batch type (an
:class:`~msjgym.core.env_batch.EnvBatch` over its control layer, built as ``batch_type(spec, num_envs)``), its
observation space (``observation_space_of(spec)``), the named view of its observations (``spec.view(obs)``, over
the layout in ``msjgym.systems.<family>.observation``), and a class docstring that tables the action space,
observation, reward, episode end and arguments. Its module declares ``ENVS = [EnvRegistration(...)]``; ``msjgym.envs`` finds the
module and registers them.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from msjgym.core.actions import action_error, check_invalid_action, fallback_action, resolve_actions
from msjgym.core.env_batch import EnvBatch
from msjgym.core.validation import check_state_bytes
from msjgym.core.validation import check_number, show
from msjgym.core.rng import seed_states as rng_states
from msjgym.errors import MsjgymError


@dataclass(frozen=True)
class EnvRegistration:
    """A Gymnasium id an env module declares (in its ``ENVS`` list): ``entry_point`` and ``vector_entry_point`` as
    ``"module:Class"``; ``family`` the name of the family it simulates."""

    id: str
    entry_point: str
    vector_entry_point: str
    family: str


class MaskedDiscrete(gym.spaces.Discrete):
    """A Discrete space whose ``sample()`` draws among the actions allowed now (the environment's mask), so that
    generic tools that sample random actions (Gymnasium's and SB3's environment checkers) only take valid ones."""

    def __init__(self, n: int, masks: Callable[[], np.ndarray], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._masks = masks

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._masks().astype(np.int8)
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self) -> tuple:
        """Pickled (with a saved model, in a ``VecNormalize``) as the plain ``Discrete(n, start=start)``: the mask
        belongs to a live environment, which a pickle must not drag along (plain ``pickle`` cannot)."""
        return gym.spaces.Discrete, (int(self.n), None, int(self.start))

    def __copy__(self) -> MaskedDiscrete:
        return MaskedDiscrete(int(self.n), self._masks)

    def __deepcopy__(self, memo: dict) -> MaskedDiscrete:
        """A copy drawing from the mask of the environment's copy when the environment is being deep-copied (a
        deep copy of the environment samples from its own state, not the original's), else from the same
        environment's mask (copying the space alone does not copy the environment). The sampling stream is
        copied."""
        owner = getattr(self._masks, "__self__", None)
        masks = self._masks
        if owner is not None and id(owner) in memo:
            masks = getattr(memo[id(owner)], self._masks.__name__)
        space = MaskedDiscrete(int(self.n), masks)
        if self._np_random is not None:
            space._np_random = copy.deepcopy(self._np_random, memo)
        return space


def check_render_mode(render_mode: object) -> str | None:
    """``render_mode``: None or ``"ansi"`` (``render()`` returns a text picture of the servers and the queue). Any
    other value raises a ``TypeError`` naming it (Gymnasium's convention for an unsupported keyword;
    Stable-Baselines3's ``make_vec_env``, which asks for ``"rgb_array"``, then makes the environment without it)."""
    if render_mode is not None and render_mode != "ansi":
        raise TypeError(f"render_mode={render_mode!r}: msjgym's environments render only as text (valid: None, "
                        "'ansi')")
    return render_mode


def check_num_envs(num_envs: object) -> int:
    """``num_envs``, an integer in [1, :data:`~msjgym.core.limits.MAX_REPS` × 100], or a ValueError naming it (the
    memory the copies take is checked by :func:`check_batch_bytes` once the spec is known)."""
    if isinstance(num_envs, (float, np.floating)):
        num_envs = math.nan  # an int, not 8.0 (Gymnasium's convention)
    return check_number("num_envs", num_envs, 1, MAX_NUM_ENVS, integer=True, error=ValueError,
                        why="copies advanced together, each with its own state")


MAX_NUM_ENVS = 10**7
"""Copies of an environment in one vector environment: each has its own state arrays, allocated up front."""


def check_batch_bytes(batch_type: Any, spec: Any, num_envs: int) -> None:
    """Refuse a vector environment whose state would exceed :data:`~msjgym.core.limits.MAX_STATE_BYTES`, before
    allocating it: the bytes of a batch of 2 copies (built and measured) scaled to ``num_envs``."""
    if num_envs <= 2:
        return
    probe = batch_type(spec, 2)
    per_copy = _state_bytes(probe) / 2
    check_state_bytes(per_copy * num_envs, f"num_envs = {num_envs:,}", error=ValueError,
                      fix="use fewer copies (num_envs) or a smaller system")


def _state_bytes(obj: Any, seen: set[int] | None = None, depth: int = 0) -> int:
    """Bytes of the NumPy arrays reachable from ``obj`` (attributes, dataclass fields, lists, dicts)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if callable(obj):  # code (a compiled step bound to the records, reached from those anyway), not state
        return 0
    if isinstance(obj, dict):
        return sum(_state_bytes(v, seen, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_state_bytes(v, seen, depth + 1) for v in obj)
    fields = getattr(obj, "__dict__", None)
    if fields is None and hasattr(obj, "_fields"):  # a namedtuple
        return sum(_state_bytes(v, seen, depth + 1) for v in obj)
    if fields is None and hasattr(obj, "__slots__"):
        return sum(_state_bytes(getattr(obj, k, None), seen, depth + 1) for k in obj.__slots__)
    return sum(_state_bytes(v, seen, depth + 1) for v in (fields or {}).values())


class BatchedVectorEnv(VectorEnv):
    """``num_envs`` independent copies of a family's environment (same arguments), stepped by one compiled call.

    Autoreset mode NEXT_STEP (Gymnasium's default): the step after a copy's episode ended resets that copy (its action
    is ignored) and returns the new episode's first observation with reward 0 and dt 0. ``reset(seed=s)`` seeds copy
    i from ``SeedSequence(s).spawn(num_envs)[i]``; ``reset()`` without a seed continues the streams (fresh entropy the
    first time). Each copy's allowed actions are in ``action_masks()`` (bool[num_envs, A]) and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each copy's step advanced. ``step`` takes an integer array
    (or list) of shape ``(num_envs,)``, one action per copy (:func:`msjgym.core.actions.check_actions`): anything else
    (floats, bools, a scalar, shape ``(num_envs, 1)``) raises a ``TypeError``; a copy's action out of range raises a
    ``ValueError`` naming the copy, its step, the action and the allowed ones, before any copy is advanced. A copy's
    *masked* action is handled as ``invalid_action`` says (:data:`msjgym.core.actions.INVALID_ACTION_MODES`):
    ``"fallback"`` (default) applies the mask's default action (the highest-numbered allowed one) and sets
    ``infos["fallback"][i]`` (``infos["fallbacks"][i]`` counts them in the episode); ``"raise"`` raises the
    ``ValueError``; ``"penalty"`` falls back and subtracts ``invalid_action_penalty`` (reward units, default 1.0) from
    that copy's reward. A copy being reset ignores its action, which must still be an integer in range. Episodes end
    by truncation, never by termination.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["ansi"],
                                          "render_fps": 1}
    spec_type: ClassVar[Any]
    """The family's spec: ``spec_type.make(*args, **kwargs)`` validates the environment's arguments."""
    batch_type: ClassVar[type[EnvBatch]]
    """The family's batch: ``batch_type(spec, num_envs)``."""

    def __init__(self, num_envs: int = 1, *args: Any, render_mode: str | None = None, invalid_action: str = "fallback",
                 invalid_action_penalty: float = 1.0, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.num_envs = check_num_envs(num_envs)
        self.invalid_action, self.invalid_action_penalty = check_invalid_action(invalid_action, invalid_action_penalty)
        self.spec_ = self.spec_type.make(*args, **kwargs)
        check_batch_bytes(self.batch_type, self.spec_, self.num_envs)
        self._batch = self.batch_type(self.spec_, self.num_envs)
        self.single_observation_space = self.observation_space_of(self.spec_)
        self.single_action_space = gym.spaces.Discrete(self.spec_.action_count)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.spaces.MultiDiscrete(np.full(self.num_envs, self.spec_.action_count))
        self._reset_next = np.ones(self.num_envs, np.bool_)  # copies whose next step resets them
        self._steps = np.zeros(self.num_envs, np.int64)  # steps of each copy's episode so far
        self._copies = np.arange(self.num_envs)
        self._fallback = np.zeros(self.num_envs, np.bool_)  # copies whose last action was replaced
        self._fallbacks = np.zeros(self.num_envs, np.int64)  # replaced actions in each copy's episode so far
        self._seeded = False
        self._started = False  # reset() has run (render draws nothing before)

    @staticmethod
    def observation_space_of(spec: Any) -> gym.spaces.Box:
        """The single observation space for ``spec`` (default: Box(0, inf, (D,), float32))."""
        return gym.spaces.Box(0.0, np.inf, (spec.observation_size,), np.float32)

    @property
    def model(self) -> Any:
        """The system's validated model (``spec_.model``)."""
        return self.spec_.model

    def view(self, observation: np.ndarray) -> Any:
        """The named view of one copy's observation (``obs[i]``; ``spec_.view``, :mod:`msjgym.core.observation`)."""
        return self.spec_.view(observation)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Reset every copy. ``seed`` in every form Gymnasium's ``SyncVectorEnv.reset`` accepts: an int s (copy i
        from ``SeedSequence(s).spawn(num_envs)[i]``, as replication i of ``msjgym evaluate --seed s``); None (the
        streams continue; fresh entropy the first time); a list of ``num_envs`` ints or None, one per copy (copy i
        with seed s_i is the single environment after ``reset(seed=s_i)``; a None copy continues its stream)."""
        self._seed(seed)
        self._started = True
        self._reset_next[:] = True
        self._fallback[:] = False
        self._advance(np.zeros(self.num_envs, np.int64))
        return self._batch.obs.copy(), self._infos()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        values, replaced = resolve_actions(actions, self._batch.masks, self._steps, self._reset_next,
                                           self.invalid_action)
        resetting = self._reset_next.copy()
        truncated = self._advance(values)
        self._fallback[:] = replaced
        self._fallbacks[resetting] = 0
        self._fallbacks += replaced
        rewards = self._batch.rewards.copy()
        if self.invalid_action == "penalty":
            rewards[replaced] -= self.invalid_action_penalty
        return self._batch.obs.copy(), rewards, np.zeros(self.num_envs, np.bool_), truncated, self._infos()

    def render(self) -> str | None:
        """``render_mode="ansi"``: a text picture of each copy's servers and queue (one block per copy); None
        otherwise (:mod:`msjgym.envs.render`)."""
        if self.render_mode != "ansi":
            return None
        if not self._started:
            raise gym.error.ResetNeeded("render() before reset(): there is no state to draw yet; call reset() first")
        from msjgym.envs.render import render_text
        return "\n".join(f"copy {b}: " + render_text(self.spec_, self._batch.obs[b]) for b in range(self.num_envs))

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, A]: each copy's allowed actions now."""
        return self._batch.masks.copy()

    def reset_ended(self) -> tuple[np.ndarray, np.ndarray]:
        """Reset now, rather than at the next step, the copies whose episode ended at the last step (same-step
        autoreset, as Stable-Baselines3 wants; see ``msjgym.envs.to_sb3``). The other copies are not touched.

        Returns their indices and the observations of all copies (theirs: the new episode's first). Their next step
        is then the new episode's first step, exactly as the step after a NEXT_STEP autoreset would be: the
        trajectories are the same, minus the reset step.
        """
        ended = np.flatnonzero(self._reset_next)
        if ended.size:
            self._batch.reset_copies(ended)
        self._reset_next[ended] = False
        self._steps[ended] = 0
        self._fallbacks[ended] = 0
        return ended, self._batch.obs.copy()

    # ------------------------------------------------------------------ internals
    def _seed(self, seed: Any) -> None:
        """Seed the copies as ``reset(seed=seed)`` says (its docstring); a bad seed is a one-line error."""
        n = self.num_envs
        if seed is None:
            if not self._seeded:
                self._batch.seed(np.random.SeedSequence().spawn(n))
        elif _is_seed_int(seed):
            self._batch.seed(np.random.SeedSequence(_seed_int(seed, "seed")).spawn(n))
        elif isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != n:
                raise ValueError(f"seed: a list of {len(seed)} seeds for {n} copies; give one int or None per copy, "
                                 "an int, or None")
            fresh = np.random.SeedSequence() if not self._seeded else None
            states = self._batch.state.rng
            for i, s in enumerate(seed):
                if s is None and fresh is None:
                    continue  # this copy's stream continues
                ss = fresh.spawn(1)[0] if s is None else np.random.SeedSequence(_seed_int(s, f"seed[{i}]")).spawn(1)[0]
                states[i] = rng_states([ss])[0]
        else:
            raise TypeError(f"seed = {show(seed)}: must be an int >= 0, None, or a list of {n} ints >= 0 or None "
                            "(one per copy)")
        self._seeded = True

    def _advance(self, actions: np.ndarray) -> np.ndarray:
        """Step the batch with checked ``actions`` (the copies in ``_reset_next`` are reset instead); returns
        bool[num_envs], the copies whose episode ended at this step."""
        if self._reset_next.any():
            resetting = self._reset_next.copy()
            self._batch.step(np.where(resetting, 0, actions), resetting)
            truncated = self._batch.ended & ~resetting
            self._steps[resetting] = 0
            self._steps[~resetting] += 1
        else:
            self._batch.step(actions, self._reset_next)
            truncated = self._batch.ended.copy()
            self._steps += 1
        self._reset_next[:] = truncated
        return truncated

    def _infos(self) -> dict:
        return {"dt": self._batch.dts.copy(), "action_mask": self._batch.masks.copy(),
                "fallback": self._fallback.copy(), "fallbacks": self._fallbacks.copy()}


def _is_seed_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _seed_int(value: Any, name: str) -> int:
    """``value`` as a seed: an int >= 0 (numpy's SeedSequence takes no negative entropy), else a one-line error."""
    if not _is_seed_int(value):
        raise TypeError(f"{name} = {show(value)}: must be an int >= 0 or None")
    if value < 0:
        raise ValueError(f"{name} = {int(value)}: must be an int >= 0")
    return int(value)


class BatchedEnv(gym.Env):
    """A family's single environment: its vector environment (``vector_type``) with one copy.

    ``reset(seed=s)`` seeds the copy from ``SeedSequence(s).spawn(1)[0]`` (as replication 0 of ``msjgym evaluate``
    with seed s, and copy 0 of the vector environment); ``step(action)`` takes one action — an integer (Python or
    NumPy, or a 0-d integer array) in range — and raises a ``TypeError`` (not an integer: a float, even 2.0, a bool, a
    string, None, or an array of shape (1,): pass an int or a 0-d array) or a ``ValueError`` (out of range) naming the
    step, the value and the allowed actions otherwise (:func:`msjgym.core.actions.action_error`, the same check as the
    vector environment's). An action the mask (``action_masks()``) forbids is handled as ``invalid_action`` says:
    ``"fallback"`` (default: the mask's default action, the highest-numbered allowed one, is applied;
    ``info["fallback"]`` says so and ``info["fallbacks"]`` counts them in the episode), ``"raise"`` (``ValueError``)
    or ``"penalty"`` (fallback, and ``invalid_action_penalty``, in the reward's units, subtracted from the reward).
    ``info["dt"]`` is the time the step advanced. ``render_mode="ansi"``: ``render()`` returns a text picture of the
    servers and the queue.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}  # one picture per decision
    vector_type: ClassVar[type[BatchedVectorEnv]]

    def __init__(self, *args: Any, render_mode: str | None = None, invalid_action: str = "fallback",
                 invalid_action_penalty: float = 1.0, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(render_mode)
        self._venv = self.vector_type(1, *args, invalid_action=invalid_action,
                                      invalid_action_penalty=invalid_action_penalty, **kwargs)
        self.spec_ = self._venv.spec_
        self.observation_space = self._venv.single_observation_space
        self.action_space = MaskedDiscrete(self.spec_.action_count, self.action_masks)
        self._ended = True
        self._fallback, self._fallbacks = False, 0
        self._action = np.zeros(1, np.int64)

    @property
    def model(self) -> Any:
        """The system's validated model (``spec_.model``)."""
        return self.spec_.model

    def view(self, observation: np.ndarray) -> Any:
        """The named view of an observation (``spec_.view``, :mod:`msjgym.core.observation`): e.g.
        ``env.unwrapped.view(obs).waiting``."""
        return self.spec_.view(observation)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is None and not self._venv._seeded:
            seed = int(self.np_random.integers(2**63))
        obs, _ = self._venv.reset(seed=seed) if seed is not None else self._venv.reset()
        self._ended = False
        self._fallback, self._fallbacks = False, 0
        return obs[0], self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._ended:
            raise MsjgymError("step() after the episode ended: call reset() first")
        venv = self._venv
        mask = venv._batch.masks[0]
        mode = venv.invalid_action
        error = action_error(action, mask if mode == "raise" else np.ones_like(mask))
        if error is not None:
            error = action_error(action, mask) or error  # the same error, listing the actions allowed now
            raise type(error)(f"step {venv._steps[0]}: {error}")
        chosen = int(action) if mode == "raise" else fallback_action(action, mask)
        self._fallback = chosen != int(action)
        self._fallbacks += self._fallback
        self._action[0] = chosen
        self._ended = bool(venv._advance(self._action)[0])
        batch = venv._batch
        reward = float(batch.rewards[0])
        if self._fallback and mode == "penalty":
            reward -= venv.invalid_action_penalty
        return batch.obs[0].copy(), reward, False, self._ended, self._info()

    def render(self) -> str | None:
        """``render_mode="ansi"``: a text picture of the servers and the queue now (:mod:`msjgym.envs.render`);
        None otherwise."""
        if self.render_mode != "ansi":
            return None
        if not self._venv._started:
            raise gym.error.ResetNeeded("render() before reset(): there is no state to draw yet; call reset() first")
        from msjgym.envs.render import render_text
        return render_text(self.spec_, self._venv._batch.obs[0])

    @property
    def invalid_action(self) -> str:
        """What a masked action does: "fallback", "raise" or "penalty" (the ``invalid_action`` argument)."""
        return self._venv.invalid_action

    def action_masks(self) -> np.ndarray:
        """bool[A]: the actions allowed now."""
        return self._venv._batch.masks[0].copy()

    def _seed_stream(self, seed: np.random.SeedSequence) -> None:
        """Draw from ``seed`` from the next ``reset()`` (without a seed) on: copy i of a vector environment reset
        with seed s is this environment after ``_seed_stream(SeedSequence(s).spawn(num_envs)[i])``."""
        self._venv._batch.seed([seed])
        self._venv._seeded = True

    def _info(self) -> dict:
        batch = self._venv._batch
        return {"dt": float(batch.dts[0]), "fallback": self._fallback, "fallbacks": self._fallbacks, **batch.info(0)}
