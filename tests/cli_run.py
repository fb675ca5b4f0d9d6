"""``msjgym ARGS`` run in the test's own process: what a shell would see, without starting a new interpreter.

A subprocess costs about 2 CPU-s (importing msjgym, numba and torch, loading kernels) before it does anything; a test
that only drives the command line calls :func:`msjgym.cli.main` instead, which returns the exit status of every
outcome (argparse's included), with stdout and stderr captured. What a real process adds is kept where a test's
claim depends on it:

* warnings: a real process prints them on stderr (Python's default filters: ``DeprecationWarning`` only from
  ``__main__``), where pytest would collect them quietly; they are appended to ``stderr`` here, so a test asking for
  "one line on stderr" still fails on a stray ``RuntimeWarning``;
* the working directory: ``cwd`` is entered for the call and left afterwards, whatever happens;
* an exception out of ``main`` (a traceback in a shell) fails the test by propagating.

The real process itself (the status reaching the shell, no traceback, the console script) keeps one subprocess test
per concern: ``tests/test_cli.py`` (the console script), ``tests/test_reliability_limits.py`` (``python -m msjgym``).
"""
from __future__ import annotations

import io
import os
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

from msjgym import cli


class Run(NamedTuple):
    """The attributes of :class:`subprocess.CompletedProcess` the tests read."""

    returncode: int
    stdout: str
    stderr: str


def msjgym(*args: object, cwd: str | os.PathLike | None = None) -> Run:
    """``msjgym ARGS`` (each argument as ``str``) in this process, in ``cwd`` if given: exit status, stdout and stderr
    (warnings included, as a fresh interpreter would print them)."""
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()  # Python's own defaults, not pytest's filters
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        try:
            if cwd is not None:
                os.chdir(cwd)
            with redirect_stdout(out), redirect_stderr(err):
                status = cli.main([str(a) for a in args])
        finally:
            os.chdir(here)
    shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught)
    return Run(status, out.getvalue(), err.getvalue() + shown)
