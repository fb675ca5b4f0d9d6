"""Property-based tests of bad input: random INVALID scenarios, ``--param`` overrides, run settings and policy outputs
must each give one ``MsjgymError`` (a ``ScenarioError`` or ``PolicyError``) whose message is one line naming the key,
before any simulation; never another exception (a traceback on the command line), never a silent fix.

* the MSJ TOML loader (:func:`model_from_spec`, what ``msjgym evaluate FILE.toml`` runs) on a valid table with one key
  made invalid (negative, zero, NaN, ±inf, huge, a wrong type, a missing required key, an unknown key, a need above
  the servers, probabilities that do not sum to 1);
* every family's built-ins with a ``--param`` override (parsed by :func:`parse_override` from random text, or a
  bad value for one of the scenario's parameters);
* :func:`msjgym.evaluate`'s run settings (reps, jobs, warmup, seed, batches);
* a policy of the user's returning an invalid action (out of range, negative, a float, NaN, None, a string, an array,
  a bool) on every family;
* the command line, for the exit status: one ``msjgym: error:`` line on stderr, status 2, nothing on stdout.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import msjgym
import cli_run
from hypothesis_profiles import scaled
from msjgym.api import load_scenario
from msjgym.core.overrides import parse_override
from msjgym.errors import MsjgymError, PolicyError, ScenarioError
from msjgym.systems.msj.scenarios import model_from_spec


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text and "Traceback" not in text, f"not one line: {text!r}"
    return text


# ----------------------------------------------------------------------------------------------------------------
# Values

NAN, INF = math.nan, math.inf
WRONG_TYPES = st.sampled_from(["1", "abc", "", True, False, [], [1.0], {}, {"x": 1}])
NOT_FINITE = st.sampled_from([NAN, INF, -INF])
HUGE = st.sampled_from([1e300, 1e308, 10**30, 2**63, 2**64 + 1])


def not_positive() -> st.SearchStrategy:
    return st.one_of(st.sampled_from([0, 0.0, -0.0, -1, -1e-300]), st.floats(max_value=0.0, allow_nan=False),
                     st.integers(max_value=0))


def bad_positive_number() -> st.SearchStrategy:
    """Invalid where a finite number > 0 is required."""
    return st.one_of(not_positive(), NOT_FINITE, WRONG_TYPES)


def bad_count(high: int | None = None) -> st.SearchStrategy:
    """Invalid where an integer in [1, high] is required."""
    options = [not_positive(), NOT_FINITE, WRONG_TYPES, st.sampled_from([1.5, 0.5, 2.000001])]
    if high is not None:
        options.append(st.integers(high + 1, high + 10**6))
        options.append(HUGE)
    return st.one_of(*options)


def bad_probability() -> st.SearchStrategy:
    return st.one_of(not_positive(), NOT_FINITE, WRONG_TYPES, st.floats(1.0, 1e300, exclude_min=True), HUGE)


# ----------------------------------------------------------------------------------------------------------------
# The MSJ scenario table


def valid_spec() -> dict:
    return {"system": "msj", "servers": 8, "load": 0.5, "classes": [
        {"name": "small", "need": 1, "probability": 0.6, "service": {"dist": "exp", "mean": 1.0}},
        {"name": "wide", "need": 4, "probability": 0.4, "service": {"dist": "hyperexp", "mean": 2.0, "scv": 4.0}},
    ]}


def _set(spec: dict, path: tuple, value) -> None:
    node = spec
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _delete(spec: dict, path: tuple) -> None:
    node = spec
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]


def _key(path: tuple) -> str:
    """The key path as msjgym's messages write it: ``classes[1].service.mean``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


@st.composite
def invalid_specs(draw) -> tuple[dict, str]:
    """(an invalid table, the key path its error must name)."""
    spec = valid_spec()
    i = draw(st.integers(0, 1))
    kind = draw(st.sampled_from(["servers", "load", "arrival_rate", "need", "probability", "probability_sum",
                                 "service", "missing", "unknown", "type"]))
    if kind == "servers":
        value = draw(bad_count())
        _set(spec, ("servers",), value)
        return spec, "servers"
    if kind in ("load", "arrival_rate"):
        if kind == "arrival_rate":
            del spec["load"]
        _set(spec, (kind,), draw(bad_positive_number()))
        return spec, kind
    if kind == "need":
        _set(spec, ("classes", i, "need"), draw(bad_count(high=8)))
        return spec, f"classes[{i}].need"
    if kind == "probability":
        _set(spec, ("classes", i, "probability"), draw(bad_probability()))
        return spec, f"classes[{i}].probability"
    if kind == "probability_sum":  # each in (0, 1], the sum off by more than the 1e-6 tolerance
        p = draw(st.floats(0.01, 1.0).filter(lambda p: abs(p - spec["classes"][i]["probability"]) > 1e-5))
        _set(spec, ("classes", i, "probability"), p)
        return spec, "classes[*].probability"
    if kind == "service":
        key = draw(st.sampled_from(["mean", "scv"] if i == 1 else ["mean"]))
        bad = bad_positive_number() if key == "mean" else st.one_of(
            bad_positive_number(), st.floats(0.0, 1.0, exclude_max=True))  # a hyperexponential's scv is > 1
        _set(spec, ("classes", i, "service", key), draw(bad))
        return spec, f"classes[{i}].service"
    if kind == "missing":
        path = draw(st.sampled_from([("servers",), ("classes",), ("load",), ("classes", i, "need"),
                                     ("classes", i, "probability"), ("classes", i, "service"),
                                     ("classes", i, "service", "dist")]))
        _delete(spec, path)
        named = {("load",): "arrival_rate", ("classes", i, "service", "dist"): f"classes[{i}].service"}
        return spec, named.get(path, _key(path))
    if kind == "unknown":
        where = draw(st.sampled_from([(), ("classes", i), ("classes", i, "service")]))
        name = draw(st.sampled_from(["sever", "Servers", "rate_", "x", "loads", "needs"]))
        _set(spec, (*where, name), 1.0)
        return spec, _key((*where, name))
    # a table or list where a value belongs, or the reverse
    path = draw(st.sampled_from([("classes",), ("classes", i), ("classes", i, "service"), ("system",),
                                 ("classes", i, "name")]))
    _set(spec, path, draw(st.sampled_from([1, "x", 2.5, True, [], {}]).filter(
        lambda v: not (path[-1] == "name" and isinstance(v, str) and v.strip()))))
    return spec, _key(path)


@settings(max_examples=scaled(150))
@given(case=invalid_specs())
def test_an_invalid_msj_table_is_one_line_naming_the_key(case):
    spec, key = case
    assume(spec != valid_spec())
    with pytest.raises(ScenarioError) as info:
        model_from_spec(copy.deepcopy(spec))
    text = one_line(info.value)
    assert key in text, f"the error does not name {key}: {text}"


def test_the_valid_table_loads():
    model_from_spec(valid_spec())


# ----------------------------------------------------------------------------------------------------------------
# --param overrides on every family's built-ins

BUILTINS = {  # scenario -> (its parameters with a value type: "count" >= 1, "positive" number, "load" in (0, 1))
    "one-and-n": {"servers": "count", "mu_1": "positive", "mu_n": "positive", "arrival_rate": "positive",
                  "p_n": "probability"},
    "finite-skip-fig6": {"load": "positive"},
    "zero-queueing-set2": {"servers": "count", "load": "positive"},
    "lb-dispatch": {"servers": "count", "lam": "load", "d": "count"},
    "lb-push-table1": {"servers": "count", "lam": "load", "delta": "positive"},
    "loss-full-access": {"servers": "count", "d": "count", "lam": "load"},
    "finite-skip-fig2": {"load": "positive"},
    "finite-skip-fig4a": {"load": "positive", "servers": "count"},
}
_BAD = {"count": bad_count(), "positive": bad_positive_number(),
        "load": st.one_of(bad_positive_number(), st.floats(1.0, 1e300), HUGE),
        "probability": st.one_of(NOT_FINITE, WRONG_TYPES, st.floats(max_value=-1e-9), st.floats(1.0, 1e300,
                                                                                              exclude_min=True))}


@st.composite
def bad_overrides(draw) -> tuple[str, str, object]:
    name = draw(st.sampled_from(sorted(BUILTINS)))
    key = draw(st.sampled_from(sorted(BUILTINS[name])))
    return name, key, draw(_BAD[BUILTINS[name][key]])


@settings(max_examples=scaled(100))
@given(case=bad_overrides())
def test_a_bad_builtin_parameter_is_one_line_naming_it(case):
    name, key, value = case
    with pytest.raises(MsjgymError) as info:
        load_scenario(name, {key: value})
    text = one_line(info.value)
    assert key in text, f"{name} --param {key}={value!r}: the error does not name {key}: {text}"


@pytest.mark.parametrize("d", ["1", [2], float("inf")])
def test_lb_dispatch_refuses_a_d_that_is_not_an_integer(d):
    """Reliability, "no traceback, no hang, no silent wrong number — under any input"; found by the property above:
    ``msjgym evaluate lb-dispatch --param d='"1"'`` raised TypeError ('>' not supported between 'str' and 'int'), and
    ``--param d=inf`` was taken (the scenario's params said d = inf) until a d-policy was chosen."""
    with pytest.raises(ScenarioError, match=r"^lb-dispatch: d = .*: must be an integer in \[1, 100\]"):
        load_scenario("lb-dispatch", {"d": d})


TOML_VALUES = st.one_of(
    st.integers(-10**20, 10**20).map(str), st.floats(allow_nan=False).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "+inf", "true", "false", '"x"', "[]", "[1, 2]", "{a = 1}", "1e999",
                     "-0.0", "0x10", "1_000", "exp", "erlang(k=6)", "hyperexp(scv=3)"]),
    st.text(alphabet="0123456789.-+eE_xabc=[]{}\"' ", max_size=12))


@settings(max_examples=scaled(150))
@given(name=st.sampled_from(sorted(BUILTINS)), key=st.sampled_from(
    ["servers", "load", "lam", "d", "k", "mu_1", "p_n", "arrival_rate", "delta", "dist", "alpha", "beta",
     "threshold", "speeds", "nope", "classes.0.need", ""]), raw=TOML_VALUES)
def test_any_override_text_loads_or_is_one_line(name, key, raw):
    """Whatever follows ``--param KEY=``: the scenario loads, or one ``MsjgymError`` line (never a traceback)."""
    try:
        scenario = load_scenario(name, dict([parse_override(f"{key}={raw}")]))
    except MsjgymError as exc:
        one_line(exc)
        return
    for value in scenario.params.values():  # nothing non-finite was taken in silently
        if isinstance(value, float):
            assert math.isfinite(value), f"{name} --param {key}={raw}: accepted a non-finite {value}"


# ----------------------------------------------------------------------------------------------------------------
# Run settings


@settings(max_examples=scaled(40))
@given(setting=st.sampled_from(["reps", "jobs", "warmup", "seed", "batches"]),
       value=st.one_of(st.integers(max_value=-1), NOT_FINITE, WRONG_TYPES, st.sampled_from([1.5, 2.0, None])))
def test_a_bad_run_setting_is_refused_before_simulating(setting, value):
    low = 0 if setting in ("warmup", "seed") else 1
    assume(value is not None)
    assume(not (isinstance(value, int) and not isinstance(value, bool) and value >= low))
    with pytest.raises(MsjgymError) as info:
        msjgym.evaluate("one-and-n", "fcfs", **{"reps": 1, "jobs": 10, setting: value})
    assert setting in one_line(info.value)


# ----------------------------------------------------------------------------------------------------------------
# Invalid outputs of a policy of the user's

INVALID_ACTIONS = st.one_of(st.integers(max_value=-1), st.integers(10**6, 2**62), st.sampled_from(
    [2.5, 1.0, NAN, INF, None, "0", "x", True, np.array([0, 1]), [0], (), {}, np.float64(0.0)]))


class _Returns:
    def __init__(self, action):
        self.action = action

    def act(self, observation, action_mask=None):
        return self.action


FAMILY_SCENARIOS = {"msj": ("one-and-n", {}), "dispatch": ("lb-dispatch", {"servers": 20}),
                    "loss": ("loss-full-access", {"servers": 20})}


@settings(max_examples=scaled(30))
@given(family=st.sampled_from(sorted(FAMILY_SCENARIOS)), action=INVALID_ACTIONS)
def test_an_invalid_action_of_a_user_policy_is_one_policy_error(family, action):
    name, overrides = FAMILY_SCENARIOS[family]
    with pytest.raises(PolicyError) as info:
        msjgym.evaluate(load_scenario(name, overrides), _Returns(action), reps=1, jobs=200, seed=1, references=False)
    assert "action" in one_line(info.value)


FINITE_SKIP_RATES = st.one_of(INVALID_ACTIONS, st.lists(st.floats(allow_nan=True), min_size=1, max_size=3),
                              st.sampled_from([[2.0], [-1.0], [NAN], [0.6, 0.6], ["a"]]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=scaled(10))
@given(rates=FINITE_SKIP_RATES)
def test_invalid_rates_of_a_finite_skip_policy_are_one_policy_error(rates):
    """Was an xfail of this suite (act() -> -1: TypeError; rates [2.0] or [-1.0] taken silently); part C's
    ``checked_rates`` (merged from main) refuses them."""
    scenario = load_scenario("finite-skip-fig2", {})
    with pytest.raises(PolicyError) as info:
        msjgym.evaluate(scenario, _Returns(rates), reps=1, jobs=100, seed=1, references=False)
    one_line(info.value)


# ----------------------------------------------------------------------------------------------------------------
# The command line (in this process: tests/cli_run.py): exit status 2, one line on stderr, nothing on stdout


@settings(max_examples=scaled(2))
@given(case=invalid_specs())
def test_the_cli_refuses_an_invalid_scenario_file_with_status_2(case, tmp_path_factory):
    spec, key = case
    assume(spec != valid_spec())
    try:  # tomllib has no writer: write the table by hand (only what TOML can hold)
        text = _toml(spec)
    except ValueError:
        assume(False)
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "bad.toml"
    path.write_text(text)
    before = sorted(p.name for p in folder.iterdir())
    out = cli_run.msjgym("evaluate", str(path), "--policy", "fcfs", "--reps", "2", "--jobs", "100", cwd=folder)
    assert out.returncode == 2, (text, out.stdout, out.stderr)
    assert out.stdout == "" and out.stderr.count("\n") == 1 and out.stderr.startswith("msjgym: error: "), out.stderr
    assert key in out.stderr
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"not a TOML value: {value!r}")


def _toml(spec: dict) -> str:
    lines = [f"{k} = {_toml_value(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("param", ["servers=nan", "p_n=1.5", "nope=1"])
def test_the_cli_refuses_a_bad_param_with_status_2(param, tmp_path):
    out = cli_run.msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--param", param, "--reps", "2", "--jobs",
                         "100", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("msjgym: error: ") and param.split("=")[0] in out.stderr
    assert not any(tmp_path.iterdir())
