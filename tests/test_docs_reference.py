"""The API reference (docs/reference/, rendered by mkdocstrings) documents every public module of msjgym.

A module is public when no component of its dotted name starts with ``_`` (so ``__main__`` and
``msjgym._source_tree`` are not). The modules are found by walking the installed package
(``pkgutil.walk_packages``, which imports packages but no policy kernel, so nothing compiles), and
``msjgym.policies`` on its own: pyproject maps it to the top-level ``policies/`` folder. The pages of each family's
two folders are generated at build time from package discovery (``docs/_ext/reference_pages.py``, an mkdocs hook,
read here through the same functions), so a family's module is documented without a hand-written page; a new shared
module fails here until a ``::: dotted.name`` block for it is added to a page of ``docs/reference/`` (and that page is
in mkdocs.yml's nav); a block naming a module that no longer exists fails too.
"""
from __future__ import annotations

import importlib.util
import pkgutil
import re
from pathlib import Path

import msjgym
import msjgym.policies
from msjgym import api

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
BLOCK = re.compile(r"^:::\s+([\w.]+)\s*$", re.MULTILINE)
_spec = importlib.util.spec_from_file_location("reference_pages", ROOT / "docs" / "_ext" / "reference_pages.py")
pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)
"""The mkdocs hook that generates the families' pages (it imports no msjgym module)."""


def public_modules() -> set[str]:
    # msjgym.policies is walked on its own: in an editable install it is not under msjgym.__path__ (pyproject maps
    # it to policies/), so walking msjgym alone would miss it.
    names = {"msjgym", "msjgym.policies"}
    for package in (msjgym, msjgym.policies):
        names |= {m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")}
    return {name for name in names if not any(part.startswith("_") for part in name.split("."))}


def reference_pages() -> dict[str, str]:
    """``{page name: markdown}``: the hand-written pages of docs/reference/ and the generated ones."""
    hand = {page.name: page.read_text(encoding="utf-8") for page in sorted(REFERENCE.glob("*.md"))}
    generated = {Path(path).name: text for path, (_, _, text) in pages.family_pages().items()}
    clash = set(hand) & set(generated)
    assert not clash, f"docs/reference/: hand-written pages where generated ones go (delete them): {sorted(clash)}"
    return hand | generated


def documented_modules() -> dict[str, str]:
    """``{dotted name: page}`` of every ``::: name`` block in docs/reference/ (hand-written or generated)."""
    found: dict[str, str] = {}
    for page, text in reference_pages().items():
        for name in BLOCK.findall(text):
            assert name not in found, f"{name} is documented twice: {found[name]} and {page}"
            found[name] = page
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


def _nav_pages(items: list) -> list[str]:
    out = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_reference_page_is_in_the_nav() -> None:
    """Each hand-written page is in mkdocs.yml's nav; each generated page is in the nav the hook builds from it."""
    import yaml

    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    unlisted = [page.name for page in sorted(REFERENCE.glob("*.md")) if f"reference/{page.name}" not in text]
    assert not unlisted, f"docs/reference/ pages missing from mkdocs.yml's nav: {unlisted}"
    assert "docs/_ext/reference_pages.py" in yaml.safe_load(text)["hooks"]
    nav = _nav_pages(pages.reference_nav(yaml.safe_load(text)["nav"]))
    assert set(pages.family_pages()) <= set(nav) and len(nav) == len(set(nav))


def test_every_family_has_generated_pages() -> None:
    """Discovery, not a list: each subpackage of msjgym/systems/ and of policies/ has its page, with a block for
    each of its public modules (a control: the MSJ family's compiled-policy module is on its page)."""
    generated = pages.family_pages()
    for family in api.families():
        folder = type(family).__module__.split(".")[-2]
        if type(family).__module__.startswith("msjgym.systems."):
            assert f"reference/systems-{folder.replace('_', '-')}.md" in generated, family.name
    assert "::: msjgym.systems.msj.compiled" in generated["reference/systems-msj.md"][2]


def test_the_page_generator_finds_a_new_family(tmp_path, monkeypatch) -> None:
    """A control: a new family's two folders get their two pages, its private modules left out."""
    for top in ("systems", "policies"):
        folder = tmp_path / top / "toy_family"
        (folder / "sub").mkdir(parents=True)
        for name in ("__init__.py", "family.py", "_private.py", "sub/__init__.py", "sub/deep.py"):
            (folder / name).write_text('"""The toy family. More."""\n')
    monkeypatch.setattr(pages, "TREES", (("msjgym.systems", tmp_path / "systems", "systems"),
                                         ("msjgym.policies", tmp_path / "policies", "policies")))
    generated = pages.family_pages()
    assert list(generated) == ["reference/systems-toy-family.md", "reference/policies-toy-family.md"]
    name, text, markdown = generated["reference/systems-toy-family.md"]
    assert (name, text) == ("msjgym.systems.toy_family", "The toy family")
    assert BLOCK.findall(markdown) == ["msjgym.systems.toy_family", "msjgym.systems.toy_family.family",
                                       "msjgym.systems.toy_family.sub", "msjgym.systems.toy_family.sub.deep"]
