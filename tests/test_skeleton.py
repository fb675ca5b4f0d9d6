"""Every family has the same skeleton (docs/layout.md): the same file names for the same roles in its folder
``msjgym/systems/<family>/``, found by discovery (every subpackage of msjgym/systems/ with a ``family`` module)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKELETON = ("contract.py", "model.py", "state.py", "loop.py", "control.py", "simulation.py", "env.py", "scenarios.py",
            "scorecard.py", "family.py")
"""The files every family folder has: the policy declaration and what the system and its policies share, validated
parameters, the one state record, the event loop, the environments' decision path, the replications' handle, the
environments, the built-in scenarios, the theory's references, the family object."""


def family_folders(systems: Path = ROOT / "msjgym" / "systems") -> list[Path]:
    return sorted(p for p in systems.iterdir() if (p / "__init__.py").exists() and (p / "family.py").exists())


def missing_files(folder: Path) -> list[str]:
    """The skeleton's files that ``folder`` lacks."""
    return [name for name in SKELETON if not (folder / name).is_file()]


def test_every_family_folder_has_the_skeletons_files() -> None:
    gaps = {p.name: missing_files(p) for p in family_folders() if missing_files(p)}
    assert not gaps, f"family folders without the skeleton's files (docs/layout.md): {gaps}"


def test_the_skeleton_check_can_fail(tmp_path) -> None:
    """A control: a family folder with a differently named loop is caught, a complete one is not."""
    for name, files in (("complete", SKELETON), ("other", ("kernel.py", *SKELETON[:3], *SKELETON[4:]))):
        folder = tmp_path / name
        folder.mkdir()
        for f in ("__init__.py", *files):
            (folder / f).write_text("")
    assert [p.name for p in family_folders(tmp_path)] == ["complete", "other"]
    assert missing_files(tmp_path / "complete") == [] and missing_files(tmp_path / "other") == ["loop.py"]


def policy_words(text: str, names: list[str], allowed: frozenset[str] = frozenset()) -> list[str]:
    """The built-in policy names (``a-b``, ``a_b``, ``a b``) that ``text`` uses as words, but the ``allowed`` ones."""
    words = {w for n in names if n not in allowed for w in (n, n.replace("-", "_"), n.replace("-", " "))}
    return sorted(w for w in words if re.search(rf"(?<![#\w-]){re.escape(w)}(?![\w-])", text.lower()))


NOT_ONLY_POLICIES = frozenset({"random", "push", "pull"})
"""Names that are also words of the systems themselves: "random" (streams, sampling) and dispatch's push and pull,
which are information models of the system (the estimates it keeps and updates at probes) as well as dispatchers."""


def test_every_familys_state_module_names_no_policy() -> None:
    """What one policy keeps is declared in its own file (a policy-owned area of the record), never in ``state.py``."""
    from msjgym import api
    from msjgym.core.policy_registry import registered

    found = {}
    for fam in api.families():
        state = ROOT / "msjgym" / "systems" / type(fam).__module__.split(".")[2] / "state.py"
        if state.is_file():
            words = policy_words(state.read_text(encoding="utf-8"), list(registered(fam.name)), NOT_ONLY_POLICIES)
            if words:
                found[fam.name] = words
    assert not found, f"state.py names policies: {found}"
    assert policy_words("# C_F: jobs in the front (ServerFilling's, server-filling)", ["server-filling"]) == \
        ["server-filling"]  # the check can fail
