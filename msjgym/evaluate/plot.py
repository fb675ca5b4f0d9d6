"""``msjgym plot``: one metric of a sweep's results against a parameter, with 95 % CIs and, optionally, the theory.

    msjgym plot RESULTS --x NAME --y METRIC [--by FIELD] [--theory] [--out FILE] [--logy]
    msjgym plot --replay TRACE_SCENARIO --policy NAME [--kind all|gantt|utilization|queue] [--out FILE]
    msjgym plot --schedule FILE.swf|FILE.csv [--window W] [--out FILE]

The last two draw one replay's schedule (:mod:`msjgym.evaluate.schedule_plot`: a Gantt chart, the utilization and
the queue length over time).

RESULTS is a sweep's results file (``results.sqlite``) or the folder holding it. ``--x`` is a key of the sweep's
points, or ``load``: when the points do not set it, the scenario model's load ρ = λ Σ_i p_i m_i E[S_i] / n, computed
by loading the scenario with each point's overrides. A key whose values are not all numbers (``order``: fcfs, sjf,
f1) is a categorical axis: one tick per value, the curves' points side by side at each, not joined by lines.
``--y`` is any stored metric (``response_time``, ``queueing_probability[c1]``, ...).

A policy that does not read ``--x`` (``first-fit`` across ``order``, a parameter of ``priority`` only; JSQ across
``d``: :func:`msjgym.api.keys_not_read`) ran once across that axis (``msjgym sweep``): its result is drawn as a
dashed horizontal line with its CI as a band, across every x, not as one point at the value it ran at.

Curves: one colour per value of ``--by`` (``policy``, ``scenario`` or a point key). Every other field that varies
across the results (another point key; the policy when ``--by`` is a point key; the scenario) splits the curves
further, on one set of axes: such curves keep their ``--by`` colour, get their own marker, and their legend label
names the values (``fcfs, servers=16``). With a computed ``--x load``, the point key that moves the load along a
curve is not split on: ``arrival_rate`` if it varies, otherwise the varying point key with the most values.

A point is the mean over the replications with its 95 % CI (:func:`msjgym.evaluate.store.summarize`). A point whose
runs were unstable has no steady-state mean: it is drawn as an ``x`` at the top of the axes ("unstable run").

``--theory`` adds the scorecard's references (the scenario family's ``references``) for ``--y`` at every
plotted point, in the curve's colour: exact values dashed, bounds as shaded bands (a missing side reaches the axis
edge; a bound given by another simulated metric uses that metric's mean), asymptotic predictions dotted,
approximations loosely dotted. Where a stability condition predicts instability, the x-range is shaded from the
threshold on (interpolated linearly in the condition's value between the neighbouring points). A footnote lists the
references' sources.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sqlite3
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msjgym import api
from msjgym.api import Scenario, load_scenario
from msjgym.core.inputs import refuse_overwrite
from msjgym.core.paths import check_output_file, path_kind, shown
from msjgym.core.references import Reference
from msjgym.core.validation import is_real, one_line, show
from msjgym.errors import MsjgymError
from msjgym.evaluate.figures import FORMATS
from msjgym.evaluate.store import ANY, PointSummary, ResultStore, canonical_point, summarize

RESULTS_FILE = "results.sqlite"
LOAD = "load"
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
          "tab:cyan", "tab:gray")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
DASHES = ((0, (6, 3)), (0, (2, 2)), (0, (8, 2, 2, 2)), (0, (4, 1, 1, 1, 1, 1)), (0, (10, 4)))
"""The line styles of curves whose policy does not read x, by marker (one run drawn across the axes)."""
LEGEND_WIDTH = 48
"""Legend labels are wrapped at this many characters (a saved model's path can be long)."""
LINE_STYLES = {"exact": (0, (5, 3)), "asymptotic": (0, (1, 1.5)), "approximation": (0, (1, 4))}
THEORY_KINDS = ("exact", "bound", "asymptotic", "approximation")
BAND_ALPHA = 0.15
UNSTABLE_ALPHA = 0.08
FOOTNOTE_STYLE = dict(fontsize=6.5, color="grey", ha="left", va="top")

References = Callable[[PointSummary], list[Reference]]


@dataclass
class Curve:
    """The points that share every field but x, in increasing x."""

    label: str
    color: str
    marker: str
    points: list[tuple[float, PointSummary]]
    reads_x: bool = True
    """False when the curve's policy does not read ``--x``: one run stands for every x (drawn as a line)."""


@dataclass
class PlotRecord:
    """What :func:`plot_summaries` wrote and drew (the matplotlib artists, for callers and tests).

    Attributes:
        points: one errorbar container per curve with stable points.
        flat: the (line, band) of each curve whose policy does not read x.
        unstable: one Line2D of ``x`` markers per curve with unstable points.
        exact, asymptotic, approximation: the theory's Line2Ds (one per run of consecutive points).
        bounds: the bands (PolyCollections), one per run of consecutive points.
        unstable_regions: the shaded x-ranges (patches) where a stability condition predicts instability, and
            ``unstable_ranges`` their (start, end) in x.
        sources: "kind: source" of every reference drawn.
        notes: what was left out, for the user.
    """

    path: Path
    curves: list[Curve]
    points: list[Any] = field(default_factory=list)
    flat: list[Any] = field(default_factory=list)
    unstable: list[Any] = field(default_factory=list)
    exact: list[Any] = field(default_factory=list)
    bounds: list[Any] = field(default_factory=list)
    asymptotic: list[Any] = field(default_factory=list)
    approximation: list[Any] = field(default_factory=list)
    unstable_regions: list[Any] = field(default_factory=list)
    unstable_ranges: list[tuple[float, float]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the results and their names
def results_file(path: str | Path) -> Path:
    """The results file named by ``path``: the file itself, or ``results.sqlite`` in the folder."""
    file = Path(path).expanduser()
    kind, what = path_kind(file)
    if kind == "folder":
        file = file / RESULTS_FILE
        kind, what = path_kind(file)
    if kind in ("special", "unusable"):
        raise MsjgymError(f"RESULTS {shown(path)}: {what}; give a results.sqlite or its folder")
    if kind != "file":
        raise MsjgymError(f"RESULTS {shown(path)}: no such results file (give a results.sqlite or its folder)")
    return Path(os.getcwd(), file)


def load_summaries(path: str | Path) -> list[PointSummary]:
    """The summarized points of a results file (or its folder); an error if it holds no finished task."""
    file = results_file(path)
    try:
        with ResultStore(file, create=False, label="RESULTS") as store:
            rows = list(store.rows())
    except sqlite3.Error as exc:
        raise MsjgymError(f"RESULTS {str(file)!r}: not a results file ({exc})") from None
    if not rows:
        raise MsjgymError(f"RESULTS {str(file)!r}: no finished task in the results (empty store)")
    return summarize(rows)


def x_names(summaries: Sequence[PointSummary]) -> list[str]:
    """Valid ``--x``: the point keys set in every point (numeric or categorical), and ``load``."""
    common = set.intersection(*(set(s.point) for s in summaries)) if summaries else set()
    names = sorted(common)
    return names if LOAD in names else names + [LOAD]


def categories(summaries: Sequence[PointSummary], x: str) -> list[Any] | None:
    """The values of a categorical ``x`` (numbers first, then by text), or None when ``x`` is numeric or the
    computed load."""
    values = [s.point[x] for s in summaries if x in s.point]
    if not values or all(is_real(v) for v in values):
        return None
    return [v for _, v in sorted({_key(v): v for v in values}.items(), key=lambda kv: _order(kv[1]))]


def metric_names(summaries: Sequence[PointSummary]) -> list[str]:
    """Valid ``--y``: every metric of a stable point, in the order they were stored."""
    return list(dict.fromkeys(name for s in summaries for name in s.metrics))


def by_names(summaries: Sequence[PointSummary]) -> list[str]:
    """Valid ``--by``: policy, scenario, and every point key."""
    return ["policy", "scenario"] + sorted({k for s in summaries for k in s.point} - {"policy", "scenario"})


def _check_names(summaries: Sequence[PointSummary], x: str, y: str, by: str) -> None:
    if not summaries:
        raise MsjgymError("no results to plot (empty store)")
    if x not in (valid := x_names(summaries)):
        raise MsjgymError(f"--x {x!r}: not a point parameter of these results; valid: {', '.join(valid)}")
    metrics = metric_names(summaries)
    if metrics and y not in metrics:
        raise MsjgymError(f"--y {y!r}: no such metric in these results; valid: {', '.join(metrics)}")
    if by not in (valid := by_names(summaries)):
        raise MsjgymError(f"--by {by!r}: not a field of these results; valid: {', '.join(valid)}")
    if by == x:
        raise MsjgymError(f"--by {by!r}: must differ from --x")


def default_output(results: Path, x: str, y: str) -> Path:
    """``<y>-vs-<x>.png`` beside the results file (characters other than letters, digits, ``._-`` become ``_``)."""
    def slug(text: str) -> str:
        return re.sub(r"[^\w.-]+", "_", text).strip("_") or "metric"
    return results.parent / f"{slug(y)}-vs-{slug(x)}.png"


# ---------------------------------------------------------------- curves
def _field(summary: PointSummary, name: str) -> Any:
    if name == "policy":
        return summary.policy
    if name == "scenario":
        return summary.scenario
    return summary.point.get(name)


def _key(value: Any) -> str:
    """A hashable, canonical form of a field value (points may hold lists)."""
    return json.dumps(value, sort_keys=True)


def _order(value: Any) -> tuple:
    """Sort numbers by value, before anything else (sorted by text)."""
    return (0, float(value), "") if is_real(value) else (1, 0.0, _key(value))


def _show(value: Any) -> str:
    return f"{value:g}" if is_real(value) and not float(value).is_integer() else show(value).strip("'")


class _Scenarios:
    """The scenario of each summary's (scenario, point), loaded once."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], Scenario] = {}

    def get(self, summary: PointSummary, why: str) -> Scenario:
        key = (summary.scenario, canonical_point(summary.point))
        if key not in self._cache:
            try:
                self._cache[key] = load_scenario(summary.scenario, summary.point)
            except MsjgymError as exc:
                raise MsjgymError(f"{why}: cannot load scenario {summary.scenario!r} at {key[1]}: {exc}") from None
        return self._cache[key]


def _x_value(summary: PointSummary, x: str, scenarios: _Scenarios, cats: Sequence[Any] | None = None) -> float:
    if cats is not None:
        return float([_key(v) for v in cats].index(_key(summary.point[x])))
    if x in summary.point:
        return float(summary.point[x])
    return scenarios.get(summary, f"--x {LOAD}").model.load


def reads(summary: PointSummary, x: str, loaded: dict[tuple[str, str], Scenario | None] | None = None) -> bool:
    """Whether the summary's policy reads the point key ``x``: not when ``x`` is a parameter of another of the
    family's policies that this one does not declare (``order`` for ``first-fit``), nor a scenario key the family
    says the policy does not read (:func:`msjgym.api.keys_not_read`: ``d`` under JSQ). Such a policy's sweep ran
    once across ``x``. ``loaded`` caches the scenarios loaded for the family's answer, by (scenario, point)."""
    if x not in summary.point:
        return True  # the computed load
    try:
        family = api.family_of(summary.scenario)
        own = api.declared_parameters(family, summary.policy)
        foreign = api.foreign_parameters(family, summary.policy)
    except MsjgymError:  # a policy or scenario that no longer loads: assume it reads x (drawn as points)
        return True
    if x in own:
        return True
    if x in foreign:
        return False
    if getattr(family, "keys_not_read", None) is None:
        return True
    point = {k: v for k, v in summary.point.items() if k not in own | foreign}
    loaded = {} if loaded is None else loaded
    at = (summary.scenario, canonical_point(point))
    if at not in loaded:
        try:
            loaded[at] = load_scenario(summary.scenario, point)
        except MsjgymError:
            loaded[at] = None
    scenario = loaded[at]
    if scenario is None:
        return True
    not_read = api.keys_not_read(family, scenario, summary.policy)
    return x not in not_read and x.partition(".")[0] not in not_read


def _split_fields(summaries: Sequence[PointSummary], x: str, by: str, computed_x: bool) -> list[str]:
    """The fields besides x and by that vary across the summaries: the curves are split on them."""
    keys = ["scenario", "policy"] + sorted({k for s in summaries for k in s.point})
    distinct = {k: len({_key(_field(s, k)) for s in summaries}) for k in dict.fromkeys(keys) if k not in (x, by)}
    varying = [k for k, count in distinct.items() if count > 1]
    point_keys = [k for k in varying if k not in ("scenario", "policy")]
    if computed_x and point_keys:  # the key that moves the load along a curve
        varying.remove("arrival_rate" if "arrival_rate" in point_keys else max(point_keys, key=distinct.get))
    return varying


def _label(by: str, value: Any, split: Sequence[str], values: Sequence[Any]) -> str:
    head = str(value) if by in ("policy", "scenario") else f"{by}={_show(value)}"
    return ", ".join([head] + [f"{k}={_show(v)}" for k, v in zip(split, values)])


def build_curves(summaries: Sequence[PointSummary], x: str, by: str,
                 scenarios: _Scenarios | None = None) -> tuple[list[Curve], list[str]]:
    """The curves of ``summaries`` against ``x`` (see the module docstring), and notes on what was left out."""
    scenarios = scenarios or _Scenarios()
    computed_x = any(x not in s.point for s in summaries)
    cats = categories(summaries, x)
    split = _split_fields(summaries, x, by, computed_x)
    memo: dict[tuple[str, str, str, str], bool] = {}
    loaded: dict[tuple[str, str], Scenario | None] = {}

    def read_by(s: PointSummary, key: str) -> bool:
        at = (s.scenario, canonical_point(s.point), s.policy, key)
        if at not in memo:
            memo[at] = reads(s, key, loaded)
        return memo[at]

    def value(s: PointSummary, key: str) -> Any:  # "any" for a point key the policy does not read
        return ANY if key in s.point and not read_by(s, key) else _field(s, key)

    read: dict[tuple, bool] = {}
    groups: dict[tuple, dict[float, PointSummary]] = {}
    values: dict[tuple, tuple] = {}
    duplicates = 0
    for s in summaries:
        fields = (value(s, by),) + tuple(value(s, k) for k in split)
        gkey = tuple(_key(v) for v in fields)
        values[gkey] = fields
        points = groups.setdefault(gkey, {})
        read[gkey] = read.get(gkey, True) and read_by(s, x)
        xv = _x_value(s, x, scenarios, cats)
        if xv in points:
            duplicates += 1
            if points[xv].reps >= s.reps:
                continue
        points[xv] = s
    order = sorted(groups, key=lambda g: tuple(_order(v) for v in values[g]))
    colors = {k: COLORS[i % len(COLORS)] for i, k in enumerate(dict.fromkeys(g[0] for g in order))}
    markers = {k: MARKERS[i % len(MARKERS)] for i, k in enumerate(dict.fromkeys(g[1:] for g in order))}
    curves = [Curve(_label(by, values[g][0], split, values[g][1:]), colors[g[0]], markers[g[1:]],
                    sorted(groups[g].items(), key=lambda p: p[0]), read[g]) for g in order]
    notes = [f"{duplicates} point(s) share their curve and x with another (another run length, or a parameter that "
             "varies with a computed load): kept the one with the most replications"] if duplicates else []
    return curves, notes


# ---------------------------------------------------------------- drawing: simulation
def _draw_simulation(ax: Any, curve: Curve, y: str, record: PlotRecord, x: str = "", categorical: bool = False,
                     offset: float = 0.0) -> int:
    """Mean ± 95 % CI of the stable points (a dashed line and band across the axes when the curve's policy does not
    read ``x``; side by side at ``offset`` on a categorical axis, not joined), ``x`` markers for the unstable ones;
    returns stable points without y."""
    stable = [(x, s.metrics[y]) for x, s in curve.points
              if s.stable and y in s.metrics and math.isfinite(s.metrics[y].mean)]
    missing = sum(1 for _, s in curve.points if s.stable) - len(stable)
    if stable and not curve.reads_x:
        estimate = stable[0][1]
        half = estimate.ci95 if math.isfinite(estimate.ci95) else 0.0
        line = ax.axhline(estimate.mean, color=curve.color, ls=DASHES[MARKERS.index(curve.marker) % len(DASHES)],
                          lw=1.2, zorder=2, label=f"{curve.label} (does not read {x}: one run)")
        band = ax.axhspan(estimate.mean - half, estimate.mean + half, color=curve.color, alpha=BAND_ALPHA, lw=0)
        record.flat.append((line, band))
    elif stable:
        xs = [x + offset for x, _ in stable]
        means = [e.mean for _, e in stable]
        errors = [e.ci95 if math.isfinite(e.ci95) else 0.0 for _, e in stable]
        record.points.append(ax.errorbar(xs, means, yerr=errors, color=curve.color, marker=curve.marker, ms=5,
                                         lw=1.0, capsize=3, label=curve.label, zorder=3,
                                         ls="none" if categorical else "-"))
    unstable = [x for x, s in curve.points if not s.stable]
    if unstable:
        line, = ax.plot(unstable, [0.97] * len(unstable), transform=ax.get_xaxis_transform(), ls="none",
                        marker="x", ms=9, mew=2, color=curve.color, clip_on=False, zorder=4,
                        label="_nolegend_" if stable else curve.label)
        record.unstable.append(line)
    return missing


# ---------------------------------------------------------------- drawing: theory
@dataclass
class _Series:
    """One reference followed along a curve: (index of the curve point, x, value or (lower, upper))."""

    kind: str
    source: str
    points: list[tuple[int, float, Any]] = field(default_factory=list)

    def runs(self) -> list[list[tuple[int, float, Any]]]:
        """The points split where the reference is missing at a curve point (so no line spans a gap)."""
        runs: list[list[tuple[int, float, Any]]] = []
        for p in self.points:
            if runs and runs[-1][-1][0] == p[0] - 1:
                runs[-1].append(p)
            else:
                runs.append([p])
        return runs


def _series(curve: Curve, y: str, refs_of: References) -> list[_Series]:
    """The references for ``y`` along the curve, one series per (kind, source, rank among equals)."""
    series: dict[tuple[str, str, int], _Series] = {}
    for i, (x, s) in enumerate(curve.points):
        rank: dict[tuple[str, str], int] = {}
        for r in refs_of(s):
            if r.quantity != y or r.kind not in THEORY_KINDS:
                continue
            value = _reference_value(r, s)
            n = rank[(r.kind, r.source)] = rank.get((r.kind, r.source), -1) + 1
            if value is not None:
                series.setdefault((r.kind, r.source, n), _Series(r.kind, r.source)).points.append((i, x, value))
    return list(series.values())


def _finite(v: float | None) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def _reference_value(r: Reference, s: PointSummary) -> Any:
    """The value of an exact/asymptotic/approximate reference, or a bound's (lower, upper); None if unknown."""
    if r.kind != "bound":
        return _finite(r.value)
    upper = r.upper
    if r.upper_metric is not None:
        estimate = s.metrics.get(r.upper_metric)
        upper = estimate.mean if estimate is not None else None
        if upper is None:
            return None
    lower, upper = _finite(r.lower), _finite(upper)
    return None if lower is None and upper is None else (lower, upper)


def _draw_lines(ax: Any, curve: Curve, series: _Series) -> list[Any]:
    """Exact values dashed, asymptotic predictions dotted, approximations loosely dotted, wide and translucent behind
    the points, with a tick at each point's value."""
    lines = []
    for run in series.runs():
        xs, vs = [p[1] for p in run], [p[2] for p in run]
        line, = ax.plot(xs, vs, color=curve.color, ls=LINE_STYLES[series.kind], lw=2.4, alpha=0.55, marker="_",
                        ms=14, mew=2, zorder=2)
        lines.append(line)
    return lines


def _draw_bands(ax: Any, curve: Curve, series: _Series) -> list[Any]:
    """A bound as a band between its sides, a missing side at the axis edge (call once the limits are fixed)."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    half = 0.015 * (x1 - x0)
    bands = []
    for run in series.runs():
        xs = [p[1] for p in run]
        lows = [y0 if p[2][0] is None else p[2][0] for p in run]
        highs = [y1 if p[2][1] is None else p[2][1] for p in run]
        if len(run) == 1:
            xs, lows, highs = [xs[0] - half, xs[0] + half], lows * 2, highs * 2
        bands.append(ax.fill_between(xs, lows, highs, color=curve.color, alpha=BAND_ALPHA, lw=0, zorder=1))
    return bands


def _predicts_unstable(refs: list[Reference]) -> list[Reference]:
    return [r for r in refs if r.kind == "condition" and r.predicts_stable is False]


def _threshold(stable: tuple[float, PointSummary], unstable: tuple[float, PointSummary], refs_of: References) -> float:
    """Where instability starts between two neighbouring points: the crossing nearest the stable point of a condition
    (value = upper, linear in between) that predicts instability at the other; the midpoint if none can tell."""
    (xs, ss), (xu, su) = stable, unstable
    crossings = []
    for r in _predicts_unstable(refs_of(su)):
        for q in refs_of(ss):
            if q.kind == "condition" and q.source == r.source and None not in (q.value, q.upper, r.value, r.upper):
                ds, du = q.value - q.upper, r.value - r.upper
                if ds < 0 <= du:
                    crossings.append(xs + (xu - xs) * ds / (ds - du))
    if not crossings:
        return (xs + xu) / 2
    return min(crossings, key=lambda c: abs(c - xs))


def _unstable_ranges(curve: Curve, refs_of: References, xlim: tuple[float, float]) -> list[tuple[float, float]]:
    """The x-ranges where a stability condition predicts instability, extended to the axis edges at the ends."""
    flags = [bool(_predicts_unstable(refs_of(s))) for _, s in curve.points]
    ranges = []
    i, n = 0, len(flags)
    while i < n:
        if not flags[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and flags[j + 1]:
            j += 1
        start = xlim[0] if i == 0 else _threshold(curve.points[i - 1], curve.points[i], refs_of)
        end = xlim[1] if j == n - 1 else _threshold(curve.points[j + 1], curve.points[j], refs_of)
        ranges.append((start, end))
        i = j + 1
    return ranges


def _draw_unstable_ranges(ax: Any, curve: Curve, refs_of: References, record: PlotRecord) -> int:
    """Shade the curve's predicted-unstable x-ranges; returns how many of its points were simulated stable there."""
    xlim = ax.get_xlim()
    for start, end in _unstable_ranges(curve, refs_of, xlim):
        record.unstable_ranges.append((start, end))
        record.unstable_regions.append(ax.axvspan(start, end, color=curve.color, alpha=UNSTABLE_ALPHA, lw=0,
                                                  zorder=0))
        for edge in (start, end):
            if xlim[0] < edge < xlim[1]:
                ax.axvline(edge, color=curve.color, ls="-.", lw=1, alpha=0.8, zorder=1)
    contradicted = 0
    for _, s in curve.points:
        predictions = _predicts_unstable(refs_of(s))
        record.sources += [f"stability: {r.source}" for r in predictions]
        contradicted += bool(predictions) and s.stable
    return contradicted


def _references_of(scenarios: _Scenarios) -> References:
    """The references of a summary's scenario, point and policy (from the scenario's family), computed once each."""
    cache: dict[tuple[str, str, str], list[Reference]] = {}

    def refs_of(s: PointSummary) -> list[Reference]:
        key = (s.scenario, canonical_point(s.point), s.policy)
        if key not in cache:
            scenario = scenarios.get(s, "--theory")
            family, run = api.family_of(scenario), api.RunSettings(reps=1, batches=1)  # the smallest: no simulation
            family.validate(scenario, s.policy, run)  # references() take a validated (scenario, policy, run)
            cache[key] = family.references(scenario, s.policy, run)
        return cache[key]
    return refs_of


def _draw_theory(ax: Any, curves: list[Curve], y: str, refs_of: References, record: PlotRecord) -> None:
    """The references' lines (before the limits are fixed, so they count), then bands and instability shading."""
    all_series = [(c, s) for c in curves for s in _series(c, y, refs_of)]
    for curve, series in all_series:
        if series.kind != "bound":
            getattr(record, series.kind).extend(_draw_lines(ax, curve, series))
    ax.set_xlim(ax.get_xlim())
    ax.set_ylim(ax.get_ylim())
    for curve, series in all_series:
        if series.kind == "bound":
            record.bounds.extend(_draw_bands(ax, curve, series))
    for curve, series in all_series:
        record.sources.append(f"{series.kind}: {series.source}")
    contradicted = sum(_draw_unstable_ranges(ax, curve, refs_of, record) for curve in curves)
    if contradicted:
        record.notes.append(f"{contradicted} point(s) ran as stable where a stability condition predicts instability "
                            "(runs too short for the growth to show?)")
    record.sources = list(dict.fromkeys(record.sources))


# ---------------------------------------------------------------- legend, footnote, figure
def _legend(ax: Any, record: PlotRecord) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles, labels = ax.get_legend_handles_labels()
    extra = []
    if record.unstable:
        extra.append(Line2D([], [], ls="none", marker="x", ms=7, mew=2, color="black", label="unstable run"))
    for kind in ("exact", "asymptotic", "approximation"):
        if getattr(record, kind):
            extra.append(Line2D([], [], ls=LINE_STYLES[kind], lw=2.4, alpha=0.55, color="dimgray",
                                label=f"{kind} (theory)"))
    if record.bounds:
        extra.append(Patch(color="dimgray", alpha=0.3, lw=0, label="bound (theory)"))
    if record.unstable_regions:
        extra.append(Patch(color="dimgray", alpha=0.2, lw=0, label="predicted unstable (theory)"))
    labels = [textwrap.fill(label, LEGEND_WIDTH, subsequent_indent="  ") for label in labels]
    ax.legend(handles=handles + extra, labels=labels + [h.get_label() for h in extra], fontsize=7.5,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _footnote(summaries: Sequence[PointSummary], record: PlotRecord) -> str:
    reps = sorted({s.reps for s in summaries})
    count = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]}–{reps[-1]}"
    lines = [f"Points: mean ± 95 % CI over {count} replication(s)"
             + ("; no error bar where there is one replication (no CI)" if reps[0] < 2 else "")
             + ("; x at the top: runs stopped as unstable (no steady state)." if record.unstable else ".")]
    by_kind: dict[str, list[str]] = {}
    for entry in record.sources:
        kind, source = entry.split(": ", 1)
        by_kind.setdefault(kind, []).append(source)
    lines += [f"{kind}: {'; '.join(sources)}" for kind, sources in by_kind.items()]
    return "\n".join(textwrap.fill(line, width=150, subsequent_indent="    ") for line in lines)


def _x_label(x: str, summaries: Sequence[PointSummary]) -> str:
    if x == LOAD and any(LOAD not in s.point for s in summaries):
        return "load ρ = λ Σ p·m·E[S] / n"
    return x


def plot_summaries(summaries: Sequence[PointSummary], x: str, y: str, by: str = "policy", theory: bool = False,
                   out: str | Path = "plot.png", logy: bool = False, *, title: str | None = None) -> PlotRecord:
    """Plot metric ``y`` of ``summaries`` against ``x``, one curve per ``by`` value (see the module docstring).

    Writes ``out`` (PNG, SVG or PDF by its suffix) and returns what was drawn. Raises ``MsjgymError`` for an
    unknown ``x``, ``y`` or ``by``, an unsupported suffix, or a scenario that cannot be loaded for ``load``/theory.
    """
    from msjgym.evaluate.figures import pyplot, save_figure
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise MsjgymError(f"--out {str(out)!r}: unsupported format; valid suffixes: {', '.join(FORMATS)}")
    _check_names(summaries, x, y, by)
    cats = categories(summaries, x)
    if theory and cats is not None:
        raise MsjgymError(f"--theory: needs a numeric --x ({x} is categorical: "
                          f"{', '.join(_show(v) for v in cats)})")
    scenarios = _Scenarios()
    curves, notes = build_curves(summaries, x, by, scenarios)
    record = PlotRecord(path=out, curves=curves, notes=notes)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    if logy:
        ax.set_yscale("log")
    dodged = [c for c in curves if c.reads_x] if cats is not None else []
    width = min(0.6, 0.12 * len(dodged))  # a categorical axis: the curves side by side within ±width/2 of a tick
    offsets = {id(c): (k / (len(dodged) - 1) - 0.5) * width if len(dodged) > 1 else 0.0 for k, c in enumerate(dodged)}
    missing = sum(_draw_simulation(ax, c, y, record, x, cats is not None, offsets.get(id(c), 0.0)) for c in curves)
    if cats is not None:
        ax.set_xticks(range(len(cats)), [_show(v) for v in cats])
        ax.set_xlim(-0.5, len(cats) - 0.5)
    if missing:
        record.notes.append(f"{missing} stable point(s) have no finite {y} value: left out")
    if theory:
        _draw_theory(ax, curves, y, _references_of(scenarios), record)
    ax.set_xlabel(_x_label(x, summaries))
    ax.set_ylabel(y)
    ax.grid(True, alpha=0.3)
    names = ", ".join(dict.fromkeys(s.scenario for s in summaries))
    ax.set_title(title or f"{y} vs {x} — {names}", fontsize=10)
    _legend(ax, record)
    fig.tight_layout()
    fig.text(0.01, 0.0, _footnote(summaries, record), transform=fig.transFigure, **FOOTNOTE_STYLE)
    record.path = save_figure(fig, out)
    return record


# ---------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``msjgym plot``."""
    parser.add_argument("results", metavar="RESULTS", nargs="?", default=None,
                        help="a sweep's results.sqlite, or the folder holding it (not with --replay, --schedule)")
    parser.add_argument("--x", default=None, metavar="NAME",
                        help="sweep results: a point parameter, or `load` (computed from the scenario when not a "
                             "parameter)")
    parser.add_argument("--y", default=None, metavar="METRIC",
                        help="sweep results: a stored metric, e.g. response_time")
    parser.add_argument("--replay", default=None, metavar="SCENARIO",
                        help="draw the schedule of one replay of this trace scenario under --policy: a Gantt chart, "
                             "utilization and queue length over time")
    parser.add_argument("--policy", default=None, metavar="NAME", help="--replay: the policy (a built-in name)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="--replay: override a scenario key or bind a policy parameter (repeatable)")
    parser.add_argument("--schedule", default=None, metavar="FILE",
                        help="draw a schedule written by `msjgym evaluate --per-job FILE.swf|FILE.csv` (or any SWF "
                             "file with wait times)")
    parser.add_argument("--kind", default="all", choices=("all", "gantt", "utilization", "queue"),
                        help="--replay, --schedule: which panels (default all three)")
    parser.add_argument("--color", default="wait", choices=("wait", "size"),
                        help="--replay, --schedule: Gantt colour by waiting time (default) or job size")
    parser.add_argument("--window", type=int, default=None, metavar="W",
                        help="--schedule of several windows: the window to draw (default the first)")
    parser.add_argument("--by", default="policy", metavar="FIELD",
                        help="one colour per value of FIELD: policy (default), scenario or a point parameter")
    parser.add_argument("--theory", action="store_true",
                        help="draw the theory's references (exact, bounds, asymptotics, stability) beside the points")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="output .png, .svg or .pdf (default: <y>-vs-<x>.png beside the results file)")
    parser.add_argument("--logy", action="store_true", help="logarithmic y axis")


def command(args: argparse.Namespace) -> int:
    """Run ``msjgym plot``: print the path written; on bad input, one ``msjgym: error:`` line and status 2."""
    if getattr(args, "replay", None) or getattr(args, "schedule", None):
        return _schedule_command(args)
    try:
        for name in ("results", "x", "y"):
            if getattr(args, name) is None:
                raise MsjgymError(f"{'RESULTS' if name == 'results' else '--' + name}: required to plot sweep "
                                  "results (or draw a schedule: --replay SCENARIO --policy P, --schedule FILE)")
        file = results_file(args.results)
        # --out: like every file output (msjgym.core.paths), its folder must exist (nothing is created), absolute
        out = check_output_file(args.out, "--out") if args.out else default_output(file, args.x, args.y)
        moved = args.out is None and not os.access(out.parent, os.W_OK)  # a store on read-only media
        if moved:
            out = check_output_file(Path.cwd() / out.name, "--out")
        refuse_overwrite({"--out": out}, [file])
        summaries = load_summaries(file)
        record = plot_summaries(summaries, args.x, args.y, by=args.by, theory=args.theory, out=out, logy=args.logy)
    except MsjgymError as exc:
        print(f"msjgym: error: {one_line(exc)}", file=sys.stderr)
        return 2
    if moved:
        print(f"msjgym: note: {str(file.parent)!r} is not writable (read-only media?): the figure is in the "
              "current folder", file=sys.stderr)
    for note in record.notes:
        print(f"msjgym: note: {note}", file=sys.stderr)
    print(record.path)
    return 0


def _schedule_command(args: argparse.Namespace) -> int:
    """``msjgym plot --replay SCENARIO --policy P`` or ``--schedule FILE``: the schedule's pictures
    (:mod:`msjgym.evaluate.schedule_plot`)."""
    from msjgym.core.overrides import parse_override
    from msjgym.core.schedule import read_schedule, with_need
    from msjgym.evaluate.evaluator import evaluate
    from msjgym.evaluate.schedule_plot import plot_schedule

    try:
        if args.replay and args.schedule:
            raise MsjgymError("--replay, --schedule: give one")
        if args.results or args.x or args.y:
            raise MsjgymError("RESULTS, --x, --y: for sweep results, not with --replay or --schedule")
        if args.schedule:
            if args.policy or args.param:
                raise MsjgymError("--policy, --param: only with --replay")
            columns, servers = read_schedule(args.schedule)
            title = f"{Path(args.schedule).name}: {len(columns['arrival_time']):,} jobs"
            default = Path(args.schedule).with_suffix(".png")
            inputs = [Path(args.schedule)]
        else:
            if not args.policy:
                raise MsjgymError("--replay: give --policy NAME")
            overrides = dict(parse_override(text) for text in args.param)
            scenario, policy = api.scenario_and_policy(args.replay, args.policy, overrides)
            if getattr(scenario.model, "trace", None) is None:
                raise MsjgymError(f"--replay {args.replay}: not a trace scenario (arrivals = {{trace = ...}})")
            result = evaluate(scenario, policy, reps=1, references=False)
            columns, servers = with_need(result.per_job, result.per_job_header), result.per_job_header.get("servers")
            metrics = result.metrics
            title = (f"{scenario.name} under {result.policy}: {len(columns['arrival_time']):,} jobs; mean wait "
                     f"{metrics['waiting_time'].mean:.4g}, bounded slowdown {metrics['bounded_slowdown'].mean:.4g}, "
                     f"utilization {metrics['utilization'].mean:.3f}")
            default = Path(f"{Path(scenario.name).stem}-{result.policy}.png")
            inputs = [Path(args.replay)] if Path(args.replay).is_file() else []
        out = Path(args.out) if args.out else default
        refuse_overwrite({"--out": out}, inputs)
        record = plot_schedule(columns, servers, out, kind=args.kind, color=args.color, window=args.window,
                               title=title)
    except MsjgymError as exc:
        print(f"msjgym: error: {exc}", file=sys.stderr)
        return 2
    for note in record.notes:
        print(f"msjgym: note: {note}", file=sys.stderr)
    print(record.path)
    return 0
