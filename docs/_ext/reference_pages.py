"""mkdocs hook: the API reference pages of every family, generated at build time from package discovery.

Each subpackage of ``msjgym/systems/`` and of ``policies/`` (``msjgym.policies``) gets a page,
``reference/systems-<family>.md`` and ``reference/policies-<family>.md`` (``_`` of the folder's name as ``-``), with a
``::: dotted.name`` block (mkdocstrings) for each of its public modules (no component of the dotted name starting with
``_``), found by walking the folder's ``.py`` files: nothing is imported, so building the site compiles no kernel. The
pages are added to the nav after ``reference/systems.md`` and ``reference/policies.md``, and the table of
``reference/index.md`` lists them where it says ``<!-- family pages: systems -->`` (``policies``). A new family's two folders are documented
without a hand-written page (``tests/test_docs_reference.py`` reads the same functions).

Wired in ``mkdocs.yml`` (``hooks:``); mkdocs calls :func:`on_config`, :func:`on_files` and :func:`on_page_markdown`.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TREES = (("msjgym.systems", ROOT / "msjgym" / "systems", "systems"),
         ("msjgym.policies", ROOT / "policies", "policies"))
"""(dotted package, its folder, the pages' prefix): the packages whose subpackages are the families."""
MARKER = "<!-- family pages: {prefix} -->"
"""Where ``reference/index.md``'s table lists the generated pages of a tree (``prefix``: systems, policies)."""


def modules_of(package: str, folder: Path) -> list[str]:
    """The public modules of the package ``package`` in ``folder`` (itself first, then by dotted name)."""
    names = []
    for path in folder.rglob("*.py"):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not (path.parent / "__init__.py").exists() or any(p.startswith("_") for p in parts):
            continue
        names.append(".".join([package, *parts]))
    return sorted(set(names), key=lambda n: (n != package, n))


def summary(folder: Path) -> str:
    """The first sentence of a package's docstring (its ``__init__.py``), without the final period."""
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return paragraph.split(". ")[0].rstrip(".")


def family_pages() -> dict[str, tuple[str, str, str]]:
    """``{page path: (dotted package, one-line summary, markdown)}`` of every family's generated pages, systems
    first, each in folder-name order."""
    pages = {}
    for package, root, prefix in TREES:
        for folder in sorted(p for p in root.iterdir() if (p / "__init__.py").exists() and not p.name.startswith("_")):
            name = f"{package}.{folder.name}"
            text = summary(folder)
            body = "\n\n".join(f"::: {m}" for m in modules_of(name, folder))
            pages[f"reference/{prefix}-{folder.name.replace('_', '-')}.md"] = (name, text, f"# {name}\n\n{body}\n")
    return pages


def reference_nav(nav: list[Any]) -> list[Any]:
    """``nav`` (mkdocs.yml's) with each generated page after its tree's hand-written page (``reference/systems.md``,
    ``reference/policies.md``), labelled by its dotted package."""
    pages = family_pages()

    def walk(items: list[Any]) -> list[Any]:
        out = []
        for item in items:
            if isinstance(item, dict):
                item = {k: walk(v) if isinstance(v, list) else v for k, v in item.items()}
            out.append(item)
            target = next(iter(item.values())) if isinstance(item, dict) else item
            for _, _, prefix in TREES:
                if target == f"reference/{prefix}.md":
                    out += [{name: path} for path, (name, _, _) in pages.items()
                            if path.startswith(f"reference/{prefix}-")]
        return out

    return walk(nav)


def index_rows(prefix: str) -> str:
    """The rows of ``reference/index.md``'s table for the generated pages of one tree (``systems``, ``policies``)."""
    return "\n".join(f"| [{name}]({Path(path).name}) | {text} |" for path, (name, text, _) in family_pages().items()
                     if path.startswith(f"reference/{prefix}-"))


def on_config(config: Any) -> Any:
    config["nav"] = reference_nav(config["nav"])
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, (_, _, markdown) in family_pages().items():
        if files.get_file_from_path(path) is not None:
            raise ValueError(f"docs/{path}: a hand-written page where a generated one goes (delete it)")
        files.append(File.generated(config, path, content=markdown))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "reference/index.md":
        for _, _, prefix in TREES:
            markdown = markdown.replace(MARKER.format(prefix=prefix), index_rows(prefix))
    return markdown
