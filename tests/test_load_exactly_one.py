"""A load given as 1 stays 1: the arrival rate is chosen so that the model's load round-trips, so the
theory says unstable and prints no finite value (before: ρ = 1 − 2⁻⁵³ and waits of 2.4e16)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from msjgym.api import RunSettings, family, load_scenario

RATES = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


def _toml(tmp, servers: int, load: float, classes: list[tuple[int, float, float]]) -> str:
    total = sum(p for _, p, _ in classes)
    text = f"servers = {servers}\nload = {load!r}\n"
    for i, (need, p, rate) in enumerate(classes):
        text += (f'[[classes]]\nname = "c{i}"\nneed = {min(need, servers)}\nprobability = {p / total!r}\n'
                 f'service = {{ dist = "exp", rate = {rate!r} }}\n')
    path = tmp / "s.toml"
    path.write_text(text)
    return str(path)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 64), load=st.sampled_from([1.0, 0.3, 0.9, 0.99, 1.0 - 2**-40, 1.5]),
       classes=st.lists(st.tuples(st.integers(1, 64), st.floats(0.05, 1.0), RATES), min_size=1, max_size=3))
def test_the_given_load_is_the_models_load_exactly(tmp_path_factory, servers, load, classes):
    scenario = load_scenario(_toml(tmp_path_factory.mktemp("l"), servers, load, classes))
    assert scenario.model.load == load


@settings(max_examples=20, deadline=None)
@given(servers=st.integers(1, 8), rate=RATES, policy=st.sampled_from(["fcfs", "server-filling", "first-fit"]))
def test_at_load_one_the_theory_says_unstable_and_prints_no_finite_value(tmp_path_factory, servers, rate, policy):
    path = _toml(tmp_path_factory.mktemp("l"), servers, 1.0, [(1, 1.0, rate)])
    scenario = load_scenario(path)
    refs = family(scenario.family).references(scenario, policy, RunSettings())
    assert any(r.kind == "condition" and r.predicts_stable is False for r in refs)
    assert not [r for r in refs if r.kind == "exact"], refs  # no steady-state value exists
    huge = [r for r in refs for x in (r.value, r.lower, r.upper) if x is not None and abs(x) > 1e9]
    assert not huge, huge  # (load-free bounds such as Lemma 5.4's 3√(n m) remain, finite and small)
