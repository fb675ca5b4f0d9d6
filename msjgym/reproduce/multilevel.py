"""Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling": §9 / App. A and §10.

Two reproductions (errata applied: docs/errata.md, section "The '1 and n' system"):

* ``multilevel-n`` (:func:`reproduce_n`), Figs. 2–4 and 10–15 (§9, App. A): exact μ and E[Δ(Y_d)] (Lemmas 5.3, 5.5)
  against the asymptotics of Thm 4.1 (orange), of the 1-server dominated regime (green) and the γ-corrected Thm 4.2 μ
  (docs/errata.md#multilevel-thm-4-2-euler-gamma), over n on a log grid, for p_n = n^−α, α ∈ {0.5, 1, 2}. No simulation.
* ``multilevel-alpha`` (:func:`reproduce_alpha`), §10, Figs. 5–9: exact α sweeps (Figs. 5, 7, 8(a)) and simulated FCFS
  mean queue lengths at n = 10 against α at a fixed fraction of capacity f (Figs. 6(a), 6(b), 8(b), 9), with the
  corrected f = λ(Σ_i p_i m_i/μ_i)/n (docs/errata.md#multilevel-fraction-of-capacity) and Fig. 6(b) at μ₁ = 10, μ₁₀ = 1
  (docs/errata.md#multilevel-fig-6b-rates).

The paper states neither its n values (Figs. 5, 7, 8(a)), its α grids nor its capacity fractions; the values chosen here
are module constants and are printed in each figure's footnote (docs/modelling-choices.md#multilevel-figure-parameters).
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from msjgym.core.distributions import from_spec
from msjgym.evaluate.evaluator import evaluate
from msjgym.reproduce.common import CsvTable, Settings, progress, pyplot, save_figure
from msjgym.systems.msj.model import JobClass, MSJModel
from msjgym.systems.msj.theory.multilevel import (
    mean_relative_completions_regimes_1_2,
    throughput_polynomial_regime_3,
    throughput_regimes_1_2,
)
from msjgym.theory.saturated import (
    heavy_traffic_mean_number,
    one_and_n_mean_relative_completions,
    one_and_n_throughput,
    saturated_fcfs,
)

PURPLE, ORANGE, GREEN, BROWN = "tab:purple", "tab:orange", "tab:green", "tab:brown"
FOOTNOTE_STYLE = dict(fontsize=6.5, color="grey", ha="left", va="top")

# =====================================================================================================================
# multilevel-n: Figs. 2–4, 10–15

PAPER_N_MAX = 10**8
"""Largest n of the paper's §9 plots; :func:`reproduce_n`'s default (closed forms at 10⁸ take about 2 s)."""
N_PER_DECADE = 2
"""Default n grid density: 10, 10^1.5, ..., 10⁸ (15 points; the paper's grid is not stated)."""
SCALING_ALPHAS = (0.5, 1.0, 2.0)
RATE_SETTINGS: tuple[tuple[float, float, tuple[int, int, int]], ...] = (
    (1.0, 1.0, (2, 3, 4)), (10.0, 1.0, (10, 11, 12)), (1.0, 10.0, (13, 14, 15)))
"""(μ₁, μ_n, paper figure numbers for α = 0.5, 1, 2)."""
REGIME_NAMES = {0.5: "n-server dominated", 1.0: "balanced", 2.0: "1-server dominated"}


def n_grid(n_max: int = PAPER_N_MAX, per_decade: int = N_PER_DECADE) -> list[int]:
    """n = round(10^(1 + k/per_decade)) for k = 0, 1, ... up to ``n_max`` (n_max itself included)."""
    if n_max < 10 or per_decade < 1:
        raise ValueError(f"n_max = {n_max}, per_decade = {per_decade}: need n_max >= 10 and per_decade >= 1")
    top = math.log10(n_max)
    exponents = [1 + k / per_decade for k in range(int(math.floor((top - 1) * per_decade + 1e-9)) + 1)]
    return sorted({round(10**e) for e in exponents} | {int(n_max)})


def reproduce_n(settings: Settings, *, n_max: int = PAPER_N_MAX, per_decade: int = N_PER_DECADE) -> list[Path]:
    """Exact vs asymptotic μ and E[Δ(Y_d)] over n (Figs. 2–4, 10–15); returns the CSV and three PNGs.

    Args:
        settings: output folder and progress flag (no simulation: reps, jobs and max_servers are unused).
        n_max: largest n (default 10⁸ as in the paper; the whole run then takes about 20 s).
        per_decade: n grid points per decade (default 2).
    """
    grid = n_grid(n_max, per_decade)
    points = [(mu_1, mu_n, figs[k], alpha, n) for mu_1, mu_n, figs in RATE_SETTINGS
              for k, alpha in enumerate(SCALING_ALPHAS) for n in grid]
    table = CsvTable(settings.out / "multilevel-n.csv")
    for mu_1, mu_n, fig, alpha, n in progress(points, settings, "multilevel-n"):
        table.add(figure=fig, mu_1=mu_1, mu_n=mu_n, alpha=alpha, **scaling_row(n, alpha, mu_1, mu_n))
    files = [table.write()]
    note = (f"n grid: {per_decade} points per decade, 10 to {n_label(n_max)} (grid not stated in the paper). "
            "Brown: Thm 4.2 μ with the Euler-γ term the paper omits (docs/errata.md#multilevel-thm-4-2-euler-gamma); "
            "non-positive values not drawn.")
    for mu_1, mu_n, figs in RATE_SETTINGS:
        rows = [r for r in table.rows if r["mu_1"] == mu_1 and r["mu_n"] == mu_n]
        files.append(_scaling_figure(rows, mu_1, mu_n, figs, note, settings.out))
    return files


def scaling_row(n: int, alpha: float, mu_1: float, mu_n: float) -> dict[str, Any]:
    """Exact and asymptotic μ, E[Δ(Y_d)] at n for p_n = n^−α (empty string where a formula does not apply)."""
    p_n = float(n) ** -alpha
    return dict(
        servers=n, p_n=p_n,
        exact_throughput=one_and_n_throughput(n, p_n, mu_1, mu_n),
        exact_mean_relative_completions=one_and_n_mean_relative_completions(n, p_n, mu_1, mu_n),
        thm41_throughput=throughput_regimes_1_2(p_n, mu_1),                # orange: μ₁/(p_n ln(1/p_n))
        thm41_mean_relative_completions=mean_relative_completions_regimes_1_2(p_n),  # orange: 1/(2p_n)
        regime3_throughput=n * mu_1,                                         # green: nμ₁
        regime3_mean_relative_completions=0.5 * n ** (2.0 - alpha) * math.log(n) ** 2,  # green: Thm 4.2
        thm42_gamma_throughput=throughput_polynomial_regime_3(n, alpha, mu_1, mu_n) if alpha > 1 else "",
    )


def _scaling_figure(rows: list[dict[str, Any]], mu_1: float, mu_n: float, figs: Sequence[int], note: str,
                    out: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    for col, (alpha, fig_no) in enumerate(zip(SCALING_ALPHAS, figs)):
        sel = [r for r in rows if r["alpha"] == alpha]
        top, bottom = axes[0, col], axes[1, col]
        _curve(top, sel, "exact_throughput", PURPLE, "s", "exact, Lemma 5.3")
        _curve(top, sel, "thm41_throughput", ORANGE, "v", "Thm 4.1: μ₁/(p_n ln(1/p_n))")
        _curve(top, sel, "regime3_throughput", GREEN, "^", "nμ₁")
        if alpha > 1:
            _curve(top, sel, "thm42_gamma_throughput", BROWN, "D",
                   "Thm 4.2 (γ-corrected): μ₁[n − n^(2−α)(ln n + γ + μ₁/μ_n − 1)]", dashed=True)
        _curve(bottom, sel, "exact_mean_relative_completions", PURPLE, "s", "exact, Lemma 5.5")
        _curve(bottom, sel, "thm41_mean_relative_completions", ORANGE, "v", "Thm 4.1: 1/(2p_n)")
        _curve(bottom, sel, "regime3_mean_relative_completions", GREEN, "^", "Thm 4.2: ½ n^(2−α) ln² n")
        top.set_title(f"Fig. {fig_no}: p_n = n^−{alpha:g} ({REGIME_NAMES[alpha]})", fontsize=9)
        top.set_ylabel("μ, saturated throughput (jobs per unit time)", fontsize=8)
        bottom.set_ylabel("E[Δ(Y_d)] (jobs, dimensionless)", fontsize=8)
        for ax in (top, bottom):
            _log_axes(ax, "servers n")
    return _finish(fig, f"Grosof & Ayhan §9 / App. A — exact vs asymptotic, μ₁ = {mu_1:g}, μ_n = {mu_n:g} "
                   f"(Figs. {figs[0]}–{figs[-1]})", note, out / f"multilevel-n-mu1-{mu_1:g}-mun-{mu_n:g}.png")


def _curve(ax: Any, rows: list[dict[str, Any]], key: str, color: str, marker: str, label: str,
           dashed: bool = False) -> None:
    """Plot ``key`` against n, skipping empty and non-positive values (log axes)."""
    pts = [(r["servers"], r[key]) for r in rows if r[key] != "" and r[key] > 0]
    if pts:
        x, y = zip(*pts)
        ax.plot(x, y, color=color, marker=marker, ms=4, lw=1, ls="--" if dashed else "-", label=label)


def _log_axes(ax: Any, xlabel: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=6.5)


# =====================================================================================================================
# multilevel-alpha, exact part: Figs. 5, 7, 8(a)

EXACT_ALPHA_STEP = 0.05
FIG5_SERVERS = (10, 10**2, 10**3, 10**4, 10**6)
FIG7_SERVERS = (10, 10**2, 10**3, 10**4, 10**6)
FIG8_SERVERS = (10, 20, 50, 100, 500)
"""n of Fig. 8(a); the generic solver goes singular at n = 1000 for p ≲ 6e−9 (α ≥ 2.75)."""


def alpha_grid(alpha_max: float, step: float) -> list[float]:
    """0, step, 2·step, ..., alpha_max (rounded to avoid float drift)."""
    return [round(k * step, 10) for k in range(int(round(alpha_max / step)) + 1)]


def exact_row(figure: str, n: int, alpha: float, large_need: int, mu_1: float, mu_large: float,
              scale_power: int) -> dict[str, Any]:
    """μ and E[Δ(Y_d)] of the saturated FCFS system with needs {1, large_need}, p_large = n^−α.

    Closed forms (Lemmas 5.3, 5.5) when large_need = n, else the generic saturated-chain solver. Scaled values are
    divided by n^scale_power (the paper's μ/n, E[Δ]/n or μ/n², E[Δ]/n²).
    """
    p = float(n) ** -alpha
    if large_need == n:
        mu = one_and_n_throughput(n, p, mu_1, mu_large)
        delta = one_and_n_mean_relative_completions(n, p, mu_1, mu_large)
    else:
        mu, delta = _generic_saturated(n, (1, large_need), (1.0 - p, p), (mu_1, mu_large))
    scale = float(n) ** scale_power
    return dict(figure=figure, servers=n, alpha=alpha, large_need=large_need, p_large=p, mu_1=mu_1,
                mu_large=mu_large, throughput=mu, mean_relative_completions=delta, scale=scale,
                throughput_scaled=mu / scale, mean_relative_completions_scaled=delta / scale)


def _generic_saturated(n: int, needs: Sequence[int], probabilities: Sequence[float],
                       rates: Sequence[float]) -> tuple[float, float]:
    """(μ, E[Δ(Y_d)]) by the generic solver, dropping classes of probability 0."""
    kept = [(m, p, r) for m, p, r in zip(needs, probabilities, rates) if p > 0]
    system = saturated_fcfs(n, *(tuple(column) for column in zip(*kept)))
    return system.throughput, system.mean_relative_completions


def _exact_points(alpha_step: float, fig5: Sequence[int], fig7: Sequence[int],
                  fig8: Sequence[int]) -> list[tuple[str, int, float, int, float, float, int]]:
    """(figure, n, α, large need, μ₁, μ_large, scale power) of every exact point."""
    return ([("5", n, a, n, 1.0, 1.0, 1) for n in fig5 for a in alpha_grid(3.0, alpha_step)]
            + [("7", n, a, n, float(n), 1.0, 2) for n in fig7 for a in alpha_grid(4.0, alpha_step)]
            + [("8a", n, a, n // 2, 1.0, 1.0, 1) for n in fig8 for a in alpha_grid(3.0, alpha_step)])


# =====================================================================================================================
# multilevel-alpha, simulated part: Figs. 6(a), 6(b), 8(b), 9

SIM_SERVERS = 10
SIM_ALPHA_STEP = 0.1
CAPACITY_FACTORS = (0.8, 0.9, 0.95, 0.98)
"""Simulated fractions of capacity, as multiples of min_α f_max(α) (the paper does not state its values)."""
F_MAX_STEP = 0.01


@dataclass(frozen=True)
class SimulatedSetting:
    """One simulated panel: n = 10, needs (1, large...), large classes share p_large = 10^−α equally."""

    key: str
    figure: str
    title: str
    needs: tuple[int, ...]
    rates: tuple[float, ...]
    alpha_max: float
    paper_peak: float

    def probabilities(self, alpha: float) -> tuple[float, ...]:
        large = float(SIM_SERVERS) ** -alpha
        k = len(self.needs) - 1
        return (1.0 - large,) + (large / k,) * k

    def work(self, alpha: float) -> float:
        """Σ_i p_i m_i/μ_i: mean server-time per job."""
        return sum(p * m / r for p, m, r in zip(self.probabilities(alpha), self.needs, self.rates))

    def saturated(self, alpha: float) -> tuple[float, float]:
        """``(μ(α), E[Δ(Y_d)](α))``: closed forms for needs {1, n}, else the generic solver."""
        probs = self.probabilities(alpha)
        if self.needs == (1, SIM_SERVERS):
            args = (SIM_SERVERS, probs[1], *self.rates)
            return one_and_n_throughput(*args), one_and_n_mean_relative_completions(*args)
        return _generic_saturated(SIM_SERVERS, self.needs, probs, self.rates)

    def f_max(self, alpha: float) -> float:
        """Fraction of capacity at the FCFS stability boundary: μ(α)·Σ_i p_i m_i/μ_i / n."""
        return self.saturated(alpha)[0] * self.work(alpha) / SIM_SERVERS

    def model(self, alpha: float, arrival_rate: float) -> MSJModel:
        classes = tuple(JobClass(f"need{m}", m, p, from_spec({"dist": "exp", "rate": r}))
                        for m, p, r in zip(self.needs, self.probabilities(alpha), self.rates) if p > 0)
        return MSJModel(servers=SIM_SERVERS, arrival_rate=arrival_rate, classes=classes)


SIM_SETTINGS = (
    SimulatedSetting("fig6a", "Fig. 6(a)", "needs {1, 10}, μ₁ = μ₁₀ = 1, p₁₀ = 10^−α", (1, 10), (1.0, 1.0), 2.0, 0.8),
    SimulatedSetting("fig6b", "Fig. 6(b)", "needs {1, 10}, μ₁ = 10, μ₁₀ = 1, p₁₀ = 10^−α\n"
                     "(duration scaling; the caption's μ₁ = 1, μ₁₀ = 10 is wrong: docs/errata.md)",
                     (1, 10), (10.0, 1.0), 3.0, 1.9),
    SimulatedSetting("fig8b", "Fig. 8(b)", "needs {1, 5}, μ₁ = μ₅ = 1, p₅ = 10^−α", (1, 5), (1.0, 1.0), 2.0, 0.4),
    SimulatedSetting("fig9", "Fig. 9", "needs {1, 5, 10}, rates 1, p₅ = p₁₀ = 10^−α/2\n"
                     "(the caption's n^α/2 is a typo)", (1, 5, 10), (1.0, 1.0, 1.0), 2.0, 0.7),
)


def min_f_max(setting: SimulatedSetting, step: float = F_MAX_STEP) -> tuple[float, float]:
    """(α*, f_max(α*)) minimising f_max over a fine α grid on [0, alpha_max]."""
    return min(((a, setting.f_max(a)) for a in alpha_grid(setting.alpha_max, step)), key=lambda t: t[1])


def point_seed(root: int, index: int) -> int:
    """An independent 32-bit seed for simulated point ``index`` under root seed ``root``."""
    return int(np.random.SeedSequence((root, index)).generate_state(1)[0])


def simulated_row(setting: SimulatedSetting, alpha: float, factor: float, f_star: float, settings: Settings,
                  seed: int) -> dict[str, Any]:
    """Simulate FCFS at f = factor·f_star and α (unless λ >= μ(α)); one CSV row."""
    mu, delta = setting.saturated(alpha)
    work = setting.work(alpha)
    f = factor * f_star
    lam = f * SIM_SERVERS / work
    rho = lam / mu
    row: dict[str, Any] = dict(
        figure=setting.key, servers=SIM_SERVERS, alpha=alpha, needs=" ".join(map(str, setting.needs)),
        rates=" ".join(f"{r:g}" for r in setting.rates), p_large=float(SIM_SERVERS) ** -alpha,
        capacity_factor=factor, fraction_of_capacity=f, arrival_rate=lam, stability_threshold=mu,
        f_max=mu * work / SIM_SERVERS, rho=rho, mean_relative_completions=delta, seed=seed)
    if rho >= 1.0:
        return row | dict(simulated=False, stable=False)
    row["heavy_traffic_number_in_system"] = heavy_traffic_mean_number(rho, delta + 1.0)
    result = evaluate(setting.model(alpha, lam), "fcfs", reps=settings.reps, jobs=settings.jobs, seed=seed,
                      references=False)
    row |= dict(simulated=True, stable=result.stable)
    if result.stable:
        for key in ("number_in_queue", "number_in_system"):
            estimate = result.metrics[key]
            row |= {key: estimate.mean, f"{key}_ci95": estimate.ci95}
    return row


# =====================================================================================================================
# multilevel-alpha: driver and figures


def reproduce_alpha(settings: Settings, *, exact_alpha_step: float = EXACT_ALPHA_STEP,
                    fig5_servers: Sequence[int] = FIG5_SERVERS, fig7_servers: Sequence[int] = FIG7_SERVERS,
                    fig8_servers: Sequence[int] = FIG8_SERVERS, sim_alpha_step: float = SIM_ALPHA_STEP,
                    capacity_factors: Sequence[float] = CAPACITY_FACTORS) -> list[Path]:
    """Exact α sweeps (Figs. 5, 7, 8(a)) and simulated ones at n = 10 (Figs. 6, 8(b), 9).

    The simulated grid is α step 0.1 on [0, 2] ([0, 3] for Fig. 6(b)) × 4 capacity fractions = 376 points; with
    the default Settings (5 reps × 200,000 jobs per point) the whole run takes about 50 s. Returns the two CSVs (``multilevel-alpha-exact.csv``, ``multilevel-alpha-simulated.csv``) and five
    PNGs. The keyword arguments shrink the grids (for tests).
    """
    exact = CsvTable(settings.out / "multilevel-alpha-exact.csv")
    for point in progress(_exact_points(exact_alpha_step, fig5_servers, fig7_servers, fig8_servers), settings,
                          "multilevel-alpha exact"):
        exact.add(**exact_row(*point))
    boundaries = {s.key: min_f_max(s) for s in SIM_SETTINGS}
    points = [(s, a, c) for s in SIM_SETTINGS for c in capacity_factors
              for a in alpha_grid(s.alpha_max, sim_alpha_step)]
    sim = CsvTable(settings.out / "multilevel-alpha-simulated.csv")
    for index, (setting, alpha, factor) in enumerate(progress(points, settings, "multilevel-alpha simulated")):
        alpha_star, f_star = boundaries[setting.key]
        row = simulated_row(setting, alpha, factor, f_star, settings, point_seed(settings.seed, index))
        sim.add(**row, alpha_min_f_max=alpha_star, min_f_max=f_star)
    files = [exact.write(), sim.write()]
    run = (f"n = 10; {settings.reps} replications × {settings.jobs:,} jobs (+10 % warm-up) per point, 95 % CIs "
           f"(paper: 10⁸ jobs per point); f values = {', '.join(f'{c:g}' for c in capacity_factors)} × min_α "
           "f_max (not stated in the paper); f = λ Σ p_i m_i/μ_i / n (corrected formula, "
           "docs/errata.md#multilevel-fraction-of-capacity).")
    files += _alpha_figures(exact.rows, sim.rows, boundaries, run, settings.out)
    return files


def _alpha_figures(exact: list[dict[str, Any]], sim: list[dict[str, Any]],
                   boundaries: dict[str, tuple[float, float]], run: str, out: Path) -> list[Path]:
    plt = pyplot()
    settings = {s.key: s for s in SIM_SETTINGS}
    files = []

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.3))
    _exact_panel(a, exact, "5", "throughput_scaled", "μ/n (jobs per unit time per server)",
                 "Fig. 5(a) — throughput μ/n, Lemma 5.3", ("inflection", 1.2))
    _exact_panel(b, exact, "5", "mean_relative_completions_scaled", "E[Δ(Y_d)]/n (jobs per server)",
                 "Fig. 5(b) — scaled mean queue length E[Δ(Y_d)]/n, Lemma 5.5", ("peak", 1.2))
    files.append(_finish(fig, "Grosof & Ayhan Fig. 5 — needs {1, n}, μ₁ = μ_n = 1, p_n = n^−α",
                         _exact_note(exact, "5"), out / "multilevel-alpha-fig5.png"))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax, key in zip(axes, ("fig6a", "fig6b")):
        _simulated_panel(ax, sim, settings[key], boundaries[key])
    files.append(_finish(fig, "Grosof & Ayhan Fig. 6 — simulated FCFS mean queue length at fixed fraction of "
                         "capacity", run, out / "multilevel-alpha-fig6.png"))

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.3))
    _exact_panel(a, exact, "7", "throughput_scaled", "μ/n² (jobs per unit time / n²)",
                 "Fig. 7(a) — throughput μ/n², Lemma 5.3", ("inflection", 2.0))
    _exact_panel(b, exact, "7", "mean_relative_completions_scaled", "E[Δ(Y_d)]/n² (jobs / n²)",
                 "Fig. 7(b) — scaled mean queue length E[Δ(Y_d)]/n², Lemma 5.5", ("peak", 2.0))
    files.append(_finish(fig, "Grosof & Ayhan Fig. 7 — duration scaling: needs {1, n}, μ₁ = n, μ_n = 1, "
                         "p_n = n^−α", _exact_note(exact, "7"), out / "multilevel-alpha-fig7.png"))

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.6))
    _exact_panel(a, exact, "8a", "throughput_scaled", "μ/n (jobs per unit time per server)",
                 "Fig. 8(a) — throughput μ/n, generic saturated-chain solver", ("inflection", 1.0))
    _simulated_panel(b, sim, settings["fig8b"], boundaries["fig8b"])
    files.append(_finish(fig, "Grosof & Ayhan Fig. 8 — half-size large jobs: needs {1, n/2}, rates 1, "
                         "p_{n/2} = n^−α", _exact_note(exact, "8a") + "\n" + run, out / "multilevel-alpha-fig8.png"))

    fig, ax = plt.subplots(figsize=(6, 4.6))
    _simulated_panel(ax, sim, settings["fig9"], boundaries["fig9"])
    files.append(_finish(fig, "Grosof & Ayhan Fig. 9 — three classes, n = 10", run,
                         out / "multilevel-alpha-fig9.png"))
    return files


def _exact_panel(ax: Any, rows: list[dict[str, Any]], figure: str, key: str, ylabel: str, title: str,
                 paper: tuple[str, float]) -> None:
    sel = [r for r in rows if r["figure"] == figure]
    for n in sorted({r["servers"] for r in sel}):
        pts = [r for r in sel if r["servers"] == n]
        ax.plot([r["alpha"] for r in pts], [r[key] for r in pts], marker="o", ms=2.5, lw=1,
                label=f"n = {n_label(n)}")
    what, alpha = paper
    ax.axvline(alpha, color="red", ls=":", lw=1, label=f"paper: {what} ≈ {alpha:g}")
    ax.set_xlabel("α (large-job fraction p = n^−α)", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def _simulated_panel(ax: Any, rows: list[dict[str, Any]], setting: SimulatedSetting,
                     boundary: tuple[float, float]) -> None:
    sel = [r for r in rows if r["figure"] == setting.key]
    for factor in sorted({r["capacity_factor"] for r in sel}):
        pts = [r for r in sel if r["capacity_factor"] == factor and r.get("stable")]
        if pts:
            ax.errorbar([r["alpha"] for r in pts], [r["number_in_queue"] for r in pts],
                        yerr=[r["number_in_queue_ci95"] for r in pts], marker="o", ms=3, capsize=2, lw=1,
                        label=f"f = {factor * boundary[1]:.3f} ({factor:g}·min f_max)")
    alpha_star, f_star = boundary
    ax.axvline(alpha_star, color="grey", ls="--", lw=1, label=f"argmin f_max: α = {alpha_star:.2f} "
                                                                f"(f_max = {f_star:.3f})")
    ax.axvline(setting.paper_peak, color="red", ls=":", lw=1, label=f"paper's peak ≈ {setting.paper_peak:g}")
    ax.set_yscale("log")
    ax.set_xlabel("α (large-job fraction 10^−α)", fontsize=8)
    ax.set_ylabel("E[N_Q], mean number waiting (jobs)", fontsize=8)
    ax.set_title(f"{setting.figure} — {setting.title}", fontsize=8.5)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6.5)


def _exact_note(rows: list[dict[str, Any]], figure: str) -> str:
    ns = sorted({r["servers"] for r in rows if r["figure"] == figure})
    alphas = sorted({r["alpha"] for r in rows if r["figure"] == figure})
    step = alphas[1] - alphas[0] if len(alphas) > 1 else 0.0
    label = {"8a": "8(a)"}.get(figure, figure)
    return (f"Fig. {label}: n ∈ {{{', '.join(n_label(n) for n in ns)}}} and α step {step:g} chosen here "
            "(the paper does not state them); red dotted line: the paper's stated value.")


def n_label(n: int) -> str:
    """n as text: 10³ for powers of ten from 1000 on, else plain digits."""
    k = round(math.log10(n))
    return f"10{str(k).translate(_SUPERSCRIPTS)}" if n >= 1000 and n == 10**k else str(n)


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _finish(fig: Any, title: str, note: str, path: Path) -> Path:
    """Title, tight layout with room for the grey footnote ``note`` (wrapped to the figure width), save."""
    width, height = fig.get_size_inches()
    note = "\n".join(textwrap.fill(line, width=int(width * 21)) for line in note.split("\n"))
    bottom = (note.count("\n") + 1) * 0.13 / height
    fig.suptitle(title, fontsize=10.5)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.text(0.01, bottom, note, **FOOTNOTE_STYLE)
    return save_figure(fig, path)
