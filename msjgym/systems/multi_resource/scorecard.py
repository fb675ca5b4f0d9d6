"""The theory's references for a multi-resource run: none yet (the capacity region and its verdict come with
:mod:`msjgym.theory.multi_resource`). With one resource on one node the model is MSJ's, but this family's policies
are its own, so MSJ's references (named by MSJ's policies) are not borrowed."""
from __future__ import annotations

from typing import Any

from msjgym.core.references import Reference


def references(model: Any, policy: Any, saturated: bool = False) -> list[Reference]:
    """The references of ``policy`` on ``model``: none yet."""
    return []
