"""Standard output that never loses a result: a console that cannot encode a character does not end a command.

``msjgym`` prints tables with ``±``, ``×``, ``λ``, ``ρ`` and the user's class names. A console whose encoding lacks
one of them (``PYTHONIOENCODING=ascii`` or ``latin-1``, a Windows code page) makes ``print`` raise
``UnicodeEncodeError`` -- after the run, so the numbers would be lost in a traceback. :class:`GuardedStdout` stands
in for ``sys.stdout`` during a command: what the console cannot show is replaced (``?``), a copy of everything
printed is kept, and at the end :meth:`GuardedStdout.report` saves the copy (UTF-8) to a file and names it in one
line on stderr.
"""
from __future__ import annotations

import io
import sys
from typing import Any

from msjgym.core.paths import fallback_file


class GuardedStdout(io.TextIOBase):
    """A context manager that replaces ``sys.stdout`` by itself for the block, writing through to the real one."""

    def __init__(self) -> None:
        super().__init__()
        self._stream: Any = None
        self._copy: list[str] = []
        self.failed: UnicodeEncodeError | None = None

    def __enter__(self) -> GuardedStdout:
        self._stream = sys.stdout
        sys.stdout = self  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        if sys.stdout is self:
            sys.stdout = self._stream

    # ---------------------------------------------------------------- the TextIO the command prints to
    def write(self, text: str) -> int:
        self._copy.append(text)
        try:
            return self._stream.write(text)
        except UnicodeEncodeError as exc:
            self.failed = self.failed or exc
            encoding = self.encoding or "ascii"
            return self._stream.write(text.encode(encoding, "replace").decode(encoding))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        # asked at interpreter exit too (colorama's wrapper), when the real stream may be closed: then not a tty
        try:
            return bool(self._stream.isatty())
        except (ValueError, AttributeError):
            return False

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", None)

    # ---------------------------------------------------------------- the end of a command
    def report(self, status: int) -> int:
        """The command's exit status, after saying (one line on stderr) where the full output went if the console
        could not show all of it (then at least 1)."""
        if self.failed is None:
            return status
        shown = f"standard output (encoding {self.encoding}) cannot show {self.failed.object[self.failed.start]!r}"
        try:
            path = fallback_file("output", ".txt")
            path.write_text("".join(self._copy), encoding="utf-8")
        except OSError as exc:
            print(f"msjgym: error: {shown}: characters were replaced by '?', and the full output could not be "
                  f"saved ({exc.strerror or exc}); set PYTHONIOENCODING=utf-8", file=sys.stderr)
        else:
            print(f"msjgym: error: {shown}: characters were replaced by '?'; the full output is in {str(path)!r} "
                  "(UTF-8; or set PYTHONIOENCODING=utf-8)", file=sys.stderr)
        return status or 1
