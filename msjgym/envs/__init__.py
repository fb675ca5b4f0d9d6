"""Gymnasium environments over msjgym's systems, and the runners that evaluate any policy like a built-in one.

Gymnasium is a core dependency: ``import msjgym`` registers every environment, and ``gym.make`` works for every id
with a plain ``pip install msjgym`` (Stable-Baselines3 and torch, the ``rl`` extra, are needed only to train, for
``to_sb3`` and ``sb3:MODEL.zip``). Each env module of this package (one per family, on the batched base of
:mod:`msjgym.envs.base`) declares ``ENVS = [EnvRegistration(...)]``, and :func:`register` registers what the modules
declare; their public names (``__all__``) are importable from ``msjgym.envs``. Adding a family's environment is one new
module here.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import gymnasium as gym

__all__ = ["register", "registrations"]

_REGISTRATIONS: list[Any] = []


def _discover() -> None:
    """Import every public module of this package; collect its ``ENVS`` and export its ``__all__``."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
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
