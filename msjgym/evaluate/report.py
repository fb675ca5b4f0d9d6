"""The human-readable report of ``msjgym evaluate`` and ``msjgym theory``: the run, a table of metrics with their
95 % CIs (a column per class), and the scorecard of references with their verdicts."""
from __future__ import annotations

import math

from msjgym.core.estimates import Estimate
from msjgym.core.references import Reference
from msjgym.evaluate.checks import LEVEL, Check
from msjgym.evaluate.result import Result

METRIC_ORDER = ("response_time", "waiting_time", "bounded_slowdown", "makespan", "queueing_time", "front_time", "number_in_system",
                "number_in_queue", "number_in_front", "utilization", "queueing_probability", "throughput",
                "response_time_p95", "response_time_p99", "waiting_time_p95", "waiting_time_p99",
                "bounded_slowdown_p95", "bounded_slowdown_p99", "blocking_probability", "width_probability",
                "sqrt_n_blocking", "stein_lhs", "residual_work", "residual_little", "residual_pasta", "residual_stein",
                "residual_width", "mean_queue_length", "message_rate", "little_response_time",
                "work", "work_nonbusy", "work_identity_residual")
"""Metrics listed first, in this order; the others follow in the order the family reports them."""


def fmt(x: float | None, digits: int = 4) -> str:
    """A number in ``digits`` significant digits ("n/a" for None or NaN)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if digits > 4 and abs(x) < 10**digits and float(x).is_integer():
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


EXACT_DIGITS = 7
"""Significant digits of an exact value (one replay of a trace: no CI to round it to)."""


def cell(estimate: Estimate | None, digits: int = 4) -> str:
    """``mean ± half-width``, both rounded to the half-width's second significant digit (no interval: the mean in
    ``digits`` significant digits)."""
    if estimate is None:
        return ""
    mean, half = estimate.mean, estimate.ci95
    if estimate.warning:
        return fmt(mean, digits) + " (!)"
    if estimate.no_ci and not math.isfinite(half):
        return f"{fmt(mean, digits)} ± n/a"
    if not math.isfinite(mean) or not math.isfinite(half) or half <= 0:
        return fmt(mean, digits)
    decimals = max(0, 1 - math.floor(math.log10(half)))
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def _class_of(name: str) -> str | None:
    """The class (or width) of a per-class metric ``NAME[CLASS]``; None for a whole-system metric."""
    return name[name.index("[") + 1:-1] if name.endswith("]") and "[" in name else None


def format_table(result: Result) -> str:
    """The run, then one row per metric with a column per class."""
    params = ", ".join(f"{k}={fmt(v) if isinstance(v, float) else v}" for k, v in result.params.items()
                       if not isinstance(v, (dict, list)))
    lines = [
        f"scenario  {result.scenario}" + (f"  ({params})" if params else ""),
        f"policy    {result.policy}",
        f"run       {_run_size(result)}; "
        f"{result.events:,} events in {result.wall_seconds:.2f} s"
        + (f" (+{result.compile_seconds:.0f} s compiling, first run only)" if result.compile_seconds > 1 else ""),
        "",
    ]
    if not result.stable:
        lines.append(
            f"UNSTABLE: the number of jobs in system kept growing, at {cell(result.growth_rate)} jobs per unit time "
            f"({len(result.unstable_replications)} of {result.reps} replications stopped); "
            "no steady-state metrics.")
        return "\n".join(lines + _diagnostics(result))
    classes = list(dict.fromkeys(c for c in map(_class_of, result.metrics) if c is not None))
    whole = [m for m in result.metrics if _class_of(m) is None]
    bases = {m[:m.index("[")] for m in result.metrics if _class_of(m) is not None}
    names = [m for m in METRIC_ORDER if m in whole or m in bases]
    names += [m for m in whole if m not in names]
    rows = [["metric", "all"] + [f"[{c}]" for c in classes]]
    digits = EXACT_DIGITS if result.mode == "replay" else 4
    for name in names:
        rows.append([name, cell(result.metrics.get(name), digits)] +
                    [cell(result.metrics.get(f"{name}[{c}]"), digits) for c in classes])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    lines.append("")
    if result.mode == "replay":
        lines.append("exact values of one deterministic replay (no CI); times in the trace's time unit; counts are "
                     "time averages over the makespan.")
    else:
        across = {"windows": " across windows", "traces": " across traces"}.get(result.mode, "")
        lines.append(f"mean ± 95% CI half-width{across}; times in the scenario's time unit; counts are time "
                     "averages.")
        no_ci = next((e.no_ci for e in result.metrics.values() if e.no_ci), None)
        if no_ci:
            lines.append(f"± n/a: {no_ci}.")
    lines += [f"(!) {name}: {est.warning}" for name, est in result.metrics.items() if est.warning]
    return "\n".join(lines + _diagnostics(result))


def _run_size(result: Result) -> str:
    """What ran: the replications (or the replay, or the trace's windows), their length and the seed."""
    warm = f" after {result.warmup:,} warm-up" if result.warmup else ""
    if result.mode == "replay":
        return f"exact replay of {result.jobs:,} trace {result.unit}s{warm}"
    if result.mode == "traces":
        return (f"{result.reps} traces x {result.jobs:,} {result.unit}s{warm} drawn from the workload model, each "
                f"replayed from an empty machine, seed {result.seed}")
    if result.mode == "windows":
        return (f"{result.reps} windows x {result.jobs:,} trace {result.unit}s{warm}, each from an empty machine, "
                f"seed {result.seed}")
    return (f"{result.reps} replication(s) x {result.jobs:,} measured {result.unit}s (warm-up {result.warmup:,} "
            f"on top), seed {result.seed}")


def _diagnostics(result: Result) -> list[str]:
    if not result.diagnostics:
        return []
    return ["diagnostics: " + ", ".join(f"{k} = {fmt(float(v))}" for k, v in result.diagnostics.items())]


def _reference_value(ref: Reference) -> str:
    if ref.kind == "condition":
        if ref.upper is None:
            return fmt(ref.value)
        return f"{fmt(ref.value)} {'<' if ref.value < ref.upper else '>='} {fmt(ref.upper)}"
    if ref.upper_metric is not None:
        return f"<= {ref.upper_metric}"
    if ref.kind == "bound":
        if ref.lower is None:
            return f"<= {fmt(ref.upper)}"
        return f">= {fmt(ref.lower)}" if ref.upper is None else f"[{fmt(ref.lower)}, {fmt(ref.upper)}]"
    return fmt(ref.value)


def format_references(refs: list[Reference], title: str = "references (theory beside the simulation):") -> str:
    """The scorecard: the references' descriptions and sources, numbered, then one row per reference."""
    if not refs:
        return ""
    labels: dict[tuple[str, str], int] = {}
    for r in refs:
        labels.setdefault((r.description, r.source), len(labels) + 1)
    lines = ["", title]
    lines += [f"  [{i}] {d}; source: {src}" for (d, src), i in labels.items()]
    rows = [["ref", "kind", "quantity", "theory", "verdict"]]
    rows += [[f"[{labels[(r.description, r.source)]}]", r.kind, r.quantity, _reference_value(r), r.verdict]
             for r in refs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines.append("")
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def format_checks(checks: list[Check], notes: list[str] = ()) -> str:
    """The run-time invariants (no theory needed; :mod:`msjgym.evaluate.checks`): one row per check with both sides,
    the difference and its allowed bound, and the verdict; then the heavy-tail notes."""
    if not checks and not notes:
        return ""
    lines = ["", "", f"checks (hold for any policy; difference judged by its {100 * LEVEL:g}% interval, "
                 "docs/statistics.md#checks):"]
    rows = [["check", "measured", "verdict"]]
    rows += [[c.name, c.summary(), c.verdict] for c in checks]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    if checks:
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines += [f"  {c.name}: {c.description}" for c in checks if c.agrees is False]
    lines += [f"  note: {n}" for n in notes]
    return "\n".join(lines)
