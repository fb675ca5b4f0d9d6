"""``njit``: numba's compiler with on-disk caching keyed on a kernel's own file and the files it compiles against.

numba keys a cached kernel on the source of the file that defines it, but not on the files of the functions it
calls (a kernel inlines the state layout of ``systems/<family>/state.py``, the helpers of ``policies/<family>/common.py``,
...), so an edit of one of those could run stale code. Here a kernel of msjgym (a file of the package, of its
``policies`` folder, or a user's policy file registered with :func:`register_source`) is keyed on

* numba's version,
* the content of its own file, and
* the content of every module of msjgym that file imports at module level, transitively (found by parsing its
  ``import`` / ``from`` statements; package ``__init__`` files are followed only where a statement names the package
  itself, not where it names a submodule).

So an edit of ``policies/msj/fcfs.py`` recompiles fcfs's kernels only; an edit of ``systems/msj/state.py`` recompiles
every kernel that imports it; nothing is keyed on a hash of the whole package. A family needs nothing of its own
here.

Where the kernels are cached: ``$NUMBA_CACHE_DIR`` when set; else, for a file of an installed package (under a
``site-packages`` or ``dist-packages`` folder or one of the interpreter's ``sysconfig`` library paths, see
:func:`installed`) or a read-only folder, ``$MSJGYM_CACHE_DIR/numba`` (by default ``~/.cache/msjgym/numba``), in a
subfolder named by the hash of the source's folder, so two installs never share files and an upgraded install's
kernels are told apart by their key; else (a source checkout, a user's policy file) the ``__pycache__`` beside the
source, where Python keeps its bytecode too. Nothing is written into an installed package: pip removes only the
files it recorded, so cache files left there would keep a folder ``msjgym/`` of ``__pycache__`` folders that a later
``pip install -e .`` finds first, as a namespace package, shadowing the editable install. An index that no longer
unpickles (an upgrade moved a type it names) is an empty cache, recompiled once, not a crash.

A helper of compiled code (``njit(inline="always")``) is compiled on its own, without a CPython wrapper, and inlined
into its callers by LLVM, not by numba; a few lines of glue (``njit(inline="glue")``) are inlined by numba instead
(:func:`njit`).

Kernels are compiled without numba's reference counting (``_nrt=False``): they cannot allocate, which is the rule
for the event loop anyway, and passing the state record costs no atomic reference-count updates.

This module and :mod:`msjgym.core.plug` use private classes and attributes of numba (listed and checked at import in
:mod:`msjgym.core.numba_hooks`; what each is for: docs/compile-machinery.md); numba is pinned to the tested range.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import pickle
import site
import sysconfig
import tempfile
from pathlib import Path

from msjgym.core import numba_hooks

numba_hooks.check()  # the numba internals patched below are there, or one line saying how to fix it

import numba  # noqa: E402
from numba.core import caching, config  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
# In a source checkout (editable install) ``msjgym.policies`` lives in ../policies; installed, it is msjgym/policies.
# Resolved: a symlink msjgym/policies -> ../policies must still match the real paths of the kernels' files.
_POLICIES_DIR = (_PACKAGE_DIR / "policies").resolve()
if not _POLICIES_DIR.is_dir():
    _POLICIES_DIR = _PACKAGE_DIR.parent / "policies"
_ROOTS = (str(_PACKAGE_DIR) + os.sep, str(_POLICIES_DIR) + os.sep)
_REGISTERED: set[str] = set()


def cache_dir() -> Path:
    """msjgym's own cache folder (compile-time records; kernels of a read-only install): ``$MSJGYM_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/msjgym`` (``~/.cache/msjgym``); a folder of the system's temporary directory if that is
    not writable."""
    root = os.environ.get("MSJGYM_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msjgym")
    path = Path(root)
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        path = Path(tempfile.gettempdir()) / f"msjgym-cache-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        path.mkdir(parents=True, exist_ok=True)
    return path


_INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


@functools.lru_cache(maxsize=None)
def _install_roots() -> tuple[str, ...]:
    """The interpreter's library folders (``sysconfig``'s purelib and platlib, ``site``'s folders), resolved."""
    roots = {sysconfig.get_paths().get(key) for key in ("purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    roots.add(getattr(site, "USER_SITE", None))
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


def installed(py_file: str | os.PathLike) -> bool:
    """Whether ``py_file`` belongs to an installed package (a file under a ``site-packages`` or ``dist-packages``
    folder, or under the interpreter's library folders): its kernels are cached in :func:`cache_dir`, never beside it."""
    real = os.path.realpath(py_file)
    if real.startswith(_install_roots()):
        return True
    return not _INSTALL_FOLDERS.isdisjoint(Path(real).parts[:-1])


def register_source(path: str | os.PathLike) -> None:
    """Key the kernels of the file ``path`` (a user's compiled policy) like msjgym's own: on its content and the
    msjgym modules it imports, cached beside it (or in :func:`cache_dir`)."""
    _REGISTERED.add(os.path.realpath(path))


def _ours(py_file: str) -> bool:
    real = os.path.realpath(py_file)
    return real.startswith(_ROOTS) or real in _REGISTERED


# ---------------------------------------------------------------- the key: a file and what it imports
def _module_file(name: str) -> str | None:
    """The source file of the msjgym module ``name`` (``msjgym.policies.*`` in the policies folder), or None."""
    return _module_file_in(name, _PACKAGE_DIR, _POLICIES_DIR)


@functools.lru_cache(maxsize=None)
def _module_file_in(name: str, package: Path, policies: Path) -> str | None:
    parts = name.split(".")
    if parts[0] != "msjgym":
        return None
    if len(parts) > 1 and parts[1] == "policies":
        base, rest = policies, parts[2:]
    else:
        base, rest = package, parts[1:]
    path = base.joinpath(*rest)
    for candidate in (path.with_suffix(".py") if rest else None, path / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return str(candidate.resolve())
    return None


def _package_of(path: str) -> str | None:
    """The dotted package a file of msjgym belongs to (for relative imports); None outside msjgym."""
    p = Path(path)
    for root, prefix in ((_POLICIES_DIR, "msjgym.policies"), (_PACKAGE_DIR, "msjgym")):
        try:
            rel = p.resolve().relative_to(root)
        except ValueError:
            continue
        return ".".join([prefix, *rel.parent.parts])
    return None


@functools.lru_cache(maxsize=None)
def _direct_imports(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """The msjgym source files that ``path`` imports at module level (memoized per version of the file)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    try:
        tree = ast.parse(_import_lines(text))
    except (SyntaxError, ValueError):  # a docstring line starting with "from " or "import ": parse the whole file
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return ()
    package = _package_of(path)
    found: list[str] = []

    def add(name: str) -> None:
        file = _module_file(name)
        if file is not None and file != path:
            found.append(file)

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    if package is None:
                        continue
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                for alias in node.names:  # ``from pkg import mod`` names a module; ``from mod import x`` a value
                    sub = _module_file(f"{base}.{alias.name}")
                    if sub is not None:
                        add(f"{base}.{alias.name}")
                    else:
                        add(base)
            elif isinstance(node, (ast.If, ast.Try)):  # module-level ``if`` / ``try`` blocks import at module level
                walk(node.body)
                walk(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)
                walk(getattr(node, "finalbody", []))

    walk(tree.body)
    return tuple(dict.fromkeys(found))


def _import_lines(text: str) -> str:
    """The module-level ``import`` / ``from`` statements of a source (those starting a line, with their continuation
    lines), as a small source of their own: parsing only these keeps keying every kernel cheap at import."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("import ", "from ")):
            stmt = [line]
            depth = line.count("(") - line.count(")")
            while (depth > 0 or stmt[-1].rstrip().endswith("\\")) and i + 1 < len(lines):
                i += 1
                stmt.append(lines[i])
                depth += lines[i].count("(") - lines[i].count(")")
            out.extend(stmt)
        i += 1
    return "\n".join(out) + "\n"


def _stat(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def dependencies(path: str | os.PathLike) -> list[str]:
    """``path`` and every msjgym source file it imports at module level, transitively (sorted after ``path``)."""
    start = os.path.realpath(path)
    hit = _DEPS.get(start)
    if hit is not None and all(_stat_or_none(f) == st for f, st in hit):
        return [f for f, _ in hit]
    found = _walk(start)
    _DEPS[start] = tuple((f, _stat_or_none(f)) for f in found)
    return found


_DEPS: dict[str, tuple] = {}


def _stat_or_none(path: str) -> tuple[int, int] | None:
    try:
        return _stat(path)
    except OSError:
        return None


def _walk(start: str) -> list[str]:
    seen = {start}
    todo = [start]
    while todo:
        current = todo.pop()
        try:
            deps = _direct_imports(current, *_stat(current))
        except OSError:
            continue
        for dep in deps:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return [start, *sorted(seen - {start})]


_KEYS: dict[str, tuple[tuple, str]] = {}


def source_key(path: str | os.PathLike) -> str:
    """The cache key of the kernels defined in ``path``: numba's version, the file's content and the content of the
    msjgym files it imports, transitively (:func:`dependencies`)."""
    files = dependencies(path)
    version = tuple((f, *_stat(f)) if os.path.exists(f) else (f,) for f in files)
    hit = _KEYS.get(files[0])
    if hit is not None and hit[0] == version:
        return hit[1]
    h = hashlib.sha256(numba.__version__.encode())
    for file in files:
        h.update(b"\0" + _display(file).encode() + b"\0")
        try:
            h.update(_file_hash(file, *_stat(file)))
        except OSError:
            h.update(b"<unreadable>")
    _KEYS[files[0]] = (version, h.hexdigest())
    return _KEYS[files[0]][1]


@functools.lru_cache(maxsize=None)
def _file_hash(path: str, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(Path(path).read_bytes()).digest()


def _display(file: str) -> str:
    """A file's name in the key, independent of where the tree is (a copy of the tree shares its keys)."""
    for root, prefix in ((_POLICIES_DIR, "policies"), (_PACKAGE_DIR, "msjgym")):
        try:
            return f"{prefix}/{Path(file).relative_to(root).as_posix()}"
        except ValueError:
            continue
    return Path(file).name


# ---------------------------------------------------------------- numba's cache, with that key
class _Keyed:
    """Mixin: the source stamp is :func:`source_key`, for msjgym's files and the registered ones only."""

    def get_source_stamp(self) -> str:
        # and the module's name: compiled code refers to its module by name (a user's file is loaded under one)
        return f"{source_key(self._py_file)}:{self._module}"

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _ours(py_file):
            return None
        self = super().from_function(py_func, py_file)
        if self is not None:
            self._module = getattr(py_func, "__module__", "")
        return self


class _UserProvided(_Keyed, caching.UserProvidedCacheLocator):
    """``$NUMBA_CACHE_DIR`` (a sandbox, a benchmark's fresh cache)."""


class _InTree(_Keyed, caching.InTreeCacheLocator):
    """The ``__pycache__`` beside the source file, unless the file is :func:`installed`."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if installed(py_file):
            return None
        return super().from_function(py_func, py_file)


class _MsjgymWide(_Keyed, caching.UserWideCacheLocator):
    """An installed package or a read-only folder: ``cache_dir()/numba/<folder>_<sha1 of the folder's path>``."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = str(cache_dir() / "numba" / self.get_suitable_cache_subpath(py_file))


for _cls in reversed((_UserProvided, _InTree, _MsjgymWide)):
    if not any(c.__name__ == _cls.__name__ and c.__module__ == __name__ for c in caching.CacheImpl._locator_classes):
        caching.CacheImpl._locator_classes.insert(0, _cls)

_UNREADABLE_INDEX = (AttributeError, ImportError, EOFError, TypeError, ValueError, pickle.UnpicklingError)
_numba_load_index = caching.IndexDataCacheFile._load_index


def _load_index(self) -> dict:
    """numba's index loader, except that an index that no longer unpickles because of msjgym is an empty cache,
    recompiled once, not a crash: an index of msjgym's (it names a state type of a module that an upgrade moved or
    renamed), or any index, a user's compiled policy's included, whose missing module is one of msjgym's (the user's
    file cached against a msjgym module that has since moved)."""
    try:
        return _numba_load_index(self)
    except _UNREADABLE_INDEX as exc:
        where = os.path.realpath(self._index_path)
        ours = where.startswith((*_ROOTS, str(cache_dir()), os.path.realpath(config.CACHE_DIR or os.sep) + os.sep))
        missing = getattr(exc, "name", None) or ""
        if not (ours or missing == "msjgym" or missing.startswith("msjgym.")):
            raise
        return {}


if getattr(caching.IndexDataCacheFile._load_index, "__module__", "") != __name__:
    caching.IndexDataCacheFile._load_index = _load_index


_CACHE = os.environ.get("MSJGYM_JIT_CACHE", "1") != "0"


class _Helper(CPUDispatcher):
    """A helper of compiled code (``njit(inline="always")``): compiled without a CPython wrapper, which compiled
    callers never use (for a helper taking the state record, building it cost about a third of the event loop's
    compile). A call from Python goes to a twin compiled with the wrapper, uncached (a test or a check calling a
    helper directly)."""

    def add_overload(self, cres) -> None:
        """Each compiled (or cache-loaded) version: marked ``alwaysinline`` in the module its callers link in."""
        super().add_overload(cres)
        module = cres.library._get_module_for_linking()
        for fn in module.functions:
            if fn.name == cres.fndesc.mangled_name and not fn.is_declaration:
                if not any(b"alwaysinline" in attrs for attrs in fn.attributes):
                    fn.add_function_attribute("alwaysinline")

    def __call__(self, *args, **kwargs):
        twin = self.__dict__.get("_python_twin")
        if twin is None:
            options = {k: v for k, v in self.targetoptions.items()
                       if k not in ("no_cpython_wrapper", "no_cfunc_wrapper")}
            twin = self.__dict__["_python_twin"] = numba.jit(**options)(self.py_func)
        return twin(*args, **kwargs)


def njit(*args, **kwargs):
    """``numba.njit`` with on-disk caching and ``error_model='numpy'`` (no Python exception checks on division).

    ``inline="always"`` marks a helper of compiled code. msjgym does not pass it on to numba, whose inlining of its
    intermediate representation is slow to compile (it made the MSJ event loop's ``run`` 31 CPU-s to compile, 11
    without); instead the helper is compiled on its own (cached, shared by every caller), without a CPython
    wrapper, and marked ``alwaysinline`` so that LLVM inlines it into each caller (``benchmarks/bench_events.py``:
    the same events/s). A helper stays callable from Python (an uncached twin with a wrapper compiles on the first
    such call).

    ``inline="glue"`` marks a few lines of glue between helpers (a transition that only calls helpers, a record of
    row views): numba inlines its intermediate representation into each caller, so it is never compiled on its own
    (compiled alone, each such function cost about 0.2-0.4 s of CPU on a first run: its own typing, lowering, LLVM
    optimization and machine code, all of which its caller then did again).

    Set the environment variable ``MSJGYM_JIT_CACHE=0`` to compile without the cache (to inspect generated code).
    """
    kwargs.setdefault("cache", _CACHE)
    kwargs.setdefault("error_model", "numpy")
    kwargs.setdefault("_nrt", False)
    inline = kwargs.pop("inline", None)
    if inline == "glue":
        kwargs["inline"] = "always"  # numba's own inlining of the function's IR into each caller
        return numba.njit(*args, **kwargs)
    helper = inline == "always"
    if helper:
        kwargs["no_cpython_wrapper"] = True
        kwargs["no_cfunc_wrapper"] = True
        if not args or not callable(args[0]):  # @njit(inline="always") or with a signature
            return lambda fn: _as_helper(numba.njit(*args, **kwargs)(fn))
        return _as_helper(numba.njit(*args, **kwargs))
    return numba.njit(*args, **kwargs)


def _as_helper(dispatcher):
    dispatcher.__class__ = _Helper
    return dispatcher


def cached(dispatcher, signature=None) -> bool:
    """Whether ``dispatcher`` is ready without compiling: compiled in this process (for ``signature``, or for any
    signature when None), or held by numba's on-disk cache for these sources; False when unknown."""
    overloads = getattr(dispatcher, "overloads", {})
    if signature is None and overloads:
        return True
    if signature is not None and tuple(signature.args) in overloads:
        return True
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:
        return False
    try:
        index = cache_file._load_index()
        if signature is None:
            return bool(index)
        return cache._index_key(signature, dispatcher.targetctx.codegen()) in index
    except Exception:  # numba's internals moved: say nothing rather than guess
        return False
