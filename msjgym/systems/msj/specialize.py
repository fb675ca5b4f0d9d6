"""The MSJ event loop compiled for one policy, so that a run compiles its own policy's kernels and nothing else.

:mod:`msjgym.systems.msj.loop` is written once, with its policy hooks (``schedule``, ``schedule_call``,
``on_arrival``, ``on_departure``) imported on one marked line. For a policy, :func:`loop_for` writes a copy of that
file whose marked line instead defines the hooks as calls of the policy's kernels, and imports it: numba inlines
them into that copy's loop, and caches the compiled loop per file. Generating a *file* (rather than a closure) is what
keeps numba's on-disk cache working (see :mod:`msjgym.policies._codegen`).

* A built-in policy's loop is ``msjgym/systems/msj/_gen_loop_<name>.py`` (ignored by git). Its text is a function of
  msjgym's sources, which :mod:`msjgym.core.jit` hashes into every kernel's cache key.
* A compiled policy of the user's (:mod:`msjgym.systems.msj.compiled`) gets its loop in the user's cache folder
  (:func:`user_cache_dir`), in a file named after a hash of msjgym's sources and of the policy's file, so an edit of
  either compiles afresh and an unchanged policy loads from numba's cache.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from msjgym.policies import _codegen
from msjgym.systems.msj import loop as _template

MARK = "# POLICY HOOKS"
"""The comment that ends the line of :mod:`msjgym.systems.msj.loop` importing the policy hooks."""

_LOADED: dict[str, ModuleType] = {}


def render(hooks: list[str], title: str) -> str:
    """The template's text with its marked line replaced by ``hooks`` (lines of source), headed by ``title``."""
    text = Path(_template.__file__).read_text()
    lines = text.splitlines()
    marked = [i for i, line in enumerate(lines) if line.endswith(MARK)]
    if len(marked) != 1:
        raise RuntimeError(f"{_template.__file__}: expected one line ending with {MARK!r}")
    i = marked[0]
    return "\n".join([f"# {title}", *lines[:i], *hooks, *lines[i + 1:]]) + "\n"


def hook_source(schedule: str, on_arrival: str | None, on_departure: str | None, imports: list[str]) -> list[str]:
    """Source lines defining the four hooks as the calls given (``None``: nothing to do)."""
    return [
        *imports,
        "", "", "@njit(inline=\"always\")", "def schedule(st, pr, b):", f"    {schedule}",
        "", "", "@njit", "def schedule_call(st, pr, b):", "    schedule(st, pr, b)",
        "", "", "@njit(inline=\"always\")", "def on_arrival(st, pr, b, j):", f"    {on_arrival or 'pass'}",
        "", "", "@njit(inline=\"always\")", "def on_departure(st, pr, b, c):", f"    {on_departure or 'pass'}",
    ]


def loop_for(policy) -> ModuleType:
    """The event-loop module (``run``, ``force_arrival``, ``force_completion``) for an MSJ policy declaration:
    the template itself for a policy without a kernel (an agent decides), a generated copy otherwise."""
    if getattr(policy, "compiled", None) is not None:
        return user_loop(policy.compiled)
    if policy.schedule is None:
        return _template
    policy.kernel_id  # a PolicyError unless the kernel is the discovered built-in's  # noqa: B018
    slug = policy.name.replace("-", "_")
    if slug in _LOADED:
        return _LOADED[slug]
    imports = _codegen.Imports()
    hooks = {hook: None if getattr(policy, hook) is None else imports.call(getattr(policy, hook), args)
             for hook, args in (("schedule", "st, pr, b"), ("on_arrival", "st, pr, b, j"),
                                ("on_departure", "st, pr, b, c"))}
    text = render(hook_source(hooks["schedule"], hooks["on_arrival"], hooks["on_departure"], imports.lines()),
                  f"the event loop of the built-in policy {policy.name} ({policy.schedule.py_func.__module__})")
    module = _codegen.load(f"msjgym.systems.msj._gen_loop_{slug}",
                           Path(_template.__file__).with_name(f"_gen_loop_{slug}.py"), text)
    _LOADED[slug] = module
    return module


def user_cache_dir() -> Path:
    """Where the loops of the user's compiled policies are written: ``$MSJGYM_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/msjgym`` (``~/.cache/msjgym``); the system's temporary folder if that is not writable."""
    root = os.environ.get("MSJGYM_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msjgym")
    path = Path(root) / "loops"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError:
        path = Path(tempfile.gettempdir()) / f"msjgym-loops-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        path.mkdir(parents=True, exist_ok=True)
    return path


def user_loop(compiled) -> ModuleType:
    """The event-loop module for a compiled policy of the user's (a
    :class:`msjgym.systems.msj.compiled.CompiledPolicy`), written to :func:`user_cache_dir`."""
    from msjgym.core.jit import _STAMP
    from msjgym.systems.msj import compiled as api

    digest = hashlib.sha256("\0".join([_STAMP, compiled.fingerprint()]).encode()).hexdigest()[:16]
    slug = "".join(ch if ch.isalnum() else "_" for ch in compiled.name)[:40]
    name = f"_msjgym_loop_{slug}_{digest}"
    if name in _LOADED:
        return _LOADED[name]
    key = api.register_kernel(name, compiled)
    imports = ["from msjgym.systems.msj.compiled import registered_kernel as _registered_kernel",
               f"_user_kernel = _registered_kernel({key!r})"]
    text = render(hook_source(f"_user_kernel(SystemView(st, pr, b, {bool(compiled.preemptive)}))", None, None,
                              [*imports, "from msjgym.systems.msj.compiled import SystemView"]),
                  f"the event loop of the compiled policy {compiled.name!r} from {compiled.source}")
    text = f"{_codegen.MARKER}: do not edit (msjgym.systems.msj.specialize.user_loop)\n{text}"
    path = user_cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != text:
        _codegen._write(path, text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _LOADED[name] = module
    return module
