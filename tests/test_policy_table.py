"""The docs' table of multiserver-job policies (docs/families/msj.md) names every built-in (a new policy gets its row
and source)."""
from __future__ import annotations

import re
from pathlib import Path

from msjgym.policies.msj import POLICIES

PAGE = Path(__file__).resolve().parents[1] / "docs" / "families" / "msj.md"


def test_every_builtin_msj_policy_has_a_row() -> None:
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    named = {name for line in rows for name in re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])}
    missing = sorted(set(POLICIES) - named)
    assert not missing, f"docs/families/msj.md policy table: no row for {missing}"
