"""The files a run reads, recorded as they are read: what identifies a result by content, and what no output may be.

Every reader of a user's file (a scenario TOML, a trace, an empirical law's values file, a policy file, a model
archive) calls :func:`note_read` with the path it opens. Code that needs to know a run's inputs wraps the loading in
:func:`recording`::

    with recording() as files:
        scenario = load_scenario("my.toml")
    # files: [Path('/abs/my.toml'), Path('/abs/traces/sample.swf')]

Two uses, one list:

* :func:`content_digest` hashes the *content* of those files (with the parameters and msjgym's version), so that a
  sweep's stored result is found again only when nothing that determines it changed (an edited scenario file is
  recomputed, not served from the store under its unchanged name);
* :func:`refuse_overwrite` refuses, before a run starts, an output path (``--per-job``, ``--out``, a plot) that is
  one of the files the run reads (``--per-job sample.swf`` while replaying ``sample.swf`` would destroy the trace).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from msjgym.core.limits import MAX_NESTING
from msjgym.core.paths import path_kind, shown
from msjgym.errors import MsjgymError

_RECORDERS: list[list[Path]] = []


def real(path: str | os.PathLike) -> Path:
    """``path`` with ``~`` expanded and every symbolic link and ``..`` resolved (the file it really is)."""
    return Path(os.path.realpath(Path(path).expanduser()))


def note_read(path: str | os.PathLike) -> None:
    """Record that ``path`` is being read as an input of the current run (in every active :func:`recording`)."""
    if _RECORDERS:
        resolved = real(path)
        for files in _RECORDERS:
            if resolved not in files:
                files.append(resolved)


@contextmanager
def recording() -> Iterator[list[Path]]:
    """Collect, in the yielded list, the real paths of every input file read inside the block (nested blocks each
    see every file read inside them). Each block removes its own list when it ends, by identity: two recordings
    holding equal lists (a sweep's and its first point's, both ``[pol.py]``) are still two recordings."""
    files: list[Path] = []
    _RECORDERS.append(files)
    try:
        yield files
    finally:
        for i in range(len(_RECORDERS) - 1, -1, -1):
            if _RECORDERS[i] is files:
                del _RECORDERS[i]
                break


def check_input_file(path: str | os.PathLike, what: str, max_bytes: int,
                     error: type[Exception] = MsjgymError) -> None:
    """Refuse, before reading it, an input that is not a regular file (``/dev/zero``, a FIFO, a folder: reading it
    would never end, or fill the memory) or is larger than ``max_bytes`` (what is read into memory)."""
    path = Path(path)
    kind, why = path_kind(path)
    if kind in ("missing", "unusable"):
        raise error(f"{what} {shown(path)}: {'cannot read it (no such file)' if kind == 'missing' else why}")
    try:
        st = path.stat()
    except OSError as exc:
        raise error(f"{what} {shown(path)}: cannot read it ({exc.strerror or exc})") from None
    import stat as _stat
    if not _stat.S_ISREG(st.st_mode):
        raise error(f"{what} {str(path)!r}: not a regular file (a device, a pipe or a folder cannot be read to its "
                    "end); give a file")
    if st.st_size > max_bytes:
        raise error(f"{what} {str(path)!r}: {st.st_size / 2**20:,.0f} MiB; must be at most {max_bytes / 2**20:,.0f} "
                    "MiB (it is read into memory)")


def open_user_text(path: str | os.PathLike, what: str, max_bytes: int, error: type[Exception] = MsjgymError, *,
                   errors: str = "strict", newline: str | None = None) -> io.TextIOWrapper:
    """The one way a user's text file (a scenario TOML, an SWF or CSV trace, a values file) is opened: checked
    (:func:`check_input_file`: a regular file, at most ``max_bytes``), recorded as an input (:func:`note_read`) and
    decoded as UTF-8 with a leading byte-order mark dropped (``utf-8-sig``: editors on Windows write one, and it
    is no part of line 1's content)."""
    check_input_file(path, what, max_bytes, error)
    note_read(path)
    try:
        return open(path, encoding="utf-8-sig", errors=errors, newline=newline)
    except OSError as exc:
        raise error(f"{what} {shown(path)}: cannot read it ({exc.strerror or exc})") from None


def read_user_text(path: str | os.PathLike, what: str, max_bytes: int, error: type[Exception] = MsjgymError, *,
                   errors: str = "strict") -> str:
    """The whole text of a user's file (:func:`open_user_text`); a file that is not UTF-8 is ``error``."""
    with open_user_text(path, what, max_bytes, error, errors=errors) as f:
        try:
            return f.read()
        except UnicodeDecodeError as exc:
            raise error(f"{what} {shown(path)}: not UTF-8 text (byte {exc.start + 1:,}: "
                        f"{exc.object[exc.start:exc.start + 1]!r})") from None
        except OSError as exc:
            raise error(f"{what} {shown(path)}: cannot read it ({exc.strerror or exc})") from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in a TOML text, outside strings and comments."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if text[i] == "\\" and quote[0] == '"' else 1
            i += len(quote)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def load_toml(text: str, what: str, error: type[Exception] = MsjgymError) -> dict[str, Any]:
    """The TOML table of ``text`` (a scenario file's content, a ``--param`` value), with nesting at most
    :data:`~msjgym.core.limits.MAX_NESTING` levels deep (``error`` naming ``what`` otherwise): the brackets and
    braces of the text before parsing (deeper would end in the parser's ``RecursionError``), then the tables and
    arrays of what was parsed (:func:`toml_structure`), so that a dotted key ``a.b.c = 1`` counts as the tables
    ``[a.b] c = 1`` spells, and a key is read the same whichever TOML spelling gives it. TOML's own errors
    (``TOMLDecodeError``, a duplicated key) pass on."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    depth = nesting_depth(text)
    if depth > MAX_NESTING:
        raise error(f"{what}: brackets and braces nested {depth:,} levels deep; at most {MAX_NESTING}")
    try:
        table = tomllib.loads(text)
    except RecursionError:
        raise error(f"{what}: nested too deeply for the TOML parser; at most {MAX_NESTING} levels") from None
    problem = toml_structure(table)
    if problem:
        raise error(f"{what}: {problem}")
    return table


def toml_structure(table: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a parsed TOML table, or None: tables and arrays nested more than
    :data:`~msjgym.core.limits.MAX_NESTING` levels deep, however spelled (``[a.b]``, ``a.b = ...``, ``{...}``,
    ``[...]``: each level of the parsed data counts once; later code walks it recursively), or a quoted key holding a
    dot (``"a.b" = 1`` is one key named ``a.b``, not the path ``a.b`` that ``--param a.b=...`` and every error
    message mean; no msjgym key has a dot). Walked without recursion."""
    stack: list[tuple[Any, int, str]] = [(table, 0, "")]
    deepest = 0
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, Mapping):
            items: Iterable[tuple[str, Any]] = node.items()
        elif isinstance(node, list):
            items = ((str(i), v) for i, v in enumerate(node))
        else:
            continue
        deepest = max(deepest, depth)
        for key, value in items:
            where = f"{path}.{key}" if path else key
            if isinstance(node, Mapping) and "." in key:
                shown_key = key if len(key) <= 60 else key[:57] + "..."
                return (f"key {shown_key!r}{' in ' + path if path else ''}: a quoted key with a dot is one key, not "
                        f"the path {where if len(where) <= 120 else shown_key} (no msjgym key has a dot): write it "
                        "without quotes, or as a table")
            stack.append((value, depth + 1, where if len(where) <= 200 else where[:197] + "..."))
    if deepest > MAX_NESTING:
        return (f"tables and arrays nested {deepest:,} levels deep (a dotted key a.b.c = 1 nests as [a.b] does); at "
                f"most {MAX_NESTING}")
    return None


def policy_files(policy: Any) -> list[Path]:
    """The files a policy given on the command line reads: ``FILE.py[:NAME]`` → FILE.py; ``sb3:MODEL.zip`` → the
    archive; ``rllib:DIR`` → every file under DIR. Built-in names and objects read none."""
    if not isinstance(policy, str):
        return []
    if policy.startswith(("sb3:", "rllib:")):
        target = Path(policy.partition(":")[2]).expanduser()
    elif ".py:" in policy or policy.endswith(".py"):
        target = Path(policy[: policy.rindex(".py") + 3]).expanduser()
    else:
        return []
    kind = path_kind(target)[0]
    if kind == "folder":
        return sorted(real(p) for p in target.rglob("*") if p.is_file())
    return [real(target)] if kind in ("file", "special") else []


_HASHES: dict[tuple[Path, int, int], str] = {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (cached per path, size and modification time), or a marker if it cannot be read."""
    try:
        stat = path.stat()
    except OSError as exc:
        return f"unreadable:{exc.strerror}"
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        try:
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            return f"unreadable:{exc.strerror}"
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def content_digest(parts: Mapping[str, Any], files: Iterable[Path] = ()) -> str:
    """A 32-hex-digit digest of ``parts`` (JSON-able values; others by ``repr``), the *content* of ``files`` (not
    their names) and msjgym's version: equal digests mean equal inputs."""
    version = getattr(sys.modules.get("msjgym"), "__version__", "unknown")  # not imported: core sits below it
    payload = {"version": version, "parts": dict(parts),
               "files": sorted(file_digest(Path(f)) for f in files)}
    text = json.dumps(payload, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def refuse_overwrite(outputs: Mapping[str, str | os.PathLike | None], inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse (one-line ``MsjgymError`` naming the option) an output path that is one of the run's input files.

    ``outputs`` maps an option (``--per-job``) to the file it writes (None: not given); a folder output is given by
    the files it will write in it (``--out DIR`` → ``DIR/results.sqlite``). Paths are compared as real paths, so a
    symbolic link, ``./x`` or ``../dir/x`` to an input is refused too, and a hard link by its inode.
    """
    seen = {real(p): Path(p) for p in inputs}
    inodes = {}
    for path in seen:
        try:
            st = path.stat()
            inodes[(st.st_dev, st.st_ino)] = path
        except OSError:
            pass
    for option, out in outputs.items():
        if out is None:
            continue
        target = real(out)
        hit = seen.get(target)
        if hit is None:
            try:
                st = target.stat()
                hit = inodes.get((st.st_dev, st.st_ino))
            except OSError:
                hit = None
        if hit is not None:
            same = " " if str(hit) == str(out) else f" ({str(hit)!r}) "
            raise MsjgymError(f"{option} {str(out)!r}:{same}is an input of this run; writing there would destroy it: "
                              "give another path")
