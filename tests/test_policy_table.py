"""The docs' table of multiserver-job policies (docs/families/msj.md) names every built-in: the hand-written rows,
and a row written from the declaration for a policy that has none (the ``docs/_ext/policy_rows.py`` hook the site
is built with), so a new policy file is on the page without editing it."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from msjgym.core import policy_registry
from msjgym.policies.msj import POLICIES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "families" / "msj.md"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import policy_rows  # noqa: E402  (the mkdocs hook, a plain module)


def test_every_builtin_msj_policy_has_a_row_on_the_built_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert policy_rows.MARKER.search(text), "docs/families/msj.md: the policy table lost its '<!-- policy rows: msj -->'"
    missing = sorted(set(POLICIES) - policy_rows.named(policy_rows.render(text)))
    assert not missing, f"docs/families/msj.md policy table: no row for {missing}"


def test_a_policy_without_a_hand_written_row_gets_one_from_its_declaration(monkeypatch) -> None:
    """A control: a policy the page does not name is missing before the hook and named after it, with its source."""
    new = replace(POLICIES["fcfs"], name="brand-new", source="A. Author, 'A paper', §1")
    monkeypatch.setitem(policy_registry._REGISTRY, "msj", {**POLICIES, "brand-new": new})
    text = PAGE.read_text(encoding="utf-8")
    assert "brand-new" not in policy_rows.named(text)
    rendered = policy_rows.render(text)
    assert "brand-new" in policy_rows.named(rendered) and "A. Author, 'A paper', §1" in rendered
    assert policy_rows.named(text) <= policy_rows.named(rendered)  # the hand-written rows stay
