"""Every family has the same skeleton (docs/layout.md): the same file names for the same roles in its folder
``msjgym/systems/<family>/``, found by discovery (every subpackage of msjgym/systems/ with a ``family`` module)."""
from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.xfail(strict=False, reason="the families' folders are being restructured into the one skeleton")
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
