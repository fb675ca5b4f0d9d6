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


# ---------------------------------------------------------------- one key, whichever TOML spelling
SPELLINGS = ("dotted", "table", "inline")


def _spell(tables: dict[str, dict[str, str]], spelling: str) -> str:
    """TOML for ``{table: {key: value text}}`` (keys in order, a key listed twice as ``key`` and ``key#2``):
    ``table.key = v`` lines, ``[table]`` sections, or ``table = {key = v, ...}``."""
    lines = []
    for table, pairs in tables.items():
        items = [(k.split("#")[0], v) for k, v in pairs.items()]
        if spelling == "dotted":
            lines += [f"{table}.{k} = {v}" for k, v in items]
        elif spelling == "table":
            lines += [f"[{table}]"] + [f"{k} = {v}" for k, v in items]
        else:
            lines.append(f"{table} = {{{', '.join(f'{k} = {v}' for k, v in items)}}}")
    return "\n".join(lines) + "\n"


def _load(tmp_path: Path, text: str) -> str:
    """The scenario's arrivals as loaded, or the error's message (its file name left out)."""
    (tmp_path / "s.toml").write_text(text)
    try:
        return repr(api.load_scenario(str(tmp_path / "s.toml")).params["arrivals"])
    except MsjgymError as exc:
        return "error: " + str(exc).replace(str(tmp_path / "s.toml"), "FILE")


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "examples" / "traces" / "sample.swf", tmp_path / "t.swf")
    return tmp_path


@pytest.mark.parametrize("extra", [{}, {"foo": "1"}, {"time_scale": "0.5", "skip_bad_line": "true"},
                                   {"time_scale": "0.5", "time_scale#2": "0.6"}, {"trace#2": '"t.swf"'}])
def test_a_nested_key_is_read_and_checked_the_same_in_every_spelling(trace_dir, extra):
    """``arrivals.k = v``, ``[arrivals] k = v`` and ``arrivals = {k = v}`` load the same scenario; an unknown key
    gets the same message in each; a key given twice is refused in each (never the last value silently)."""
    results = {s: _load(trace_dir, _spell({"arrivals": {"trace": '"t.swf"'} | extra}, s)) for s in SPELLINGS}
    if any("#2" in k for k in extra):
        assert all(r.startswith("error: ") for r in results.values()), results
    else:
        assert len(set(results.values())) == 1, results
        assert results["dotted"].startswith("error: FILE: arrivals.") == bool(set(extra) - {"time_scale"})


@pytest.mark.parametrize("first, second", [(a, b) for a in SPELLINGS for b in SPELLINGS if a != b])
def test_a_key_given_in_two_spellings_is_refused(trace_dir, first, second):
    text = _spell({"arrivals": {"trace": '"t.swf"', "time_scale": "0.5"}}, first)
    again = _spell({"arrivals": {"time_scale": "0.6"}}, second)
    assert _load(trace_dir, text + again).startswith("error: "), text + again
    assert "time_scale': 0.5" in _load(trace_dir, text)  # the control: once is read


@pytest.mark.parametrize("spelling", ["dotted", "header", "header-dotted"])
@pytest.mark.parametrize("depth", [MAX_NESTING, MAX_NESTING + 1, 3000])
def test_dotted_keys_and_headers_count_as_nesting(tmp_path, spelling, depth):
    """A dotted key ``a.a. ... .b = 1`` (or a header ``[a.a. ... .a]``) nests tables as braces do: refused beyond
    the limit with the same one line, never a ``RecursionError`` from code that walks the table later."""
    def path(tables: int, key: bool) -> str:  # ``tables`` nested tables, then a key holding a value (or none)
        return ".".join(["x"] * (tables + key))

    half = depth // 2
    text = {"dotted": f"{path(depth, True)} = 1\n", "header": f"[{path(depth, False)}]\n",
            "header-dotted": f"[{path(half, False)}]\n{path(depth - half, True)} = 1\n"}
    message = _load(tmp_path, "servers = 4\narrival_rate = 1.0\n" + text[spelling])
    if depth <= MAX_NESTING:
        assert "levels deep" not in message and "unknown key" in message, message
    else:
        assert f"nested {depth:,} levels deep" in message and f"at most {MAX_NESTING}" in message, message
    status, out, err = msjgym("evaluate", "s.toml", "--policy", "fcfs", cwd=tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1, err[-300:]


def test_a_quoted_key_with_a_dot_is_not_taken_for_a_path(trace_dir):
    for text in ['arrivals = {trace = "t.swf"}\n"arrivals.time_scale" = 0.5\n',
                 '[arrivals]\ntrace = "t.swf"\n"time_scale.x" = 1\n']:
        message = _load(trace_dir, text)
        assert "a quoted key with a dot is one key" in message, message
    with pytest.raises(MsjgymError, match="a quoted key with a dot"):
        parse_override('arrivals={"time_scale.x" = 1}')


@pytest.mark.parametrize("pair", [("arrivals.time_scale=0.5", "arrivals={trace = \"t.swf\"}"),
                                  ("classes.0.need=2", "classes.0={need = 1}"), ("a.b.c=1", "a=1")])
def test_a_param_path_and_a_table_holding_it_are_one_key_given_twice(pair):
    from msjgym.core.overrides import parse_overrides

    for texts in (pair, pair[::-1]):
        with pytest.raises(MsjgymError, match="both set"):
            parse_overrides(texts)
    assert parse_overrides(["a.b=1", "a.c=2", "ab=3"]) == {"a.b": 1, "a.c": 2, "ab": 3}  # siblings: no overlap
