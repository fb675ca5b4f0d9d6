"""Users' runtime estimates from the model of Tsafrir, Etsion & Feitelson (JSSPP 2005): estimates never below the run
time, a few round (modal) values, the maximum the most popular at the model's fraction, reproducible by seed and
independent of the job stream; ``estimate = "tsafrir"`` in a scenario; the one-line note when exact run times stand in
for the estimates."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msjgym.api import load_scenario
from msjgym.errors import ScenarioError
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj.trace import user_estimates as ue
from msjgym.systems.msj.family import EXACT_ESTIMATES_NOTICE
from msjgym.systems.msj.trace.lublin import generate

JOBS = 4000


@pytest.fixture(scope="module")
def runtimes() -> np.ndarray:
    return generate(JOBS, 256, 7)[2].astype(np.float64)


def test_estimates_are_never_below_the_run_time_and_are_few_modal_values(runtimes):
    est = ue.draw_estimates(runtimes, ue.TsafrirModel(seed=3))
    assert est.shape == runtimes.shape and np.all(est >= runtimes)
    values, counts = np.unique(est, return_counts=True)
    assert len(values) <= ue.bin_count(JOBS)  # 59 for 5,000 jobs; far fewer than the run times' distinct values
    top20 = np.sort(counts)[::-1][:20].sum() / JOBS
    assert top20 >= 0.85  # the head holds 89 % of the jobs (a job longer than every estimate left takes the max)
    head = set(ue.head_values(int(est.max())))
    # the popular values are the round ones (the tail's largest bins come close to the head's smallest)
    assert set(values[np.argsort(counts)[::-1][:15]].astype(int)) <= head
    assert {300, 900, 1800, 3600, 7200, 18 * 3600} <= head


def test_the_maximum_is_the_most_popular_at_the_models_fraction(runtimes):
    est = ue.draw_estimates(runtimes, ue.TsafrirModel(seed=3))
    top = float(est.max())
    assert top == ue.HOUR * np.ceil(runtimes.max() / ue.HOUR)  # the longest run time rounded up to hours
    values, counts = np.unique(est, return_counts=True)
    assert values[np.argmax(counts)] == top
    # largest remainders: within one job of the model's share, plus the jobs that found no estimate left
    assert abs(np.mean(est == top) - ue.default_max_fraction()) < 0.01
    given = ue.draw_estimates(runtimes, ue.TsafrirModel(seed=3, max_fraction=0.4, max_estimate=50 * ue.HOUR))
    assert given.max() == 50 * ue.HOUR and abs(np.mean(given == given.max()) - 0.4) < 0.01


def test_reproducible_by_seed_and_the_seed_matters(runtimes):
    a = ue.draw_estimates(runtimes, ue.TsafrirModel(seed=11))
    assert np.array_equal(a, ue.draw_estimates(runtimes, ue.TsafrirModel(seed=11)))
    assert not np.array_equal(a, ue.draw_estimates(runtimes, ue.TsafrirModel(seed=12)))


def test_a_maximum_below_the_longest_run_time_is_refused(runtimes):
    with pytest.raises(ValueError, match=r"estimate.max = 3600: below the longest run time"):
        ue.draw_estimates(runtimes, ue.TsafrirModel(max_estimate=3600))


def _swf(tmp_path: Path, requested: str = "-1") -> Path:
    rows = [(0, 3600, 2), (10, 20, 1), (30, 900, 4), (40, 5, 1), (50, 7000, 2), (60, 61, 3)]
    lines = ["; MaxProcs: 4"] + [f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {requested} -1 1 -1 -1 -1 1 -1 -1 -1"
                                 for i, (s, r, p) in enumerate(rows)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    return tmp_path / "t.swf"


def test_a_scenario_draws_them_without_changing_the_jobs(tmp_path):
    _swf(tmp_path)
    (tmp_path / "plain.toml").write_text('arrivals = { trace = "t.swf" }\n')
    (tmp_path / "est.toml").write_text('arrivals = { trace = "t.swf" }\nestimate = { model = "tsafrir", seed = 4 }\n')
    plain, est = (load_scenario(str(tmp_path / f"{n}.toml")).model for n in ("plain", "est"))
    for name in ("arrival", "need", "duration", "ident"):
        assert np.array_equal(getattr(plain.trace, name), getattr(est.trace, name))
    assert np.array_equal(plain.trace.estimate, plain.trace.duration) and plain.trace.estimated == 0
    assert np.all(est.trace.estimate >= est.trace.duration) and est.trace.estimated == 6
    assert np.array_equal(est.trace.estimate, ue.draw_estimates(plain.trace.duration, ue.TsafrirModel(seed=4)))
    assert est.estimate.kind == "tsafrir"


def test_a_workload_models_traces_keep_their_jobs(tmp_path):
    spec = 'arrivals = {{ model = "lublin-feitelson", jobs = 300, seed = 5 }}\n{}'
    (tmp_path / "a.toml").write_text(spec.format(""))
    (tmp_path / "b.toml").write_text(spec.format('estimate = "tsafrir"\n'))
    a, b = (load_scenario(str(tmp_path / f"{n}.toml")).model.trace for n in "ab")
    seq = np.random.SeedSequence(9)
    ta, tb = a.generator(200, seq), b.generator(200, seq)
    assert np.array_equal(ta.duration, tb.duration) and np.array_equal(ta.arrival, tb.arrival)
    assert np.all(tb.estimate >= tb.duration) and not np.array_equal(tb.estimate, tb.duration)


@pytest.mark.parametrize("text, message", [
    ('estimate = { model = "x" }', "estimate.model = 'x': must be one of 'tsafrir'"),
    ('estimate = { model = "tsafrir", max = 60 }', "estimate.max = 60"),
    ('estimate = { model = "tsafrir", max_fraction = 0.95 }', "estimate.max_fraction = 0.95"),
    ('estimate = { seed = 3 }', "estimate.seed: a parameter of an estimate model"),
])
def test_bad_model_parameters_name_the_key(tmp_path, text, message):
    _swf(tmp_path)
    (tmp_path / "s.toml").write_text(f'arrivals = {{ trace = "t.swf" }}\n{text}\n')
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_scenario(str(tmp_path / "s.toml"))


@pytest.mark.parametrize("requested, estimate, policy, noted", [
    ("-1", "", "easy-backfilling", True),
    ("-1", "", "fcfs", False),                      # FCFS does not plan with estimates
    ("-1", 'estimate = "exact"', "easy-backfilling", False),  # the user chose exact estimates
    ("-1", 'estimate = "tsafrir"', "easy-backfilling", False),
    ("9000", "", "easy-backfilling", False),        # the trace has requested times
])
def test_one_note_says_when_exact_run_times_stand_in_for_estimates(tmp_path, requested, estimate, policy, noted):
    _swf(tmp_path, requested)
    (tmp_path / "s.toml").write_text(f'arrivals = {{ trace = "t.swf" }}\n{estimate}\n')
    result = evaluate(str(tmp_path / "s.toml"), policy, references=False)
    assert sum(EXACT_ESTIMATES_NOTICE in line for line in result.notes) == int(noted)
