"""Standard output that never loses a result: a console that cannot encode a character, a closed standard output
(``msjgym list >&-``), a full disk (``> /dev/full``) or a closed pipe (``| head -1``) does not end a command in a
traceback.

``msjgym`` prints tables with ``±``, ``×``, ``λ``, ``ρ`` and the user's class names. A console whose encoding lacks
one of them (``PYTHONIOENCODING=ascii`` or ``latin-1``, a Windows code page) makes ``print`` raise
``UnicodeEncodeError``; a standard output that is closed, on a full disk or a pipe whose reader left makes it raise
``OSError`` or ``ValueError`` (or, closed before the start, ``sys.stdout`` is None) -- after the run, so the numbers
would be lost in a traceback. :class:`GuardedStdout` stands in for ``sys.stdout`` during a command, the one place
the command line's output is written: what the console cannot show is replaced (``?``); once the stream fails, it
is no longer written to; a copy of everything printed is kept, and at the end :meth:`GuardedStdout.report` flushes
the stream, saves the copy (UTF-8) to a file if anything went wrong and names it in one line on stderr (status 1).
"""
from __future__ import annotations

import io
import os
import sys
from typing import Any

from msjgym.core.paths import fallback_file

_STREAM_ERRORS = (OSError, ValueError, AttributeError)  # a failed write, a closed file, no stream (None)


class GuardedStdout(io.TextIOBase):
    """A context manager that replaces ``sys.stdout`` by itself for the block, writing through to the real one."""

    def __init__(self) -> None:
        super().__init__()
        self._stream: Any = None
        self._copy: list[str] = []
        self.failed: UnicodeEncodeError | None = None
        self.lost: BaseException | None = None  # the stream's own failure; nothing is written to it after

    def __enter__(self) -> GuardedStdout:
        self._stream = sys.stdout
        if self._stream is None:  # the process started with its standard output closed
            self.lost = OSError(9, "standard output is closed")
        sys.stdout = self  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        if sys.stdout is self:
            sys.stdout = self._stream

    # ---------------------------------------------------------------- the TextIO the command prints to
    def write(self, text: str) -> int:
        self._copy.append(text)
        if self.lost is not None:
            return len(text)
        try:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError as exc:
                self.failed = self.failed or exc
                encoding = self.encoding or "ascii"
                return self._stream.write(text.encode(encoding, "replace").decode(encoding))
        except _STREAM_ERRORS as exc:
            self._lose(exc)
            return len(text)

    def flush(self) -> None:
        if self.lost is None:
            try:
                self._stream.flush()
            except _STREAM_ERRORS as exc:
                self._lose(exc)

    def _lose(self, exc: BaseException) -> None:
        """The stream failed: write no more to it, and (the process's own standard output) point its file
        descriptor at the null device, so that the interpreter's last flush at exit raises nothing either."""
        self.lost = exc
        if self._stream is not None and self._stream is sys.__stdout__:
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass

    def isatty(self) -> bool:
        # asked at interpreter exit too (colorama's wrapper), when the real stream may be closed: then not a tty
        try:
            return bool(self._stream.isatty())
        except _STREAM_ERRORS:
            return False

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("standard output is closed")
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
        """The command's exit status, after flushing the stream and saying (one line on stderr) where the full
        output went if the console could not show all of it (then at least 1)."""
        self.flush()
        if self.lost is not None:
            exc = self.lost
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            shown = f"standard output could not be written ({reason})"
            hint = "give a standard output that can be written"
        elif self.failed is not None:
            shown = (f"standard output (encoding {self.encoding}) cannot show "
                     f"{self.failed.object[self.failed.start]!r}: characters were replaced by '?'")
            hint = "or set PYTHONIOENCODING=utf-8"
        else:
            return status
        try:
            path = fallback_file("output", ".txt")
            path.write_text("".join(self._copy), encoding="utf-8")
        except OSError as exc:
            message = (f"msjgym: error: {shown}, and the full output could not be saved either "
                       f"({exc.strerror or exc}); {hint.removeprefix('or ')}")
        else:
            message = f"msjgym: error: {shown}; the full output is in {str(path)!r} (UTF-8; {hint})"
        if sys.stderr is not None:
            try:
                print(message, file=sys.stderr, flush=True)
            except _STREAM_ERRORS:
                pass
        return status or 1
