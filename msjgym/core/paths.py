"""Output paths, checked before any work starts, and writes that never lose what was computed.

A command that writes a file (``--per-job FILE.csv``, ``--out FILE``) or fills a folder (``--out DIR``) checks the
path first, in well under a second: the right kind (a file name, not a folder; a folder, not a file), an existing
parent folder for a file (msjgym does not create folders the user did not ask for), and the permission to write
there (probed by creating and removing a file). A folder named by ``--out`` may itself be created, with its missing
parents, as that is what the user asked for; the check then probes the nearest existing ancestor.

Every path a user gives, input or output, is looked at here without raising and without opening it
(:func:`path_kind`): a name longer than the file system allows is a one-line error, not ``OSError: [Errno 36]``;
a FIFO, a device or a socket is never opened (reading one may never end, writing one may block), only named. An
output is resolved to an absolute path once, when it is checked (a policy that changes the working folder does not
move it); a file output written with a trailing slash (``--per-job out/``) names a folder and is refused (a file
named like the folder is never written); the folder of a file output must exist (``--per-job``, ``plot --out``:
nothing is created), while a folder output (``sweep --out``, ``reproduce --out``) is created with its parents.

Each check raises :class:`~msjgym.errors.MsjgymError` with one line naming the option and the path.
:func:`fallback_file` gives a place to put results whose own write failed after all (disk full, a folder removed
while the run went on), so that they are never lost.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from msjgym.errors import MsjgymError

_ABSENT = (errno.ENOENT, errno.ENOTDIR)
_SHOWN = 160  # characters of a path echoed whole in a message (a longer one is shortened in the middle)


def shown(path: str | os.PathLike) -> str:
    """A path for a message: quoted, and shortened in the middle past 160 characters."""
    text = str(path)
    if len(text) > _SHOWN:
        text = f"{text[:_SHOWN // 2 - 2]}...{text[-(_SHOWN // 2 - 1):]} ({len(text):,} characters)"
    return repr(text)


def _limits(path: Path) -> tuple[int, int]:
    """The file system's longest name and path (bytes) where ``path`` would be (255 and 4096 if unknown)."""
    folder = path.parent
    for _ in range(64):
        try:
            return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
        except (OSError, ValueError, AttributeError):
            if folder == folder.parent:
                break
            folder = folder.parent
    return 255, 4096


def name_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot name a file here (a name longer than the file system allows, a path longer than it
    allows, a NUL character), or None."""
    text = os.fspath(path)
    if "\0" in text:
        return "contains a NUL character"
    absolute = Path(os.path.abspath(os.path.expanduser(text)))
    name_max, path_max = _limits(absolute)
    for part in absolute.parts:
        size = len(os.fsencode(part))
        if size > name_max:
            return f"a name in it is {size:,} bytes long; the file system allows at most {name_max:,}"
    size = len(os.fsencode(str(absolute)))
    if size >= path_max:
        return f"{size:,} bytes long; the file system allows paths of at most {path_max - 1:,}"
    return None


def path_kind(path: str | os.PathLike) -> tuple[str, str]:
    """What ``path`` is, without raising and without opening it: (``"file"``, ``"folder"``, ``"special"``,
    ``"missing"`` or ``"unusable"``, and a few words for a message: "a FIFO", "no such file", "cannot be used (a
    name in it is 300 bytes long; ...)")."""
    problem = name_problem(path)
    if problem is not None:
        return "unusable", f"cannot be used ({problem})"
    try:
        st = os.stat(os.path.expanduser(os.fspath(path)))
    except OSError as exc:
        if exc.errno in _ABSENT:
            return "missing", "no such file"
        return "unusable", f"cannot be used ({exc.strerror or exc})"
    if stat.S_ISREG(st.st_mode):
        return "file", "a file"
    if stat.S_ISDIR(st.st_mode):
        return "folder", "a folder"
    what = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a device")
    return "special", f"{what}, not a regular file"


def is_regular_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file (never raises, never opens it: a FIFO or a device is not)."""
    return path_kind(path)[0] == "file"


def _absolute(path: str | os.PathLike) -> Path:
    """``path`` with ``~`` expanded, made absolute against the working folder of now (not normalized: ``..`` is
    left to the file system, as a later ``open`` would see it)."""
    return Path(os.getcwd(), os.path.expanduser(os.fspath(path)))


def check_output_file(path: str | os.PathLike, option: str) -> Path:
    """``path`` as a regular file msjgym can write (created or replaced), absolute; ``MsjgymError`` naming ``option``
    otherwise (a trailing slash, a folder, a FIFO or device, a missing folder, a name too long, no permission).

    Nothing is left behind: a probe file created by the check is removed again.
    """
    text = os.fspath(path)
    where = f"{option} {shown(text)}"
    if text.endswith(("/", os.sep)) or (os.altsep and text.endswith(os.altsep)):
        raise MsjgymError(f"{where}: ends with '/', which names a folder; give a file name "
                          f"(e.g. {shown(text.rstrip('/' + os.sep) + '/' + 'FILE')})")
    absolute = _absolute(text)
    kind, what = path_kind(absolute)
    if kind == "unusable":
        raise MsjgymError(f"{where}: {what}")
    if kind == "folder":
        raise MsjgymError(f"{where}: is a folder; give a file name (e.g. {shown(Path(text) / 'FILE')})")
    if kind == "special":
        raise MsjgymError(f"{where}: is {what} (writing to it could block or fail); give a file")
    parent_kind, parent_what = path_kind(absolute.parent)
    if parent_kind == "missing":
        raise MsjgymError(f"{where}: the folder {shown(Path(text).parent)} does not exist; create it first or give "
                          "another path")
    if parent_kind != "folder":
        what = "a file" if parent_kind == "file" else parent_what.split(",")[0]
        raise MsjgymError(f"{where}: {shown(Path(text).parent)} is {what}, not a folder")
    try:
        if kind == "file":
            with absolute.open("a"):  # opens for writing without changing the file
                pass
        else:
            with absolute.open("x"):
                pass
            absolute.unlink()
    except OSError as exc:
        raise MsjgymError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    return absolute


def check_output_dir(path: str | os.PathLike, option: str) -> Path:
    """``path`` as a folder msjgym can write files into (it, and missing parents, may be created later), absolute;
    ``MsjgymError`` naming ``option`` otherwise. Creates nothing."""
    where = f"{option} {shown(path)}"
    absolute = _absolute(path)
    existing = absolute
    while True:
        kind, what = path_kind(existing)
        if kind == "unusable":
            raise MsjgymError(f"{where}: {what}")
        if kind != "missing" or existing == existing.parent:
            break
        existing = existing.parent
    if kind != "folder":
        place = "is" if existing == absolute else f"is below {shown(existing)}, which is"
        raise MsjgymError(f"{where}: {place} {'a file' if kind == 'file' else what}; give a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".msjgym-probe-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise MsjgymError(f"{where}: cannot write in {shown(existing)} ({exc.strerror or exc})") from None
    return absolute


def fallback_file(name: str, suffix: str) -> Path:
    """A new file in the system's temporary folder (``msjgym-NAME-XXXX.SUFFIX``) for results whose own write
    failed; the caller writes there and says so."""
    fd, path = tempfile.mkstemp(prefix=f"msjgym-{name}-", suffix=suffix)
    os.close(fd)
    return Path(path)
