"""``render_mode="ansi"``: a text picture of a system's servers and queue, drawn from the observation's named view.

Every environment's ``render()`` returns :func:`render_text` of its current observation (what the agent sees, so the
picture shows exactly the agent's information: exact counts where the observation has them, fractions or estimates
where it has those). The picture is the family's: each family's view (``spec.view(observation)``, defined beside its
environment in ``msjgym/systems/<family>/``) draws itself in ``render_lines()`` (one line per fact; servers as a bar,
:func:`msjgym.core.observation.server_bar`). This module names no family.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["render_text"]


def render_text(spec: Any, observation: np.ndarray | dict) -> str:
    """The text picture of one observation of the environment whose spec is ``spec`` (lines joined by newlines): its
    view's ``render_lines()`` (:meth:`msjgym.core.observation.ObservationView.render_lines`)."""
    return "\n".join(spec.view(observation).render_lines())
