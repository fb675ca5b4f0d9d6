"""``msjgym``: the command line.

    msjgym list
    msjgym evaluate SCENARIO --policy NAME [--reps R] [--jobs J] [--seed S] [--param KEY=VALUE ...] [--json]

Bad input (an unknown policy, a scenario error, an invalid option) prints one ``msjgym: error: ...`` line and exits
with status 2.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from msjgym.errors import MsjgymError
from msjgym.evaluate.runner import EvaluationResult, evaluate
from msjgym.evaluate.statistics import Estimate
from msjgym.evaluate.scenarios import list_scenarios, load_scenario, parse_override
from msjgym.policies import BUILTIN_POLICIES, get_policy

METRIC_ORDER = ("response_time", "waiting_time", "number_in_system", "number_in_queue", "utilization",
                "queueing_probability", "throughput", "response_time_p95", "response_time_p99")


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format used for every bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"msjgym: error: {message}\n")


def _int_at_least(low: int):
    """An argparse type: an integer >= ``low`` (underscores allowed, as in 1_000_000)."""
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} must be >= {low}")
        return value
    return parse


_positive_int = _int_at_least(1)
_nonnegative_int = _int_at_least(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="msjgym", description="Benchmark multiserver-job schedulers against the queueing literature.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="built-in scenarios and policies, one line each")
    ev = sub.add_parser("evaluate", help="simulate a policy on a scenario and report metrics with 95%% CIs")
    ev.add_argument("scenario", help="a built-in scenario name (see `msjgym list`) or a TOML file")
    ev.add_argument("--policy", required=True, help="a built-in policy name (see `msjgym list`)")
    ev.add_argument("--reps", type=_positive_int, default=10,
                    help="independent replications (default 10; with 1, CIs come from batch means)")
    ev.add_argument("--jobs", type=_positive_int, default=100_000, help="measured jobs per replication (default 100000)")
    ev.add_argument("--warmup", type=_nonnegative_int, default=None,
                    help="jobs discarded at the start of each replication (default: jobs/10)")
    ev.add_argument("--seed", type=_nonnegative_int, default=None,
                    help="root seed (default: a random seed, printed so the run can be repeated)")
    ev.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario key (repeatable), e.g. --param servers=32")
    ev.add_argument("--batches", type=_positive_int, default=20, help="measurement batches per replication")
    ev.add_argument("--saturated", action="store_true",
                    help="measure the closed system that always has --backlog waiting jobs (maximum throughput)")
    ev.add_argument("--backlog", type=_positive_int, default=1, help="waiting jobs kept in --saturated mode")
    ev.add_argument("--no-instability-check", action="store_true",
                    help="do not stop replications whose number in system keeps growing")
    ev.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ev.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    return parser


def _cmd_list() -> None:
    print("Scenarios (msjgym evaluate NAME ...; override parameters with --param KEY=VALUE):")
    scenarios = list_scenarios()
    width = max(len(name) for name, _ in scenarios)
    for name, description in scenarios:
        print(f"  {name:<{width}}  {description}")
    print("\nPolicies (--policy NAME):")
    width = max(len(name) for name in BUILTIN_POLICIES)
    for name, policy in BUILTIN_POLICIES.items():
        print(f"  {name:<{width}}  {policy.summary}")


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def _cell(estimate: Estimate | None) -> str:
    """``mean ± half-width``, both rounded to the half-width's second significant digit."""
    if estimate is None:
        return ""
    mean, half = estimate.mean, estimate.ci95
    if not math.isfinite(mean) or not math.isfinite(half) or half <= 0:
        return _fmt(mean)
    decimals = max(0, 1 - math.floor(math.log10(half)))
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def format_table(result: EvaluationResult) -> str:
    """The human-readable report: the run, then one row per metric with a column per class."""
    params = ", ".join(f"{k}={_fmt(v) if isinstance(v, float) else v}" for k, v in result.params.items()
                       if not isinstance(v, (dict, list)))
    lines = [
        f"scenario  {result.scenario}" + (f"  ({params})" if params else ""),
        f"policy    {result.policy}",
        f"run       {result.reps} replication(s) x {result.config.jobs:,} jobs "
        f"(warm-up {result.config.warmup:,}), seed {result.seed}; "
        f"{result.events:,} events in {result.wall_seconds:.2f} s"
        + (f" (+{result.compile_seconds:.0f} s compiling, first run only)" if result.compile_seconds > 1 else ""),
        "",
    ]
    if not result.stable:
        g = result.growth_rate
        lines.append(
            f"UNSTABLE: the number of jobs in system kept growing, at {_cell(g)} jobs per unit time "
            f"({len(result.unstable_replications)} of {result.reps} replications stopped); "
            "no steady-state metrics.")
        return "\n".join(lines)
    classes = list(dict.fromkeys(k[k.index("[") + 1:-1] for k in result.metrics if "[" in k))
    rows = [["metric", "all"] + [f"[{c}]" for c in classes]]
    names = [m for m in METRIC_ORDER if m in result.metrics] + \
        [m for m in result.metrics if "[" not in m and m not in METRIC_ORDER]
    for name in names:
        rows.append([name, _cell(result.metrics[name])] +
                    [_cell(result.metrics.get(f"{name}[{c}]")) for c in classes])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    lines.append("")
    lines.append("mean ± 95% CI half-width; times in the scenario's time unit; counts are time averages.")
    return "\n".join(lines)


def _cmd_evaluate(args: argparse.Namespace) -> None:
    overrides = dict(parse_override(text) for text in args.param)
    scenario = load_scenario(args.scenario, overrides)
    policy = get_policy(args.policy)
    policy.validate(scenario.model)
    result = evaluate(
        scenario, policy, reps=args.reps, jobs=args.jobs, warmup=args.warmup, seed=args.seed,
        batches=args.batches, saturated=args.saturated, backlog=args.backlog,
        detect_instability=not args.no_instability_check,
        progress=not args.no_progress and sys.stderr.isatty())
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=float))
    else:
        print(format_table(result))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``msjgym`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            _cmd_list()
        elif args.command == "evaluate":
            _cmd_evaluate(args)
    except MsjgymError as exc:
        print(f"msjgym: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("msjgym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
