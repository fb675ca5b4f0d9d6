"""Gymnasium environments over msjgym's systems, and the runners that evaluate any policy like a built-in one.

Gymnasium is a core dependency: ``import msjgym`` registers every environment, and ``gym.make`` works for every id
with a plain ``pip install msjgym`` (Stable-Baselines3 and torch, the ``rl`` extra, are needed only to train, for
``to_sb3`` and ``sb3:MODEL.zip``). Each env module of this package (one per family, on the batched base of
:mod:`msjgym.envs.base`) declares ``ENVS = [EnvRegistration(...)]``, and :func:`register` registers what the modules
declare; their public names (``__all__``) are importable from ``msjgym.envs``. A family's environment may instead live in
its own folder, as ``msjgym/systems/<family>/env.py``: it is found there the same way.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = ["register", "registrations"]

_REGISTRATIONS: list[Any] = []
_RL_EXTRA = ("torch", "stable_baselines3", "sb3_contrib")
"""The packages of the optional ``rl`` extra: a module of this package that needs one is skipped without it (the
environments themselves need none of them)."""


def _env_modules() -> list[str]:
    """The public modules of this package, then every family's environment module (``msjgym.systems.<family>.env``:
    a family keeps its environment in its own folder)."""
    import msjgym.systems

    names = [f"{__name__}.{info.name}" for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
             if not info.name.startswith("_") and not info.ispkg]
    for info in sorted(pkgutil.iter_modules(msjgym.systems.__path__), key=lambda m: m.name):
        if info.ispkg and importlib.util.find_spec(f"msjgym.systems.{info.name}.env") is not None:
            names.append(f"msjgym.systems.{info.name}.env")
    return names


def _training_helper(name: str) -> bool:
    """Whether module ``name`` imports a package of the ``rl`` extra at its top level: a training helper (its own
    imports load torch, seconds of start-up), imported by whoever uses it, never by discovery."""
    origin = importlib.util.find_spec(name).origin
    tree = ast.parse(Path(origin).read_text(encoding="utf-8"))
    for node in tree.body:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(m.split(".")[0] in _RL_EXTRA for m in modules):
            return True
    return False


def _discover() -> None:
    """Import every environment module (:func:`_env_modules`) but the training helpers (:func:`_training_helper`);
    collect its ``ENVS`` and export its ``__all__``."""
    for name in _env_modules():
        if _training_helper(name):
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a training helper of the optional rl extra, without that extra
            if exc.name not in _RL_EXTRA:
                raise
            continue
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
