"""The kernel cache survives an upgrade that moves a module: an index whose pickled types no longer import is an
empty cache (recompiled once), not a crash."""
from __future__ import annotations

import importlib
import json
import pickle
import sys
from pathlib import Path

import pytest

import msjgym.core.jit as jit


class _Index:
    """The part of numba's IndexDataCacheFile that ``_load_index`` reads."""

    def __init__(self, path: Path) -> None:
        self._index_path, self._version, self._source_stamp = str(path), "v1", "stamp"


@pytest.fixture
def stale_index(tmp_path, monkeypatch) -> _Index:
    """An index that pickles an object of a module that no longer exists (as after the module was moved)."""
    module = tmp_path / "msjgym_moved_state.py"
    module.write_text("class State:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    state = importlib.import_module("msjgym_moved_state").State()
    path = tmp_path / "kernel.nbi"
    with path.open("wb") as f:
        pickle.dump("v1", f)
        f.write(pickle.dumps(("stamp", {"signature": state})))
    module.unlink()
    del sys.modules["msjgym_moved_state"]
    return _Index(path)


def test_an_index_naming_a_moved_module_is_an_empty_cache(stale_index, tmp_path, monkeypatch):
    monkeypatch.setattr(jit, "_ROOTS", (str(tmp_path.resolve()) + "/",))
    assert jit._load_index(stale_index) == {}


def test_a_users_index_naming_a_moved_msjgym_module_is_an_empty_cache(tmp_path, monkeypatch):
    """A user's compiled policy, cached in the user's own folder against a msjgym module that has since moved."""
    monkeypatch.setattr(jit, "_ROOTS", ("/no/such/root/",))
    path = tmp_path / "user_policy.nbi"
    with path.open("wb") as f:  # a pickle that imports msjgym.no_such_moved_module when loaded
        pickle.dump("v1", f)
        f.write(pickle.dumps(("stamp", _Ref("msjgym.no_such_moved_module"))))
    assert jit._load_index(_Index(path)) == {}


class _Ref:
    """Pickles as an import of module ``module``, which need not exist when it is loaded."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __reduce__(self):
        import importlib as _il

        return (_il.import_module, (self.module,))


def test_other_packages_keep_numbas_behaviour(stale_index, monkeypatch):
    monkeypatch.setattr(jit, "_ROOTS", ("/no/such/root/",))
    with pytest.raises(ImportError):
        jit._load_index(stale_index)


# ---------------------------------------------------------------- each kernel keyed by its own file and its imports
def _tree_copy(tmp_path: Path, monkeypatch) -> Path:
    """A copy of msjgym's sources (``msjgym/`` and ``policies/``), which ``jit`` keys as if it were the package."""
    import shutil

    root = Path(jit.__file__).resolve().parents[2]
    for name in ("msjgym", "policies"):
        shutil.copytree(root / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.nb?"))
    monkeypatch.setattr(jit, "_PACKAGE_DIR", (tmp_path / "msjgym").resolve())
    monkeypatch.setattr(jit, "_POLICIES_DIR", (tmp_path / "policies").resolve())
    monkeypatch.setattr(jit, "_ROOTS", (str(tmp_path / "msjgym") + "/", str(tmp_path / "policies") + "/"))
    return tmp_path


def _keys(tree: Path) -> dict[str, str]:
    files = sorted((tree / "policies").rglob("*.py")) + sorted((tree / "msjgym" / "systems").rglob("*.py"))
    return {str(f.relative_to(tree)): jit.source_key(f) for f in files}


def test_editing_one_policy_file_changes_that_files_key_only(tmp_path, monkeypatch):
    tree = _tree_copy(tmp_path, monkeypatch)
    before = _keys(tree)
    with (tree / "policies" / "msj" / "fcfs.py").open("a") as f:
        f.write("# an edit\n")
    after = _keys(tree)
    assert [name for name in before if before[name] != after[name]] == ["policies/msj/fcfs.py"]


def test_editing_the_state_layout_changes_the_key_of_every_kernel_compiled_against_it(tmp_path, monkeypatch):
    tree = _tree_copy(tmp_path, monkeypatch)
    before = _keys(tree)
    with (tree / "msjgym" / "systems" / "msj" / "state.py").open("a") as f:
        f.write("# an edit\n")
    after = _keys(tree)
    changed = {name for name in before if before[name] != after[name]}
    for name in ("policies/msj/fcfs.py", "policies/msj/first_fit.py", "msjgym/systems/msj/loop.py",
                 "msjgym/systems/msj/compiled.py"):
        assert name in changed
    assert not any(name.startswith(("policies/dispatch/", "msjgym/systems/dispatch/")) for name in changed)


def test_editing_the_api_module_changes_no_kernels_key(tmp_path, monkeypatch):
    """``api.py`` (the protocols, scenario loading, options) holds no compiled code: an edit of it recompiles no event
    loop, control step, contract or policy (their files import the policy declarations from ``core``)."""
    tree = _tree_copy(tmp_path, monkeypatch)
    before = _keys(tree)
    with (tree / "msjgym" / "api.py").open("a") as f:
        f.write("# an edit\n")
    after = _keys(tree)
    changed = {name for name in before if before[name] != after[name]}
    kernels = {name for name in before if name.startswith("policies/")
               or Path(name).name in ("loop.py", "control.py", "contract.py", "compiled.py", "state.py")}
    assert len(kernels) > 40 and "msjgym/systems/dispatch/contract.py" in kernels
    assert not kernels & changed, sorted(kernels & changed)
    assert "msjgym/systems/msj/family.py" in changed  # a control: a module that imports api is keyed on it


def test_the_key_is_the_stamp_numba_checks_before_loading_a_kernel():
    """numba recompiles a kernel whose index was written under another source stamp: the stamp is the file's key."""
    from msjgym.policies.msj import fcfs, first_fit

    for module, kernel in ((fcfs, fcfs.schedule), (first_fit, first_fit.schedule)):
        assert kernel._cache._cache_file._source_stamp == f"{jit.source_key(module.__file__)}:{module.__name__}"
    assert jit.source_key(fcfs.__file__) != jit.source_key(first_fit.__file__)


@pytest.mark.slow
def test_after_editing_one_policy_file_only_that_policy_compiles(tmp_path):
    """In a copy of the tree with a cache of its own: run fcfs and first-fit, edit fcfs.py, and only fcfs's kernel
    is compiled again (the loop and first-fit load from the cache)."""
    import shutil
    import subprocess

    root = Path(jit.__file__).resolve().parents[2]
    for name in ("msjgym", "policies"):
        shutil.copytree(root / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.nb?"))
    script = ("import msjgym, json\n"
              "from msjgym.core.compiling import pending\n"
              "from msjgym.policies.msj import POLICIES\n"
              "from msjgym.systems.msj import loop\n"
              "from msjgym.systems.msj.contract import KERNELS\n"
              "out = {}\n"
              "for name in ('fcfs', 'first-fit'):\n"
              "    units = KERNELS.units(POLICIES[name], loops=[(loop.run, loop.signature()['run'])])\n"
              "    out[name] = sorted(set(u.label for u in pending(units)))\n"
              "    msjgym.evaluate('one-and-n', name, reps=1, jobs=200, seed=1)\n"
              "print(json.dumps(out))\n")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba"), "MSJGYM_CACHE_DIR": str(tmp_path / "msjgym"), "PATH": ""}

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run() == {"fcfs": ["policy fcfs", "the MSJ event loop"], "first-fit": ["policy first-fit"]}
    assert run() == {"fcfs": [], "first-fit": []}
    with (tmp_path / "policies" / "msj" / "fcfs.py").open("a") as f:
        f.write("# an edit\n")
    assert run() == {"fcfs": ["policy fcfs"], "first-fit": []}


def test_a_helper_compiles_on_its_own_without_a_python_wrapper_is_inlined_and_stays_callable_from_python():
    """``njit(inline="always")``: no CPython wrapper (compiled callers do not use it), marked ``alwaysinline`` in the
    module its callers link in, and a call from Python still works (an uncached twin with a wrapper)."""
    import numba

    from msjgym.core import rng

    assert isinstance(rng.uniform, jit._Helper) and not isinstance(rng.spawn_states, jit._Helper)

    @numba.njit
    def draw(s):
        return rng.uniform(s, 0)

    states = rng.spawn_states(5, 1)[0]
    again = states.copy()
    assert draw(states) == rng.uniform(again, 0)  # compiled caller and Python call: the same draw
    assert (states == again).all()
    cres = next(c for sig, c in rng.uniform.overloads.items() if sig[0] == numba.typeof(states))  # draw's call
    options = rng.uniform.targetoptions
    assert options["no_cpython_wrapper"] and options.get("inline", "never") == "never"
    linked = cres.library._get_module_for_linking().get_function(cres.fndesc.mangled_name)
    assert b"alwaysinline" in next(iter(linked.attributes)).split()  # the function's own attributes come first



def test_a_compile_leaves_the_older_objects_out_of_the_collectors_scans_and_restores_the_freeze_it_found():
    """``compile_units`` freezes the objects that exist before it (``gc.freeze``: the collector does not scan them
    during the compile) and unfreezes them after, unless the program had frozen objects itself: then it leaves the
    program's freeze alone."""
    import gc

    import numba

    from msjgym.core.compiling import Unit, compile_units

    class NullCache:  # compile times are recorded only for a dispatcher with a cache
        pass

    class Recording:
        """A dispatcher stand-in: records the collector's freeze count when asked to compile."""

        def __init__(self) -> None:
            self.overloads, self.py_func, self._cache, self.seen = {}, Recording, NullCache(), []

        def compile(self, signature) -> None:
            self.seen.append(gc.get_freeze_count())

    dispatcher = Recording()
    unit = Unit("a test unit", "test", dispatcher, numba.types.void(numba.types.int64))
    gc.unfreeze()
    compile_units([unit])
    assert dispatcher.seen[-1] > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    mine = gc.get_freeze_count()
    try:
        compile_units([unit])
        assert dispatcher.seen[-1] == mine and gc.get_freeze_count() == mine
    finally:
        gc.unfreeze()
