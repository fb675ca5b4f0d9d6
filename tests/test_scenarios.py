"""Scenarios: built-ins, TOML files, overrides, and one-line errors naming the offending key."""
from __future__ import annotations

from pathlib import Path

import pytest

from msjgym.errors import ScenarioError
from msjgym import api
from msjgym.api import list_scenarios, load_scenario
from msjgym.systems.msj.scenarios import model_from_spec
from msjgym.core.overrides import parse_override
from conftest import EXAMPLE
from test_theory_queues import saturated_one_and_n_chain_throughput

CLASS_RATES = """\
servers = 4
[[classes]]
need = 1
arrival_rate = 1.5
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 2
arrival_rate = 0.5
service = { dist = "exp", rate = 2.0 }
"""


def write(tmp_path: Path, text: str, name: str = "scenario.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------------------------------------------------------------
# Built-ins


@pytest.mark.parametrize("name", [name for name, _ in list_scenarios()])
def test_every_builtin_loads_with_defaults(name: str) -> None:
    scenario = load_scenario(name)
    assert scenario.name == name
    family = api.family_of(name)
    assert scenario.family == family.name  # its model is one of its family's, validated
    assert type(scenario.model).__module__.startswith(type(family).__module__.rpartition(".")[0] + ".")
    assert scenario.description and "\n" not in scenario.description
    assert dict(list_scenarios())[name] == scenario.description
    assert 0 < scenario.model.load < 1
    assert all(value is not None for value in scenario.params.values())


REPO = Path(__file__).resolve().parents[1]
SCENARIO_FILES = sorted(str(p.relative_to(REPO)) for p in [*REPO.glob("examples/*.toml"),
                                                          *REPO.glob("baselines/scenarios/*.toml")])


@pytest.mark.parametrize("name", [name for name, _ in list_scenarios()] + SCENARIO_FILES)
def test_every_shipped_scenario_pickles_and_its_trace_generator_survives(name: str) -> None:
    """``msjgym sweep --workers N`` (and ``--backend ray``) send scenarios to worker processes by pickling them: every
    built-in, example and baseline scenario pickles, and a synthetic trace's generator draws the same trace after."""
    import pickle

    import numpy as np

    scenario = load_scenario(str(REPO / name) if name.endswith(".toml") else name)
    copy = pickle.loads(pickle.dumps(scenario))
    trace = getattr(scenario.model, "trace", None)
    if trace is not None and trace.generator is not None:
        seq = np.random.SeedSequence(3)
        a, b = trace.generator(200, seq), copy.model.trace.generator(200, seq)
        for column in ("arrival", "need", "duration", "estimate"):
            assert np.array_equal(getattr(a, column), getattr(b, column)), column


def test_builtin_names() -> None:
    """The four built-in families' scenarios, in listing order (a family added later lists its own after them or
    before, by its ``order``)."""
    builtin = {"msj", "loss", "dispatch", "finite-skip"}
    assert [name for name, _ in list_scenarios() if api.family_of(name).name in builtin] == [
        "one-and-n", "finite-skip-fig6", "finite-skip-fig7",
        "zero-queueing-set1", "zero-queueing-set2", "zero-queueing-set3", "lublin-feitelson",
        "loss-full-access", "loss-sampled",
        "lb-push-table1", "lb-water-filling-table2", "lb-pull-table3", "lb-pooling-table4", "lb-dispatch",
        "finite-skip-fig2", "finite-skip-fig3", "finite-skip-fig4a", "finite-skip-fig4b"]


def test_one_and_n_defaults_at_80_percent_of_the_fcfs_threshold() -> None:
    scenario = load_scenario("one-and-n")
    mu = saturated_one_and_n_chain_throughput(10, 0.1, 1.0, 1.0)
    assert mu == pytest.approx(2.913, abs=5e-4)
    model = scenario.model
    assert model.arrival_rate == pytest.approx(0.8 * mu, rel=1e-9)
    assert scenario.params == pytest.approx(
        {"servers": 10, "p_n": 0.1, "mu_1": 1.0, "mu_n": 1.0, "arrival_rate": 0.8 * mu})
    assert [(c.name, c.need, c.probability) for c in model.classes] == [("1", 1, 0.9), ("n", 10, 0.1)]
    assert [c.service.mean for c in model.classes] == pytest.approx([1.0, 1.0])


def test_one_and_n_overrides_recompute_the_derived_rate() -> None:
    scenario = load_scenario("one-and-n", {"servers": 6.0, "p_n": 0.2, "mu_1": 2.0, "mu_n": 0.5})
    assert scenario.model.servers == 6 and isinstance(scenario.params["servers"], int)
    assert scenario.model.classes[1].need == 6
    mu = saturated_one_and_n_chain_throughput(6, 0.2, 2.0, 0.5)
    assert scenario.model.arrival_rate == pytest.approx(0.8 * mu, rel=1e-9)
    assert load_scenario("one-and-n", {"arrival_rate": 5.0}).model.arrival_rate == 5.0


@pytest.mark.parametrize("p_n, name", [(0.0, "1"), (1.0, "n")])
def test_one_and_n_degenerate_mix_keeps_one_class(p_n: float, name: str) -> None:
    model = load_scenario("one-and-n", {"p_n": p_n}).model
    assert [c.name for c in model.classes] == [name]


@pytest.mark.parametrize("name, mix", [
    ("finite-skip-fig6", [(1, 5.0, 1 / 3), (2, 2.0, 1 / 3), (4, 0.5, 1 / 3)]),
    ("finite-skip-fig7", [(1, 1.0, 4 / 7), (2, 8.0, 2 / 7), (4, 64.0, 1 / 7)]),
])
@pytest.mark.parametrize("load", [None, 0.3, 0.95])
def test_finite_skip_load_sets_lambda(name: str, mix: list, load: float | None) -> None:
    scenario = load_scenario(name, {} if load is None else {"load": load})
    rho = 0.6 if load is None else load
    mean_vx = sum(p * v / rate for v, rate, p in mix)
    model = scenario.model
    assert model.servers == 4
    assert model.arrival_rate == pytest.approx(rho * 4 / mean_vx, rel=1e-12)
    assert model.load == pytest.approx(rho, rel=1e-12)
    assert [(c.name, c.need) for c in model.classes] == [("v1", 1), ("v2", 2), ("v4", 4)]
    assert [c.probability for c in model.classes] == pytest.approx([p for _, _, p in mix])
    assert [c.service.mean for c in model.classes] == pytest.approx([1 / rate for _, rate, _ in mix])


# Table 3 of Wang, Xie & Harchol-Balter: needs (Sets I, II) and loads.
TABLE3 = {64: ((3, 6, 8), 0.8351, 0.7128), 256: ((3, 8, 16), 0.8564, 0.8105), 1024: ((3, 10, 32), 0.8750, 0.8750),
          4096: ((3, 12, 64), 0.8912, 0.9175), 16384: ((3, 14, 128), 0.9053, 0.9456),
          65536: ((3, 16, 256), 0.9175, 0.9641)}


@pytest.mark.parametrize("n", sorted(TABLE3))
def test_zero_queueing_sets_reproduce_table3(n: int) -> None:
    needs, load1, load2 = TABLE3[n]
    for name, load in (("zero-queueing-set1", load1), ("zero-queueing-set2", load2)):
        model = load_scenario(name, {"servers": n}).model
        assert tuple(int(m) for m in model.needs) == needs
        assert model.load == pytest.approx(load, abs=6e-5)
        assert [c.name for c in model.classes] == ["c1", "c2", "c3"]
        assert list(model.mean_service) == pytest.approx([4.0, 2.0, 1.0])


def test_zero_queueing_load_split_and_class_rates() -> None:
    scenario = load_scenario("zero-queueing-set1", {"load": 0.9, "load_split": [0.5, 0.25, 0.25]})
    model = scenario.model
    class_loads = model.class_arrival_rates * model.needs * model.mean_service / model.servers
    assert list(class_loads) == pytest.approx([0.45, 0.225, 0.225], rel=1e-12)
    assert scenario.params == {"servers": 256, "load": 0.9, "load_split": [0.5, 0.25, 0.25]}


@pytest.mark.parametrize("n, m3, expected", [
    (256, "sqrt", 16), (256, "4th-root", 12), (256, "log", 10),
    (64, "4th-root", 8),     # 3·64^(1/4) = 8.49 rounds to 8
    (1024, "4th-root", 17),  # 3·1024^(1/4) = 16.97
    (100, "log", 9),         # log2(100) + 2 = 8.64
    (4, "log", 4),           # log2(4) + 2 = 4 = n, and m1 = 3
])
def test_zero_queueing_set3_m3_rules(n: int, m3: str, expected: int) -> None:
    scenario = load_scenario("zero-queueing-set3", {"servers": n, "m3": m3})
    assert int(scenario.model.needs[2]) == expected
    assert scenario.params["m3"] == m3


def test_zero_queueing_needs_are_rounded_and_clipped() -> None:
    model = load_scenario("zero-queueing-set1", {"servers": 100}).model
    assert list(model.needs) == [3, 7, 10]  # log2(100) = 6.64 → 7
    model = load_scenario("zero-queueing-set1", {"servers": 2}).model
    assert list(model.needs) == [2, 1, 1]  # m1 = 3 clipped to n = 2


# ---------------------------------------------------------------------------------------------------------------------
# TOML files


def test_readme_example_parses(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE)
    scenario = load_scenario(path)
    model = scenario.model
    assert scenario.name == path
    assert "\n" not in scenario.description
    assert model.servers == 10 and model.arrival_rate == 2.33
    assert [(c.name, c.need, c.probability) for c in model.classes] == [("small", 1, 0.9), ("class2", 10, 0.1)]
    assert model.classes[1].service.mean == pytest.approx(1.0)
    assert model.classes[1].service.scv == pytest.approx(10.0)
    assert scenario.params["classes"][0]["service"] == {"dist": "exp", "rate": 1.0}


def test_description_key(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, 'description = "tiny cluster"\n' + EXAMPLE))
    assert scenario.description == "tiny cluster"


def test_empirical_file_is_relative_to_the_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "sizes.txt").write_text("1.0\n3.0\n")
    text = _replace('{ dist = "exp", rate = 1.0 }', '{ dist = "empirical", file = "sizes.txt" }')
    path = write(tmp_path / "sub", text)
    monkeypatch.chdir(tmp_path)
    assert load_scenario(path).model.classes[0].service.mean == pytest.approx(2.0)


def test_class_rate_form(tmp_path: Path) -> None:
    model = load_scenario(write(tmp_path, CLASS_RATES)).model
    assert model.arrival_rate == pytest.approx(2.0)
    assert list(model.probabilities) == pytest.approx([0.75, 0.25])


def test_load_form() -> None:
    spec = {"servers": 10, "load": 0.8, "classes": [
        {"need": 1, "probability": 0.9, "service": {"dist": "exp", "rate": 1.0}},
        {"need": 10, "probability": 0.1, "service": {"dist": "hyperexp", "mean": 1.0, "scv": 10.0}}]}
    model = model_from_spec(spec)
    assert model.arrival_rate == pytest.approx(0.8 * 10 / (0.9 * 1 + 0.1 * 10 * 1.0))
    assert model.load == pytest.approx(0.8)
    assert list(model.probabilities) == pytest.approx([0.9, 0.1])


def test_unstable_load_is_a_valid_scenario() -> None:
    spec = {"servers": 2, "load": 1.5, "classes": [{"need": 1, "service": {"dist": "exp", "rate": 1.0}}]}
    model = model_from_spec(spec)
    assert model.load == pytest.approx(1.5) and model.classes[0].probability == 1.0


def test_probabilities_are_renormalised_within_tolerance() -> None:
    spec = {"servers": 3, "arrival_rate": 1.0, "classes": [
        {"need": k, "probability": 0.3333333, "service": {"dist": "exp", "rate": 1.0}} for k in (1, 2, 3)]}
    assert list(model_from_spec(spec).probabilities) == pytest.approx([1 / 3] * 3, rel=1e-12)


def test_where_prefixes_error_paths() -> None:
    spec = {"servers": 3, "arrival_rate": 1.0, "classes": [{"need": 4, "service": {"dist": "exp", "rate": 1.0}}]}
    with pytest.raises(ScenarioError, match=r"^experiment\.scenario\.classes\[0\]\.need = 4: must be an integer in "
                                            r"\[1, servers=3\]$"):
        model_from_spec(spec, where="experiment.scenario")


# ---------------------------------------------------------------------------------------------------------------------
# Overrides


@pytest.mark.parametrize("text, expected", [
    ("servers=32", ("servers", 32)),
    (" load = 0.9 ", ("load", 0.9)),
    ("m3=4th-root", ("m3", "4th-root")),
    ("m3=sqrt", ("m3", "sqrt")),
    ('name="two words"', ("name", "two words")),
    ("flag=true", ("flag", True)),
    ("load_split=[0.5, 0.25, 0.25]", ("load_split", [0.5, 0.25, 0.25])),
    ("classes.1.probability=0.2", ("classes.1.probability", 0.2)),
    ("file=traces/jobs.csv", ("file", "traces/jobs.csv")),
])
def test_parse_override(text: str, expected: tuple) -> None:
    assert parse_override(text) == expected


@pytest.mark.parametrize("text", ["servers", "=3", "servers=", "x=[1,", "x=a b"])
def test_parse_override_rejects(text: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_override(text)
    assert "\n" not in str(info.value)


def test_file_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE)
    overrides = dict(parse_override(t) for t in (
        "servers=20", "classes.1.need=20", "classes.0.probability=0.8", "classes.1.probability=0.2",
        "classes.0.service.rate=2.0"))
    scenario = load_scenario(path, overrides)
    model = scenario.model
    assert model.servers == 20 and list(model.needs) == [1, 20]
    assert list(model.probabilities) == pytest.approx([0.8, 0.2])
    assert model.classes[0].service.mean == pytest.approx(0.5)
    assert scenario.params["classes"][0]["service"]["rate"] == 2.0
    assert load_scenario(path).model.servers == 10  # the file is untouched


def test_load_override_replaces_arrival_rate_and_vice_versa(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE)
    scenario = load_scenario(path, {"load": 0.5})
    assert "arrival_rate" not in scenario.params and scenario.model.load == pytest.approx(0.5)
    assert load_scenario(path, {"load": 0.5, "arrival_rate": 1.0}).model.arrival_rate == 1.0
    rates = write(tmp_path, CLASS_RATES, "rates.toml")
    model = load_scenario(rates, {"load": 0.5}).model  # per-class rates become probabilities
    assert model.load == pytest.approx(0.5) and list(model.probabilities) == pytest.approx([0.75, 0.25])
    assert load_scenario(rates, {"arrival_rate": 4.0}).model.arrival_rate == 4.0


# ---------------------------------------------------------------------------------------------------------------------
# Errors: one line, naming the offending key


def _replace(old: str, new: str, base: str = EXAMPLE) -> str:
    assert old in base
    return base.replace(old, new, 1)


BAD_FILES = [
    ("negative rate", _replace("rate = 1.0", "rate = -1.0"), "classes[0].service"),
    ("need > servers", _replace("need = 10", "need = 12"), "classes[1].need = 12"),
    ("need not integer", _replace("need = 10", "need = 2.5"), "classes[1].need"),
    ("need bool", _replace("need = 10", "need = true"), "classes[1].need"),
    ("probabilities sum", _replace("probability = 0.1", "probability = 0.2"), "classes[*].probability"),
    ("probability > 1", _replace("probability = 0.1", "probability = 1.1"), "classes[1].probability"),
    ("missing probability", _replace("probability = 0.1\n", ""), "classes[1].probability"),
    ("unknown top key", "colour = 'red'\n" + EXAMPLE, "colour"),
    ("unknown class key", _replace("need = 1\n", "need = 1\nnede = 1\n"), "classes[0].nede"),
    ("unknown system", _replace('system = "msj"', 'system = "gg1"'), "system"),
    ("malformed TOML", _replace("servers = 10", "servers = = 10"), "line 2"),
    ("arrival_rate and load", "load = 0.8\n" + EXAMPLE, "load"),
    ("servers zero", _replace("servers = 10", "servers = 0"), "servers = 0"),
    ("servers string", _replace("servers = 10", 'servers = "ten"'), "servers = 'ten'"),
    ("missing servers", _replace("servers = 10\n", ""), "servers"),
    ("no rate at all", _replace("arrival_rate = 2.33\n", ""), "arrival_rate"),
    ("negative arrival rate", _replace("arrival_rate = 2.33", "arrival_rate = -2.0"), "arrival_rate = -2.0"),
    ("load zero", _replace("arrival_rate = 2.33", "load = 0"), "load = 0"),
    ("duplicate names", _replace("need = 10", 'name = "small"\nneed = 10'), "name = 'small': class names must be"),
    ("no classes", "servers = 3\narrival_rate = 1.0\nclasses = []\n", "classes"),
    ("service not a table", _replace('service = { dist = "exp", rate = 1.0 }', "service = 3"), "classes[0].service"),
    ("mixed class rates", CLASS_RATES.replace("arrival_rate = 0.5", "probability = 0.5"), "classes[1].arrival_rate"),
    ("class rate and probability", CLASS_RATES.replace("arrival_rate = 0.5", "arrival_rate = 0.5\nprobability = 0.2"),
     "classes[1].probability"),
    ("class and top-level rates", "arrival_rate = 1.0\n" + CLASS_RATES, "classes[*].arrival_rate"),
]


@pytest.mark.parametrize("label, text, key", BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_bad_files(tmp_path: Path, label: str, text: str, key: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message and key in message and path in message


BAD_LOADS = [
    ("unknown built-in parameter", "one-and-n", {"colour": 1}, "colour"),
    ("servers not integral", "one-and-n", {"servers": 10.5}, "servers = 10.5"),
    ("servers bool", "zero-queueing-set1", {"servers": True}, "servers = True"),
    ("p_n > 1", "one-and-n", {"p_n": 1.5}, "p_n = 1.5"),
    ("negative rate", "one-and-n", {"mu_1": -1.0}, "mu_1 = -1.0"),
    ("string rate", "one-and-n", {"mu_n": "fast"}, "mu_n = 'fast'"),
    ("negative load", "finite-skip-fig6", {"load": -0.5}, "load = -0.5"),
    ("m3 unknown", "zero-queueing-set3", {"m3": "cube"}, "m3 = 'cube'"),
    ("m3 not a set-1 parameter", "zero-queueing-set1", {"m3": "log"}, "m3"),
    ("load_split length", "zero-queueing-set2", {"load_split": [0.5, 0.5]}, "load_split"),
    ("load_split sum", "zero-queueing-set2", {"load_split": [0.5, 0.5, 0.5]}, "load_split"),
    ("unknown scenario", "no-such-scenario", {}, "one-and-n"),
]


@pytest.mark.parametrize("label, name, overrides, key", BAD_LOADS, ids=[case[0] for case in BAD_LOADS])
def test_bad_builtin_parameters(label: str, name: str, overrides: dict, key: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(name, overrides)
    message = str(info.value)
    assert "\n" not in message and key in message


def test_unknown_parameter_lists_valid_parameters_with_defaults() -> None:
    with pytest.raises(ScenarioError, match=r"servers=10, p_n=0\.1, mu_1=1\.0, mu_n=1\.0, arrival_rate="):
        load_scenario("one-and-n", {"colour": 1})


@pytest.mark.parametrize("key", ["classes.5.probability", "classes.0.colour", "servers.x", "clases"])
def test_override_of_missing_path(tmp_path: Path, key: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, EXAMPLE), {key: 1})
    assert "\n" not in str(info.value) and key in str(info.value)


def test_missing_file_lists_builtins(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="zero-queueing-set3"):
        load_scenario(str(tmp_path / "missing.toml"))
    with pytest.raises(ScenarioError, match="neither a built-in nor an existing file"):
        load_scenario(str(tmp_path))  # a directory is not a scenario file
