"""Every citation in the repository is one a user can follow.

The papers' reference notes and the project's issue tracker are not shipped: code, tests and documentation cite the
paper itself (authors, title, section / equation / theorem) or a page of ``docs/`` (``docs/errata.md#anchor``,
``docs/modelling-choices.md#anchor``, ``docs/derivations.md#anchor``). This test scans the raw text of every ``.py``
file under ``msjgym/`` and ``policies/``, every ``.py`` and ``.md`` file under ``tests/``, ``benchmarks/``,
``examples/``, ``baselines/`` and ``docs/`` (the documentation site's pages), and ``README.md`` (docstrings, comments,
strings and prose alike; not this file,
whose patterns and examples would match themselves, and not the recorded data of ``tests/golden/golden.json``), and
fails with ``file:line`` for

* a citation of a notes file ("note §2", "notes §3.1", "notes/...", "reference note", "``x.md`` §1", "the note's
  Hyper-Erlang", ...);
* a citation of an issue number or of an issue's acceptance items ("issue 7", "(issue 8)", "issue #12",
  "issues 3–4", "acceptance 5", "issue acceptance", "the issue's target");
* a ``docs/NAME.md`` that does not exist, or a ``docs/NAME.md#anchor`` whose anchor is not a heading of that page.

It also checks the links between the docs pages themselves, in every folder of ``docs/`` (``../errata.md#anchor``). Pure text: no import of msjgym, runs in well under a second.
"""
from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("msjgym", "policies")                                   # .py files
SCANNED_WITH_MD = ("tests", "benchmarks", "examples", "baselines", "docs")  # .py and .md files
SCANNED_FILES = ("README.md",)
NOT_SCANNED = {Path(__file__).resolve(), ROOT / "tests" / "golden" / "golden.json"}
DOCS = ROOT / "docs"

# A citation of the (unshipped) reference notes. Each pattern targets citation syntax, not the word "note": the
# package legitimately prints "msjgym: note: ...", keeps figure footnotes in a variable called ``note`` and lists
# ``notes`` of a trace or a plot.
# The patterns run on a file's whole text, so a citation broken over two lines ("note\n    §3.1") is found too.
NOTE_PATTERNS = {
    "note §": re.compile(r"\bnotes?'?s?[ \t]*(?:\n[ \t#]*)?\(?§", re.IGNORECASE),    # note §3, notes §§1.4, note\n§2
    "note … §": re.compile(r"\bnotes?\b[^\n§\"]{0,40}?[a-z-]+ §", re.IGNORECASE),      # notes ghanbarian-et-al §2
    "the note's §": re.compile(r"\b(?:the|its|reference|finite-skip|zero-queueing|load-balancing) notes?'?s?\b"
                               r"[^\n]{0,30}§", re.IGNORECASE),                          # the note's §3.8 recipes
    "notes/": re.compile(r"\bnotes/", re.IGNORECASE),                                     # shared/papers/notes/x.md
    "reference note": re.compile(r"\breference notes?\b", re.IGNORECASE),
    ".md §": re.compile(r"\.md`{0,2}\s*\(?§", re.IGNORECASE),                            # ``x.md`` §1.2
    "note x.md": re.compile(r"\bnotes?\b:?\s[^§\n]{0,20}?``[\w./-]+\.md``", re.IGNORECASE),  # note ``x.md``
    "shared/papers": re.compile(r"shared/papers", re.IGNORECASE),
    "the note's …": re.compile(r"\bnotes?'?s? (?:default|pseudo-code|recipes?|corrected|eq\b|errat)", re.IGNORECASE),
    "the note's": re.compile(r"\bthe (?:note's|notes')", re.IGNORECASE),                # the note's Hyper-Erlang
}

# A citation of an issue number: "issue 7", "(issue 8)", "issue #12", "issues 3–4", "#12" in parentheses. Requires
# the number to follow the word directly (so "an issue, 7 of them" or "issued 3" do not match).
ISSUE_PATTERNS = {
    "issue N": re.compile(r"\bissues?[ \t]?#?\d+\b", re.IGNORECASE),
    "(#N)": re.compile(r"\(#\d+\)"),
    # an issue's acceptance items: "acceptance 5", "Acceptance item 1", "issue acceptance", "the issue's target"
    "acceptance N": re.compile(r"\bacceptance (?:item )?\d+\b", re.IGNORECASE),
    "the issue": re.compile(r"\b(?:issue acceptance|the issue's|of the issue)\b", re.IGNORECASE),
}

DOCS_LINK = re.compile(r"\bdocs/((?:[\w.-]+/)*[\w.-]+\.md)(?:#([\w-]+))?")    # docs/x.md, docs/families/x.md


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = unicodedata.normalize("NFKC", heading.strip().lower())
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def _generated_pages() -> dict[str, str]:
    """``{page path under docs/: markdown}`` of the pages the site generates at build time (the families' API
    reference pages: docs/_ext/reference_pages.py)."""
    spec = importlib.util.spec_from_file_location("reference_pages", DOCS / "_ext" / "reference_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {path: markdown for path, (_, _, markdown) in module.family_pages().items()}


def _anchors(page: Path | str) -> set[str]:
    """The heading anchors of a page (a file, or a generated page's markdown)."""
    anchors, fenced = set(), False
    text = page.read_text(encoding="utf-8") if isinstance(page, Path) else page
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)):
            anchors.add(_slug(m.group(1)))
    return anchors


def _scanned_files() -> list[Path]:
    files = [p for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))]
    files += [p for top in SCANNED_WITH_MD for p in sorted((ROOT / top).rglob("*"))
              if p.suffix in (".py", ".md") and p.is_file()
              and not any(part.startswith((".", "__")) for part in p.relative_to(ROOT).parts)]
    files += [ROOT / name for name in SCANNED_FILES]
    files = [p for p in files if p.resolve() not in NOT_SCANNED]
    for top in SCANNED + SCANNED_WITH_MD + SCANNED_FILES:
        assert any(p.is_relative_to(ROOT / top) for p in files), f"nothing scanned in {top} under {ROOT}"
    return files


def _lines(path: Path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        yield f"{path.relative_to(ROOT)}:{number}", line


def _findings(patterns: dict[str, re.Pattern]) -> list[str]:
    found = set()
    for path in _scanned_files():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for name, pattern in patterns.items():
            for m in pattern.finditer(text):
                number = text.count("\n", 0, m.start()) + 1
                found.add((str(path.relative_to(ROOT)), number, name, lines[number - 1].strip()[:120]))
    return [f"{file}:{number}: {name}: {line}" for file, number, name, line in sorted(found)]


def test_no_citation_of_the_reference_notes():
    found = _findings(NOTE_PATTERNS)
    assert not found, ("cite the paper (authors, section / equation) or a docs/ page, not the reference notes, "
                       "which users cannot open:\n" + "\n".join(found))


def test_no_citation_of_an_issue_number():
    found = _findings(ISSUE_PATTERNS)
    assert not found, ("issue numbers mean nothing to users: say what was meant (e.g. 'loss systems'):\n"
                       + "\n".join(found))


def _link_problems(where: str, page_name: str, anchor: str | None, cache: dict[str, set[str] | None]) -> list[str]:
    if page_name not in cache:
        page = DOCS / page_name
        generated = _generated_pages().get(page_name)
        cache[page_name] = _anchors(page) if page.is_file() else _anchors(generated) if generated else None
    if cache[page_name] is None:
        return [f"{where}: docs/{page_name} does not exist"]
    if anchor is not None and anchor not in cache[page_name]:
        return [f"{where}: docs/{page_name}#{anchor}: no heading with that anchor"]
    return []


def test_cited_docs_pages_and_anchors_exist():
    cache: dict[str, set[str] | None] = {}
    problems, cited = [], 0
    for path in _scanned_files():
        for where, line in _lines(path):
            for m in DOCS_LINK.finditer(line):
                cited += 1
                problems += _link_problems(where, m.group(1), m.group(2), cache)
    assert cited, "no docs/ page is cited anywhere: the scan is broken"
    assert not problems, "\n".join(problems)


def test_links_between_docs_pages_resolve():
    cache: dict[str, set[str] | None] = {}
    link = re.compile(r"\]\((?!https?:)((?:\.\./|[\w.-]+/)*[\w.-]+\.md)?(?:#([\w-]+))?\)")
    problems, checked = [], 0
    for page in sorted(DOCS.rglob("*.md")):
        for where, line in _lines(page):
            for m in link.finditer(line):
                if m.group(1) is None and m.group(2) is None:
                    continue
                target = (page.parent / (m.group(1) or page.name)).resolve()
                if not target.is_relative_to(DOCS.resolve()):
                    problems.append(f"{where}: {m.group(1)} is outside docs/")
                    continue
                checked += 1
                problems += _link_problems(where, target.relative_to(DOCS.resolve()).as_posix(), m.group(2), cache)
    assert checked, "no link between docs pages found: the scan is broken"
    assert not problems, "\n".join(problems)


def test_slug_matches_github():
    assert _slug("cavity-thm-4-7") == "cavity-thm-4-7"
    assert _slug("Load balancing (HKV)") == "load-balancing-hkv"
    assert _slug("Not needed by the code") == "not-needed-by-the-code"


def test_patterns_catch_citations_and_spare_plain_words():
    cited = ["see note §2", "(notes §§3.1, 3.3)", "zero-queueing note\n    §3.2", "the note's Hyper-Erlang",
             "Not the notes' claim", "(issue 4)", "Issue 5 acceptance 6", "Acceptance item 1 of",
             "(issue acceptance 7)", "the issue's target", "shared/papers/notes/x.md"]
    plain = ["msjgym: note: outside the stability region", "the note before a long first compilation",
             "curves, notes = build_curves(...)", "acceptance probability", "an issue, 7 of them", "issued 3"]
    patterns = {**NOTE_PATTERNS, **ISSUE_PATTERNS}
    for text in cited:
        assert any(p.search(text) for p in patterns.values()), text
    for text in plain:
        assert not [name for name, p in patterns.items() if p.search(text)], text
