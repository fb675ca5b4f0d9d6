"""The README's table of multiserver-job policies names every built-in (a new policy gets its row and source)."""
from __future__ import annotations

import re
from pathlib import Path

from msjgym.policies.msj import POLICIES

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_builtin_msj_policy_has_a_row() -> None:
    rows = [line for line in README.read_text().splitlines() if line.startswith("| `")]
    named = {name for line in rows for name in re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])}
    missing = sorted(set(POLICIES) - named)
    assert not missing, f"README policy table: no row for {missing}"
