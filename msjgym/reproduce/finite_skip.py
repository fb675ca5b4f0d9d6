"""Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis": Figs. 2, 3, 4a, 4b, 6, 7.

Mean response time against load ρ: each policy's simulated points with 95 % CIs (independent replications), the
Cor. 3.8 band of the figure's WCFS policy with the paper's generic constants (light) and the exact constants (dark),
the resource-pooled M/G/1 (dashed) and, for LPS, the Zhang–Zwart approximation (dotted). Unstable points (the job
count hit the simulator's capacity) are left out of the plot and marked in the CSV. The paper's protocol (10⁷ or
5·10⁶ arrivals per point, no CIs) is replaced by ``reps`` replications of ``jobs`` measured jobs after a warm-up of
jobs/5. MaxWeight (Figs. 6–7) runs on the multiserver-job engine (:mod:`msjgym.systems.msj.simulation`), the other
policies on the finite-skip rate model.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from msjgym.api import load_scenario
from msjgym.evaluate.evaluator import evaluate
from msjgym.core.policy_registry import registered
from msjgym.reproduce.common import CsvTable, Settings, progress, pyplot, save_figure
from msjgym.systems.finite_skip import scenarios as F
from msjgym.theory import finite_skip as theory

LOADS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
BANDED = {"finite-skip-fig2": "fsf", "finite-skip-fig3": "lps", "finite-skip-fig4a": "tp-fcfs",
          "finite-skip-fig4b": "tp-fcfs", "finite-skip-fig6": "server-filling", "finite-skip-fig7": "server-filling"}


def _response_time(scenario, policy: str, reps: int, jobs: int, seed: int) -> tuple[bool, float, float]:
    """(stable, mean response time, its 95 % CI half-width) of :func:`msjgym.evaluate` (NaN when unstable)."""
    r = evaluate(scenario, policy, reps=reps, jobs=jobs, seed=seed, references=False)
    est = r.metrics.get("response_time")
    return r.stable, (est.mean if est else float("nan")), (est.ci95 if est else float("nan"))


def reproduce_figure(name: str) -> Callable[[Settings], list[Path]]:
    """The reproduction of figure ``name`` (a key of :data:`msjgym.systems.finite_skip.scenarios.FIGURES`)."""
    fig = F.FIGURES[name]

    def reproduce(settings: Settings) -> list[Path]:
        table = CsvTable(settings.out / f"{name}.csv")
        banded = registered("finite-skip")[BANDED[name]]
        for i, load in enumerate(progress(LOADS, settings, name)):
            model = F.load_finite_skip(name, {"load": load})
            row = dict(figure=name, load=load, arrival_rate=model.arrival_rate, mg1=theory.resource_pooled_mg1(model))
            for exact in (False, True):
                const = theory.wcfs_constants(model, banded, exact)
                band = theory.wcfs_band(model, const)
                row |= {f"{const.label}_lower": band.response_lower, f"{const.label}_upper": band.response_upper}
            if banded.name == "lps":
                row["zhang_zwart"] = theory.zhang_zwart_lps(model)
            table.add(policy=f"theory ({banded.name})", engine="", **row)
            jobs = settings.jobs * (2 if load >= 0.9 else 1)
            for j, policy in enumerate(fig.policies + fig.msj_policies):
                seed = settings.seed * 1000 + 37 * i + j
                if policy in fig.msj_policies:  # the figure's scenario on the multiserver-job engine
                    stable, mean, ci = _response_time(load_scenario(name, {"load": load}), policy, settings.reps,
                                                      settings.jobs // 2, seed)
                    engine = "msj"
                else:  # the rate model
                    stable, mean, ci = _response_time(model, policy, settings.reps, jobs, seed)
                    engine = "finite-skip"
                table.add(policy=policy, engine=engine, figure=name, load=load, stable=stable, reps=settings.reps,
                          response_time=mean, response_time_ci95=ci)
        return [table.write(), _draw(name, table.rows, settings.out, banded.name)]

    return reproduce


def _draw(name: str, rows: list[dict], out: Path, banded: str) -> Path:
    plt = pyplot()
    th = [r for r in rows if r["policy"].startswith("theory")]
    x = [r["load"] for r in th]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.fill_between(x, [r["generic_lower"] for r in th], [r["generic_upper"] for r in th], color="pink", alpha=0.45,
                    label=f"Cor. 3.8 bounds on {banded}, generic constants")
    ax.fill_between(x, [r["exact_lower"] for r in th], [r["exact_upper"] for r in th], color="palevioletred",
                    alpha=0.45, label=f"Cor. 3.8 bounds on {banded}, exact constants")
    ax.plot(x, [r["mg1"] for r in th], "k--", lw=1, label="resource-pooled M/G/1")
    if "zhang_zwart" in th[0]:
        ax.plot(x, [r["zhang_zwart"] for r in th], "g:", lw=2, label="Zhang–Zwart (approximation)")
    policies = list(dict.fromkeys(r["policy"] for r in rows if not r["policy"].startswith("theory")))
    for k, policy in enumerate(policies):
        sel = [r for r in rows if r["policy"] == policy and r.get("stable")]
        if not sel:
            continue
        ax.errorbar([r["load"] + 0.003 * (k - len(policies) / 2) for r in sel], [r["response_time"] for r in sel],
                    yerr=[r["response_time_ci95"] for r in sel], marker="o", ms=3, capsize=2, lw=1, label=policy)
    ax.set_yscale("log")
    ax.set_xlabel("load ρ")
    ax.set_ylabel("mean response time E[T]")
    ax.set_title(f"{name}: {F.FIGURES[name].description.split(': ', 1)[1]}", fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    ax.text(0.01, 0.01, "simulation: 95% CIs over replications; unstable points omitted (see CSV)",
            transform=ax.transAxes, fontsize=6, color="grey")
    return save_figure(fig, out / f"{name}.png")


_LABELS = {"finite-skip-fig2": "Fig. 2, heterogeneous M/G/4", "finite-skip-fig3": "Fig. 3, LPS(4)",
           "finite-skip-fig4a": "Fig. 4a, threshold parallelism", "finite-skip-fig4b": "Fig. 4b, threshold parallelism",
           "finite-skip-fig6": "Fig. 6, MSJ", "finite-skip-fig7": "Fig. 7, MSJ"}
REPRODUCTIONS = {name: (f"Grosof, Harchol-Balter & Scheller-Wolf finite-skip {_LABELS[name]}: E[T] vs load with "
                        "Cor. 3.8 bands (generic/exact constants), M/G/1 line, simulated policies (simulation)",
                        reproduce_figure(name))
                 for name in F.FIGURES}
