"""``msjgym reproduce loss-scaling``: blocking probability and mean response time of greedy against n, per regime α.

GMGM prints no figures or numbers: this is the picture its theorems describe. For d = 2, α ∈ {0 (β = ½),
¼, ½, ¾ (β = 1)}, λ = 1 − βn^(−α), odd n (so that n mod d = 1 and a partial job can exist; with d | n full access
has E[D] = 1/d exactly), simulated greedy with full access (k = n) and with k = min(n, ⌈n^α ln n⌉) (Theorem 9's
rule; its β condition β > 2(α + 1) does NOT hold at these β: the sampled curves illustrate, they are not
Theorem 9's setting). Theory beside it: the exact full-access solution, Theorem 4's bounds √(d/(nλ)) and
n(E[D] − 1/d) <= 1/(λ(1 − P_b)), the Halfin–Whitt limit of √n P_b (α >= ½), and the finite-n mean-field
approximation of the sampled system (drawn for α = 0 only: for larger k it ignores the idle-count fluctuations
that dominate P_b and is far off; its values are in the CSV). Writes ``loss-scaling.csv`` and ``loss-scaling.png``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from msjgym.evaluate.evaluator import evaluate
from msjgym.reproduce.common import MAX_SERVERS_OPTION, CsvTable, Settings, progress, pyplot, save_figure
from msjgym.systems.loss import theory as th
from msjgym.systems.loss.model import make_loss_model

D = 2
REGIMES = ((0.0, 0.5), (0.25, 1.0), (0.5, 1.0), (0.75, 1.0))  # (α, β)
SIZES = (11, 31, 101, 317, 1001, 3163, 10001)
ACCESS = (("full", "n"), ("sampled", "n^alpha log n"))


def reproduce(settings: Settings) -> list[Path]:
    sizes = [n for n in SIZES if n <= settings.option(OPTIONS, "max_servers")]
    table = CsvTable(settings.out / "loss-scaling.csv")
    points = [(a, b, n, acc) for a, b in REGIMES for n in sizes for acc in ACCESS]
    for i, (alpha, beta, n, (access, rule)) in enumerate(progress(points, settings, "loss-scaling")):
        model = make_loss_model(n, D, rule, alpha=alpha, beta=beta)
        result = evaluate(model, "greedy", reps=settings.reps, jobs=settings.jobs, seed=settings.seed * 10_000 + i,
                          references=False)
        pb, ed = result.metrics["blocking_probability"], result.metrics["response_time"]
        lam = model.lam
        exact = th.greedy_full_access(n, D, lam)
        t4 = th.theorem4_bounds(n, D, lam)
        row = dict(alpha=alpha, beta=beta, access=access, servers=n, k=model.k, lam=lam, reps=settings.reps,
                   blocking=pb.mean, blocking_ci95=pb.ci95, response_time=ed.mean, response_time_ci95=ed.ci95,
                   full_access_exact_blocking=exact.blocking, full_access_exact_response=exact.response_time,
                   thm4_blocking_upper=t4.blocking_upper, thm4_condition_holds=t4.condition_holds,
                   hw_sqrt_n_limit=th.sqrt_n_blocking_limit(alpha, beta, D))
        if model.k < n:
            mf = th.mean_field_blocking(n, model.k, D, lam)
            row |= dict(mean_field_blocking=mf.blocking, mean_field_response=mf.response_time)
        table.add(**row)
    return [table.write(), _figure(table.rows, settings.out / "loss-scaling.png")]


def _figure(rows: list[dict], path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(2, len(REGIMES), figsize=(4.2 * len(REGIMES), 7.5), squeeze=False)
    for j, (alpha, beta) in enumerate(REGIMES):
        top, bottom = axes[0, j], axes[1, j]
        for (access, _), colour in zip(ACCESS, ("C0", "C1")):
            sel = [r for r in rows if r["alpha"] == alpha and r["access"] == access]
            n = np.array([r["servers"] for r in sel], float)
            pb = np.array([r["blocking"] for r in sel])
            top.errorbar(n, pb, yerr=[r["blocking_ci95"] for r in sel], fmt="o", color=colour, ms=4,
                         label=f"simulated, {'k = n' if access == 'full' else 'k = ⌈n^α ln n⌉'}")
            excess = n * (np.array([r["response_time"] for r in sel]) - 1.0 / D)
            bottom.errorbar(n, excess, yerr=n * np.array([r["response_time_ci95"] for r in sel]), fmt="o",
                            color=colour, ms=4, label=f"simulated, {access}")
            if access == "sampled" and alpha == 0:  # k = ⌈ln n⌉: the approximation is good; with k >> 1 idle
                # servers seen on average it ignores the fluctuations that dominate P_b (see the CSV)
                mf = [r.get("mean_field_blocking", math.nan) for r in sel]
                top.plot(n, mf, ":", color=colour, label="mean-field approx. (sampled)")
            else:
                top.plot(n, [r["full_access_exact_blocking"] for r in sel], "-", color="k", lw=1,
                         label="exact, full access")
                top.plot(n, [r["thm4_blocking_upper"] for r in sel], "--", color="grey", lw=1,
                         label="Thm 4 bound √(d/(nλ))")
                bottom.plot(n, n * (np.array([r["full_access_exact_response"] for r in sel]) - 1.0 / D), "-",
                            color="k", lw=1, label="exact, full access")
                bottom.plot(n, [1.0 / (r["lam"] * (1 - r["full_access_exact_blocking"])) for r in sel], "--",
                            color="grey", lw=1, label="Thm 4: 1/(λ(1 − P_b))")
                if alpha >= 0.5:
                    top.plot(n, [r["hw_sqrt_n_limit"] / math.sqrt(x) for r, x in zip(sel, n)], "-.",
                             color="C2", lw=1, label="HW limit / √n")
        top.set_xscale("log")
        top.set_yscale("log")
        bottom.set_xscale("log")
        bottom.set_yscale("symlog", linthresh=1e-2)
        top.set_title(f"α = {alpha:g}, β = {beta:g}")
        top.set_ylabel("blocking probability P_b")
        bottom.set_ylabel("n (E[D] − 1/d)")
        bottom.set_xlabel("servers n")
        top.set_ylim(1e-7, 1.0)
        bottom.set_ylim(bottom=0.0)
    axes[0, 0].legend(fontsize=7)
    axes[1, 0].legend(fontsize=7)
    fig.subplots_adjust(wspace=0.35)
    fig.suptitle(f"Greedy, d = {D}, λ = 1 − βn^(−α): GMGM Theorems 4 and 9 (simulation, 95% CIs)", fontsize=10)
    return save_figure(fig, path)


OPTIONS = (MAX_SERVERS_OPTION,)
"""``msjgym reproduce loss-scaling``'s own options: ``--max-servers`` (default 4096; the sizes go to 10,001)."""
