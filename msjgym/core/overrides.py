"""``--param KEY=VALUE``: one override of a scenario's (or a policy's) parameter, as a typed value."""
from __future__ import annotations

import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from msjgym.errors import ScenarioError

_BARE_WORD = re.compile(r"[\w.+\-/:~]+(\([\w.+\-/=, ]*\))?")  # a word, or a call: erlang(k=6), h2(f=1/2, scv=15)


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
    try:
        return key, tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        if not _BARE_WORD.fullmatch(raw):
            raise ScenarioError(f"override {key} = {raw!r}: not a TOML value (number, \"string\", true/false, "
                                f"[list]) nor a bare word") from None
        return key, raw
