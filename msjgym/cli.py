"""``msjgym``: the command line. Every command asks the registry (:mod:`msjgym.api`) which family owns a scenario.

    msjgym list
    msjgym evaluate SCENARIO --policy NAME [--reps R] [--jobs J] [--seed S] [--param KEY=VALUE ...] [--json]
    msjgym theory SCENARIO [--policy NAME] [--param KEY=VALUE ...] [--json]
    msjgym reproduce NAME [--out DIR] [--reps R] [--jobs J] [--max-servers N]
    msjgym reproduce lb-tables [--servers N,N] [--reps R] [--arrivals A] [--backend local|ray] [--workers W]
    msjgym sweep SCENARIO --grid NAME=a:b:k ... --policy P[,P...] --reps R --out DIR [--backend local|ray]
    msjgym plot RESULTS --x NAME --y METRIC [--by policy] [--theory] [--out FILE]
    msjgym finite-skip NAME --policy P ...   (an alias of ``msjgym evaluate``, kept for scripts)

Bad input (an unknown policy, a scenario error, an invalid option) prints one ``msjgym: error: ...`` line and exits
with status 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from msjgym import api
from msjgym.core import limits
from msjgym.core.inputs import policy_files, recording, refuse_overwrite
from msjgym.core.output import GuardedStdout
from msjgym.core.overrides import parse_override
from msjgym.core.paths import check_output_dir, check_output_file, fallback_file
from msjgym.core.validation import int_at_least
from msjgym.errors import MsjgymError, UnknownParameter
from msjgym.evaluate import plot, sweep
from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.report import format_checks, format_references, format_table
from msjgym.evaluate.result import Result, strict_json
from msjgym.reproduce import DEFAULT_REPS, REPRODUCTIONS, Settings


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
    _evaluate_arguments(sub.add_parser(
        "evaluate", aliases=["finite-skip"],  # the alias: the finite-skip models once had a command of their own
        help="simulate a policy on a scenario of any family and report metrics with 95%% CIs and the theory's "
             "references"))
    th = sub.add_parser("theory", help="the theory's references for a scenario and policy, without simulating")
    th.add_argument("scenario", help="a built-in scenario name or a TOML file")
    th.add_argument("--policy", default=None, help="a built-in policy name (default: the scenario family's first "
                                                   "reference policy, e.g. fcfs)")
    th.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    th.add_argument("--json", action="store_true", help="print one JSON object")

    sweep.add_arguments(sub.add_parser(
        "sweep", help="run a grid of scenario points × policies × replications; resumable; local pool or Ray"))
    plot.add_arguments(sub.add_parser("plot", help="draw a metric against a parameter from sweep results"))
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


class _Once(argparse.Action):
    """An option given at most once: ``msjgym evaluate`` runs one policy, and a second ``--policy`` would silently
    replace the first (to compare several: ``msjgym sweep SCENARIO --policy A,B,... --out DIR``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        previous = getattr(namespace, self.dest, None)
        if previous is not None:
            parser.error(f"{option_string} given twice ({previous!r}, {values!r}): evaluate runs one policy; to "
                         f"compare several use `msjgym sweep SCENARIO --policy A,B,... --out DIR`")
        setattr(namespace, self.dest, values)


def _evaluate_arguments(ev: argparse.ArgumentParser) -> None:
    """The arguments of ``msjgym evaluate`` (and its alias ``msjgym finite-skip``)."""
    ev.add_argument("scenario", help="a built-in scenario name (see `msjgym list`) or a TOML file")
    ev.add_argument("--policy", required=True, action=_Once,
                    help="a built-in policy name (see `msjgym list`), FILE.py:NAME (a class, object or function "
                         "with act(observation)), sb3:MODEL.zip or rllib:CHECKPOINT_DIR")
    ev.add_argument("--mode", choices=("start", "preemptive"), default=None,
                    help="for a policy of your own: the decisions it takes (as in msjgym/MSJ-v0; default start)")
    ev.add_argument("--window", type=_positive_int, default=None,
                    help="for a policy of your own: waiting jobs (start) or jobs (preemptive) it sees (default 8; at most "
                         "10^4)")
    ev.add_argument("--observation", choices=("sampled", "histogram", "estimates"), default=None,
                    help="dispatch scenarios, for a dispatcher of your own: what it sees (as in msjgym/Dispatch-v0; "
                         "default histogram)")
    ev.add_argument("--levels", type=_positive_int, default=None,
                    help="dispatch scenarios, for a dispatcher of your own: histogram length L (default 8)")
    ev.add_argument("--reps", type=_positive_int, default=None,
                    help="independent replications (default 10; with 1, CIs come from batch means; lb-* scenarios: "
                         "default 20, the paper's; a trace is one exact replay, see --windows; a synthetic trace "
                         "(lublin-feitelson): R traces drawn from its model; at most 10^4)")
    ev.add_argument("--jobs", type=_positive_int, default=None,
                    help="measured jobs per replication (default 100000; for a trace, all of its jobs (J: its "
                         "first J); lb-* "
                         "scenarios: arrivals per replication, default N·10^4, the first 10%% warm-up; at most 10^12)")
    ev.add_argument("--warmup", type=_nonnegative_int, default=None,
                    help="jobs discarded at the start of each replication (default: jobs/10; 0 for a trace)")
    ev.add_argument("--seed", type=_nonnegative_int, default=None,
                    help="root seed (default: a random seed, printed so the run can be repeated)")
    ev.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario key (repeatable), e.g. --param servers=32")
    ev.add_argument("--batches", type=_positive_int, default=20, help="measurement batches per replication")
    ev.add_argument("--saturated", action="store_true",
                    help="measure the closed system that always has --backlog waiting jobs (maximum throughput)")
    ev.add_argument("--backlog", type=_positive_int, default=None, help="waiting jobs kept in --saturated mode")
    ev.add_argument("--no-instability-check", action="store_true",
                    help="do not stop replications whose number in system keeps growing")
    ev.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ev.add_argument("--per-job", metavar="FILE.csv", default=None,
                    help="trace replays: write each job's id, arrival, need, duration, completion, response and "
                         "waiting time and bounded slowdown")
    ev.add_argument("--windows", type=_positive_int, default=None, metavar="N",
                    help="trace replays: replicate over N windows of the trace (with --window-jobs), each replayed "
                         "from an empty machine, for CIs across windows (default: one exact replay, no CI)")
    ev.add_argument("--window-jobs", type=_positive_int, default=None, metavar="M",
                    help="trace replays with --windows: measured jobs per window (consecutive jobs; at least 10)")
    ev.add_argument("--bsld-threshold", type=float, default=None, metavar="TAU",
                    help="multiserver jobs: threshold τ of the bounded slowdown max(1, response / max(run time, τ)), "
                         "in the scenario's time unit (default 10, the literature's 10 s)")
    ev.add_argument("--skip-bad-lines", action="store_true",
                    help="trace replays: skip malformed trace lines (and count them) instead of stopping")
    ev.add_argument("--no-progress", action="store_true", help="never show a progress bar")



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
    families = api.families()
    names = [n for f in families for n, _ in f.scenarios()]
    width = max(len(n) for n in names)
    print("Scenarios (msjgym evaluate NAME --policy P; override parameters with --param KEY=VALUE), by family:")
    for family in families:
        print(f"\n  {family.name}: {family.title}")
        for name, description in family.scenarios():
            print(f"    {name:<{width}}  {description}")
    print("\nPolicies (--policy NAME; or a policy of your own: FILE.py:NAME, sb3:MODEL.zip, rllib:CHECKPOINT_DIR), "
          "by family:")
    pwidth = max(len(n) for f in families for n in f.policies())
    for family in families:
        print(f"\n  {family.name}:")
        for name, policy in family.policies().items():
            print(f"    {name:<{pwidth}}  {getattr(policy, 'summary', '')}".rstrip())
    print("\nReproductions (msjgym reproduce NAME):")
    width = max(len(name) for name in REPRODUCTIONS)
    for name, (description, _) in REPRODUCTIONS.items():
        print(f"  {name:<{width}}  {description}")


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    overrides = dict(parse_override(text) for text in args.param)
    if getattr(args, "skip_bad_lines", False):
        overrides["arrivals.skip_bad_lines"] = True
    return overrides


_OPTIONS = ("saturated", "backlog", "no_instability_check", "mode", "window", "observation", "levels", "per_job",
            "windows", "window_jobs", "bsld_threshold")
"""``msjgym evaluate``'s family-specific options: passed on when given (each family refuses what it does not take)."""


def _scenario_and_policy(name: str, policy: str, overrides: dict[str, object]) -> tuple[api.Scenario, object]:
    """The scenario, and the policy with its parameters: a ``--param`` key that the scenario does not take but the
    built-in policy declares (``--policy smash --param w=8``) binds the policy's parameter."""
    family = api.family_of(name)
    spec = None if api.is_user_policy(policy) else family.policies().get(policy)
    own = [k for k in overrides if spec is not None and k in {p.name for p in spec.params}]
    try:
        return family.load(name, overrides), policy
    except UnknownParameter:
        if not own:
            raise
    scenario = family.load(name, {k: v for k, v in overrides.items() if k not in own})
    return scenario, spec.bind(**{k: overrides[k] for k in own})


def _cmd_evaluate(args: argparse.Namespace) -> int | None:
    if args.per_job:
        check_output_file(args.per_job, "--per-job")  # before the work, not after it
    with recording() as files:
        scenario, policy = _scenario_and_policy(args.scenario, args.policy, _overrides(args))
    refuse_overwrite({"--per-job": args.per_job}, run_inputs(args.scenario, args.policy, files))
    options = {k: getattr(args, k) for k in _OPTIONS if getattr(args, k) not in (None, False)}
    progress = not args.no_progress and sys.stderr.isatty()
    result = evaluate(scenario, policy, reps=args.reps, jobs=args.jobs, warmup=args.warmup, seed=args.seed,
                      batches=args.batches, progress=progress, notes=True, **options)
    return _print_result(result, args)


def run_inputs(scenario: str, policy: object, files: Sequence[Path] = ()) -> list[Path]:
    """Every file a run reads: ``files`` (recorded while loading: the scenario file, its trace, an empirical law's
    values), the scenario argument when it is a file, and the policy's files (``FILE.py``, ``sb3:MODEL.zip``,
    ``rllib:DIR``). No output path may be one of them (:func:`msjgym.core.inputs.refuse_overwrite`)."""
    inputs = list(files) + policy_files(policy)
    if Path(scenario).expanduser().is_file():
        inputs.append(Path(scenario))
    return inputs


def _print_result(result: Result, args: argparse.Namespace) -> int:
    """Print the result; 0, or 1 when the per-job file could not be written after all (the rows then go to a
    temporary file, named on stderr, so nothing computed is lost)."""
    failed = None
    if args.per_job:
        failed = _save_per_job(result, Path(args.per_job))
    if args.json:
        print(strict_json(result.to_dict()))
        for note in result.notes:  # not in the JSON object: on stderr, so that nothing is silently dropped
            print(f"msjgym: note: {note.removeprefix('note: ')}", file=sys.stderr)
    else:
        print(format_table(result) + format_references(result.references)
              + format_checks(result.checks, result.check_notes))
        notes = result.notes + ([f"per-job response times written to {args.per_job}"]
                                if args.per_job and not failed else [])
        if notes:
            print("\n" + "\n".join(notes))
    if failed:
        print(f"msjgym: error: {failed}", file=sys.stderr)
        return 1
    return 0


def _save_per_job(result: Result, path: Path) -> str | None:
    """Write the per-job CSV to ``path`` (checked before the run); if that fails after all, to a temporary file.
    Returns None, or the one-line error saying where the rows went."""
    try:
        _write_per_job(result, path)
        return None
    except OSError as exc:
        reason = exc.strerror or str(exc)
    try:
        fallback = fallback_file("per-job", ".csv")
        _write_per_job(result, fallback)
    except OSError:
        return f"--per-job {str(path)!r}: could not be written ({reason}); the per-job rows are lost"
    return f"--per-job {str(path)!r}: could not be written ({reason}); the per-job rows are in {str(fallback)!r}"


def _write_per_job(result: Result, path: Path) -> None:
    """One CSV row per trace job (its id first: the SWF job number); the folder must exist."""
    columns = result.per_job
    if "job" not in columns:  # no ids given: the jobs' rank in arrival order, 1-based
        columns = {"job": np.arange(1, len(columns["arrival_time"]) + 1)} | dict(columns)
    with path.open("w") as f:
        f.write(",".join(columns) + "\n")
        for i in range(len(columns["arrival_time"])):
            f.write(",".join(f"{columns[c][i]:.10g}" if columns[c].dtype.kind == "f" else str(columns[c][i])
                             for c in columns) + "\n")


def _cmd_theory(args: argparse.Namespace) -> None:
    overrides = dict(parse_override(text) for text in args.param)
    family = api.family_of(args.scenario)
    if args.policy is None:
        scenario = family.load(args.scenario, overrides)
        policy = family.default_policy(scenario)
        if policy is None:
            raise MsjgymError(f"{scenario.name}: give --policy (see `msjgym list`)")
    else:
        scenario, policy = _scenario_and_policy(args.scenario, args.policy, overrides)
    refs = family.references(scenario, policy, api.RunSettings())
    load = getattr(scenario.model, "load", None)
    policy = getattr(policy, "label", policy)
    if args.json:
        print(strict_json({"scenario": scenario.name, "family": scenario.family, "policy": policy,
                           "params": scenario.params, "load": load, "references": [r.to_dict() for r in refs]}))
        return
    params = ", ".join(f"{k}={v}" for k, v in scenario.params.items() if not isinstance(v, (dict, list)))
    print(f"scenario  {scenario.name}  ({params})\npolicy    {policy}")
    print(format_references(refs, "references (no simulation; `msjgym evaluate` adds verdicts):")
          if refs else "\nno reference applies")


def _cmd_reproduce(args: argparse.Namespace) -> None:
    if args.name not in REPRODUCTIONS:
        raise MsjgymError(f"reproduce {args.name!r}: unknown; valid: {', '.join(REPRODUCTIONS)}")
    out = check_output_dir(Path(args.out) if args.out else Path("results") / "reproduce" / args.name, "--out")
    lb_only = {"servers": args.servers, "arrivals": args.arrivals, "workers": args.workers}
    given = [f"--{k}" for k, v in lb_only.items() if v is not None] + (["--backend"] if args.backend != "local" else [])
    if given and args.name != "lb-tables":
        raise MsjgymError(f"{', '.join(given)}: only for `msjgym reproduce lb-tables`")
    _check_reproduce_limits(args)
    reps = args.reps if args.reps is not None else DEFAULT_REPS.get(args.name, 5)
    settings = Settings(out=out, reps=reps, jobs=args.jobs, seed=args.seed, max_servers=args.max_servers,
                        progress=not args.no_progress and sys.stderr.isatty(), servers=args.servers,
                        arrivals=args.arrivals, backend=args.backend, workers=args.workers)
    for path in REPRODUCTIONS[args.name][1](settings):
        print(path)


def _check_reproduce_limits(args: argparse.Namespace) -> None:
    """``msjgym reproduce``'s numbers within :mod:`msjgym.core.limits`, before anything runs."""
    for name, value, high in (("--reps", args.reps, limits.MAX_REPS), ("--jobs", args.jobs, limits.MAX_JOBS),
                              ("--seed", args.seed, limits.MAX_SEED),
                              ("--max-servers", args.max_servers, limits.MAX_SERVERS),
                              ("--arrivals", args.arrivals, limits.MAX_JOBS)):
        if value is not None:
            limits.check_int(name, value, 0 if name == "--seed" else 1, high)
    for n in args.servers or ():
        limits.check_int("--servers", n, 2, limits.MAX_SERVERS)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``msjgym`` console script; returns the exit status.

    Standard output goes through :class:`~msjgym.core.output.GuardedStdout`: a console that cannot encode some
    character of a result (``PYTHONIOENCODING=ascii``, a Windows code page) shows it replaced, and the whole output
    is saved to a file named in one line on stderr (status 1), instead of a traceback after the run."""
    args = build_parser().parse_args(argv)
    with GuardedStdout() as out:
        status = _run_command(args)
    return out.report(status)


def _run_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "list":
            _cmd_list()
        elif args.command in ("evaluate", "finite-skip"):
            return _cmd_evaluate(args) or 0
        elif args.command == "theory":
            _cmd_theory(args)
        elif args.command == "reproduce":
            _cmd_reproduce(args)
        elif args.command == "plot":
            return plot.command(args)
        elif args.command == "sweep":
            return sweep.command(args)
    except MsjgymError as exc:
        print(f"msjgym: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("msjgym: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # only code of the user's (a policy, a model) raises it inside a command
        print(f"msjgym: error: the {args.command} stopped: code run inside it called sys.exit({exc.code!r}) "
              "(raised SystemExit)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
