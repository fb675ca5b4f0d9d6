"""Messages name what the user wrote: no default the user never gave blamed as an error, a flag named as
the flag (not as an internal scenario key), and no long input echoed whole."""
from __future__ import annotations

import argparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import msjgym
from msjgym import api
from msjgym.core.validation import LONG_WORD, one_line
from msjgym.errors import MsjgymError
from msjgym.evaluate import flags, sweep


def test_a_default_a_policy_does_not_use_is_not_checked():
    """JSQ on one server: d = 2 is lb-dispatch's default, JSQ does not read it (an M/M/1 runs); jsq-d on one server
    is refused naming d as the scenario's default and the flag that sets it; a d the user gave is checked now."""
    status, out, err = msjgym("evaluate", "lb-dispatch", "--policy", "jsq", "--param", "servers=1", "--reps", "2",
                                "--jobs", "2000")
    assert status == 0 and "policy    jsq" in out, err
    status, out, err = msjgym("evaluate", "lb-dispatch", "--policy", "jsq-d", "--param", "servers=1")
    assert status == 2 and "default" in err and "--param d=" in err and len(err.strip().splitlines()) == 1
    status, out, err = msjgym("evaluate", "lb-dispatch", "--policy", "random", "--param", "d=0")
    assert status == 2 and "d = 0" in err


def test_a_trace_flag_on_a_poisson_scenario_names_the_flag():
    status, out, err = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--skip-bad-lines")
    assert status == 2 and err.startswith("msjgym: error: --skip-bad-lines: not for scenario 'one-and-n'")
    assert "unknown parameter" not in err


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=3000))
def test_one_line_cuts_every_long_word_and_keeps_short_ones(text):
    line = one_line(f"policy {text}: not a policy")
    assert "\n" not in line and all(len(w) <= LONG_WORD for w in line.split(" "))
    if all(len(w) <= LONG_WORD for w in " ".join(text.splitlines()).split(" ")):
        assert line == " ".join(f"policy {text}: not a policy".splitlines())


def test_a_huge_policy_name_is_not_echoed_whole():
    status, out, err = msjgym("evaluate", "one-and-n", "--policy", "x" * 100_000)
    assert status == 2 and len(err) < 2_000 and "x" * LONG_WORD not in err and len(err.splitlines()) == 1


# ------------------------------------------------------------------ flags named as flags, in evaluate and in sweep

def _sweep_plan(*argv: str):
    """``msjgym sweep ARGV`` checked as the command checks it (the whole plan, nothing run)."""
    parser = argparse.ArgumentParser()
    sweep.add_arguments(parser)
    return sweep.make_plan(parser.parse_args([*argv, "--out", "unused-out"]))


def _scenario_key_flags():
    return [option for option, _ in flags.family_flags().values() if option.scenario_key is not None]


def _internal_names(option) -> list[str]:
    """What a message must not show for ``option``: its scenario key, and its name where that differs from the flag's
    text (an underscore); a name that is the flag's own word (``window``) can only be checked as part of the flag."""
    return [w for w in (option.scenario_key, option.name if "_" in option.name else None) if w]


def _every_family_smoke():
    return [(f.smoke.scenario, f.smoke.policy) for f in api.families() if getattr(f, "smoke", None) is not None]


def test_every_flag_is_named_as_its_flag_by_a_sweep_and_by_evaluate():
    """Every command-line option of every family (listed from the declarations: an option added later is covered)
    on every family's smoke scenario: whatever the outcome, no message shows the option's internal key."""
    checked = 0
    for option, _ in flags.family_flags().values():
        if option.writes:
            continue
        value = [] if option.type is bool else [str(option.choices[0]) if option.choices else "3"]
        for scenario, policy in _every_family_smoke():
            try:
                _sweep_plan(scenario, "--policy", policy, option.flag, *value, "--reps", "2", "--jobs", "10")
                continue
            except MsjgymError as exc:
                message = str(exc)
            assert option.flag in message or "--" in message, message
            for internal in _internal_names(option):
                assert internal not in message, (option.flag, scenario, message)
            checked += 1
    assert checked >= len(_scenario_key_flags()), "no refused combination was checked"
    for option in _scenario_key_flags():  # evaluate, on a scenario without the key
        status, out, err = msjgym("evaluate", "one-and-n", "--policy", "fcfs", option.flag, "--reps", "2")
        assert status == 2 and option.flag in err, err
        assert all(internal not in err for internal in _internal_names(option)), err
    # the control: the message a sweep gave before names the key, and this check would refuse it
    before = "grid point servers=2: one-and-n: unknown parameter 'arrivals.skip_bad_lines'"
    assert any(k in before for o in _scenario_key_flags() for k in _internal_names(o))


def test_a_scenario_key_flag_in_a_sweep_is_named_by_its_flag():

    for option in _scenario_key_flags():
        with pytest.raises(MsjgymError) as info:
            _sweep_plan("one-and-n", "--policy", "fcfs", "--grid", "servers=2,3", option.flag, "--reps", "2")
        assert f"{option.flag}: not for scenario 'one-and-n'" in str(info.value)
        assert all(internal not in str(info.value) for internal in _internal_names(option))
        with pytest.raises(MsjgymError, match=f"--grid {option.scenario_key}: also given as {option.flag}; give it once"):
            _sweep_plan("examples/lublin_256.toml", "--policy", "fcfs", "--grid",
                        f"{option.scenario_key}=true,false", option.flag)


def test_a_flag_and_a_param_setting_one_key_are_one_error_naming_both():
    """``--skip-bad-lines`` with ``--param arrivals.skip_bad_lines=...`` (or a table holding the key) is refused, in
    evaluate and in sweep, as any key given twice is (docs/limits.md), never one of them silently; the key given
    once, either way, is accepted (the control)."""
    for option in _scenario_key_flags():
        key = option.scenario_key
        table, leaf = key.rsplit(".", 1)
        for param in (f"{key}=false", f"{key}=true", f"{table}={{{leaf} = false}}"):
            given = param.split("=", 1)[0]
            status, out, err = msjgym("evaluate", "examples/lublin_256.toml", "--policy", "fcfs", option.flag,
                                      "--param", param)
            assert status == 2 and f"{option.flag} and --param {given}: both set {key}" in err, err
            with pytest.raises(MsjgymError, match=f"{option.flag} and --param {given}: both set"):
                _sweep_plan("examples/lublin_256.toml", "--policy", "fcfs", option.flag, "--param", param)
        assert flags.scenario_overrides([f"{key}=true"], {}) == {key: True}
        assert flags.scenario_overrides(["servers=3"], {key: True}) == {"servers": 3, key: True}
        plan = _sweep_plan("examples/lublin_256.toml", "--policy", "fcfs", option.flag)
        assert plan.combos[0].point == {key: True}


def test_jobs_and_a_drawn_traces_jobs_are_said_both_when_they_differ():
    """``--reps R`` on a synthetic trace draws R traces of ``--jobs`` jobs when it is given (the documented
    precedence over the scenario's ``jobs``, the length of its one exact replay): the notes say both, and nothing
    when they agree; the exact replay refuses a ``--jobs`` beyond its trace, naming both."""
    scenario = api.load_scenario("lublin-feitelson", {"jobs": 100, "processors": 16})
    family = api.family_of(scenario)
    for jobs, said in ((300, True), (40, True), (100, False)):
        sim = family.simulation(scenario, "fcfs", api.RunSettings(reps=3, jobs=jobs), 1)
        assert [len(sim._trace_of(r)) for r in range(3)] == [jobs] * 3
        lines = [n for n in sim.notes() if n.startswith("drawn traces:")]
        assert bool(lines) == said, sim.notes()
        if said:
            assert f"--jobs {jobs:,}" in lines[0] and "scenario's jobs = 100" in lines[0], lines
    with pytest.raises(MsjgymError, match="--jobs 101: the trace has 100 jobs"):
        family.run_length(scenario, "fcfs", api.RunSettings(jobs=101))
