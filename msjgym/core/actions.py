"""The one check of a discrete action, for every environment and every policy of a user.

An action is an integer — a Python ``int`` or a NumPy integer, or a 0-d integer array — in ``0 .. A-1`` and allowed
by the current mask (``bool[A]``). Anything else is refused with a one-line error naming the value and what is valid:
a ``TypeError`` for a value that is not an integer (a float, even 2.0; a ``bool``; a string; None; an array of shape
(1,): pass an int or a 0-d array), a ``ValueError`` for an integer out of range or masked. Nothing is rounded or
clipped: a wrong *type* or range is never silently fixed. A *masked* integer action is handled as the environment's
``invalid_action`` argument says (:data:`INVALID_ACTION_MODES`, :func:`resolve_actions`): by default it is replaced by
the mask's default action (:func:`fallback_action`: the highest-numbered allowed one) and counted, so that any RL
library runs; ``"raise"`` raises the ``ValueError`` below (for debugging); ``"penalty"`` replaces it and subtracts a
penalty from the step's reward.

A vector environment's actions (:func:`check_actions`) are one such action per copy: an integer array (or list) of
shape ``(num_envs,)`` exactly — not a scalar, not ``(num_envs, 1)``, not floats or bools — each in range, and allowed by
its copy's mask (a copy being reset ignores its action, but it must still be an integer in range).

A finite-skip policy's decision is not a discrete action but a vector of service rates (:func:`rates_error`): one
finite, non-negative number per job, each at most what that job can use, summing to at most the capacity 1.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def action_error(value: Any, mask: np.ndarray) -> TypeError | ValueError | None:
    """The error for ``value`` as an action under ``mask`` (bool[A]), or None when it is a valid action."""
    count = mask.size
    integer = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not integer and isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
        integer = True
    if not integer:
        hint = ""
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            hint = f" (an array of shape {value.shape} is not an action: pass an int or a 0-d array)"
        return TypeError(f"{_short(value)} ({type(value).__name__}) is not an action: actions are integers (int or a "
                         f"NumPy integer) in 0..{count - 1}; allowed now: {allowed(mask)}{hint}")
    action = int(value)
    if not 0 <= action < count:
        return ValueError(f"action {action} is not allowed: out of range 0..{count - 1}; allowed now: "
                          f"{allowed(mask)}")
    if not mask[action]:
        return ValueError(f"action {action} is not allowed now; valid actions: {allowed(mask)}")
    return None


def check_action(value: Any, mask: np.ndarray, where: str = "") -> int:
    """``value`` as an int if it is a valid action under ``mask``; else its ``action_error``, prefixed by ``where``
    (e.g. ``"step 3: "``)."""
    error = action_error(value, mask)
    if error is not None:
        raise type(error)(f"{where}{error}")
    return int(value)


def check_actions(values: Any, masks: np.ndarray, steps: np.ndarray, resetting: np.ndarray) -> np.ndarray:
    """The vector environment's actions ``values`` as int64[B], checked against ``masks`` (bool[B, A]): one
    ``TypeError`` unless ``values`` is an integer array (or list) of shape (B,), else the first copy's error from
    :func:`check_action` prefixed ``"env b, step s: "`` (``steps[b]``). Copies in ``resetting`` are reset instead of
    stepped: their action is only checked to be an integer in range (their mask is the ended episode's)."""
    envs, count = masks.shape
    array = np.asarray(values) if isinstance(values, (np.ndarray, list, tuple)) else None
    if (array is None or array.shape != (envs,) or not np.issubdtype(array.dtype, np.integer)
            or array.dtype == np.bool_):
        got = "" if array is None else f" (shape {array.shape}, dtype {array.dtype})"
        raise TypeError(f"actions {_short(values)}{got}: must be an integer array of {envs} actions, one per copy: "
                        f"shape ({envs},), each in 0..{count - 1} (not floats or bools, not a scalar, not shape "
                        f"({envs}, 1))")
    inside = (array >= 0) & (array < count)  # compared in the array's own dtype: a huge uint64 does not wrap
    index = np.where(inside, array, 0).astype(np.int64)
    ok = inside & (masks[np.arange(envs), index] | resetting)
    if not ok.all():
        b = int(np.flatnonzero(~ok)[0])
        check_action(array[b], masks[b], f"env {b}, step {steps[b]}: ")
    return index


INVALID_ACTION_MODES = ("fallback", "raise", "penalty")
"""What an environment does with a masked action (its ``invalid_action`` argument): ``"fallback"`` (default) takes
the mask's default action instead (:func:`fallback_action`) and counts it in ``info``; ``"raise"`` raises
``ValueError``; ``"penalty"`` falls back and subtracts ``invalid_action_penalty`` from the step's reward."""


def check_invalid_action(mode: Any, penalty: Any) -> tuple[str, float]:
    """``(mode, penalty)`` validated: ``mode`` one of :data:`INVALID_ACTION_MODES`, ``penalty`` a finite number >= 0
    (in the reward's units); a ``ValueError`` naming the argument otherwise."""
    if not isinstance(mode, str) or mode not in INVALID_ACTION_MODES:
        raise ValueError(f"invalid_action = {mode!r}: must be one of {', '.join(map(repr, INVALID_ACTION_MODES))}")
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float, np.integer, np.floating)) \
            or not np.isfinite(penalty) or penalty < 0:
        raise ValueError(f"invalid_action_penalty = {penalty!r}: must be a finite number >= 0 (in the reward's units)")
    return mode, float(penalty)


def resolve_actions(values: Any, masks: np.ndarray, steps: np.ndarray, resetting: np.ndarray,
                    mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The actions to apply (int64[B]) and which were replaced (bool[B]), for a vector environment whose
    ``invalid_action`` is ``mode``. Types, shape and range are always checked (:func:`check_actions`'s errors);
    a masked action raises with ``"raise"`` and is replaced by its copy's :func:`fallback_action` otherwise (a copy
    being reset ignores its action and is never counted as replaced)."""
    if mode == "raise":
        return check_actions(values, masks, steps, resetting), np.zeros(masks.shape[0], np.bool_)
    try:
        index = check_actions(values, np.ones_like(masks), steps, resetting)
    except ValueError:  # an action out of range: the message lists the copy's allowed actions, not all of them
        array = np.asarray(values)
        b = int(np.flatnonzero((array < 0) | (array >= masks.shape[1]))[0])
        check_action(array[b], masks[b], f"env {b}, step {steps[b]}: ")
        raise
    envs = masks.shape[0]
    replaced = ~masks[np.arange(envs), index] & ~resetting
    for b in np.flatnonzero(replaced):
        index[b] = fallback_action(int(index[b]), masks[b])
    return index, replaced


def rates_error(value: Any, caps: np.ndarray, total: float = 1.0, tol: float = 1e-9) -> TypeError | ValueError | None:
    """The error for ``value`` as a vector of service rates for N = ``caps.size`` jobs, or None when it is valid: a
    1-d sequence or array of N real numbers (not bools, strings or None), each finite, >= 0 and at most ``caps[j]``
    (what job j can use), summing to at most ``total`` (the capacity). ``tol``: relative slack for rounding."""
    count = caps.size
    try:
        array = np.asarray(value)
    except Exception:  # a ragged or otherwise unconvertible value
        array = None
    if array is None or array.ndim != 1 or array.dtype.kind not in "iuf" or isinstance(value, (str, bytes)):
        return TypeError(f"{_short(value)} ({type(value).__name__}) is not a rate vector: expected {count} service "
                         f"rates, one per job present in arrival order (a list or 1-d array of numbers)")
    if array.size != count:
        return ValueError(f"{array.size} rates for {count} jobs present: expected one rate per job")
    rates = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(rates) | (rates < 0.0))
    if bad.size:
        j = int(bad[0])
        return ValueError(f"rate[{j}] = {float(rates[j])!r}: every rate must be a finite number >= 0")
    over = np.flatnonzero(rates > caps * (1.0 + tol) + tol)
    if over.size:
        j = int(over[0])
        return ValueError(f"rate[{j}] = {float(rates[j])!r}: job {j} can use at most {float(caps[j])!r} of the "
                          "capacity")
    if rates.sum() > total * (1.0 + tol):
        return ValueError(f"rates sum to {float(rates.sum())!r}: the capacity is {total!r} (rates are fractions of "
                          "it)")
    return None


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters (for messages)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def allowed(mask: np.ndarray) -> list[int]:
    """The allowed actions, as a list (for messages)."""
    return np.flatnonzero(mask).tolist()


def fallback_action(value: Any, mask: np.ndarray) -> int:
    """``value`` if ``mask`` allows it, else the mask's default action, the highest-numbered allowed one: the rule of
    every environment's ``invalid_action="fallback"`` (and of :class:`msjgym.envs.wrappers.MaskFallback`, and of
    evaluating a model trained without masks): "wait" / "commit" in ``msjgym/MSJ-v0`` and ``msjgym/FiniteSkip-v0``
    (always allowed), the widest allowed width in ``msjgym/AdaptiveLoss-v0``, the highest level that has a server in
    ``msjgym/Dispatch-v0``. ``value`` must still be an
    integer action in range (``TypeError`` / ``ValueError`` as :func:`action_error`); ``ValueError`` if the mask allows
    nothing."""
    error = action_error(value, np.ones(mask.shape, dtype=bool))
    if error is not None:
        raise error
    allowed_now = np.flatnonzero(mask)
    if allowed_now.size == 0:
        raise ValueError("the action mask allows no action")
    action = int(value)
    return action if mask[action] else int(allowed_now[-1])
