"""The API reference (docs/reference/, rendered by mkdocstrings) documents every public module of msjgym.

A module is public when no component of its dotted name starts with ``_`` (so ``__main__`` and
``msjgym._source_tree`` are not). The modules are found by walking the installed package
(``pkgutil.walk_packages``, which imports packages but no policy kernel, so nothing compiles), and
``msjgym.policies`` on its own: pyproject maps it to the top-level ``policies/`` folder. A new module therefore fails here
until a ``::: dotted.name`` block for it is added to a page of ``docs/reference/`` (and that page is in mkdocs.yml's
nav); a block naming a module that no longer exists fails too.
"""
from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import msjgym
import msjgym.policies

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
BLOCK = re.compile(r"^:::\s+([\w.]+)\s*$", re.MULTILINE)


def public_modules() -> set[str]:
    # msjgym.policies is walked on its own: in an editable install it is not under msjgym.__path__ (pyproject maps
    # it to policies/), so walking msjgym alone would miss it.
    names = {"msjgym", "msjgym.policies"}
    for package in (msjgym, msjgym.policies):
        names |= {m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")}
    return {name for name in names if not any(part.startswith("_") for part in name.split("."))}


def documented_modules() -> dict[str, str]:
    """``{dotted name: page}`` of every ``::: name`` block in docs/reference/."""
    found: dict[str, str] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for name in BLOCK.findall(page.read_text(encoding="utf-8")):
            assert name not in found, f"{name} is documented twice: {found[name]} and {page.name}"
            found[name] = page.name
    return found


def test_every_public_module_is_in_the_api_reference() -> None:
    modules = public_modules()
    assert {"msjgym.api", "msjgym.policies.msj.fcfs", "msjgym.systems.msj.compiled"} <= modules, "walk is broken"
    missing = sorted(modules - set(documented_modules()))
    assert not missing, ("public modules missing from the API reference; add a '::: NAME' line to a page of "
                         "docs/reference/:\n" + "\n".join(missing))


def test_the_api_reference_names_only_existing_public_modules() -> None:
    modules = public_modules()
    stale = sorted(f"{name} ({page})" for name, page in documented_modules().items() if name not in modules)
    assert not stale, "docs/reference/ documents modules that do not exist (or are private):\n" + "\n".join(stale)


def test_every_reference_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    unlisted = [page.name for page in sorted(REFERENCE.glob("*.md")) if f"reference/{page.name}" not in nav]
    assert not unlisted, f"docs/reference/ pages missing from mkdocs.yml's nav: {unlisted}"
