"""The one check of a discrete action, for every environment and every policy of a user.

An action is an integer — a Python ``int`` or a NumPy integer, or a 0-d integer array — in ``0 .. A-1`` and allowed
by the current mask (``bool[A]``). Anything else is refused with a one-line error naming the value and what is valid:
a ``TypeError`` for a value that is not an integer (a float, even 2.0; a ``bool``; a string; an array of shape (1,)),
a ``ValueError`` for an integer out of range or masked. Nothing is rounded or clipped: a wrong action is never
silently fixed.
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
        return TypeError(f"{value!r} ({type(value).__name__}) is not an action: actions are integers (int or a NumPy "
                         f"integer) in 0..{count - 1}; allowed now: {allowed(mask)}")
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


def allowed(mask: np.ndarray) -> list[int]:
    """The allowed actions, as a list (for messages)."""
    return np.flatnonzero(mask).tolist()
