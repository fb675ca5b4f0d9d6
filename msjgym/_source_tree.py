"""``msjgym.policies`` when msjgym is imported from a source checkout rather than from an installed copy.

The built-in policies live in the repository's top-level ``policies/`` folder, which pyproject's ``package-dir``
installs as ``msjgym.policies``. An installed copy (``pip install .``) has ``msjgym/policies/``, and an editable install
(``pip install -e .``) maps the name with setuptools' finder; but Python run from the repository root (``python -c
"import msjgym"``, ``python examples/x.py`` from there puts its own folder first) imports the checkout's ``msjgym/``, next
to which ``policies/`` sits. :func:`install` then adds a finder, consulted before every other, that maps the one name
``msjgym.policies`` to that folder; its subpackages are then found through its ``__path__`` as usual. Before, not
after: with an editable install of another checkout, setuptools' finder would otherwise hand this ``msjgym`` the
other checkout's policies.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).resolve().parent
POLICIES = PACKAGE.parent / "policies"


class SourcePolicies(importlib.abc.MetaPathFinder):
    """Finds ``msjgym.policies`` in the checkout's ``policies/`` folder (and nothing else)."""

    def find_spec(self, name: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != "msjgym.policies":
            return None
        return importlib.util.spec_from_file_location(name, POLICIES / "__init__.py",
                                                      submodule_search_locations=[str(POLICIES)])


def install() -> None:
    """Put :class:`SourcePolicies` first in ``sys.meta_path`` when this ``msjgym`` is a source checkout's (no
    ``msjgym/policies`` beside it, a ``policies/`` package next to it); once."""
    if (PACKAGE / "policies").exists() or not (POLICIES / "__init__.py").is_file():
        return
    if not any(isinstance(finder, SourcePolicies) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourcePolicies())
