"""Gymnasium environments over msjgym's systems, and the runners that evaluate any policy like a built-in one.

Gymnasium is a core dependency: ``import msjgym`` registers every environment, and ``gym.make`` works for every id
with a plain ``pip install msjgym`` (Stable-Baselines3 and torch, the ``rl`` extra, are needed only to train, for
``to_sb3`` and ``sb3:MODEL.zip``). A family's environment module (``msjgym/systems/<family>/env.py``, or a module
of this package, on the batched base of :mod:`msjgym.envs.base`) declares ``ENVS = [EnvRegistration(...)]``, and
:func:`register` registers what the modules declare; their public names (``__all__``) are importable from
``msjgym.envs``. Adding a family's environment is its ``env.py``: nothing here names a family.
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = ["register", "registrations"]

_REGISTRATIONS: list[Any] = []


def _env_modules() -> list[str]:
    """Every public module of this package, then every family's ``msjgym.systems.<family>.env``, by name."""
    names = [f"{__name__}.{i.name}" for i in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
             if not i.name.startswith("_") and not i.ispkg]
    systems = Path(__file__).resolve().parent.parent / "systems"
    for info in sorted(pkgutil.iter_modules([str(systems)]), key=lambda m: m.name):
        if info.ispkg and (systems / info.name / "env.py").is_file():
            names.append(f"msjgym.systems.{info.name}.env")
    return names


def _discover() -> None:
    """Import every environment module (:func:`_env_modules`); collect its ``ENVS`` and export its ``__all__``."""
    for name in _env_modules():
        module = importlib.import_module(name)
        _REGISTRATIONS.extend(getattr(module, "ENVS", []))
        for name in getattr(module, "__all__", []):
            if name in vars(module):  # not the names a module defines on first use (SB3's classes)
                globals()[name] = vars(module)[name]
                __all__.append(name)


def registrations() -> list[Any]:
    """Every environment the env modules declare (``EnvRegistration``: id, entry points, family)."""
    return list(_REGISTRATIONS)


def register() -> None:
    """Register every declared environment (single and native vector entry points) with Gymnasium (idempotent)."""
    for reg in _REGISTRATIONS:
        if reg.id not in gym.registry:
            gym.register(id=reg.id, entry_point=reg.entry_point, vector_entry_point=reg.vector_entry_point)


_discover()
register()
