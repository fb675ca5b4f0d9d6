"""Shared plumbing of the ``msjgym reproduce`` figures: output folder, CSV rows, progress, figure style."""
from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tqdm import tqdm

from msjgym.api import Option
from msjgym.core import limits
from msjgym.core.paths import fallback_file
from msjgym.errors import MsjgymError
from msjgym.evaluate.figures import pyplot, save_figure

__all__ = ["Settings", "Reproduction", "MAX_SERVERS_OPTION", "CsvTable", "progress", "pyplot", "save_figure"]


@dataclass(frozen=True)
class Settings:
    """What a reproduction may spend: simulation length and seeds, and its own options.

    Attributes:
        out: folder for the PNG figures and the CSV of numbers.
        reps: independent replications per simulated point.
        jobs: measured jobs per replication.
        seed: root seed; each point derives its own seed from it and its index.
        progress: show a progress bar on stderr.
        options: the reproduction's own options (:attr:`Reproduction.options`), by name; one not given takes its
            declared default.
    """

    out: Path
    reps: int = 5
    jobs: int = 200_000
    seed: int = 1
    progress: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, declared: Sequence[Option], name: str) -> Any:
        """The value of the reproduction option ``name``: given in :attr:`options`, else the default of its
        declaration in ``declared`` (the reproduction's ``OPTIONS``)."""
        if name in self.options:
            return self.options[name]
        for option in declared:
            if option.name == name:
                return option.default
        raise KeyError(f"reproduction option {name!r}: not declared")


class Reproduction(NamedTuple):
    """One ``msjgym reproduce NAME``: what it regenerates, the function that does it, and its own options.

    Attributes:
        description: one line for ``msjgym list`` (paper, figures, what is simulated).
        run: writes the figures and CSVs into ``Settings.out``; returns their paths.
        options: its own flags of ``msjgym reproduce NAME`` (beyond --out, --reps, --jobs, --seed, --no-progress),
            declared in its module as ``OPTIONS``.
        reps: replications per simulated point when ``--reps`` is not given (the paper's, where it fixes one).
    """

    description: str
    run: Callable[[Settings], list[Path]]
    options: tuple[Option, ...] = ()
    reps: int = 5


MAX_SERVERS_OPTION = Option("max_servers", "the largest n simulated, in servers (the papers go further; the "
                            "output says so)", int, default=4096, low=1, high=limits.MAX_SERVERS, metavar="N")
"""``--max-servers``: declared by the reproductions that simulate growing systems."""


class CsvTable:
    """Rows of numbers written to ``path`` as CSV (header from the first row's keys)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []

    def add(self, **row: Any) -> None:
        self.rows.append(row)

    def write(self) -> Path:
        """Write the CSV (creating the output folder); if that fails, write it to a temporary file and raise a
        one-line ``MsjgymError`` saying where the numbers are, so that a long computation is never lost."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write(self.path)
            return self.path
        except OSError as exc:
            reason = exc.strerror or str(exc)
        fallback = fallback_file(self.path.stem, ".csv")
        self._write(fallback)
        raise MsjgymError(f"--out: {str(self.path)!r} could not be written ({reason}); the numbers are in "
                          f"{str(fallback)!r}")

    def _write(self, path: Path) -> None:
        keys = list(dict.fromkeys(k for row in self.rows for k in row))
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=keys)
            writer.writeheader()
            writer.writerows(self.rows)


def progress(items: Sequence, settings: Settings, desc: str) -> Iterable:
    """Iterate over ``items`` with a progress bar on stderr (when enabled)."""
    return tqdm(items, desc=desc, unit="point", disable=not settings.progress, file=sys.stderr, leave=False)
