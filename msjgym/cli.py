"""``msjgym``: the command line.

    msjgym list
    msjgym evaluate SCENARIO --policy NAME [--reps R] [--jobs J] [--seed S] [--param KEY=VALUE ...] [--json]
    msjgym theory SCENARIO [--policy NAME] [--param KEY=VALUE ...] [--json]
    msjgym reproduce NAME [--out DIR] [--reps R] [--jobs J] [--max-servers N]
    msjgym reproduce lb-tables [--servers N,N] [--reps R] [--arrivals A] [--backend local|ray] [--workers W]
    msjgym sweep SCENARIO --grid NAME=a:b:k ... --policy P[,P...] --reps R --out DIR [--backend local|ray]
    msjgym plot RESULTS --x NAME --y METRIC [--by policy] [--theory] [--out FILE]
    msjgym finite-skip NAME --policy P [--param load=RHO] [--reps R] [--jobs J] [--seed S] [--json] | --list

Bad input (an unknown policy, a scenario error, an invalid option) prints one ``msjgym: error: ...`` line and exits
with status 2.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from msjgym.core.traces import Trace
from msjgym.core.validation import int_at_least
from msjgym.errors import MsjgymError
from msjgym.evaluate import plot, scorecard, sweep
from msjgym.systems.finite_skip import cli as finite_skip_cli
from msjgym.evaluate.runner import EvaluationResult, evaluate
from msjgym.evaluate.scorecard import Reference
from msjgym.evaluate.statistics import Estimate
from msjgym.systems.msj.scenarios import is_builtin_msj, list_scenarios, load_scenario, parse_override
from msjgym.policies import BUILTIN_POLICIES, get_policy
from msjgym.reproduce import DEFAULT_REPS, REPRODUCTIONS, Settings

METRIC_ORDER = ("response_time", "waiting_time", "number_in_system", "number_in_queue", "utilization",
                "queueing_probability", "throughput", "response_time_p95", "response_time_p99",
                "blocking_probability", "width_probability", "sqrt_n_blocking", "stein_lhs", "residual_work",
                "residual_little", "residual_pasta", "residual_stein", "residual_width",  # loss systems (issue 8)
                "mean_queue_length", "busy_fraction", "message_rate", "little_response_time")  # dispatch (issue 7)
LEVEL_PREFIX = "P(Q="  # dispatch: the queue-length distribution's levels, listed after METRIC_ORDER


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format used for every bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"msjgym: error: {message}\n")


_positive_int = int_at_least(1)
_nonnegative_int = int_at_least(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="msjgym", description="Benchmark multiserver-job schedulers against the queueing literature.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="built-in scenarios and policies, one line each")
    ev = sub.add_parser("evaluate", help="simulate a policy on a scenario and report metrics with 95%% CIs")
    ev.add_argument("scenario", help="a built-in scenario name (see `msjgym list`) or a TOML file")
    ev.add_argument("--policy", required=True,
                    help="a built-in policy name (see `msjgym list`), FILE.py:NAME (a class, object or function "
                         "with act(observation)), or sb3:MODEL.zip")
    ev.add_argument("--mode", choices=("start", "preemptive"), default="start",
                    help="for a policy of your own: the decisions it takes (as in msjgym/MSJ-v0; default start)")
    ev.add_argument("--window", type=_positive_int, default=8,
                    help="for a policy of your own: waiting jobs (start) or jobs (preemptive) it sees (default 8)")
    ev.add_argument("--observation", choices=("sampled", "histogram", "estimates"), default="histogram",
                    help="dispatch scenarios, for a dispatcher of your own: what it sees (as in msjgym/Dispatch-v0; "
                         "default histogram)")
    ev.add_argument("--levels", type=_positive_int, default=8,
                    help="dispatch scenarios, for a dispatcher of your own: histogram length L (default 8)")
    ev.add_argument("--reps", type=_positive_int, default=None,
                    help="independent replications (default 10, or 1 for a trace; with 1, CIs come from batch means; "
                         "lb-* scenarios: default 20, the paper's)")
    ev.add_argument("--jobs", type=_positive_int, default=None,
                    help="measured jobs per replication (default 100000; for a trace, all of its jobs; lb-* "
                         "scenarios: arrivals per replication, default N·10^4, the first 10%% warm-up)")
    ev.add_argument("--warmup", type=_nonnegative_int, default=None,
                    help="jobs discarded at the start of each replication (default: jobs/10; 0 for a trace)")
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
    ev.add_argument("--per-job", metavar="FILE.csv", default=None,
                    help="trace replays: write each job's arrival, need, duration, completion and response time")
    ev.add_argument("--skip-bad-lines", action="store_true",
                    help="trace replays: skip malformed trace lines (and count them) instead of stopping")
    ev.add_argument("--no-progress", action="store_true", help="never show a progress bar")

    th = sub.add_parser("theory", help="the theory's references for a scenario and policy, without simulating")
    th.add_argument("scenario", help="a built-in scenario name or a TOML file")
    th.add_argument("--policy", default="fcfs", help="a built-in policy name (default fcfs)")
    th.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    th.add_argument("--json", action="store_true", help="print one JSON object")

    sweep.add_arguments(sub.add_parser(
        "sweep", help="run a grid of scenario points × policies × replications; resumable; local pool or Ray"))
    plot.add_arguments(sub.add_parser("plot", help="draw a metric against a parameter from sweep results"))
    finite_skip_cli.add_arguments(sub.add_parser(
        "finite-skip", help="simulate a finite-skip system (het M/G/k, LPS, threshold parallelism, MSJ) + scorecard"))

    rp = sub.add_parser("reproduce", help="regenerate a paper's figures as PNG plus a CSV of the numbers")
    rp.add_argument("name", help="what to reproduce (see `msjgym list`)")
    rp.add_argument("--out", default=None, help="output folder (default results/reproduce/NAME)")
    rp.add_argument("--reps", type=_positive_int, default=None,
                    help="replications per simulated point (default 5; lb-tables: 20, the paper's)")
    rp.add_argument("--jobs", type=_positive_int, default=200_000, help="measured jobs per replication")
    rp.add_argument("--seed", type=_nonnegative_int, default=1, help="root seed (default 1)")
    rp.add_argument("--max-servers", type=_positive_int, default=4096,
                    help="largest n simulated (default 4096; the zero-queueing paper goes to 65536)")
    rp.add_argument("--servers", type=_server_list, default=None, metavar="N[,N...]",
                    help="lb-tables: the N to simulate (default 100,1000; the paper also has 10000,100000)")
    rp.add_argument("--arrivals", type=_positive_int, default=None,
                    help="lb-tables: arrivals per replication (default N·10^4, the paper's; less for a quick check)")
    rp.add_argument("--backend", choices=("local", "ray"), default="local",
                    help="lb-tables: local process pool (default) or Ray (pip install \"msjgym[ray]\")")
    rp.add_argument("--workers", type=_positive_int, default=None,
                    help="lb-tables: worker processes (default: every core; 1 runs in this process)")
    rp.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    return parser


def _server_list(text: str) -> tuple[int, ...]:
    """``--servers 100,1000``: integers >= 2."""
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected integers N >= 2 separated by commas") from None
    if not values or min(values) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: every N must be an integer >= 2")
    return values


def _cmd_list() -> None:
    print("Scenarios (msjgym evaluate NAME ...; override parameters with --param KEY=VALUE):")
    scenarios = list_scenarios()
    width = max(len(name) for name, _ in scenarios)
    for name, description in scenarios:
        print(f"  {name:<{width}}  {description}")
    print("\nFinite-skip scenarios (msjgym finite-skip NAME --policy P; see msjgym finite-skip --list):")
    for name, fig in finite_skip_cli.F.FIGURES.items():
        extra = f" (and via `msjgym evaluate {name}`: {', '.join(fig.msj_policies)})" if fig.msj_policies else ""
        print(f"  {name:<{width}}  policies: {', '.join(fig.policies)}{extra}")
    print("\nPolicies (--policy NAME):")
    width = max(len(name) for name in BUILTIN_POLICIES)
    for name, policy in BUILTIN_POLICIES.items():
        print(f"  {name:<{width}}  {policy.summary}")
    from msjgym.policies.loss import LOSS_POLICIES  # loss scenarios (issue 8)
    for name, policy in LOSS_POLICIES.items():
        print(f"  {name:<{width}}  {policy.summary}")
    from msjgym.policies.load_balancing import POLICY_IDS  # dispatch scenarios (issue 7)
    print(f"\nDispatch policies (lb-* scenarios; their parameters by --param): {', '.join(POLICY_IDS)}")
    print("\nReproductions (msjgym reproduce NAME):")
    width = max(len(name) for name in REPRODUCTIONS)
    for name, (description, _) in REPRODUCTIONS.items():
        print(f"  {name:<{width}}  {description}")


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
    names = [m for m in METRIC_ORDER if m in result.metrics] + [m for m in result.metrics
                                                                   if m.startswith(LEVEL_PREFIX)]
    for name in names:
        rows.append([name, _cell(result.metrics[name])] +
                    [_cell(result.metrics.get(f"{name}[{c}]")) for c in classes])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    lines.append("")
    lines.append("mean ± 95% CI half-width; times in the scenario's time unit; counts are time averages.")
    return "\n".join(lines)


def _reference_value(ref: Reference) -> str:
    if ref.kind == "condition":
        if ref.upper is None:
            return _fmt(ref.value)
        return f"{_fmt(ref.value)} {'<' if ref.value < ref.upper else '>='} {_fmt(ref.upper)}"
    if ref.upper_metric is not None:
        return f"<= {ref.upper_metric}"
    if ref.kind == "bound":
        if ref.lower is None:
            return f"<= {_fmt(ref.upper)}"
        return f">= {_fmt(ref.lower)}" if ref.upper is None else f"[{_fmt(ref.lower)}, {_fmt(ref.upper)}]"
    return _fmt(ref.value)


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


def _cmd_evaluate(args: argparse.Namespace) -> int | None:
    if args.scenario in finite_skip_cli.F.FIGURES and not is_builtin_msj(args.scenario):
        # a finite-skip system that is not a multiserver-job model (het M/G/k, LPS, threshold parallelism)
        return finite_skip_cli.command(argparse.Namespace(
            scenario=args.scenario, policy=args.policy, param=args.param, reps=args.reps or 10,
            jobs=args.jobs or 100_000, seed=args.seed or 0, list=False, json=args.json))
    overrides = dict(parse_override(text) for text in args.param)
    if args.skip_bad_lines:
        overrides["arrivals.skip_bad_lines"] = True
    scenario = load_scenario(args.scenario, overrides)
    if _is_dispatch(scenario):  # load balancing (issue 7): its own runner and scorecard
        return _evaluate_dispatch(scenario, args)
    if _is_loss(scenario):  # loss systems (issue 8): their own runner and scorecard
        from msjgym.systems.loss.runner import evaluate_loss
        from msjgym.policies.loss import LOSS_POLICIES
        if args.policy not in LOSS_POLICIES and (":" in args.policy or args.policy.endswith(".py")):
            from msjgym.core.user_policy import load_user_policy
            from msjgym.envs.loss_agent_runner import evaluate_loss_agent, loss_spec
            name, decide = load_user_policy(args.policy, loss_spec(scenario))
            result = evaluate_loss_agent(scenario, name, decide, reps=args.reps or 10, jobs=args.jobs or 100_000,
                                         warmup=args.warmup, seed=args.seed, batches=args.batches)
        else:
            result = evaluate_loss(scenario, args.policy, reps=args.reps, jobs=args.jobs, warmup=args.warmup,
                                   seed=args.seed, batches=args.batches)
        _print_result(result, args, scenario)
        return
    if args.per_job and scenario.model.trace is None:
        raise MsjgymError("--per-job: only for scenarios that replay a trace (arrivals = {trace = ...})")
    if args.policy not in BUILTIN_POLICIES and (":" in args.policy or args.policy.endswith(".py")):
        _print_result(_evaluate_agent(scenario, args), args, scenario)
        return
    policy = get_policy(args.policy)
    policy.validate(scenario.model)
    refs = scorecard.references(scenario.model, policy, regime=scenario.regime, saturated=args.saturated)
    for ref in scorecard.unstable_predictions(refs):
        print(f"msjgym: note: outside the stability region before simulating: {ref.description} "
              f"[{ref.source}]", file=sys.stderr)
    result = evaluate(
        scenario, policy, reps=args.reps, jobs=args.jobs, warmup=args.warmup, seed=args.seed,
        batches=args.batches, saturated=args.saturated, backlog=args.backlog,
        detect_instability=not args.no_instability_check,
        progress=not args.no_progress and sys.stderr.isatty(), references=refs)
    _print_result(result, args, scenario)


def _is_dispatch(scenario) -> bool:
    from msjgym.systems.dispatch.scenarios import DispatchSetting
    return isinstance(scenario.model, DispatchSetting)


def _evaluate_dispatch(scenario, args: argparse.Namespace) -> None:
    """``msjgym evaluate lb-... --policy P``: a built-in dispatch policy (a dispatcher of your own: see below)."""
    from msjgym.systems.dispatch.runner import evaluate_custom_dispatcher, evaluate_dispatch
    from msjgym.policies.load_balancing import POLICY_IDS
    custom = args.policy not in POLICY_IDS and (":" in args.policy or args.policy.endswith(".py"))
    if args.policy not in POLICY_IDS and not custom:
        raise MsjgymError(f"--policy {args.policy!r}: not a dispatch policy; valid on {scenario.name}: "
                          f"{', '.join(POLICY_IDS)}, or a dispatcher of your own (FILE.py:NAME, sb3:MODEL.zip)")
    for option in ("warmup", "per_job", "saturated", "skip_bad_lines"):
        if getattr(args, option) not in (None, False):
            raise MsjgymError(f"--{option.replace('_', '-')}: not for dispatch scenarios (the first 10% of "
                              "--jobs arrivals are warm-up, the paper's protocol)")
    if custom:  # decides in Python at each arrival, through msjgym/Dispatch-v0's observation
        result = evaluate_custom_dispatcher(scenario, args.policy, observation=args.observation, levels=args.levels,
                                            reps=args.reps, arrivals=args.jobs, seed=args.seed,
                                            progress=not args.no_progress and sys.stderr.isatty())
    else:
        result = evaluate_dispatch(scenario, args.policy, reps=args.reps, arrivals=args.jobs, seed=args.seed,
                                   progress=not args.no_progress and sys.stderr.isatty())
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=float))
    else:
        print(format_table(result) + format_references(result.references))


def _is_loss(scenario) -> bool:
    from msjgym.systems.loss.model import LossModel
    return isinstance(scenario.model, LossModel)


def _evaluate_agent(scenario, args: argparse.Namespace) -> EvaluationResult:
    """``--policy FILE.py:NAME`` or ``sb3:MODEL.zip``: the policy decides through msjgym/MSJ-v0's interface."""
    from msjgym.envs import agent_runner
    from msjgym.envs._core import EnvSpec
    spec = EnvSpec.make(scenario, args.mode, args.window, None, None, args.jobs or 100_000, args.warmup or 0)
    name, decide = agent_runner.load_policy(args.policy, spec)
    return agent_runner.evaluate_agent(
        scenario, name, decide, mode=args.mode, window=args.window, reps=args.reps or 10,
        jobs=args.jobs or 100_000, warmup=args.warmup, seed=args.seed, batches=args.batches,
        progress=not args.no_progress and sys.stderr.isatty())


def _print_result(result: EvaluationResult, args: argparse.Namespace, scenario) -> None:
    if args.per_job:
        _write_per_job(result, Path(args.per_job))
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=float))
    else:
        print(format_table(result) + format_references(result.references))
        if scenario.model.trace is not None:
            print(_trace_summary(scenario.model.trace, result, args.per_job))


def _write_per_job(result: EvaluationResult, path: Path) -> None:
    """One CSV row per trace job (replication 0)."""
    columns = result.per_job
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        f.write("job," + ",".join(columns) + "\n")
        for i in range(len(columns["arrival_time"])):
            f.write(f"{i + 1}," + ",".join(f"{columns[c][i]:.10g}" for c in columns) + "\n")


def _trace_summary(trace: Trace, result: EvaluationResult, per_job: str | None) -> str:
    response = result.per_job["response_time"]
    done = int(np.isfinite(response).sum())
    lines = [f"\ntrace {trace.source}: {len(trace):,} jobs replayed ({done:,} completed); skipped "
             f"{trace.skipped_unusable:,} jobs that never ran or had unknown processors and "
             f"{trace.skipped_malformed:,} malformed lines"]
    lines += [f"note: {n}" for n in trace.notes]
    if per_job:
        lines.append(f"per-job response times written to {per_job}")
    return "\n".join(lines)


def _cmd_theory(args: argparse.Namespace) -> None:
    scenario = load_scenario(args.scenario, dict(parse_override(text) for text in args.param))
    if _is_dispatch(scenario):  # load balancing (issue 7)
        _dispatch_theory(scenario, args)
        return
    if _is_loss(scenario):  # loss systems (issue 8)
        from msjgym.systems.loss import scorecard as loss_scorecard
        from msjgym.policies.loss import get_loss_policy
        policy = get_loss_policy("greedy" if args.policy == "fcfs" else args.policy)
        refs = loss_scorecard.references(scenario.model, policy)
    else:
        policy = get_policy(args.policy)
        policy.validate(scenario.model)
        refs = scorecard.references(scenario.model, policy, regime=scenario.regime)
    if args.json:
        print(json.dumps({"scenario": scenario.name, "policy": policy.name, "params": scenario.params,
                          "load": scenario.model.load, "references": [r.to_dict() for r in refs]},
                         indent=2, default=float))
        return
    print(f"scenario  {scenario.name}  (load {scenario.model.load:.4g})\npolicy    {policy.name}")
    print(format_references(refs, "references (no simulation; `msjgym evaluate` adds verdicts):")
          if refs else "\nno reference applies")


def _dispatch_theory(scenario, args: argparse.Namespace) -> None:
    from msjgym.systems.dispatch import scorecard as lb_scorecard
    policy = scenario.model.default_policy if args.policy == "fcfs" else args.policy
    if policy is None:
        raise MsjgymError(f"{scenario.name}: give --policy (a dispatch policy, see `msjgym list`)")
    refs = lb_scorecard.references(scenario.model, policy)
    if args.json:
        print(json.dumps({"scenario": scenario.name, "policy": policy, "params": scenario.params,
                          "load": scenario.model.load, "references": [r.to_dict() for r in refs]},
                         indent=2, default=float))
        return
    params = ", ".join(f"{k}={v}" for k, v in scenario.params.items())
    print(f"scenario  {scenario.name}  ({params})\npolicy    {policy}")
    print(format_references(refs, "references (no simulation; `msjgym evaluate` adds verdicts):"))


def _cmd_reproduce(args: argparse.Namespace) -> None:
    if args.name not in REPRODUCTIONS:
        raise MsjgymError(f"reproduce {args.name!r}: unknown; valid: {', '.join(REPRODUCTIONS)}")
    out = Path(args.out) if args.out else Path("results") / "reproduce" / args.name
    lb_only = {"servers": args.servers, "arrivals": args.arrivals, "workers": args.workers}
    given = [f"--{k}" for k, v in lb_only.items() if v is not None] + (["--backend"] if args.backend != "local" else [])
    if given and args.name != "lb-tables":
        raise MsjgymError(f"{', '.join(given)}: only for `msjgym reproduce lb-tables`")
    reps = args.reps if args.reps is not None else DEFAULT_REPS.get(args.name, 5)
    settings = Settings(out=out, reps=reps, jobs=args.jobs, seed=args.seed, max_servers=args.max_servers,
                        progress=not args.no_progress and sys.stderr.isatty(), servers=args.servers,
                        arrivals=args.arrivals, backend=args.backend, workers=args.workers)
    for path in REPRODUCTIONS[args.name][1](settings):
        print(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``msjgym`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            _cmd_list()
        elif args.command == "evaluate":
            return _cmd_evaluate(args) or 0
        elif args.command == "theory":
            _cmd_theory(args)
        elif args.command == "reproduce":
            _cmd_reproduce(args)
        elif args.command == "plot":
            return plot.command(args)
        elif args.command == "sweep":
            return sweep.command(args)
        elif args.command == "finite-skip":
            return finite_skip_cli.command(args)
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
