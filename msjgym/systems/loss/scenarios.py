"""Built-in loss scenarios (adaptive multiserver jobs, no waiting room): ``loss-full-access`` and ``loss-sampled``.

Parameters (``--param KEY=VALUE``):
    * ``servers`` n (integer >= 1), ``d`` maximum width (integer in [1, n]);
    * the load: ``alpha`` ∈ [0, 1) and ``beta`` > 0 with λ(n) = 1 − βn^(−α) > 0, or ``lam`` ∈ (0, 1) directly
      (setting ``lam`` drops the defaults of alpha and beta);
    * ``k``: servers sampled per arrival, an integer in [1, n] or a rule name (``msjgym.systems.loss.model.K_RULES``:
      "n", "n^alpha log n", "n^alpha", "sqrt n", "sqrt n log n", "log n"; natural log, ⌈·⌉, capped at n by
      definition);
    * ``service``: "exp" (Exp(1), default: simulated exactly by the count chain) or a distribution table of mean 1,
      e.g. ``service={dist="det",value=1.0}`` (simulated per job; outside GMGM's theory, which assumes Exp(1)).

Defaults: ``loss-full-access``: n = 100, d = 2, α = 0.5, β = 1 (Halfin–Whitt), k = "n".
``loss-sampled``: n = 1000, d = 2, α = 0.5, β = 4, k = "n^alpha log n" (Theorem 9's setting: β > 2(α(d−1)+1) = 3).
"""
from __future__ import annotations

from collections.abc import Mapping

from msjgym.errors import ScenarioError, UnknownParameter
from msjgym.api import Scenario
from msjgym.systems.loss.model import K_RULES, LossModel, make_loss_model

_GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"
_DEFAULTS = {
    "loss-full-access": {"servers": 100, "d": 2, "alpha": 0.5, "beta": 1.0, "lam": None, "k": "n", "service": "exp"},
    "loss-sampled": {"servers": 1000, "d": 2, "alpha": 0.5, "beta": 4.0, "lam": None, "k": "n^alpha log n",
                     "service": "exp"},
}
_DESCRIPTIONS = {
    "loss-full-access": f"{_GMGM} §2: n servers, no waiting room, Exp(1) jobs on up to d servers (D = E/width), "
                        "λ = 1 − βn^(−α), every arrival sees all n servers (Theorem 4)",
    "loss-sampled": f"{_GMGM} §2: as loss-full-access, but each arrival samples k of the n servers without "
                    "replacement (default k = ⌈n^α ln n⌉, Theorem 9)",
}


def is_loss_scenario(name: str) -> bool:
    return name in _DEFAULTS


def list_loss_scenarios() -> list[tuple[str, str]]:
    return list(_DESCRIPTIONS.items())


def load_loss_scenario(name: str, overrides: Mapping[str, object]) -> Scenario:
    """Resolve a loss built-in with ``overrides``; every error is a one-line ``ScenarioError``."""
    defaults = _DEFAULTS[name]
    unknown = [key for key in overrides if key not in defaults]
    if unknown:
        valid = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
        raise UnknownParameter(f"{name}: unknown parameter {unknown[0]!r}; valid parameters (defaults): {valid}",
                               key=unknown[0])
    merged = dict(defaults) | dict(overrides)
    if "lam" in overrides and not ("alpha" in overrides or "beta" in overrides):
        merged["alpha"] = merged["beta"] = None
    try:
        model = make_loss_model(merged["servers"], merged["d"], merged["k"], alpha=merged["alpha"],
                                beta=merged["beta"], lam=merged["lam"], service=merged["service"])
    except ScenarioError as exc:
        raise ScenarioError(f"{name}: {exc}") from None
    return Scenario(name=name, family="loss", description=_DESCRIPTIONS[name], params=resolved_params(model), model=model)


def resolved_params(model: LossModel) -> dict:
    """The parameters as used (k resolved to an integer; the rule kept)."""
    out = {"servers": model.servers, "d": model.d}
    if model.alpha is not None:
        out |= {"alpha": model.alpha, "beta": model.beta}
    out |= {"lam": model.lam, "k": model.k}
    if model.k_rule:
        out["k_rule"] = K_RULES[model.k_rule][0]
    out["service"] = "Exp(1)" if model.service is None else f"{model.service} (outside GMGM's theory)"
    return out
