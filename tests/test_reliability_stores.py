"""Reliability, results stores: a damaged or foreign ``results.sqlite`` is one line, for sweep and plot
alike (one check, in :class:`msjgym.evaluate.store.ResultStore`), and a foreign file is never written to."""
from __future__ import annotations

import sqlite3

import pytest

from msjgym.cli import main
from msjgym.errors import MsjgymError
from msjgym.evaluate.store import ResultStore

SWEEP = ["sweep", "one-and-n", "--grid", "servers=4", "--policy", "fcfs", "--reps", "1", "--jobs", "1000",
         "--workers", "1", "--no-progress"]


def _foreign(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.commit()
    db.close()


def _tables(path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    finally:
        db.close()


@pytest.mark.parametrize("kind, fragment", [("text", "not a results file of msjgym sweep"),
                                            ("foreign", "other tables (notes)")])
def test_sweep_refuses_a_damaged_or_foreign_store_in_one_line(tmp_path, capsys, kind, fragment):
    """Issue: "A damaged or foreign `results.sqlite` (e.g. a text file named results.sqlite, or an SQLite file with
    other tables) makes `sweep` raise a raw `sqlite3` error" (a foreign file even got msjgym's table added)."""
    store = tmp_path / "results.sqlite"
    if kind == "text":
        store.write_text("not a database\n")
    else:
        _foreign(store)
    status = main([*SWEEP, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith(f"msjgym: error: --out {str(store)!r}: ") and fragment in err
    if kind == "text":
        assert store.read_text() == "not a database\n"
    else:
        assert _tables(store) == ["notes"]  # untouched: no tasks table added beside the user's


def test_plot_shares_the_check(tmp_path, capsys):
    """Issue: "`plot` already handles it cleanly — see how, and share that code rather than writing it twice"."""
    store = tmp_path / "results.sqlite"
    _foreign(store)
    status = main(["plot", str(tmp_path), "--x", "servers", "--y", "response_time"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "RESULTS" in err and "other tables (notes)" in err
    assert _tables(store) == ["notes"]


def test_the_store_refuses_a_foreign_tasks_table_and_a_folder(tmp_path):
    db = sqlite3.connect(tmp_path / "other.sqlite")
    db.execute("CREATE TABLE tasks (a)")
    db.commit()
    db.close()
    with pytest.raises(MsjgymError, match="its table 'tasks' is not msjgym's"):
        ResultStore(tmp_path / "other.sqlite")
    (tmp_path / "results.sqlite").mkdir()
    with pytest.raises(MsjgymError, match="is a folder"):
        ResultStore(tmp_path / "results.sqlite")
    ResultStore(tmp_path / "fresh" / "results.sqlite").close()  # a new store is still created, with its folder
    assert _tables(tmp_path / "fresh" / "results.sqlite") == ["tasks"]
