"""``msjgym``: the command line. Every command asks the registry (:mod:`msjgym.api`) which family owns a scenario.

    msjgym list
    msjgym evaluate SCENARIO --policy NAME [--reps R] [--jobs J] [--seed S] [--param KEY=VALUE ...] [--json]
    msjgym theory SCENARIO [--policy NAME] [--param KEY=VALUE ...] [--json]
    msjgym reproduce NAME [--out DIR] [--reps R] [--jobs J] [--seed S] [NAME's own options: --help]
    msjgym sweep SCENARIO --grid NAME=a:b:k ... --policy P[,P...] --reps R --out DIR [--backend local|ray]
    msjgym plot RESULTS --x NAME --y METRIC [--by policy] [--theory] [--out FILE]

The options that only some families take are each family's declarations
(:meth:`msjgym.api.Family.options`), and a reproduction's own options its module's ``OPTIONS``: this module names
no family. Bad input (an unknown policy, a scenario error, an invalid option) prints one ``msjgym: error: ...`` line and exits
with status 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

import msjgym
from msjgym import api
from msjgym.core import limits, schedule
from msjgym.core.inputs import policy_files, recording, refuse_overwrite
from msjgym.core.output import GuardedStdout
from msjgym.core.overrides import parse_overrides
from msjgym.core.paths import check_output_dir, check_output_file, fallback_file, is_regular_file, shown
from msjgym.core.validation import int_at_least, one_line, show
from msjgym.errors import MsjgymError, UnknownParameter
from msjgym.evaluate import flags, plot, precompile, sweep
from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.report import format_checks, format_references, format_table
from msjgym.evaluate.result import Result, strict_json
from msjgym.reproduce import REPRODUCTIONS, Reproduction, Settings


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format used for every bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"msjgym: error: {one_line(message)}\n")


_positive_int = int_at_least(1)
_nonnegative_int = int_at_least(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="msjgym", description="Benchmark multiserver-job schedulers against the queueing literature.")
    parser.add_argument("--version", action="version", version=f"msjgym {msjgym.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="built-in scenarios and policies, one line each")
    _evaluate_arguments(sub.add_parser(
        "evaluate", aliases=_evaluate_aliases(), help="simulate a policy on a scenario of any family and report metrics with 95%% CIs and the "
                         "theory's references"))
    th = sub.add_parser("theory", help="the theory's references for a scenario and policy, without simulating")
    th.add_argument("scenario", help=flags.SCENARIO_HELP)
    th.add_argument("--policy", default=None, help="a built-in policy name (default: the scenario family's first "
                                                   "reference policy, e.g. fcfs)")
    th.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    th.add_argument("--json", action="store_true", help="print one JSON object")

    sweep.add_arguments(sub.add_parser(
        "sweep", help="run a grid of scenario points × policies × replications; resumable; local pool or Ray"))
    plot.add_arguments(sub.add_parser("plot", help="draw a metric against a parameter from sweep results"))
    precompile.add_arguments(sub.add_parser(
        "compile", help="compile every family's kernels once on this machine, in parallel (optional: a first run "
                        "compiles what it needs; useful before a container image, a cluster or many processes)"))
    rp = sub.add_parser("reproduce", help="regenerate a paper's figures as PNG plus a CSV of the numbers "
                                          "(`msjgym reproduce NAME --help`: its options)")
    names = rp.add_subparsers(dest="name", required=True, metavar="NAME", parser_class=_Parser,
                              help="what to reproduce (see `msjgym list`)")
    for name, reproduction in REPRODUCTIONS.items():
        _reproduce_arguments(names.add_parser(name, help=reproduction.description,
                                              description=reproduction.description.replace("%", "%%")),
                             name, reproduction)
    return parser


def _evaluate_aliases() -> list[str]:
    """Other names of ``msjgym evaluate`` that families keep for scripts (:func:`msjgym.api.command_aliases`)."""
    return [alias for family in api.families() for alias in api.command_aliases(family)]


def _reproduce_arguments(rp: argparse.ArgumentParser, name: str, reproduction: Reproduction) -> None:
    """The arguments of ``msjgym reproduce NAME``: the common ones, then the reproduction's own (its ``OPTIONS``)."""
    rp.add_argument("--out", default=None, help=f"output folder (default results/reproduce/{name})")
    common = dict(_REPRODUCE_COMMON)
    common["reps"] = replace(common["reps"], help=f"{common['reps'].help} (default {reproduction.reps})")
    flags.add_flags(rp, flags.declared([("", tuple(common.values()))]), tag=False)
    flags.add_flags(rp, flags.declared([(name, reproduction.options)]), tag=False)
    rp.add_argument("--no-progress", action="store_true", help="never show a progress bar")


_REPRODUCE_COMMON = {o.name: o for o in (
    api.Option("reps", "replications per simulated point", int, low=1, high=limits.MAX_REPS),
    api.Option("jobs", "measured jobs per replication (default 200000)", int, default=200_000, low=1,
               high=limits.MAX_JOBS),
    api.Option("seed", "root seed (default 1)", int, default=1, low=0, high=limits.MAX_SEED),
)}
"""The options every reproduction takes (its own are its module's ``OPTIONS``)."""


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
    """The arguments of ``msjgym evaluate``: the run's, then every family's own (:meth:`msjgym.api.Family.options`,
    each tagged with the families that take it)."""
    ev.add_argument("scenario", help=flags.SCENARIO_HELP)
    ev.add_argument("--policy", required=True, action=_Once,
                    help="a built-in policy name (see `msjgym list`), FILE.py:NAME (a class, object or function "
                         "with act(...)), sb3:MODEL.zip or rllib:CHECKPOINT_DIR")
    ev.add_argument("--reps", type=_positive_int, default=None,
                    help="independent replications (default: the family's, 10 for most; with 1, CIs come from batch "
                         "means; at most 10^4)")
    ev.add_argument("--jobs", type=_positive_int, default=None,
                    help="measured jobs (or arrivals) per replication, the warm-up on top (default: the "
                         "family's, 100000 for most; a trace: its jobs; at most 10^12)")
    ev.add_argument("--warmup", type=_nonnegative_int, default=None,
                    help="jobs (or arrivals) simulated before the measured ones in each replication, not measured "
                         "(default: the family's, jobs/10 for most; docs/statistics.md)")
    ev.add_argument("--seed", type=_nonnegative_int, default=None,
                    help="root seed (default: a random seed, printed so the run can be repeated)")
    ev.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario key (repeatable), e.g. --param servers=32")
    ev.add_argument("--batches", type=_positive_int, default=20, help="measurement batches per replication")
    ev.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ev.add_argument("--csv", default=None, metavar="FILE.csv",
                    help="also write the metrics as CSV, one row per metric (scenario, policy, metric, mean, ci95, "
                         "reps, jobs, warmup, seed: long format, for pandas.read_csv)")
    ev.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    flags.add_flags(ev, flags.family_flags())


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
    for name, reproduction in REPRODUCTIONS.items():
        print(f"  {name:<{width}}  {reproduction.description}")


def _cmd_evaluate(args: argparse.Namespace) -> int | None:
    family = api.family_of(args.scenario)
    options, scenario_keys = flags.family_options(args, family)  # one line for a flag the family has not
    # checked before the work, not after it, and made absolute now (a policy that changes folder moves nothing)
    outputs = [(option, check_output_file(path, option.flag)) for option, path in _outputs(options)]
    if args.csv is not None:
        args.csv = check_output_file(args.csv, "--csv")
        if args.csv.suffix.lower() != ".csv":
            raise MsjgymError(f"--csv {shown(args.csv)}: give a file name ending in .csv")
    overrides = flags.scenario_overrides(args.param, scenario_keys)
    with recording() as files:
        try:
            scenario, policy = api.scenario_and_policy(args.scenario, args.policy, overrides)
        except UnknownParameter as exc:  # a flag that sets a scenario key this scenario has not: name the flag
            raise flags.flag_not_for(exc, scenario_keys, args.scenario) from None
    refuse_overwrite({o.flag: path for o, path in outputs} | ({"--csv": args.csv} if args.csv else {}),
                     run_inputs(args.scenario, args.policy, files))
    progress = not args.no_progress and sys.stderr.isatty()
    result = evaluate(scenario, policy, reps=args.reps, jobs=args.jobs, warmup=args.warmup, seed=args.seed,
                      batches=args.batches, progress=progress, notes=True, **options)
    return _print_result(result, args, outputs)


def _outputs(options: dict[str, object]) -> list[tuple[api.Option, str]]:
    """The given options that name an output file (:attr:`msjgym.api.Option.writes`), with their paths."""
    return [(option, options[name]) for name, (option, _) in flags.family_flags().items()
            if option.writes and name in options]


def run_inputs(scenario: str, policy: object, files: Sequence[Path] = ()) -> list[Path]:
    """Every file a run reads: ``files`` (recorded while loading: the scenario file, its trace, an empirical law's
    values), the scenario argument when it is a file, and the policy's files (``FILE.py``, ``sb3:MODEL.zip``,
    ``rllib:DIR``). No output path may be one of them (:func:`msjgym.core.inputs.refuse_overwrite`)."""
    inputs = list(files) + policy_files(policy)
    if is_regular_file(scenario):
        inputs.append(Path(scenario).expanduser())
    return inputs


def _print_result(result: Result, args: argparse.Namespace, outputs: Sequence[tuple[api.Option, str]] = ()) -> int:
    """Print the result and write the output files of ``outputs``; 0, or 1 when one could not be written after all
    (its rows then go to a temporary file, named on stderr, so nothing computed is lost)."""
    fmt = getattr(args, "per_job_format", None)
    failed = [message for option, path in outputs
              if (message := save_columns(getattr(result, option.writes), Path(path), option.flag, fmt,
                                          result.per_job_header))]
    csv_path = getattr(args, "csv", None)
    if csv_path and (message := save_metrics(result, Path(csv_path))):
        failed.append(message)
    if args.json:
        print(strict_json(result.to_dict()))
        for note in result.notes:  # not in the JSON object: on stderr, so that nothing is silently dropped
            print(f"msjgym: note: {note.removeprefix('note: ')}", file=sys.stderr)
    else:
        print(format_table(result) + format_references(result.references)
              + format_checks(result.checks, result.check_notes))
        written = [f"{option.writes.replace('_', '-')} rows written to {path}" for option, path in outputs
                   if not any(m.startswith(f"{option.flag} ") for m in failed)]
        if csv_path and not any(m.startswith("--csv ") for m in failed):
            written.append(f"metrics written to {csv_path}")
        notes = result.notes + written
        if notes:
            print("\n" + "\n".join(notes))
    for message in failed:
        print(f"msjgym: error: {one_line(message)}", file=sys.stderr)
    return 1 if failed else 0


def save_columns(columns: dict | None, path: Path, flag: str, fmt: str | None = None,
                 header: dict | None = None) -> str | None:
    """Write ``columns`` (name -> array, one row per job) to ``path`` (checked before the run) as CSV, or as SWF by
    its extension or ``fmt`` (:mod:`msjgym.core.schedule`); if that fails, to a temporary file. Returns None, or the
    one-line error naming ``flag`` and saying where the rows went."""
    if columns is None:
        return f"{flag} {str(path)!r}: this run has no such rows to write"
    kind = schedule.schedule_format(path, fmt, flag)
    try:
        schedule.write_schedule(columns, path, kind, header)
        return None
    except OSError as exc:
        reason = exc.strerror or str(exc)
    try:
        fallback = fallback_file(flag.lstrip("-"), f".{kind}")
        schedule.write_schedule(columns, fallback, kind, header)
    except OSError:
        return f"{flag} {str(path)!r}: could not be written ({reason}); the rows are lost"
    return f"{flag} {str(path)!r}: could not be written ({reason}); the rows are in {str(fallback)!r}"


def save_metrics(result: Result, path: Path) -> str | None:
    """``--csv``: one row per metric (long format); None, or the one-line error (the table is printed anyway)."""
    import csv

    try:
        with path.open("w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["scenario", "policy", "metric", "mean", "ci95", "reps", "jobs", "warmup", "seed"])
            for name, est in result.metrics.items():
                out.writerow([result.scenario, result.policy, name, _csv_number(est.mean), _csv_number(est.ci95),
                              result.reps, result.jobs, result.warmup, result.seed])
        return None
    except OSError as exc:
        return f"--csv {str(path)!r}: could not be written ({exc.strerror or exc}); the metrics are in the output"


def _csv_number(x: float) -> str:
    return repr(float(x)) if np.isfinite(x) else ""


THEORY_RUN = api.RunSettings(reps=1, batches=1)
"""What ``msjgym theory`` validates the scenario and policy with: the smallest run, since the theory simulates
nothing (a run's size, checked for a simulation, is not the theory's concern)."""


def _cmd_theory(args: argparse.Namespace) -> None:
    overrides = parse_overrides(args.param)
    family = api.family_of(args.scenario)
    if args.policy is None:
        scenario = family.load(args.scenario, overrides)
        policy = family.default_policy(scenario)
        if policy is None:
            raise MsjgymError(f"{scenario.name}: give --policy (see `msjgym list`)")
    else:
        scenario, policy = api.scenario_and_policy(args.scenario, args.policy, overrides)
    family.validate(scenario, policy, THEORY_RUN)  # references() take a validated (scenario, policy, run)
    refs = family.references(scenario, policy, THEORY_RUN)
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
    reproduction = REPRODUCTIONS[args.name]
    common = {name: option.default if getattr(args, name) is None else option.check(getattr(args, name))
              for name, option in _REPRODUCE_COMMON.items()}
    own = {o.name: o.check(getattr(args, o.name)) for o in reproduction.options
           if getattr(args, o.name, None) is not None}  # checked before anything is created or run
    out = check_output_dir(Path(args.out) if args.out else Path("results") / "reproduce" / args.name, "--out")
    settings = Settings(out=out, reps=reproduction.reps if common["reps"] is None else common["reps"],
                        jobs=common["jobs"], seed=common["seed"], progress=not args.no_progress and sys.stderr.isatty(),
                        options=own)
    for path in reproduction.run(settings):
        print(path)


def _unknown_flag(args: argparse.Namespace, extras: Sequence[str]) -> str:
    """The one-line error for arguments the command does not take: a flag of another reproduction (or family)
    is named with the ones that have it."""
    flag = next((e.split("=", 1)[0] for e in extras if e.startswith("--")), None)
    if flag is None:
        return f"unrecognized arguments: {' '.join(extras)}"
    owners = [f"`msjgym reproduce {name}`" for name, r in REPRODUCTIONS.items()
              if any(o.flag == flag for o in r.options)]
    owners += [f"`msjgym evaluate` on {f.name} scenarios" for f in api.families()
               if any(o.flag == flag and o.command_line for o in api.options_of(f))]
    where = f"msjgym {args.command}" + (f" {args.name}" if getattr(args, "name", None) and
                                          args.command == "reproduce" else "")
    return f"{flag}: not an option of `{where}`" + (f"; only for {', '.join(owners)}" if owners else
                                                    f" (see `{where} --help`)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``msjgym`` console script; returns the exit status.

    Standard output goes through :class:`~msjgym.core.output.GuardedStdout`: a console that cannot encode some
    character of a result (``PYTHONIOENCODING=ascii``, a Windows code page) shows it replaced, and the whole output
    is saved to a file named in one line on stderr (status 1), instead of a traceback after the run.

    Every outcome is a returned status, argparse's own included (``--help``: 0; a bad option: its one line on
    stderr, 2), never a ``SystemExit`` out of here: the console script and ``python -m msjgym`` pass it to
    ``sys.exit``, and a caller in the same process (a test, a notebook) gets the status a shell would see."""
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # argparse printed its help or its one error line, then exited
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    if extras:  # one line naming the flag and who has it (argparse would say "unrecognized arguments")
        print(f"msjgym: error: {one_line(_unknown_flag(args, extras))}", file=sys.stderr)
        return 2
    with GuardedStdout() as out:
        status = _run_command(args)
    return out.report(status)


def _run_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "list":
            _cmd_list()
        elif args.command in ("evaluate", *_evaluate_aliases()):
            return _cmd_evaluate(args) or 0
        elif args.command == "theory":
            _cmd_theory(args)
        elif args.command == "reproduce":
            _cmd_reproduce(args)
        elif args.command == "plot":
            return plot.command(args)
        elif args.command == "sweep":
            return sweep.command(args)
        elif args.command == "compile":
            return precompile.command(args)
    except MsjgymError as exc:
        print(f"msjgym: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("msjgym: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # only code of the user's (a policy, a model) raises it inside a command
        print(f"msjgym: error: the {args.command} stopped: code run inside it called sys.exit({show(exc.code)}) "
              "(raised SystemExit)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
