"""A family declares its own options (:meth:`msjgym.api.Family.options`) and a reproduction its own (``OPTIONS``):
the command line builds ``evaluate``'s, ``sweep``'s and ``reproduce NAME``'s flags from the declarations, names no
family, and refuses an option the scenario's family does not declare in one line naming the families that have it."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from msjgym import api, cli
from msjgym.errors import MsjgymError
from msjgym.evaluate import flags
from msjgym.evaluate.evaluator import evaluate
from msjgym.reproduce import REPRODUCTIONS

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_every_family_declares_its_options():
    for family in api.families():
        options = family.options()
        assert isinstance(options, tuple) and all(isinstance(o, api.Option) for o in options), family.name
        assert len({o.name for o in options}) == len(options), family.name
        for option in options:
            assert option.help and option.flag.startswith("--") and "_" not in option.flag


def test_the_evaluate_flags_are_the_families_declarations():
    """Every declared command-line option is a flag of ``msjgym evaluate``, tagged with its families; no other
    family-specific flag is there."""
    parser = cli.build_parser()
    evaluate_parser = parser._subparsers._group_actions[0].choices["evaluate"]
    offered = {a.option_strings[0]: a for a in evaluate_parser._actions if a.option_strings}
    declared = flags.family_flags()
    for name, (option, owners) in declared.items():
        assert option.flag in offered, option.flag
        assert f"[{', '.join(owners)}]" in offered[option.flag].help
    generic = {"-h", "--policy", "--reps", "--jobs", "--warmup", "--seed", "--param", "--batches", "--json", "--csv",
               "--no-progress"}
    assert set(offered) - generic == {o.flag for o, _ in declared.values()}


def test_cli_names_no_family():
    """No string in cli.py is a family's name, one of its scenarios' names or one of its flags (``--window``)."""
    text = (ROOT / "msjgym" / "cli.py").read_text()
    strings = {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    words = {w for s in strings for w in re.findall(r"[\w-]+", s)} | strings
    names = {f.name for f in api.families()}
    names |= {n for f in api.families() for n, _ in f.scenarios()}
    names |= {o.flag for f in api.families() for o in api.options_of(f)}
    assert words & names == set()


@pytest.mark.parametrize("args, words", [
    (["evaluate", "lb-push-table1", "--policy", "push", "--window", "4"],
     ["--window: not for dispatch scenarios", "only for msj scenarios"]),
    (["evaluate", "one-and-n", "--policy", "fcfs", "--levels", "4"],
     ["--levels: not for msj scenarios", "only for dispatch scenarios"]),
    (["evaluate", "LOSS", "--policy", "greedy", "--skip-bad-lines"],
     ["--skip-bad-lines: not for loss scenarios", "only for msj scenarios"]),
    (["evaluate", "one-and-n", "--policy", "fcfs", "--bsld-threshold", "-1"],
     ["--bsld-threshold = -1.0", "must be a finite number in [0"]),
    (["sweep", "lb-push-table1", "--grid", "lam=0.5,0.6", "--policy", "push", "--out", "unused", "--saturated"],
     ["--saturated: not for dispatch scenarios", "only for msj"]),
    (["reproduce", "multilevel-n", "--max-servers", "8"],
     ["--max-servers: not an option of `msjgym reproduce multilevel-n`", "zero-queueing", "loss-scaling"]),
    (["reproduce", "lb-tables", "--workers", "0"], ["--workers = 0", "[1,"]),
])
def test_a_flag_of_another_family_is_one_line_naming_who_has_it(capsys, args, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = [api.family("loss").scenarios()[0][0] if a == "LOSS" else a for a in args]  # any loss scenario
    status, out, err = run(capsys, *args)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert not any(tmp_path.iterdir())  # refused before anything was created


def test_python_options_are_checked_against_the_family():
    with pytest.raises(MsjgymError, match=r"--observation: not for msj scenarios; only for dispatch"):
        evaluate("one-and-n", "fcfs", reps=2, jobs=100, observation="sampled")
    with pytest.raises(MsjgymError, match=r"--skip-bad-lines: a scenario key; give it when loading the scenario"):
        evaluate("one-and-n", "fcfs", reps=2, jobs=100, skip_bad_lines=True)
    with pytest.raises(MsjgymError, match=r"--window = 0: must be an integer in \[1, "):
        evaluate("one-and-n", "fcfs", reps=2, jobs=100, window=0)


def test_reproduce_help_shows_that_reproductions_options(capsys):
    status, text, _ = run(capsys, "reproduce", "lb-tables", "--help")  # argparse's exit: returned, status 0
    assert status == 0
    assert all(o.flag in text for o in REPRODUCTIONS["lb-tables"].options) and "--max-servers" not in text
    status, text, _ = run(capsys, "reproduce", "zero-queueing", "--help")
    assert status == 0
    assert "--max-servers" in text and "--servers" not in text.replace("--max-servers", "")


def test_a_toy_familys_option_becomes_a_flag(monkeypatch):
    """The control: a family registered with an option of its own gets its flag without any edit of the CLI."""
    class Toy:
        name, title, order, env_ids = "toy", "a toy", 99, ()

        def scenarios(self):
            return [("toy-1", "one toy")]

        def options(self):
            return (api.Option("speed_limit", "a toy's limit, in jobs per unit time", float, low=0.0),)

    monkeypatch.setattr(api, "_FAMILIES", api.families() + [Toy()])
    parser = cli.build_parser()
    args = parser.parse_args(["evaluate", "one-and-n", "--policy", "fcfs", "--speed-limit", "2.5"])
    assert args.speed_limit == 2.5
    with pytest.raises(MsjgymError, match=r"--speed-limit: not for msj scenarios; only for toy scenarios \(toy-1\)"):
        flags.family_options(args, api.family("msj"))


def test_a_sweep_takes_the_familys_options(tmp_path):
    """``msjgym sweep ... --saturated``: the option reaches every task (and the task's inputs digest, so a stored
    sweep without it is not mistaken for this one); a task then runs the saturated system."""
    from msjgym.evaluate import sweep

    def plan(*extra: str):
        args = cli.build_parser().parse_args(["sweep", "one-and-n", "--grid", "servers=8", "--policy", "fcfs",
                                              "--reps", "1", "--jobs", "2000", "--out", str(tmp_path), *extra])
        return sweep.make_plan(args)

    saturated, plain = plan("--saturated"), plan()
    assert saturated.tasks[0].options == (("saturated", True),) and plain.tasks[0].options == ()
    assert saturated.tasks[0].inputs != plain.tasks[0].inputs
    row = sweep.run_task(saturated.tasks[0])
    assert "throughput" in row.metrics and "response_time" not in row.metrics


def test_one_flag_two_families_each_checks_its_own_choices(capsys):
    """``--mode`` is declared by two families with different values: the flag takes either, each family refuses
    the other's in one line."""
    fs = run(capsys, "evaluate", "finite-skip-fig3", "--policy", "lps", "--mode", "start", "--jobs", "100",
             "--reps", "1")
    msj = run(capsys, "evaluate", "one-and-n", "--policy", "fcfs", "--mode", "choose", "--jobs", "100", "--reps", "1")
    assert fs[0] != 0 and msj[0] != 0
    assert fs[2].strip().splitlines()[-1] == "msjgym: error: --mode = 'start': must be one of rates, choose"
    assert msj[2].strip().splitlines()[-1] == "msjgym: error: --mode = 'choose': must be one of start, preemptive"


def test_which_policies_an_option_applies_to_is_its_declaration():
    """Every family's options say which policies they apply to (``Option.policies``); ``api.check_options`` refuses,
    in one line naming the flag, an option given for the other kind, from that field alone; and a family's
    ``validate`` goes through it."""
    kinds = set()
    for family in api.families():
        for option in api.options_of(family):
            if option.policies == "any" or option.scenario_key is not None or option.writes:
                continue
            value = option.choices[0] if option.choices else True if option.type is bool else option.low or 1
            wrong = option.policies == "builtin"  # a builtin-only option given for a user's policy, and vice versa
            with pytest.raises(MsjgymError) as caught:
                api.check_options(family, {option.name: value}, user=wrong)
            line = str(caught.value)
            assert "\n" not in line and line.startswith(f"{option.flag}: only for "), line
            assert api.check_options(family, {option.name: value}, user=not wrong) == {option.name: value}
            kinds.add(option.policies)
    assert kinds == {"builtin", "user"}  # the msj family has both
    with pytest.raises(MsjgymError, match=r"^--saturated: only for built-in policies$"):
        evaluate("one-and-n", str(ROOT / "examples" / "my_policy.py") + ":PatientFirstFit", reps=1, jobs=100,
                 saturated=True)
    with pytest.raises(MsjgymError, match=r"^--window: only for a policy of your own \("):
        evaluate("one-and-n", "fcfs", reps=1, jobs=100, window=4)
    with pytest.raises(ValueError, match="policies = 'own'"):
        api.Option("speed_limit", "a toy's limit", float, policies="own")
