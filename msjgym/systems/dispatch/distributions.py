"""Job-size laws of the load-balancing paper, by the names the paper uses; all have mean 1 (time units).

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §4.5 and §8; how msjgym reads the laws the paper names without formulas:
docs/modelling-choices.md#lb-hyperexponential and docs/modelling-choices.md#lb-hyper-erlang.

Names (case-insensitive; arguments by keyword, or positionally in the order shown):

==========================================  ==========================================================================
``exp`` / ``exponential``                   Exp(1)
``hyperexp(f=..., scv=...)`` / ``h2(...)``  two-phase hyperexponential, SCV >= 1, f in (0, 1) = fraction of the work
                                            carried by the short phase (f defaults to 1/2)
``erlang(k=...)``                           Erlang-k, each phase of rate k
``hypererlang(k=..., l=..., p=...)``        Erlang(k) w.p. p, Erlang(l) w.p. 1 - p, both of mean 1
``z(eps=...)``                              the extremal H2 law Z(ε) of Thm 4.7 / Prop 7.2: alpha = (1 - ε, ε),
                                            rates ((1 - ε)/ε, ε/(1 - ε)), ε in (0, 1); ε = 1/2 is Exp(1)
``det`` / ``deterministic``                 size 1 (not phase-type: only the cavity closed forms apply)
==========================================  ==========================================================================

Numbers may be written as fractions (``f=1/2``). Every law is a :class:`msjgym.core.distributions.Distribution`
(``.phase_type()`` gives PH(alpha, S); ``.to_spec()`` gives the scenario table), so the simulators and the cavity
solver share one object. Unknown names or bad parameters raise :class:`~msjgym.errors.ScenarioError` (a
``ValueError``) naming the parameter and its valid range.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from msjgym.core.distributions import (
    Deterministic,
    Distribution,
    Erlang,
    Exponential,
    HyperErlang,
    HyperExponential,
)
from msjgym.core.limits import MAX_PHASES
from msjgym.core.validation import check_number, parse_number, show
from msjgym.errors import ScenarioError

PAPER_LAWS: dict[str, tuple[str, ...]] = {
    "exp": (),
    "hyperexp": ("f", "scv"),
    "erlang": ("k",),
    "hypererlang": ("k", "l", "p"),
    "z": ("eps",),
    "det": (),
}
"""Canonical paper law names and their parameters (positional order)."""

_ALIASES = {"exponential": "exp", "h2": "hyperexp", "hyperexponential": "hyperexp", "hyper-erlang": "hypererlang",
            "deterministic": "det", "zeps": "z"}
_VALID = "exp, hyperexp(f, scv), erlang(k), hypererlang(k, l, p), z(eps), det"
_CALL = re.compile(r"^\s*([A-Za-z][\w\-]*)\s*(?:\((.*)\))?\s*$")


def _bad(key: str, value: object, problem: str) -> ScenarioError:
    return ScenarioError(f"dist.{key} = {show(value, 60)}: {problem}")


def _number(text: str, key: str) -> float:
    """A law's parameter written in a ``dist`` string: a decimal or a fraction a/b (:func:`parse_number`)."""
    return parse_number(f"dist.{key}", text, fractions=True, error=ScenarioError)


def parse_paper_law(text: str) -> tuple[str, dict[str, float]]:
    """``"hyperexp(f=1/2, scv=15)"`` -> ``("hyperexp", {"f": 0.5, "scv": 15.0})`` (canonical name, parameters)."""
    match = _CALL.match(text) if isinstance(text, str) else None
    if match is None:
        raise ScenarioError(f"dist = {show(text, 60)}: not a law name; valid: {_VALID}")
    name = match.group(1).lower()
    name = _ALIASES.get(name, name)
    if name not in PAPER_LAWS:
        raise ScenarioError(f"dist = {show(text, 60)}: unknown distribution '{match.group(1)}'; valid: {_VALID}")
    keys = PAPER_LAWS[name]
    params: dict[str, float] = {}
    body = (match.group(2) or "").strip()
    for position, item in enumerate(filter(None, (part.strip() for part in body.split(",")))):
        if "=" in item:
            key, value = (part.strip() for part in item.split("=", 1))
            key = key.lower()
        elif position < len(keys):
            key, value = keys[position], item
        else:
            raise ScenarioError(f"dist = {show(text, 60)}: too many arguments; '{name}' takes ({', '.join(keys)})")
        if key not in keys:
            raise _bad(key, value, f"unknown parameter for '{name}'; valid: {', '.join(keys) or 'none'}")
        if key in params:  # given twice (by name, or by position and by name): never silently the last one
            raise ScenarioError(f"dist = {show(text, 60)}: '{key}' is given twice; give each parameter once")
        params[key] = _number(value, key)
    return name, params


def _real(params: Mapping[str, Any], key: str, *, low: float, high: float, low_open: bool = True,
          high_open: bool = True, default: float | None = None) -> float:
    if key not in params:
        if default is None:
            raise ScenarioError(f"dist.{key}: missing")
        return default
    return check_number(f"dist.{key}", params[key], low, None if high == math.inf else high, open_low=low_open,
                        open_high=high_open, error=ScenarioError)


def _order(params: Mapping[str, Any], key: str) -> int:
    if key not in params:
        raise ScenarioError(f"dist.{key}: missing")
    return check_number(f"dist.{key}", params[key], 1, MAX_PHASES, integer=True, error=ScenarioError,
                        why="phases: each costs a draw per job and a row of the PH matrix")


def z_epsilon(eps: float) -> HyperExponential:
    """The extremal two-phase law Z(ε) (proofs of Thm 4.7 and Prop 7.2): mean 1, f = ε.

    alpha = (1 − ε, ε), S = diag(−(1 − ε)/ε, −ε/(1 − ε)); y = P[Z < X] → 1 as ε → 0⁺ for X ~ Exp(δ).
    """
    eps = _real({"eps": eps}, "eps", low=0.0, high=1.0)
    return HyperExponential(rates=((1.0 - eps) / eps, eps / (1.0 - eps)), probs=(1.0 - eps, eps))


def paper_law(spec: str | Mapping[str, Any]) -> Distribution:
    """The mean-1 job-size law named as in the paper: a string (``"erlang(6)"``) or a mapping
    ``{"dist": "hypererlang", "k": 2, "l": 5, "p": 0.25}``. See the module docstring for the names."""
    if isinstance(spec, Mapping):
        if "dist" not in spec:
            raise ScenarioError(f"dist: missing; valid: {_VALID}")
        name, params = parse_paper_law(str(spec["dist"]))
        extra = {k: v for k, v in spec.items() if k != "dist"}
        for key in extra:
            if key not in PAPER_LAWS[name]:
                raise _bad(str(key), extra[key], f"unknown parameter for '{name}'; valid: "
                           f"{', '.join(PAPER_LAWS[name]) or 'none'}")
        params = {**params, **extra}
    else:
        name, params = parse_paper_law(spec)
    if name == "exp":
        return Exponential(rate=1.0)
    if name == "det":
        return Deterministic(value=1.0)
    if name == "erlang":
        k = _order(params, "k")
        return Erlang(k=k, rate=float(k))
    if name == "hypererlang":
        k, ell = _order(params, "k"), _order(params, "l")
        p = _real(params, "p", low=0.0, high=1.0)
        return HyperErlang(probs=(p, 1.0 - p), k=(k, ell), rates=(float(k), float(ell)))
    if name == "z":
        return z_epsilon(_real(params, "eps", low=0.0, high=1.0))
    scv = _real(params, "scv", low=1.0, high=math.inf, low_open=False)
    f = _real(params, "f", low=0.0, high=1.0, default=0.5)
    return HyperExponential.from_mean_scv(1.0, scv, f)


def ph_arrays(size: str | Mapping[str, Any] | Distribution | tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(alpha[n], S[n, n]) of a phase-type job-size law given by paper name, Distribution, or (alpha, S).

    Raises ``ScenarioError`` for a law that is not phase-type (deterministic, lognormal, ...).
    """
    if isinstance(size, tuple) and len(size) == 2 and not isinstance(size[0], str):
        alpha = np.asarray(size[0], dtype=np.float64).ravel()
        s = np.atleast_2d(np.asarray(size[1], dtype=np.float64))
        if s.shape != (alpha.size, alpha.size):
            raise ScenarioError(f"S: must be a square {alpha.size} x {alpha.size} matrix; got shape {s.shape}")
        return alpha, s
    dist = size if isinstance(size, Distribution) else paper_law(size)
    ph = dist.phase_type()
    if ph is None:
        raise ScenarioError(f"dist = {dist}: not phase-type; the cavity chains need PH(alpha, S) job sizes "
                            "(for deterministic sizes use the closed forms with y = exp(-delta), or erlang(k), "
                            "k large)")
    return np.asarray(ph.alpha, dtype=np.float64), np.asarray(ph.S, dtype=np.float64)
