"""``njit``: numba's compiler with on-disk caching that is safe across msjgym's modules.

Numba keys a cached kernel on the source of the file that defines it, but not on the files of the functions it
calls. msjgym's kernels call across modules (the event loop calls the policies' scheduling kernels), so a stale
cache could run old code after an edit or an upgrade. Here every kernel of this package is keyed on one hash of all
the package's source files that touch kernels: a change in any of them recompiles every kernel, once.

Kernels are compiled without numba's reference counting (``_nrt=False``): they cannot allocate, which is the rule
for the event loop anyway, and passing the state record costs no atomic reference-count updates.
"""
from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import numba
from numba.core import caching

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
# In a source checkout (editable install) ``msjgym.policies`` lives in ../policies; installed, it is msjgym/policies.
_POLICIES_DIR = _PACKAGE_DIR / "policies"
if not _POLICIES_DIR.is_dir():
    _POLICIES_DIR = _PACKAGE_DIR.parent / "policies"
_ROOTS = (str(_PACKAGE_DIR) + os.sep, str(_POLICIES_DIR) + os.sep)


def _package_stamp() -> str:
    """Hash of numba's version and of every package source file that mentions ``njit`` (defines kernels)."""
    h = hashlib.sha256(numba.__version__.encode())
    for root in _ROOTS:
        for path in sorted(Path(root).rglob("*.py")) if Path(root).is_dir() else ():
            source = path.read_bytes()
            if b"njit" in source:
                h.update(str(path.relative_to(root)).encode())
                h.update(source)
    return h.hexdigest()


_STAMP = _package_stamp()


class _PackageCacheLocator(caching.InTreeCacheLocator):
    """Cache msjgym's kernels in ``__pycache__``, stamped with the whole package's source hash."""

    def get_source_stamp(self) -> str:
        return _STAMP

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.realpath(py_file).startswith(_ROOTS):
            return None
        return super().from_function(py_func, py_file)


if _PackageCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _PackageCacheLocator)

_UNREADABLE_INDEX = (AttributeError, ImportError, EOFError, TypeError, ValueError, pickle.UnpicklingError)
_numba_load_index = caching.IndexDataCacheFile._load_index


def _load_index(self) -> dict:
    """numba's index loader, except that an index of msjgym's that no longer unpickles (it names a state type of a
    module that an upgrade moved or renamed) is an empty cache, recompiled once, not a crash."""
    try:
        return _numba_load_index(self)
    except _UNREADABLE_INDEX:
        if not os.path.realpath(self._index_path).startswith(_ROOTS):
            raise
        return {}


if getattr(caching.IndexDataCacheFile._load_index, "__module__", "") != __name__:
    caching.IndexDataCacheFile._load_index = _load_index


_CACHE = os.environ.get("MSJGYM_JIT_CACHE", "1") != "0"


def njit(*args, **kwargs):
    """``numba.njit`` with on-disk caching and ``error_model='numpy'`` (no Python exception checks on division).

    Set the environment variable ``MSJGYM_JIT_CACHE=0`` to compile without the cache (to inspect generated code).
    """
    kwargs.setdefault("cache", _CACHE)
    kwargs.setdefault("error_model", "numpy")
    kwargs.setdefault("_nrt", False)
    return numba.njit(*args, **kwargs)
