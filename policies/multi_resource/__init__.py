"""The built-in multi-resource scheduling policies (family ``multi-resource``), one declaration per policy.

``POLICIES`` holds every module-level :class:`~msjgym.systems.multi_resource.contract.MultiResourcePolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`). Each policy's kernels are compiled on
first use and plugged into the event loop (MSJ's, on this family's record: :mod:`msjgym.systems.multi_resource.loop`).
"""
from __future__ import annotations

from msjgym.policies import discover
from msjgym.systems.multi_resource.contract import MultiResourcePolicy

POLICIES: dict[str, MultiResourcePolicy] = discover(__name__, "multi-resource")
"""Every built-in multi-resource policy, by name, in discovery order (modules by name, declarations in order)."""

__all__ = ["MultiResourcePolicy", "POLICIES"]
