"""matplotlib for msjgym's figures (``msjgym plot``, ``msjgym reproduce``): a file backend, and one way to save."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from msjgym.errors import MsjgymError

FORMATS = (".png", ".svg", ".pdf")
"""The figure files msjgym writes, by suffix (matplotlib picks the format from it)."""


def save_figure(fig: Any, path: Path) -> Path:
    """Save a matplotlib figure as PNG (150 dpi) and close it; a failed write is a one-line ``MsjgymError``."""
    import matplotlib.pyplot as plt
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight")
    except OSError as exc:
        raise MsjgymError(f"{str(path)!r}: the figure could not be written ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
    return path


def pyplot() -> Any:
    """matplotlib's pyplot with a non-interactive backend (figures are only written to files)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
