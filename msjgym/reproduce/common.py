"""Shared plumbing of the ``msjgym reproduce`` figures: output folder, CSV rows, progress, figure style."""
from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from msjgym.core.paths import fallback_file
from msjgym.errors import MsjgymError
from msjgym.evaluate.figures import pyplot, save_figure

__all__ = ["Settings", "CsvTable", "progress", "pyplot", "save_figure"]


@dataclass(frozen=True)
class Settings:
    """What a reproduction may spend: simulation length and seeds, and the largest system it builds.

    Attributes:
        out: folder for the PNG figures and the CSV of numbers.
        reps: independent replications per simulated point.
        jobs: measured jobs per replication.
        seed: root seed; each point derives its own seed from it and its index.
        max_servers: the largest n a reproduction simulates (the papers go further; say so in the output).
        progress: show a progress bar on stderr.
        servers: the N to simulate (``lb-tables``; None: the reproduction's default).
        arrivals: arrivals per replication (``lb-tables``; None: the paper's N·10⁴).
        backend, workers: where tasks run (``lb-tables``): "local" (a process pool of ``workers``, default every
            core) or "ray" (:func:`msjgym.evaluate.sweep.make_backend`).
    """

    out: Path
    reps: int = 5
    jobs: int = 200_000
    seed: int = 1
    max_servers: int = 4096
    progress: bool = True
    servers: tuple[int, ...] | None = None
    arrivals: int | None = None
    backend: str = "local"
    workers: int | None = None


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
