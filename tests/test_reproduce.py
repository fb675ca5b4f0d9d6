"""``msjgym reproduce``: the multilevel-scaling and zero-queueing reproductions write valid files, and the numbers
written for Grosof & Ayhan's exact α sweeps show the paper's claims (§10.1–10.2, Figs. 5 and 7)."""
from __future__ import annotations

import csv
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from msjgym.reproduce import REPRODUCTIONS
from msjgym.reproduce.common import Settings
from msjgym.reproduce.multilevel import (
    SIM_SETTINGS,
    min_f_max,
    n_grid,
    point_seed,
    reproduce_alpha,
    reproduce_n,
    simulated_row,
)
from msjgym.reproduce.zero_queueing import reproduce as reproduce_zero_queueing

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tiny(out: Path, **overrides: object) -> Settings:
    return Settings(out=out, **{"reps": 2, "jobs": 5_000, "progress": False, **overrides})


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def assert_files(files: list[Path], out: Path, pngs: int, csvs: int) -> None:
    assert all(f.parent == out and f.is_file() for f in files)
    assert sum(f.suffix == ".png" for f in files) == pngs and sum(f.suffix == ".csv" for f in files) == csvs
    for f in files:
        if f.suffix == ".png":
            assert f.read_bytes()[:8] == PNG_MAGIC, f


def assert_finite(rows: list[dict[str, str]], columns: tuple[str, ...]) -> None:
    for row in rows:
        for c in columns:
            assert math.isfinite(float(row[c])), (c, row)


def test_reproductions_are_registered():
    assert {"zero-queueing", "multilevel-n", "multilevel-alpha"} <= REPRODUCTIONS.keys()


# ---------------------------------------------------------------------------------------------------------------
# multilevel-n


def test_n_grid_is_log_spaced_and_ends_at_n_max():
    assert n_grid(10**8, 2)[:4] == [10, 32, 100, 316] and n_grid(10**8, 2)[-1] == 10**8
    assert len(n_grid(10**8, 2)) == 15 and n_grid(5_000, 1) == [10, 100, 1000, 5000]


def test_multilevel_n_writes_every_number(tmp_path, monkeypatch):
    """The first rate setting only (Figs. 2–4): each setting is one 2×3 log-log figure that costs matplotlib ~3
    CPU-s to lay out and save, and the three run the same code with other (μ₁, μ_n); the slow CLI test
    (``test_cli_reproduce_multilevel_n``) draws all three on the paper's grid."""
    from msjgym.reproduce import multilevel
    monkeypatch.setattr(multilevel, "RATE_SETTINGS", multilevel.RATE_SETTINGS[:1])
    assert multilevel.RATE_SETTINGS[0][2] == (2, 3, 4)
    files = reproduce_n(tiny(tmp_path), n_max=10**4, per_decade=1)
    assert_files(files, tmp_path, pngs=1, csvs=1)
    rows = read_csv(tmp_path / "multilevel-n.csv")
    assert len(rows) == 1 * 3 * 4                       # rate settings × α × n
    assert_finite(rows, ("servers", "p_n", "exact_throughput", "exact_mean_relative_completions",
                         "thm41_throughput", "thm41_mean_relative_completions", "regime3_throughput",
                         "regime3_mean_relative_completions"))
    for row in rows:
        assert (row["thm42_gamma_throughput"] != "") == (float(row["alpha"]) > 1)
    assert {r["figure"] for r in rows} == {"2", "3", "4"}


# ---------------------------------------------------------------------------------------------------------------
# multilevel-alpha


@pytest.fixture(scope="module", params=[0.1, pytest.param(0.05, marks=pytest.mark.slow)], ids=lambda s: f"step{s}")
def alpha_run(request, tmp_path_factory) -> tuple[Path, list[Path]]:
    """Exact sweeps on the default servers with α step 0.1 (-m slow: the default 0.05, which doubles their 3 CPU-s;
    the peaks checked below are 0.2–0.4 wide); simulated part on a coarse α grid, one capacity fraction, tiny runs."""
    out = tmp_path_factory.mktemp("multilevel-alpha")
    return out, reproduce_alpha(tiny(out), exact_alpha_step=request.param, sim_alpha_step=0.5,
                                capacity_factors=(0.9,))


@pytest.fixture(scope="module")
def exact_rows(alpha_run) -> dict[tuple[str, int], list[dict[str, float]]]:
    """Exact rows by (figure, n), in α order, as floats."""
    groups: dict[tuple[str, int], list[dict[str, float]]] = defaultdict(list)
    for row in read_csv(alpha_run[0] / "multilevel-alpha-exact.csv"):
        values = {k: float(v) for k, v in row.items() if k != "figure"}
        groups[row["figure"], int(values["servers"])].append(values)
    return {k: sorted(v, key=lambda r: r["alpha"]) for k, v in groups.items()}


def argmax_alpha(rows: list[dict[str, float]], key: str) -> float:
    return max(rows, key=lambda r: r[key])["alpha"]


def test_multilevel_alpha_files(alpha_run, exact_rows):
    out, files = alpha_run
    assert_files(files, out, pngs=5, csvs=2)
    assert {f for f, _ in exact_rows} == {"5", "7", "8a"}
    for rows in exact_rows.values():
        assert_finite(rows, ("alpha", "throughput", "mean_relative_completions", "throughput_scaled",
                             "mean_relative_completions_scaled"))
        assert rows[0]["alpha"] == 0 and max(b["alpha"] - a["alpha"] for a, b in zip(rows, rows[1:])) <= 0.1 + 1e-9


def test_multilevel_alpha_simulated_rows(alpha_run):
    rows = read_csv(alpha_run[0] / "multilevel-alpha-simulated.csv")
    assert {r["figure"] for r in rows} == {s.key for s in SIM_SETTINGS}
    assert len(rows) == 5 + 7 + 5 + 5                   # α step 0.5 over [0, 2] ([0, 3] for Fig. 6(b))
    assert_finite(rows, ("alpha", "fraction_of_capacity", "arrival_rate", "stability_threshold", "f_max", "rho",
                         "alpha_min_f_max", "min_f_max", "heavy_traffic_number_in_system"))
    for row in rows:
        assert row["simulated"] == "True" and float(row["rho"]) < 1
        assert float(row["fraction_of_capacity"]) < float(row["f_max"])
        if row["stable"] == "True":
            assert_finite([row], ("number_in_queue", "number_in_queue_ci95", "number_in_system",
                                  "number_in_system_ci95"))
    assert sum(r["stable"] == "True" for r in rows) >= len(rows) - 2
    assert len({r["seed"] for r in rows}) == len(rows)


def test_fig5a_throughput_increases_in_alpha(exact_rows):
    for (figure, n), rows in exact_rows.items():
        if figure == "5":
            mu = [r["throughput_scaled"] for r in rows]
            assert all(b >= a - 1e-12 for a, b in zip(mu, mu[1:])), n
            assert mu[-1] > mu[0]


def test_fig5b_peak_near_1_2_at_large_n_and_later_for_small_n(exact_rows):
    peaks = {n: argmax_alpha(rows, "mean_relative_completions_scaled")
             for (figure, n), rows in exact_rows.items() if figure == "5"}
    assert 1.1 <= peaks[10**6] <= 1.3
    ordered = [peaks[n] for n in sorted(peaks)]
    assert all(b <= a + 1e-9 for a, b in zip(ordered, ordered[1:])), peaks


def test_fig7b_duration_scaling_peak_near_2(exact_rows):
    large = max(n for figure, n in exact_rows if figure == "7")
    assert 1.8 <= argmax_alpha(exact_rows["7", large], "mean_relative_completions_scaled") <= 2.2


def test_stability_boundary_has_an_interior_minimum():
    for setting in SIM_SETTINGS:
        alpha_star, f_star = min_f_max(setting, step=0.05)
        assert 0 < alpha_star < setting.alpha_max and 0 < f_star < 1, setting.key
        assert f_star < setting.f_max(0.0) and f_star < setting.f_max(setting.alpha_max)


def test_point_beyond_stability_is_not_simulated(tmp_path):
    setting = SIM_SETTINGS[0]
    alpha_star, f_star = min_f_max(setting, step=0.05)
    row = simulated_row(setting, alpha_star, 1.2, f_star, tiny(tmp_path), seed=1)
    assert row["simulated"] is False and row["rho"] >= 1 and "number_in_queue" not in row


def test_point_seeds_are_distinct():
    assert len({point_seed(1, i) for i in range(1000)} | {point_seed(2, i) for i in range(1000)}) == 2000


# ---------------------------------------------------------------------------------------------------------------
# zero-queueing


def test_zero_queueing_small_run(tmp_path):
    files = reproduce_zero_queueing(tiny(tmp_path, options={"max_servers": 256}))
    assert_files(files, tmp_path, pngs=4, csvs=1)
    rows = read_csv(tmp_path / "zero-queueing.csv")
    assert {r["set"] for r in rows} == {"set1", "set2", "set3"} and {r["servers"] for r in rows} == {"64", "256"}
    stable = [r for r in rows if r["stable"] == "True"]
    assert stable
    assert_finite(stable, ("queueing_probability", "queueing_probability_ci95", "x_over_lambda", "one_over_mu"))


# ---------------------------------------------------------------------------------------------------------------
# command line


def msjgym(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "msjgym", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_reproduce_multilevel_n(tmp_path):
    """Defaults (n up to 10⁸: about 20 s, minutes on a loaded machine); the CLI has no flag to shrink the n grid. A
    long run: the default suite checks the same reproduction's numbers in-process on a smaller grid
    (``test_multilevel_n_writes_every_number``, one rate setting of three) and the command's parsing
    (``test_cli_reproduce_unknown_name_*``)."""
    out = msjgym("reproduce", "multilevel-n", "--out", str(tmp_path), "--no-progress")
    assert out.returncode == 0, out.stderr
    printed = [Path(line) for line in out.stdout.splitlines()]
    assert_files(printed, tmp_path, pngs=3, csvs=1)
    assert len(read_csv(tmp_path / "multilevel-n.csv")) == 3 * 3 * 15


def test_cli_reproduce_unknown_name_is_one_line_exit_2(tmp_path):
    out = msjgym("reproduce", "multilevel-nope", "--out", str(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msjgym: error:") and "multilevel-nope" in lines[0]
    assert not any(tmp_path.iterdir())
