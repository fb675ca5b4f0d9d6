"""Messages name what the user wrote: no default the user never gave blamed as an error, a flag named as
the flag (not as an internal scenario key), and no long input echoed whole."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import msjgym
from msjgym.core.validation import LONG_WORD, one_line


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
