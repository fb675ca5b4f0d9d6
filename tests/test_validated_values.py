"""Every value a user writes goes through the one validated input layer: an SWF header value
(``MaxProcs: 1e20`` silently gave every job a need of 1), a header given again with another value (it silently
replaced the first), a requested time that is not a number (it silently became "unknown"), a distribution's
parameter given twice (``erlang(k=2, k=3)`` ran k = 3) and a ``--param`` key given twice."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msjgym.core.overrides import parse_overrides
from msjgym.errors import ScenarioError
from msjgym.systems.dispatch.distributions import PAPER_LAWS, parse_paper_law
from msjgym.systems.msj.trace.files import MAX_TRACE_PROCESSORS, TraceError, read_trace

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = (ROOT / "examples" / "traces" / "sample.swf").read_text()


def _write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _with_header(value: str) -> str:
    return SAMPLE.replace("; MaxProcs: 128", f"; MaxProcs: {value}")


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(
    st.integers(-10**25, 10**25).filter(lambda v: v != -1 and not 1 <= v <= MAX_TRACE_PROCESSORS).map(str),
    st.floats(allow_nan=True, allow_infinity=True).filter(
        lambda v: not (math.isfinite(v) and v.is_integer() and (v == -1 or 1 <= v <= MAX_TRACE_PROCESSORS))).map(repr),
    st.sampled_from(["1e20", "abc", "0", "1.5", "nan", "inf", "-inf", "12 procs", "0x10", "1_000_000_000_000"]),
))
def test_a_header_value_out_of_range_is_an_error_naming_the_line(tmp_path_factory, value):
    path = _write(tmp_path_factory.mktemp("h"), _with_header(value))
    with pytest.raises(TraceError, match=r"line 3: MaxProcs") as info:
        read_trace(path)
    assert "\n" not in str(info.value)


@settings(max_examples=30, deadline=None)
@given(value=st.integers(128, MAX_TRACE_PROCESSORS))
def test_a_header_value_in_range_is_the_machine(tmp_path_factory, value):
    assert read_trace(_write(tmp_path_factory.mktemp("h"), _with_header(str(value)))).machine == value


def test_an_unknown_header_value_is_ignored_with_a_note(tmp_path):
    trace = read_trace(_write(tmp_path, _with_header("-1")), servers=256)
    assert trace.machine == 256 and any("MaxProcs -1 (unknown)" in n for n in trace.notes)


@settings(max_examples=30, deadline=None)
@given(first=st.integers(1, 10**6), second=st.integers(1, 10**6), key=st.sampled_from(["MaxProcs", "MaxNodes"]))
def test_a_header_key_given_again_with_another_value_is_an_error(tmp_path_factory, first, second, key):
    text = SAMPLE.replace("; MaxProcs: 128", f"; MaxProcs: 128\n; {key}: {first}\n; {key}: {second}")
    path = _write(tmp_path_factory.mktemp("h"), text)
    if key == "MaxProcs" and (first != 128 or second != 128) or first != second:
        with pytest.raises(TraceError, match=f"line [45]: {key} given again"):
            read_trace(path)
    else:
        read_trace(path)  # the same value twice loses nothing


def _with_requested(value: str) -> tuple[str, int]:
    lines = SAMPLE.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip() and not line.startswith(";"))
    fields = lines[i].split()
    fields[8] = value
    lines[i] = " ".join(fields)
    return "\n".join(lines) + "\n", i + 1


@settings(max_examples=40, deadline=None)
@given(value=st.one_of(st.sampled_from(["nan", "NaN", "inf", "-inf", "abc", "1e400", "?", "--1"]),
                       st.text(alphabet="abcxyz?!", min_size=1, max_size=6)))
def test_a_requested_time_that_is_not_a_number_is_a_malformed_line(tmp_path_factory, value):
    text, line = _with_requested(value)
    path = _write(tmp_path_factory.mktemp("r"), text)
    with pytest.raises(TraceError, match=f"line {line}: requested time \\(field 9\\)"):
        read_trace(path)
    trace = read_trace(path, skip_bad_lines=True)
    assert trace.skipped_malformed == 1


@pytest.mark.parametrize("value, unknown", [("-1", True), ("0", True), ("-5", True), ("100", False)])
def test_a_requested_time_of_minus_one_is_unknown(tmp_path, value, unknown):
    text, _ = _with_requested(value)
    trace = read_trace(_write(tmp_path, text))
    first = int(min(range(len(trace)), key=lambda j: trace.ident[j]))
    assert (trace.estimate[first] == trace.duration[first]) if unknown else trace.estimate[first] == 100.0


# ---------------------------------------------------------------- keys given twice
LAWS_WITH_KEYS = sorted((name, keys) for name, keys in PAPER_LAWS.items() if keys)


@settings(max_examples=60, deadline=None)
@given(law=st.sampled_from(LAWS_WITH_KEYS), data=st.data())
def test_a_law_parameter_given_twice_is_an_error(law, data):
    name, keys = law
    key = data.draw(st.sampled_from(keys))
    values = data.draw(st.lists(st.sampled_from(["2", "3", "1/2", "0.4"]), min_size=2, max_size=2))
    positional = keys.index(key) == 0 and data.draw(st.booleans())
    first = values[0] if positional else f"{key}={values[0]}"
    text = f"{name}({first}, {key}={values[1]})"
    with pytest.raises(ScenarioError, match=f"'{key}' is given twice"):
        parse_paper_law(text)


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.sampled_from(["servers", "load", "p_n", "dist", "a.b"]), min_size=1, max_size=5))
def test_a_param_key_given_twice_is_an_error(keys):
    texts = [f"{k}={i}" for i, k in enumerate(keys)]
    if len(set(keys)) == len(keys):
        assert parse_overrides(texts) == {k: i for i, k in enumerate(keys)}
    else:
        with pytest.raises(ScenarioError, match="given twice"):
            parse_overrides(texts)
