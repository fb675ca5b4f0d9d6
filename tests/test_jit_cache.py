"""The kernel cache survives an upgrade that moves a module: an index whose pickled types no longer import is an
empty cache (recompiled once), not a crash."""
from __future__ import annotations

import importlib
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


def test_other_packages_keep_numbas_behaviour(stale_index, monkeypatch):
    monkeypatch.setattr(jit, "_ROOTS", ("/no/such/root/",))
    with pytest.raises(ImportError):
        jit._load_index(stale_index)
