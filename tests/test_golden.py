"""Nothing a user measured changed: every built-in scenario × policy gives the metrics recorded before the
refactor (``tests/golden/golden.json``), bit for bit, with the same events, references and errors; and every family
prints the same top-level JSON keys."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import msjgym
from msjgym.evaluate.result import JSON_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
import record  # noqa: E402

GOLDEN = record.load()


@pytest.mark.parametrize("command", list(GOLDEN))
def test_the_same_numbers_as_before_the_refactor(command: str) -> None:
    new = record.run(command)
    assert record.differences(record.expected(GOLDEN, command), new) == []
    if new["status"] == 0:
        assert tuple(new["json"]) == JSON_KEYS
        assert all(set(m) == {"mean", "ci95"} for m in new["json"]["metrics"].values())


def test_every_builtin_scenario_of_every_family_is_covered() -> None:
    """The runs above include a successful one of every built-in scenario, so every family's JSON is checked."""
    ran = {c.split()[1] for c in GOLDEN if record.expected(GOLDEN, c)["status"] == 0}
    assert {name for name, _ in msjgym.list_scenarios()} <= ran
    assert {msjgym.api.family_of(name).name for name in ran} == {f.name for f in msjgym.api.families()}
