"""A point estimate with the half-width of its 95 % confidence interval: the value every family's results and
references share. The intervals themselves are computed by the evaluator only (:mod:`msjgym.evaluate.intervals`)."""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    """A point estimate with the half-width of its 95 % confidence interval (NaN when it cannot be computed), and a
    warning when the value is not an honest measurement (out of the histogram's range, over- or underflowed)."""

    mean: float
    ci95: float
    warning: str | None = None
    no_ci: str | None = None
    """Why there is no interval when a sampled run has none (one measurement unit); None otherwise."""

    def to_dict(self) -> dict[str, float | str | None]:
        """``{"mean", "ci95"}`` with NaN and ±inf as None (strict JSON has no such numbers), and ``"warning"`` when
        there is one (so a None mean is never silent)."""
        out: dict[str, float | str | None] = {"mean": json_float(self.mean), "ci95": json_float(self.ci95)}
        if self.warning:
            out["warning"] = self.warning
        if self.no_ci and out["ci95"] is None:
            out["ci95_reason"] = self.no_ci
        return out


def json_float(x: float | None) -> float | None:
    """``x`` as a float, or None when it is None or not finite."""
    return None if x is None or not math.isfinite(x) else float(x)
