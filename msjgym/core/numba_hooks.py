"""The numba internals msjgym's compile machinery relies on, in one list, checked when msjgym compiles anything.

:mod:`msjgym.core.jit` (cache keys, cache locations, helpers inlined by LLVM), :mod:`msjgym.core.plug` (records by
reference, calls of a kernel at its address) and :mod:`msjgym.core.fast_call` (argument types checked by fingerprint)
use some of numba's private classes and attributes: they replace cache-locator classes, patch the cache-index loader,
read a compiled function's LLVM module and address, emit calls through numba's calling convention, and fingerprint
arguments. numba may move any of them in a release, so ``pyproject.toml`` pins numba to the tested range
:data:`TESTED`, and :func:`check` (run when :mod:`msjgym.core.jit` is imported) turns a missing one into one line
saying what is missing and how to fix it, instead of an ``AttributeError`` deep in a compile. What each hook is for:
docs/compile-machinery.md.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from msjgym.errors import MsjgymError

TESTED = ">=0.68,<0.69"
"""The numba versions the hooks below are tested with (``pyproject.toml`` requires the same)."""


@dataclass(frozen=True)
class Hook:
    """One private name of numba that msjgym uses.

    Attributes:
        module: the numba module that holds it. name: a dotted attribute path from the module (``Cache._index_key``);
            a name set on instances is checked among the names its class's ``__init__`` assigns (``init=True``).
        user: the msjgym module that uses it, and how.
        init: check the last component among the attribute names of the ``__init__`` of the class before it.
    """

    module: str
    name: str
    user: str
    init: bool = False

    def present(self) -> bool:
        try:
            obj = importlib.import_module(self.module)
        except ImportError:
            return False
        *path, last = self.name.split(".")
        for part in path:
            obj = getattr(obj, part, None)
            if obj is None:
                return False
        if self.init:
            init = getattr(obj, "__init__", None)
            return last in getattr(getattr(init, "__code__", None), "co_names", ())
        return hasattr(obj, last)


HOOKS = (
    # msjgym.core.jit: the cache
    Hook("numba.core.caching", "CacheImpl._locator_classes", "jit: msjgym's cache locators are inserted first"),
    Hook("numba.core.caching", "UserProvidedCacheLocator", "jit: subclassed ($NUMBA_CACHE_DIR, keyed by msjgym)"),
    Hook("numba.core.caching", "InTreeCacheLocator", "jit: subclassed (`__pycache__` beside the source)"),
    Hook("numba.core.caching", "UserWideCacheLocator", "jit: subclassed (an installed package's cache folder)"),
    Hook("numba.core.caching", "UserWideCacheLocator.get_suitable_cache_subpath", "jit: the per-install folder"),
    Hook("numba.core.caching", "UserWideCacheLocator._cache_path", "jit: set to msjgym's cache folder", init=True),
    Hook("numba.core.caching", "InTreeCacheLocator._py_file", "jit: the source file keyed", init=True),
    Hook("numba.core.caching", "_CacheLocator.get_source_stamp", "jit: overridden with the source key"),
    Hook("numba.core.caching", "_CacheLocator.from_function", "jit: overridden (msjgym's files only)"),
    Hook("numba.core.caching", "IndexDataCacheFile._load_index", "jit: patched (an unreadable index is empty)"),
    Hook("numba.core.caching", "IndexDataCacheFile._index_path", "jit: where the index is", init=True),
    Hook("numba.core.dispatcher", "Dispatcher._cache", "jit.cached: a dispatcher's cache", init=True),
    Hook("numba.core.caching", "Cache._cache_file", "jit.cached: the dispatcher's cache file", init=True),
    Hook("numba.core.caching", "Cache._index_key", "jit.cached: a signature's key in the index"),
    Hook("numba.core.config", "CACHE_DIR", "jit: $NUMBA_CACHE_DIR"),
    # msjgym.core.jit: helpers compiled alone and inlined by LLVM
    Hook("numba.core.registry", "CPUDispatcher", "jit: subclassed by the helper dispatcher"),
    Hook("numba.core.dispatcher", "Dispatcher.add_overload", "jit: overridden (mark each version alwaysinline)"),
    Hook("numba.core.dispatcher", "Dispatcher.targetoptions", "jit: a helper's Python twin", init=True),
    Hook("numba.core.codegen", "CPUCodeLibrary._get_module_for_linking", "jit: the module callers link in"),
    Hook("numba.core.funcdesc", "FunctionDescriptor.mangled_name", "jit: the helper's function", init=True),
    Hook("numba.core.cpu", "CPUTargetOptions._nrt", "jit: kernels compiled without reference counting"),
    Hook("numba.core.cpu", "CPUTargetOptions.no_cpython_wrapper", "jit: helpers without a CPython wrapper"),
    Hook("numba.core.cpu", "CPUTargetOptions.no_cfunc_wrapper", "jit: helpers without a cfunc wrapper"),
    # msjgym.core.plug: records by reference, calls at an address
    Hook("numba.core.codegen", "JITCodeLibrary.get_pointer_to_function", "plug.address: a kernel's address"),
    Hook("numba.core.funcdesc", "FunctionDescriptor.llvm_func_name", "plug.address: the kernel's symbol"),
    Hook("numba.core.callconv", "CPUCallConv.get_function_type", "plug.call: the callee's type"),
    Hook("numba.core.callconv", "CPUCallConv.call_function", "plug.call: the call, with its status"),
    Hook("numba.core.callconv", "CPUCallConv.return_status_propagate", "plug.call: an exception propagates"),
    Hook("numba.core.types", "StarArgTuple.from_types", "plug.call: the arguments' types"),
    Hook("numba.core.cgutils", "gep_inbounds", "plug: a field of a record by reference"),
    Hook("numba.core.cgutils", "alloca_once", "plug.ref: the record's slot"),
    Hook("numba.core.cgutils", "unpack_tuple", "plug.call: the arguments"),
    Hook("numba.core.cgutils", "if_unlikely", "plug.call: the error branch"),
    Hook("numba.core.imputils", "impl_ret_borrowed", "plug: a field read from a record by reference"),
    # msjgym.core.fast_call: compiled functions called from Python with their typing done once
    Hook("numba._dispatcher", "compute_fingerprint", "fast_call: the type key of an argument"),
)
"""Every private name of numba that :mod:`msjgym.core.jit`, :mod:`msjgym.core.plug` and :mod:`msjgym.core.fast_call`
use."""


def missing(hooks: tuple[Hook, ...] = HOOKS) -> list[Hook]:
    """The hooks the installed numba lacks."""
    return [h for h in hooks if not h.present()]


def problem(hooks: tuple[Hook, ...] = HOOKS) -> str | None:
    """One line saying what the installed numba lacks and how to fix it; None when it has every hook."""
    gone = missing(hooks)
    if not gone:
        return None
    import numba

    first = gone[0]
    more = f" (and {len(gone) - 1} more)" if len(gone) > 1 else ""
    return (f"numba {numba.__version__} lacks {first.module}.{first.name}{more}, which msjgym's compile machinery "
            f"uses ({first.user}; docs/compile-machinery.md): pip install 'numba{TESTED}'")


def check(hooks: tuple[Hook, ...] = HOOKS) -> None:
    """Raise a one-line ``MsjgymError`` (:func:`problem`) when the installed numba lacks a hook."""
    line = problem(hooks)
    if line is not None:
        raise MsjgymError(line)
