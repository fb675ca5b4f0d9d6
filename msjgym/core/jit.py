"""``njit``: numba's compiler with on-disk caching that is safe across msjgym's modules.

Numba keys a cached kernel on the source of the file that defines it, but not on the files of the functions it
calls. msjgym's kernels call across modules (the event loop calls the policies' scheduling kernels), so a stale
cache could run old code after an edit or an upgrade. Here every kernel of this package is keyed on a hash of all of
the package's source files together: any change anywhere recompiles everything, once.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba.core import caching

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def _package_stamp() -> str:
    h = hashlib.sha256(numba.__version__.encode())
    for path in sorted(Path(_PACKAGE_ROOT).rglob("*.py")):
        h.update(str(path.relative_to(_PACKAGE_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


_STAMP = _package_stamp()


class _PackageCacheLocator(caching.InTreeCacheLocator):
    """Cache msjgym's kernels in ``__pycache__``, stamped with the whole package's source hash."""

    def get_source_stamp(self) -> str:
        return _STAMP

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.realpath(py_file).startswith(_PACKAGE_ROOT):
            return None
        return super().from_function(py_func, py_file)


if _PackageCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _PackageCacheLocator)


def njit(*args, **kwargs):
    """``numba.njit`` with ``cache=True`` and ``error_model='numpy'`` (no Python exception checks on division)."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("error_model", "numpy")
    return numba.njit(*args, **kwargs)
