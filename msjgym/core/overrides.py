"""``--param KEY=VALUE``: one override of a scenario's (or a policy's) parameter, as a typed value."""
from __future__ import annotations

import re
from collections.abc import Iterable

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from msjgym.core.inputs import load_toml
from msjgym.core.validation import show
from msjgym.errors import MsjgymError, ScenarioError

MAX_VALUE_CHARS = 10_000
"""Characters of one ``--param`` value: lists of a few hundred numbers fit; parsing stays instant."""

_BARE_WORD = re.compile(r"[\w.+\-/:~]+(\([\w.+\-/=, ]*\))?")  # a word, or a call: erlang(k=6), h2(f=1/2, scv=15)


def parse_overrides(texts: Iterable[str], option: str = "--param") -> dict[str, object]:
    """Every ``KEY=VALUE`` of ``texts`` (:func:`parse_override`) as a dict; a key given twice is an error (as in
    TOML), never silently the last value, whichever way it is spelled: a dotted path and a table holding it
    (``arrivals.time_scale=0.5`` with ``arrivals={...}``) set one key twice, as ``a.b = 1`` and ``[a] b = 2`` do in
    a TOML file."""
    found: dict[str, object] = {}
    tables: set[str] = set()  # every table path holding a key found so far
    for text in texts:
        key, value = parse_override(text)
        if key in found:
            raise ScenarioError(f"{option} {key}: given twice ({show(found[key], 40)} and {show(value, 40)}); "
                                "give each key once")
        parts = key.split(".")
        outer = [".".join(parts[:i]) for i in range(1, len(parts))]
        inner = next((k for k in found if k.startswith(key + ".")), None) if key in tables else None
        above = next((k for k in outer if k in found), None)
        if above is not None or inner is not None:
            table, leaf = (above, key) if above is not None else (key, inner)
            raise ScenarioError(f"{option} {table} and {option} {leaf}: both set {leaf}; give each key once (the "
                                "table's keys one by one, or the whole table)")
        tables.update(outer)
        found[key] = value
    return found


def parse_override(text: str) -> tuple[str, object]:
    """Parse ``KEY=VALUE``; VALUE is a TOML value (int, float, "string", bool, [list]) or a bare word (a string).

    >>> parse_override("servers=32")
    ('servers', 32)
    >>> parse_override("m3=4th-root")
    ('m3', '4th-root')
    """
    key, sep, raw = text.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key:
        raise ScenarioError(f"override {text!r}: expected KEY=VALUE, e.g. servers=32")
    if not raw or "\n" in raw:
        raise ScenarioError(f"override {key} = {raw!r}: expected one TOML value or a bare word after '='")
    if len(raw) > MAX_VALUE_CHARS:
        raise ScenarioError(f"override {key}: its value has {len(raw):,} characters; at most {MAX_VALUE_CHARS:,}")
    try:
        return key, load_toml(f"value = {raw}", f"override {key}", ScenarioError)["value"]
    except MsjgymError:
        raise
    except ValueError as exc:  # TOMLDecodeError, or an integer of more than 4300 digits (Python's own limit)
        if not isinstance(exc, tomllib.TOMLDecodeError):
            raise ScenarioError(f"override {key} = {raw[:40]!r}...: {exc}".split(";")[0]) from None
        if not _BARE_WORD.fullmatch(raw):
            raise ScenarioError(f"override {key} = {raw!r}: not a TOML value (number, \"string\", true/false, "
                                f"[list]) nor a bare word") from None
        return key, raw
