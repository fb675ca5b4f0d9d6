"""Output paths, checked before any work starts, and writes that never lose what was computed.

A command that writes a file (``--per-job FILE.csv``, ``--out FILE``) or fills a folder (``--out DIR``) checks the
path first, in well under a second: the right kind (a file name, not a folder; a folder, not a file), an existing
parent folder for a file (msjgym does not create folders the user did not ask for), and the permission to write
there (probed by creating and removing a file). A folder named by ``--out`` may itself be created, with its missing
parents, as that is what the user asked for; the check then probes the nearest existing ancestor.

Each check raises :class:`~msjgym.errors.MsjgymError` with one line naming the option and the path.
:func:`fallback_file` gives a place to put results whose own write failed after all (disk full, a folder removed
while the run went on), so that they are never lost.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from msjgym.errors import MsjgymError


def check_output_file(path: str | Path, option: str) -> Path:
    """``path`` as a file msjgym can write (created or replaced); ``MsjgymError`` naming ``option`` otherwise.

    Nothing is left behind: a probe file created by the check is removed again.
    """
    path = Path(path)
    shown = f"{option} {str(path)!r}"
    if path.is_dir():
        raise MsjgymError(f"{shown}: is a folder; give a file name (e.g. {str(path / 'jobs.csv')!r})")
    parent = path.parent
    if not parent.exists():
        raise MsjgymError(f"{shown}: the folder {str(parent)!r} does not exist; create it first or give another path")
    if not parent.is_dir():
        raise MsjgymError(f"{shown}: {str(parent)!r} is a file, not a folder")
    try:
        if path.exists():
            with path.open("a"):  # opens for writing without changing the file
                pass
        else:
            with path.open("x"):
                pass
            path.unlink()
    except OSError as exc:
        raise MsjgymError(f"{shown}: cannot write there ({exc.strerror or exc})") from None
    return path


def check_output_dir(path: str | Path, option: str) -> Path:
    """``path`` as a folder msjgym can write files into (it, and missing parents, may be created later);
    ``MsjgymError`` naming ``option`` otherwise. Creates nothing."""
    path = Path(path)
    shown = f"{option} {str(path)!r}"
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing == path else f"is below {str(existing)!r}, which is a file"
        raise MsjgymError(f"{shown}: {what}; give a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".msjgym-probe-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise MsjgymError(f"{shown}: cannot write in {str(existing)!r} ({exc.strerror or exc})") from None
    return path


def fallback_file(name: str, suffix: str) -> Path:
    """A new file in the system's temporary folder (``msjgym-NAME-XXXX.SUFFIX``) for results whose own write
    failed; the caller writes there and says so."""
    fd, path = tempfile.mkstemp(prefix=f"msjgym-{name}-", suffix=suffix)
    os.close(fd)
    return Path(path)
