"""`msjgym plot`: curves with CIs from a results store, unstable points, the theory, and one-line errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import Run, msjgym
from msjgym.evaluate.plot import build_curves, plot_summaries
from msjgym.evaluate.store import PointSummary, ResultStore, TaskRow, summarize
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.core.estimates import Estimate
from msjgym.errors import MsjgymError
from msjgym.theory.saturated import one_and_n_throughput

RATES = (1.0, 2.0, 2.6)
POLICIES = ("fcfs", "server-filling")
UNSTABLE_RATE = 3.5  # beyond the FCFS threshold μ ≈ 2.913 of the default one-and-n (n = 10, p_n = 0.1)
MU = one_and_n_throughput(10, 0.1, 1.0, 1.0)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _add_task(store: ResultStore, rate: float, policy: str, rep: int, jobs: int) -> None:
    result = evaluate(load_scenario("one-and-n", {"arrival_rate": rate}), policy, reps=1, jobs=jobs, seed=rep,
                      references=False)
    store.add(TaskRow("one-and-n", {"arrival_rate": rate}, policy, rep, jobs, result.warmup,
                      result.batches, 1, rep, result.stable,
                      result.growth_rate.mean if result.growth_rate else None, result.replications[0],
                      result.events, result.wall_seconds))


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A sweep-like store: 3 rates x 2 policies x 3 reps, plus FCFS at an unstable rate (stopped early)."""
    path = tmp_path_factory.mktemp("sweep") / "results.sqlite"
    with ResultStore(path) as store:
        for rate in RATES:
            for policy in POLICIES:
                for rep in range(3):
                    _add_task(store, rate, policy, rep, jobs=2000)
        for rep in range(3):
            _add_task(store, UNSTABLE_RATE, "fcfs", rep, jobs=200_000)
    return path


@pytest.fixture(scope="module")
def summaries(results) -> list[PointSummary]:
    with ResultStore(results) as store:
        out = summarize(store.rows())
    unstable = [s for s in out if not s.stable]
    assert [(s.point["arrival_rate"], s.policy) for s in unstable] == [(UNSTABLE_RATE, "fcfs")]
    return out


def run_plot(*args: object) -> Run:
    """``msjgym plot ARGS`` in this process (:mod:`cli_run`)."""
    return msjgym("plot", *args)


def test_png_and_svg_with_unstable_point_marked(summaries, tmp_path):
    record = plot_summaries(summaries, "arrival_rate", "response_time", out=tmp_path / "rt.png")
    assert record.path.read_bytes()[:8] == PNG_MAGIC
    assert [c.label for c in record.curves] == ["fcfs", "server-filling"]
    assert len(record.points) == 2
    (marker,) = record.unstable  # FCFS at 3.5: an 'x', not dropped
    assert list(marker.get_xdata()) == [UNSTABLE_RATE] and marker.get_marker() == "x"
    assert not (record.exact or record.bounds or record.unstable_regions)
    fcfs = record.points[0].lines[0]
    assert list(fcfs.get_xdata()) == list(RATES)

    svg = plot_summaries(summaries, "arrival_rate", "response_time", out=tmp_path / "rt.svg", logy=True).path
    assert b"<svg" in svg.read_bytes()[:2000]


def test_theory_lines_bands_and_unstable_range(summaries, tmp_path):
    record = plot_summaries(summaries, "arrival_rate", "queueing_probability", theory=True,
                            out=tmp_path / "pq.png")
    assert record.path.read_bytes()[:8] == PNG_MAGIC
    (exact,) = record.exact  # FCFS: the exact CTMC at its three stable rates, in the curve's colour
    assert list(exact.get_xdata()) == list(RATES)
    assert exact.get_color() == record.curves[0].color
    assert record.bounds  # P_Q <= the simulated P(Σ m_i X_i > n − m_max) (Wang, Xie & Harchol-Balter eq. (3))
    (start, end), = record.unstable_ranges  # FCFS beyond μ, interpolated exactly (λ/μ is linear in λ)
    assert start == pytest.approx(MU, rel=1e-9) and end > UNSTABLE_RATE
    assert len(record.unstable_regions) == 1
    assert any(s.startswith("exact: ") for s in record.sources)
    assert any(s.startswith("stability: ") for s in record.sources)


def test_theory_exact_values_sit_on_the_line(summaries, tmp_path):
    from msjgym.systems.msj import scorecard
    from msjgym.policies.msj import POLICIES
    record = plot_summaries(summaries, "arrival_rate", "number_in_system", theory=True, out=tmp_path / "n.png")
    (exact,) = record.exact
    for x, value in zip(exact.get_xdata(), exact.get_ydata()):
        scenario = load_scenario("one-and-n", {"arrival_rate": x})
        (ref,) = [r for r in scorecard.references(scenario.model, POLICIES["fcfs"])
                  if r.quantity == "number_in_system" and r.kind == "exact"]
        assert value == pytest.approx(ref.value)


def test_x_load_computed_from_the_scenario(results, tmp_path):
    out = run_plot(results.parent, "--x", "load", "--y", "number_in_system", "--theory")
    assert out.returncode == 0, out.stderr
    written = Path(out.stdout.strip())
    assert written == results.parent / "number_in_system-vs-load.png"
    assert written.read_bytes()[:8] == PNG_MAGIC


def test_x_load_values(summaries, tmp_path):
    curves, _ = build_curves(summaries, "load", "policy")
    fcfs = curves[0]
    rho_per_rate = load_scenario("one-and-n", {"arrival_rate": 1.0}).model.load
    assert [x for x, _ in fcfs.points] == pytest.approx([rho_per_rate * r for r in RATES + (UNSTABLE_RATE,)])


def _fake(point: dict, policy: str, reps: int = 3, mean: float = 1.0) -> PointSummary:
    return PointSummary("one-and-n", point, policy, reps, True, {"response_time": Estimate(mean, 0.1)}, None)


def test_other_varying_keys_split_curves():
    summaries = [_fake({"arrival_rate": a, "servers": n}, p)
                 for a in (1.0, 2.0) for n in (10, 16) for p in POLICIES]
    curves, notes = build_curves(summaries, "arrival_rate", "policy")
    assert [c.label for c in curves] == ["fcfs, servers=10", "fcfs, servers=16",
                                         "server-filling, servers=10", "server-filling, servers=16"]
    assert curves[0].color == curves[1].color != curves[2].color
    assert curves[0].marker != curves[1].marker and not notes
    # with a computed load, arrival_rate moves the load along a curve: only servers splits
    curves, _ = build_curves(summaries, "load", "policy")
    assert len(curves) == 4 and all(len(c.points) == 2 for c in curves)
    # --by a point key: one colour per value, the policy splits
    curves, _ = build_curves(summaries, "arrival_rate", "servers")
    assert [c.label for c in curves][:2] == ["servers=10, policy=fcfs", "servers=10, policy=server-filling"]


def test_a_categorical_axis_and_a_policy_that_does_not_read_it(tmp_path):
    """``--x order`` (fcfs, sjf, f1: not numbers) is categorical: one tick per value, points not joined. first-fit
    does not declare ``order`` (a parameter of ``priority``): its one run is a line across every x, not a point."""
    summaries = [_fake({"order": o}, "priority", mean=m) for o, m in (("fcfs", 3.0), ("sjf", 2.0), ("f1", 1.5))]
    summaries.append(_fake({"order": "fcfs"}, "first-fit", mean=2.5))
    curves, _ = build_curves(summaries, "order", "policy")
    by_label = {c.label: c for c in curves}
    assert [x for x, _ in by_label["priority"].points] == [0.0, 1.0, 2.0]  # f1, fcfs, sjf
    assert [s.point["order"] for _, s in by_label["priority"].points] == ["f1", "fcfs", "sjf"]
    assert by_label["priority"].reads_x and not by_label["first-fit"].reads_x
    record = plot_summaries(summaries, "order", "response_time", out=tmp_path / "o.png")
    assert record.path.read_bytes()[:8] == PNG_MAGIC and len(record.points) == 1 and len(record.flat) == 1
    line, _ = record.flat[0]
    assert list(line.get_ydata()) == [2.5, 2.5] and "does not read order" in line.get_label()
    assert [t.get_text() for t in line.axes.get_xticklabels()] == ["f1", "fcfs", "sjf"]
    assert (record.points[0].lines[0].get_linestyle()) == "None"  # categories are not joined by lines
    with pytest.raises(MsjgymError, match="--theory: needs a numeric --x"):
        plot_summaries(summaries, "order", "response_time", theory=True, out=tmp_path / "t.png")


def test_a_numeric_axis_a_policy_does_not_read_is_a_line_across_it():
    """JSQ does not read ``d`` (lb-dispatch: it samples every server); JSQ(d) does: only JSQ(d) is a curve of points."""
    summaries = [PointSummary("lb-dispatch", {"d": d}, p, 3, True, {"response_time": Estimate(1.0, 0.1)}, None)
                 for p, ds in (("jsq", (2,)), ("jsq-d", (2, 3))) for d in ds]
    curves, _ = build_curves(summaries, "d", "policy")
    assert {c.label: c.reads_x for c in curves} == {"jsq": False, "jsq-d": True}


def test_duplicate_points_keep_the_most_replications():
    summaries = [_fake({"arrival_rate": 1.0}, "fcfs", reps=3, mean=1.0),
                 _fake({"arrival_rate": 1.0}, "fcfs", reps=10, mean=2.0)]
    (curve,), notes = build_curves(summaries, "arrival_rate", "policy")
    assert [s.reps for _, s in curve.points] == [10] and len(notes) == 1


def _one_line_error(out: Run, *fragments: str) -> None:
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msjgym: error: "), out.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_errors_are_one_line_with_status_2(results, tmp_path):
    _one_line_error(run_plot(tmp_path / "nowhere", "--x", "load", "--y", "response_time"), "no such results file")
    _one_line_error(run_plot(results, "--x", "load", "--y", "bogus"), "--y 'bogus'", "response_time",
                    "queueing_probability[n]")
    _one_line_error(run_plot(results, "--x", "servers", "--y", "response_time"), "--x 'servers'",
                    "arrival_rate, load")
    _one_line_error(run_plot(results, "--x", "load", "--y", "response_time", "--out", tmp_path / "a.jpg"),
                    ".png, .svg")
    _one_line_error(run_plot(results, "--x", "load"), "--y")
    empty = tmp_path / "empty" / "results.sqlite"
    ResultStore(empty).close()
    _one_line_error(run_plot(empty.parent, "--x", "load", "--y", "response_time"), "empty")
    (tmp_path / "junk.sqlite").write_text("not a database")
    _one_line_error(run_plot(tmp_path / "junk.sqlite", "--x", "load", "--y", "response_time"), "not a results file")


# ---------------------------------------------------------------- schedules: Gantt chart, utilization, queue length
LUBLIN = str(Path(__file__).resolve().parents[1] / "examples" / "lublin_256.toml")


def test_processor_assignment_never_double_books():
    """The Gantt chart's processors: every job gets exactly its need, and no processor holds two jobs at once
    (checked on a random non-preemptive schedule that fits the machine: FCFS start times computed here)."""
    import numpy as np

    from msjgym.evaluate.schedule_plot import assign_processors

    rng = np.random.default_rng(3)
    servers, n = 16, 300
    need = rng.integers(1, servers + 1, n)
    duration = rng.exponential(5.0, n)
    arrival = np.cumsum(rng.exponential(1.0, n))
    start, free_at = np.empty(n), np.zeros(servers)  # FCFS on a list of server free times (the `need` earliest)
    for j in range(n):
        order = np.sort(free_at)
        start[j] = max(arrival[j], order[need[j] - 1], start[j - 1] if j else 0.0)
        idx = np.argsort(free_at)[:need[j]]
        free_at[idx] = start[j] + duration[j]
    runs, short = assign_processors(start, start + duration, need, servers)
    assert short == 0
    held = np.zeros(n, dtype=int)
    busy: dict[int, list[tuple[float, float]]] = {}
    for j, low, count in runs:
        held[j] += count
        for p in range(low, low + count):
            busy.setdefault(p, []).append((start[j], start[j] + duration[j]))
    assert (held == need).all()
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))


def test_replay_and_schedule_pictures(tmp_path):
    """``msjgym plot --replay`` draws a trace's schedule (one rasterized collection, no per-job text) and ``--schedule``
    draws the SWF written by ``--per-job``; the figure stays small for thousands of jobs."""
    out = tmp_path / "gantt.png"
    drawn = msjgym("plot", "--replay", LUBLIN, "--policy", "fcfs", "--out", out)
    assert drawn.returncode == 0, drawn.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC and out.stat().st_size < 1_000_000
    swf = tmp_path / "s.swf"
    assert msjgym("evaluate", LUBLIN, "--policy", "fcfs", "--per-job", swf, "--no-progress").returncode == 0
    again = msjgym("plot", "--schedule", swf, "--kind", "gantt", "--color", "size")
    assert again.returncode == 0, again.stderr
    picture = swf.with_suffix(".png")
    assert Path(again.stdout.strip()) == picture and picture.read_bytes()[:8] == PNG_MAGIC
    mixed = msjgym("plot", "--schedule", swf, "--policy", "fcfs")
    assert mixed.returncode == 2 and mixed.stderr.startswith("msjgym: error: --policy")
    neither = msjgym("plot", "--x", "load")
    assert neither.returncode == 2 and "RESULTS" in neither.stderr


def test_schedule_figure_is_rasterized_without_labels(tmp_path):
    import numpy as np

    from msjgym.evaluate import schedule_plot

    seen = []
    original = schedule_plot._gantt

    def spy(ax, *args):
        drawn = original(ax, *args)
        seen.append((drawn[1].get_rasterized(), len(ax.texts)))
        return drawn

    schedule_plot._gantt = spy
    try:
        n = 10_000
        rng = np.random.default_rng(1)
        duration = rng.exponential(10.0, n)
        start = np.arange(n) * 10.0  # one job at a time: a schedule of 10,000 jobs that fits any machine
        columns = {"arrival_time": start - rng.uniform(0, 5, n), "start_time": start,
                   "duration": np.minimum(duration, 10.0), "need": rng.integers(1, 65, n)}
        record = schedule_plot.plot_schedule(columns, 64, tmp_path / "big.png")
    finally:
        schedule_plot._gantt = original
    assert record.jobs == n and record.rectangles == n and seen == [(True, 0)]
    assert (tmp_path / "big.png").stat().st_size < 1_500_000
