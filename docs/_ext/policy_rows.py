"""mkdocs hook: a family page's policy table gets a row for every built-in policy it has no hand-written row for.

A family page (``docs/families/<family>.md``) keeps hand-written rows for its policies (parameters, sources, links to
modelling choices) and ends its table with ``<!-- policy rows: <family> -->``. At build time the marker becomes one
row per policy of the family's registry (``msjgym.core.policy_registry.registered``) that no row names yet, written
from the policy's declaration (name, preemptive, parameters, source, summary), so a new policy file is on its page
without editing it (``tests/test_policy_table.py`` reads :func:`render`). Wired in ``mkdocs.yml`` (``hooks:``).
"""
from __future__ import annotations

import re
from typing import Any

MARKER = re.compile(r"<!-- policy rows: ([\w-]+) -->")


def named(markdown: str) -> set[str]:
    """The policy names in the first column of the page's table rows (``| `name` | ...``)."""
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    return {name for line in rows for name in re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])}


def row(policy: Any) -> str:
    """One table row written from a policy's declaration."""
    params = "; ".join(f"`{p.name}`: {p.description} (default {p.default})" for p in policy.params)
    return (f"| `{policy.name}` | {'yes' if policy.preemptive else 'no'} | {params} | "
            f"{policy.source} ({policy.summary}) |")


def render(markdown: str) -> str:
    """The page with each marker replaced by the rows its family's registry has and the page lacks."""
    def rows(match: re.Match) -> str:
        from msjgym.core.policy_registry import registered

        have = named(markdown)
        return "\n".join(row(p) for name, p in registered(match.group(1)).items() if name not in have)

    return MARKER.sub(rows, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return render(markdown) if MARKER.search(markdown) else markdown
