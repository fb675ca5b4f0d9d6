"""Griffe extension for the API reference (mkdocstrings): the ``msjgym.policies`` mapping and RST-isms.

* ``pyproject.toml`` maps the package ``msjgym.policies`` to the repository's top-level ``policies/`` folder. An
  installed package has it at ``msjgym/policies/``, but griffe reads a source checkout statically and finds
  ``msjgym/`` without it; this extension loads ``policies/`` (statically too: nothing is imported, so no numba
  kernel compiles at build time) and makes it the ``policies`` member of ``msjgym``.
* The docstrings are Google-style sections (``Args:``, ``Returns:``, ``Attributes:``) written with a few
  reStructuredText habits that Markdown does not know: roles (``:func:`name```, ``:class:`~a.B```) become code
  spans (``name``, ``B``), and a paragraph ending in ``::`` (an RST literal block follows) ends in ``:``. Double
  backticks are already a Markdown code span.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")
LITERAL_INTRO = re.compile(r"(\S)\s*::$", re.MULTILINE)


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with RST roles as code spans and ``::`` literal-block introductions as ``:``."""
    return LITERAL_INTRO.sub(r"\1:", ROLE.sub(_role, text))


def _rewrite(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = markdown_docstring(obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _rewrite(member)


class MsjgymSource(griffe.Extension):
    """Make ``<repo>/policies`` the ``msjgym.policies`` subpackage when griffe did not find one; rewrite RST-isms."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name != "msjgym":
            return
        if "policies" not in pkg.members:
            folder = Path(pkg.filepath).parent.parent / "policies"
            if not (folder / "__init__.py").is_file():
                raise FileNotFoundError(f"msjgym.policies: no package at {folder} (pyproject maps it to policies/)")
            sub = griffe.GriffeLoader(extensions=loader.extensions, docstring_parser=loader.docstring_parser,
                                      docstring_options=loader.docstring_options,
                                      lines_collection=loader.lines_collection, allow_inspection=False)
            pkg.set_member("policies", sub.load(folder, try_relative_path=True))
        _rewrite(pkg)
