"""Finite-skip scenarios (Figs. 2–7 of Grosof, Harchol-Balter & Scheller-Wolf).

``load_finite_skip(name, {"load": ρ})`` builds the system of a figure (the paper's §4.5, §5.5, §6.5, §7.5):

* ``finite-skip-fig2``: heterogeneous M/G/4, speeds (0.4, 0.3, 0.2, 0.1), S ~ H2 (Exp(2) or Exp(2/3) w.p. 1/2);
* ``finite-skip-fig3``: LPS(4), the same S;
* ``finite-skip-fig4a`` / ``-fig4b``: threshold parallelism, k = 8, (P, S) = (1, Exp(2)) / (8, Exp(2/3)) each w.p. 1/2
  (4b: the rates swapped);
* ``finite-skip-fig6`` / ``-fig7``: the MSJ built-ins of :mod:`msjgym.systems.msj.scenarios` as rate models.

A replication's metrics: :mod:`msjgym.systems.finite_skip.metrics`; the theory beside them:
:mod:`msjgym.systems.finite_skip.scorecard`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from msjgym.core.distributions import Exponential, HyperExponential
from msjgym.core.limits import MAX_SERVERS
from msjgym.core.validation import check_int
from msjgym.errors import ScenarioError, UnknownParameter
from msjgym.systems.finite_skip.contract import HET, LPS, MSJ, THRESHOLD
from msjgym.systems.finite_skip.model import FiniteSkipModel

_GHS = "Grosof, Harchol-Balter & Scheller-Wolf, 'The finite-skip method for multiserver analysis'"
_H2 = HyperExponential(rates=(2.0, 2.0 / 3.0), probs=(0.5, 0.5))  # E[S] = 1, E[S²] = 2.5 (Figs. 2–4)


@dataclass(frozen=True)
class FiniteSkipFigure:
    """A figure: its description, model builder (from ρ), the policies it plots, and which are simulated on the
    multiserver-job engine instead (MaxWeight exists only there)."""

    description: str
    build: Callable[..., FiniteSkipModel]
    policies: tuple[str, ...]
    msj_policies: tuple[str, ...] = ()
    params: tuple[tuple[str, object], ...] = ()  # extra parameters (name, default) beside ``load``


def _servers(value: object) -> int:
    return check_int("servers", value, 1, MAX_SERVERS, ScenarioError, "the kernel keeps per-server state")


def _het(load: float, speeds: object = (0.4, 0.3, 0.2, 0.1)) -> FiniteSkipModel:
    """Speeds in any positive units, normalised to sum to 1 (capacity 1); k = their number."""
    if not isinstance(speeds, (list, tuple)) or not speeds:
        raise ScenarioError(f"speeds = {speeds!r}: must be a non-empty list of numbers in (0, inf)")
    for i, v in enumerate(speeds):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
            raise ScenarioError(f"speeds[{i}] = {v!r}: must be a finite number in (0, inf) (speeds are normalised "
                                "to sum to 1)")
    total = math.fsum(speeds)
    return FiniteSkipModel(HET, len(speeds), load, (1.0,), (_H2,), (1,),
                              speeds=tuple(v / total for v in speeds), name="fig2")


def _lps(load: float, servers: object = 4) -> FiniteSkipModel:
    return FiniteSkipModel(LPS, _servers(servers), load, (1.0,), (_H2,), (1,), name="fig3")


def _threshold(inelastic_rate: float, elastic_rate: float, name: str) -> Callable[..., FiniteSkipModel]:
    def build(load: float, servers: object = 8, threshold: object = None) -> FiniteSkipModel:
        """Inelastic jobs P = 1, elastic jobs P = ``threshold`` (default: servers, as in the paper)."""
        k = _servers(servers)
        laws = (Exponential(rate=inelastic_rate), Exponential(rate=elastic_rate))
        mean = 0.5 / inelastic_rate + 0.5 / elastic_rate
        p = k if threshold is None else threshold
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= k:
            raise ScenarioError(f"threshold = {p!r}: must be an integer in [1, servers={k}]")
        return FiniteSkipModel(THRESHOLD, k, load / mean, (0.5, 0.5), laws, (1, p), name=name)
    return build


def _msj(figure: str) -> Callable[..., FiniteSkipModel]:
    def build(load: float) -> FiniteSkipModel:
        from msjgym.api import load_scenario
        model = load_scenario(figure, {"load": load}).model
        return msj_as_finite_skip(model, figure)
    return build


def msj_as_finite_skip(model, name: str = "") -> FiniteSkipModel:
    """An :class:`~msjgym.systems.msj.model.MSJModel` as a rate model (durations X; S = vX/k)."""
    return FiniteSkipModel(MSJ, int(model.servers), float(model.arrival_rate),
                              tuple(float(c.probability) for c in model.classes),
                              tuple(c.service for c in model.classes), tuple(int(c.need) for c in model.classes),
                              name=name)


_HET_POLICIES = ("fsf", "fsf-minmig", "fsf-np", "ssf", "ssf-np", "random")
_TP_POLICIES = ("tp-fcfs", "inelastic-first", "elastic-first")
_MSJ_POLICIES = ("server-filling", "server-filling-divisible", "fcfs", "preemptive-first-fit", "msf", "lsf")
FIGURES: dict[str, FiniteSkipFigure] = {
    "finite-skip-fig2": FiniteSkipFigure(
        f"{_GHS} Fig. 2: heterogeneous M/G/4, speeds (0.4, 0.3, 0.2, 0.1), S ~ H2 (E[S]=1, E[S²]=2.5)",
        _het, _HET_POLICIES, params=(("speeds", [0.4, 0.3, 0.2, 0.1]),)),
    "finite-skip-fig3": FiniteSkipFigure(f"{_GHS} Fig. 3: LPS(4), S ~ H2 (E[S]=1, E[S²]=2.5)", _lps, ("lps",),
                                         params=(("servers", 4),)),
    "finite-skip-fig4a": FiniteSkipFigure(
        f"{_GHS} Fig. 4a: threshold parallelism, k=8, (P, S) = (1, Exp(2)), (8, Exp(2/3)) each w.p. 1/2",
        _threshold(2.0, 2.0 / 3.0, "fig4a"), _TP_POLICIES, params=(("servers", 8), ("threshold", None))),
    "finite-skip-fig4b": FiniteSkipFigure(
        f"{_GHS} Fig. 4b: threshold parallelism, k=8, (P, S) = (1, Exp(2/3)), (8, Exp(2)) each w.p. 1/2",
        _threshold(2.0 / 3.0, 2.0, "fig4b"), _TP_POLICIES, params=(("servers", 8), ("threshold", None))),
    "finite-skip-fig6": FiniteSkipFigure(
        f"{_GHS} Fig. 6: MSJ, k=4, (v, X) = (1, Exp(5)), (2, Exp(2)), (4, Exp(0.5)) each w.p. 1/3",
        _msj("finite-skip-fig6"), _MSJ_POLICIES, ("maxweight",)),
    "finite-skip-fig7": FiniteSkipFigure(
        f"{_GHS} Fig. 7: MSJ, k=4, (v, X) = (1, Exp(1)) 4/7, (2, Exp(8)) 2/7, (4, Exp(64)) 1/7",
        _msj("finite-skip-fig7"), _MSJ_POLICIES, ("maxweight",)),
}

RATE_MODEL_FIGURES = ("finite-skip-fig2", "finite-skip-fig3", "finite-skip-fig4a", "finite-skip-fig4b")
"""The figures whose systems are rate models of their own (the finite-skip family's scenarios); Figs. 6–7 are the
multiserver-job setting, simulated on the multiserver-job engine as built-ins of that family."""


def load_finite_skip(name: str, overrides: Mapping[str, object] | None = None) -> FiniteSkipModel:
    """The model of figure ``name`` with ``overrides`` (``load``, default 0.6, and the figure's own parameters:
    fig2 ``speeds``, fig3 ``servers``, fig4a/b ``servers`` and ``threshold``); ScenarioError naming the parameter and
    its valid range otherwise."""
    if name not in FIGURES:
        raise ScenarioError(f"finite-skip scenario {name!r}: unknown; valid: {', '.join(FIGURES)}")
    fig = FIGURES[name]
    overrides = dict(overrides or {})
    valid = {"load": 0.6} | dict(fig.params)
    unknown = [k for k in overrides if k not in valid]
    if unknown:
        shown = ", ".join(f"{k}={v}" for k, v in valid.items())
        raise UnknownParameter(f"{name}: unknown parameter {unknown[0]!r}; valid parameters (defaults): {shown}",
                               key=unknown[0])
    load = overrides.pop("load", 0.6)
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not (math.isfinite(load) and load > 0):
        raise ScenarioError(f"{name}: load = {load!r}: must be a finite number in (0, inf) (ρ = λE[S])")
    try:
        return fig.build(float(load), **overrides)
    except ScenarioError as exc:
        raise ScenarioError(f"{name}: {exc}") from None


def msj_fcfs_stability_load(model: FiniteSkipModel) -> float:
    """The load ρ* = μ_sat·E[S] above which MSJ FCFS is unstable (μ_sat: throughput of the saturated FCFS system,
    exponential durations; Grosof & Ayhan §3 via :func:`msjgym.theory.saturated.saturated_fcfs`). [exact]"""
    from msjgym.theory.saturated import saturated_fcfs
    if model.system != MSJ or not all(isinstance(d, Exponential) for d in model.laws):
        raise ValueError("the saturated-system threshold needs an MSJ model with exponential durations")
    sat = saturated_fcfs(model.servers, list(model.params), list(model.probs), [d.rate for d in model.laws])
    return sat.throughput * model.size_moments[0]
