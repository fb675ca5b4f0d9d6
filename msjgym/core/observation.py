"""Named views of an observation: what a policy of one's own reads instead of offsets.

Every family's spec has ``view(observation)`` (so has every environment: ``env.unwrapped.view(obs)``), which returns
the family's view: a small frozen object over the observation (no copy) whose properties name what it holds, with
their units. Each family's layout — the offsets — is defined once, in ``msjgym.systems.<family>.observation``: the
compiled control layer writes the observation with it and the view reads the observation with it. The flat
observation an RL library sees is unchanged.

    view = spec.view(observation)   # spec: what a policy's constructor receives (env.spec_ in an environment)
    view.waiting                    # e.g. MSJ "start": jobs waiting per class
    print(view)                     # every named property and its value

A view is also what ``render_mode="ansi"`` draws: ``render()`` prints its ``render_lines()`` (each family's view
declares its own picture beside its layout; :func:`server_bar` and :func:`counts_text` are the shared pieces).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


WIDTH = 40
"""The widest server bar of a text picture, in characters."""


def server_bar(busy: float, servers: int, width: int = WIDTH) -> str:
    """``[###.....] busy/servers busy``: ``busy`` of ``servers`` as a bar of at most ``width`` cells (a cell stands
    for several servers when there are more)."""
    cells = min(servers, width)
    filled = int(round(cells * busy / servers)) if servers else 0
    count = f"{busy:g}" if float(busy).is_integer() else f"{busy:.2f}"
    return f"[{'#' * filled}{'.' * (cells - filled)}] {count}/{servers} busy"


def counts_text(values: np.ndarray) -> str:
    """Counts as right-aligned integers, one column each: ``"  3   0  12"``."""
    return " ".join(f"{int(v):>3}" for v in values)


def flat_observation(observation: Any, size: int, layout: str) -> np.ndarray:
    """``observation`` as a read-only 1-D array of ``size`` numbers (the caller's array is not copied), or a
    ValueError naming the expected and the actual shape and the layout (``layout``: e.g. "mode='start', K=2, W=8")."""
    obs = np.asarray(observation)
    if obs.shape != (size,):
        raise ValueError(f"observation of shape {obs.shape}: expected ({size},) for {layout}")
    obs = obs.view()
    obs.flags.writeable = False
    return obs


class ObservationView:
    """A frozen, named view of one observation and the static facts of its layout (the base of every family's view).

    ``observation`` is the (read-only) observation; ``layout`` the family's layout object. A subclass lists its
    named properties in ``fields`` (they make its ``repr``).
    """

    __slots__ = ("layout", "observation")
    fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, observation: Any, layout: Any) -> None:
        object.__setattr__(self, "observation", flat_observation(observation, layout.size, layout.describe()))
        object.__setattr__(self, "layout", layout)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (cannot set {name!r})")

    def render_lines(self) -> list[str]:
        """The text picture of ``render_mode="ansi"`` (:mod:`msjgym.envs.render`), one line per fact, from what the
        agent sees. A family's view overrides it with its own picture; by default, one line per named property."""
        return [f"{name} = {v.tolist() if isinstance(v := getattr(self, name), np.ndarray) else v!r}"
                for name in self.fields]

    def __repr__(self) -> str:
        parts = []
        for name in self.fields:
            value = getattr(self, name)
            parts.append(f"{name}={value.tolist() if isinstance(value, np.ndarray) else value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"
