"""Nothing a user measured changed: every built-in scenario × policy gives the metrics recorded before the
refactor (``tests/golden/golden.json``), bit for bit, with the same events, references and errors."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
import record  # noqa: E402

GOLDEN = record.load()


@pytest.mark.parametrize("command", list(GOLDEN))
def test_the_same_numbers_as_before_the_refactor(command: str) -> None:
    assert record.differences(record.expected(GOLDEN, command), record.run(command)) == []


def test_every_family_prints_the_same_top_level_keys() -> None:
    from msjgym.evaluate.result import JSON_KEYS

    ran = [record.run(c) for c in GOLDEN if c.startswith("evaluate")][::7]
    families = {r["json"]["family"] for r in ran if r["status"] == 0}
    assert families == {"msj", "loss", "dispatch", "finite-skip"}
    assert all(tuple(r["json"]) == JSON_KEYS for r in ran if r["status"] == 0)
