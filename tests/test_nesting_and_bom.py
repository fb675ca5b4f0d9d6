"""Deep nesting (``--grid`` / ``--param`` / a TOML file with thousands of brackets) is a one-line error with the
depth limit, not a ``RecursionError``; a UTF-8 byte-order mark at the start of a TOML, CSV, SWF or values file is
dropped by the one opener of users' text files, not blamed on line 1."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import msjgym
from msjgym import api
from msjgym.core.inputs import load_toml, nesting_depth
from msjgym.core.limits import MAX_NESTING
from msjgym.core.overrides import parse_override
from msjgym.errors import MsjgymError
from msjgym.evaluate.sweep import parse_grid
from msjgym.systems.msj.trace.files import read_trace

ROOT = Path(__file__).resolve().parents[1]
BOM = "\ufeff"


def _nested(depth: int, kind: str) -> str:
    """A TOML value nested ``depth`` levels: arrays ``[[...1...]]``, inline tables ``{a={a=1}}`` or a mix."""
    opens = "".join("[" if kind == "array" or (kind == "mix" and i % 2) else "{a=" for i in range(depth))
    closes = "".join("]" if c == "[" else "}" for c in reversed(opens.replace("{a=", "{")))
    return opens + "1" + closes


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 2400), kind=st.sampled_from(["array", "table", "mix"]))
def test_nesting_is_counted_and_refused_beyond_the_limit_everywhere(depth, kind):
    value = _nested(depth, kind)
    assert nesting_depth(f"x = {value}") == depth
    if depth <= MAX_NESTING:
        assert load_toml(f"x = {value}", "t")["x"] is not None
        assert parse_override(f"x={value}")[0] == "x"
        return
    for call in (lambda: load_toml(f"x = {value}", "t"), lambda: parse_override(f"x={value}"),
                 lambda: parse_grid(f"x={value}")):
        with pytest.raises(MsjgymError, match=f"nested {depth:,} levels deep; at most {MAX_NESTING}"):
            call()


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="[]{}\"'#\\\nab=1,", max_size=60))
def test_brackets_in_strings_and_comments_do_not_count(text):
    """The count never exceeds the brackets outside quotes: any text's depth is at most its bracket count."""
    assert 0 <= nesting_depth(text) <= text.count("[") + text.count("{")
    assert nesting_depth(f'x = "{"[" * 500}"  # {"{" * 500}') == 0


@pytest.mark.parametrize("args", [
    ["evaluate", "one-and-n", "--policy", "fcfs", "--param", "x=" + _nested(3000, "array")],
    ["sweep", "one-and-n", "--policy", "fcfs", "--grid", "x=" + _nested(3000, "mix"), "--out", "o"],
    ["sweep", "one-and-n", "--policy", "fcfs", "--param", "x=" + _nested(2000, "table"), "--out", "o"],
    ["evaluate", "deep.toml", "--policy", "fcfs"],
    ["sweep", "deep.toml", "--policy", "fcfs", "--out", "o"],
])
def test_deep_nesting_on_the_command_line_is_one_line(tmp_path, args):
    (tmp_path / "deep.toml").write_text("servers = 4\narrival_rate = 1.0\nx = " + _nested(3000, "mix") + "\n")
    done = msjgym(*args, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-500:]
    assert f"at most {MAX_NESTING}" in lines[0] and len(lines[0]) < 300


# ---------------------------------------------------------------- a byte-order mark
@pytest.fixture
def files(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "examples" / "three_class.toml", tmp_path / "plain.toml")
    shutil.copy(ROOT / "examples" / "traces" / "sample.swf", tmp_path / "plain.swf")
    (tmp_path / "plain.csv").write_text("arrival_time,need,duration\n0,1,1\n1,2,2\n2,1,1\n")
    (tmp_path / "values.txt").write_text("1.0\n2.0\n3.0\n")
    return tmp_path


def _with_bom(path: Path) -> Path:
    marked = path.with_name("bom_" + path.name)
    marked.write_bytes(BOM.encode("utf-8") + path.read_bytes())
    return marked


def test_a_bom_is_dropped_from_a_toml_scenario(files):
    plain = api.load_scenario(str(files / "plain.toml"))
    marked = api.load_scenario(str(_with_bom(files / "plain.toml")))
    assert marked.params == plain.params


@pytest.mark.parametrize("name", ["plain.swf", "plain.csv"])
def test_a_bom_is_dropped_from_a_trace(files, name):
    plain = read_trace(files / name, servers=4)
    marked = read_trace(_with_bom(files / name), servers=4)
    assert (marked.arrival == plain.arrival).all() and (marked.need == plain.need).all()
    assert marked.machine == plain.machine and marked.notes == plain.notes


def test_a_bom_is_dropped_from_a_values_file_and_a_scenario_using_traces(files):
    _with_bom(files / "values.txt")
    _with_bom(files / "plain.swf")
    (files / "e.toml").write_text(
        "servers = 4\narrival_rate = 0.5\n[[classes]]\nneed = 1\n"
        'service = { dist = "empirical", file = "bom_values.txt" }\n')
    assert api.load_scenario(str(files / "e.toml")).model.classes[0].service.mean == pytest.approx(2.0)
    (files / "t.toml").write_text('arrivals = { trace = "bom_plain.swf", scale_servers = 64 }\n')
    (files / "u.toml").write_text('arrivals = { trace = "plain.swf", scale_servers = 64 }\n')
    marked, plain = api.load_scenario(str(files / "t.toml")), api.load_scenario(str(files / "u.toml"))
    assert (marked.model.trace.need == plain.model.trace.need).all() and marked.model.load == plain.model.load


@pytest.mark.parametrize("key", ["servers", "arrival_rate"])
def test_only_a_leading_bom_is_dropped(tmp_path, key):
    """A BOM inside the text is content (TOML refuses it there, naming its line), not silently dropped."""
    (tmp_path / "s.toml").write_text(f"description = 'x'\n{BOM}{key} = 1.0\n", encoding="utf-8")
    with pytest.raises(MsjgymError, match="line 2"):
        api.load_scenario(str(tmp_path / "s.toml"))
