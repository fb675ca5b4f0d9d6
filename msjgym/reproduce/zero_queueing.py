"""Wang, Xie & Harchol-Balter, "Zero Queueing for Multi-Server Jobs" (2021), §7: Sets I–III (Figs. 5–8).

Simulated per-class queueing probability P_Q,i of FCFS against n (Figs. 5, 7, 8) and the concentration of X_i/λ_i around
1/μ_i (Fig. 6). The paper's estimator (last 100,000 arrivals in 10 segments, ± one s.d.) is replaced by independent
replications with 95 % CIs (docs/modelling-choices.md#zero-queueing-estimator). The paper does not state its class mix;
msjgym's default splits the load equally (docs/modelling-choices.md#zero-queueing-load-split), so the curves show the
paper's trends, not its exact values.
"""
from __future__ import annotations

from pathlib import Path

from msjgym.evaluate.store import PointSummary, summarize
from msjgym.api import load_scenario
from msjgym.evaluate.sweep import run_sweep
from msjgym.systems.msj.model import MSJModel
from msjgym.reproduce.common import MAX_SERVERS_OPTION, CsvTable, Settings, progress, pyplot, save_figure

PAPER_SIZES = tuple(2**k for k in range(6, 17, 2))  # 64 ... 65536
SET3_RULES = ("sqrt", "4th-root", "log")
CLASSES = ("c1", "c2", "c3")


def _sweeps(settings: Settings) -> list[tuple[str, str | None]]:
    return [("set1", None), ("set2", None)] + [("set3", rule) for rule in SET3_RULES]


def reproduce(settings: Settings) -> list[Path]:
    """Simulate every point through the sweep runner (resumable, all cores: rerunning skips finished tasks; the
    simulations land in ``out/results.sqlite``), then write ``zero-queueing.csv`` and the figures."""
    sizes = [n for n in PAPER_SIZES if n <= settings.option(OPTIONS, "max_servers")]
    table = CsvTable(settings.out / "zero-queueing.csv")
    for name, rule in progress(_sweeps(settings), settings, "zero-queueing"):
        rows = run_sweep(f"zero-queueing-{name}", [f"servers={','.join(map(str, sizes))}"], ["fcfs"], settings.out,
                         reps=settings.reps, jobs=settings.jobs, seed=settings.seed,
                         params=[f"m3={rule}"] if rule else [])
        for summary in summarize(rows):
            n = summary.point["servers"]
            overrides: dict[str, object] = {"servers": n} | ({"m3": rule} if rule else {})
            _add_rows(table, name, rule, load_scenario(f"zero-queueing-{name}", overrides).model, summary)
    table.rows.sort(key=lambda r: (r["set"], r["m3_rule"], r["servers"], r["cls"]))
    files = [table.write()]
    files += _figures(table.rows, settings.out, settings.option(OPTIONS, "max_servers"))
    return files


def _add_rows(table: CsvTable, name: str, rule: str | None, model: MSJModel, summary: PointSummary) -> None:
    for c, cls in enumerate(model.classes):
        row = dict(set=name, m3_rule=rule or "", servers=model.servers, load=model.load, cls=cls.name,
                   need=cls.need, stable=summary.stable, reps=summary.reps)
        if not summary.stable:
            table.add(**row)
            continue
        lam = model.class_arrival_rates[c]
        pq = summary.metrics[f"queueing_probability[{cls.name}]"]
        x = summary.metrics[f"number_in_system[{cls.name}]"]
        table.add(**row, queueing_probability=pq.mean, queueing_probability_ci95=pq.ci95,
                  x_over_lambda=x.mean / lam, x_over_lambda_ci95=x.ci95 / lam, one_over_mu=1 / cls.service.rate)


def _series(rows: list[dict], **match: object) -> tuple[list[float], list[float], list[float]]:
    sel = [r for r in rows if all(r.get(k) == v for k, v in match.items()) and r.get("stable")]
    return ([r["servers"] for r in sel], [r["queueing_probability"] for r in sel],
            [r["queueing_probability_ci95"] for r in sel])


def _figures(rows: list[dict], out: Path, max_servers: int) -> list[Path]:
    plt = pyplot()
    files = []
    note = "" if max_servers >= PAPER_SIZES[-1] else f" (n ≤ {max_servers}; the paper goes to 65536)"
    for name, fig_no, title in (("set1", 5, "Set I: ρ = 1 − n^(−0.1)/4, 2α+γ < 1"),
                                ("set2", 7, "Set II: ρ = 1 − n^(−0.3), 2α+γ ≥ 1")):
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for cls in CLASSES:
            n, pq, ci = _series(rows, set=name, cls=cls)
            ax.errorbar(n, pq, yerr=ci, marker="o", capsize=3, label=f"class {cls[1]}")
        _style(ax, f"Fig. {fig_no} — {title}{note}", "queueing probability P_Q,i")
        files.append(save_figure(fig, out / f"zero-queueing-fig{fig_no}-{name}.png"))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for rule, label in zip(SET3_RULES, ("m3 = √n", "m3 = 3n^(1/4)", "m3 = log2 n + 2")):
        n, pq, ci = _series(rows, set="set3", m3_rule=rule, cls="c3")
        ax.errorbar(n, pq, yerr=ci, marker="o", capsize=3, label=label)
    _style(ax, f"Fig. 8 — Set III: class-3 P_Q by m_max{note}", "queueing probability P_Q,3")
    files.append(save_figure(fig, out / "zero-queueing-fig8-set3.png"))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for cls in CLASSES:
        sel = [r for r in rows if r["set"] == "set1" and r["cls"] == cls and r.get("stable")]
        ax.errorbar([r["servers"] for r in sel], [r["x_over_lambda"] for r in sel],
                    yerr=[r["x_over_lambda_ci95"] for r in sel], marker="o", capsize=3, label=f"class {cls[1]}")
        if sel:
            ax.axhline(sel[0]["one_over_mu"], ls=":", color="grey")
    _style(ax, f"Fig. 6 — Set I: E[X_i]/λ_i → 1/μ_i (dotted){note}", "E[X_i]/λ_i", log_y=False)
    files.append(save_figure(fig, out / "zero-queueing-fig6-set1.png"))
    return files


def _style(ax, title: str, ylabel: str, log_y: bool = True) -> None:
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("servers n")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.text(0.01, 0.01, "FCFS, 95% CIs over replications; class mix: equal load split (not stated in the paper)",
            transform=ax.transAxes, fontsize=6, color="grey")


OPTIONS = (MAX_SERVERS_OPTION,)
"""``msjgym reproduce zero-queueing``'s own options: ``--max-servers`` (default 4096; the paper goes to 65536)."""
