"""Service-time distributions: validated specs, exact moments, a NumPy sampler, and encoding for the kernels.

A distribution is given in a scenario as a table such as ``{dist = "exp", rate = 1.0}`` and parsed by
:func:`from_spec`, which rejects anything invalid with a one-line :class:`~msjgym.errors.ScenarioError` naming the
key path and the valid range. All times are in the time units of the scenario (rates are per time unit).

Inside the compiled event loops a law is sampled by :func:`msjgym.core.sampling.sample` from the integer kind code
and float64 parameter block returned by :meth:`Distribution.encode` (or packed for several laws by
:func:`encode_all`); :meth:`Distribution.sample` is the NumPy reference sampler of the same law.
"""
from __future__ import annotations

import abc
import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from msjgym.core import sampling
from msjgym.core.inputs import read_user_text
from msjgym.core.limits import MAX_PHASES, TIME_RANGE
from msjgym.core.validation import is_finite, show
from msjgym.errors import ScenarioError

PROB_TOL = 1e-9
"""Probability vectors must sum to 1 within this tolerance."""

ROW_SUM_TOL = 1e-9
"""A PH row sum within ``ROW_SUM_TOL * |S_ii|`` of 0 is taken as 0 (no exit from that phase): float rounding."""

T = TypeVar("T")
_NO_VALUE = object()


# ----------------------------------------------------------------------------------------------------------------
# Validation helpers. They raise _FieldError with a key relative to the distribution's table; the caller that knows
# the full path (from_spec: `where`; a direct constructor call: the class name) renders the one-line message.
# ----------------------------------------------------------------------------------------------------------------

class _FieldError(ScenarioError):
    """An invalid key of a distribution table; rendered as ``<where>.<key> = <value>: <problem>``."""

    def __init__(self, key: str, problem: str, value: object = _NO_VALUE) -> None:
        super().__init__(key, problem)
        self.key = key
        self.problem = problem
        self.value = value
        self.where = ""

    def render(self, where: str) -> str:
        path = _path(where, self.key)
        shown = "" if self.value is _NO_VALUE else f" = {show(self.value, 60)}"
        return f"{path}{shown}: {self.problem}"

    def __str__(self) -> str:
        return self.render(self.where)


def _path(where: str, key: str) -> str:
    if not key:
        return where
    return f"{where}{key}" if key.startswith("[") or not where else f"{where}.{key}"


def _range_text(gt: float | None = None, ge: float | None = None,
                lt: float | None = None, le: float | None = None) -> str:
    lo = f"({gt:g}" if gt is not None else f"[{ge:g}" if ge is not None else ""
    hi = f"{lt:g})" if lt is not None else f"{le:g}]" if le is not None else ""
    if lo and hi:
        return f" in {lo}, {hi}"
    if lo:
        return f" > {gt:g}" if gt is not None else f" >= {ge:g}"
    if hi:
        return f" < {lt:g}" if lt is not None else f" <= {le:g}"
    return ""


def _real(value: Any, key: str, *, gt: float | None = None, ge: float | None = None,
          lt: float | None = None, le: float | None = None, note: str = "") -> float:
    """``value`` as a float, if it is a finite real number (not a bool or string) within the given bounds."""
    ok = (is_finite(value)
          and (gt is None or value > gt) and (ge is None or value >= ge)
          and (lt is None or value < lt) and (le is None or value <= le))
    if not ok:
        raise _FieldError(key, f"must be a finite number{_range_text(gt, ge, lt, le)}{note}", value)
    return float(value)


def _integer(value: Any, key: str, *, ge: int = 1) -> int:
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= ge):
        raise _FieldError(key, f"must be an integer >= {ge}", value)
    return int(value)


def _phases(value: Any, key: str, total: int = 0) -> int:
    """A number of phases: an integer in [1, MAX_PHASES] (refused before any per-phase array is built)."""
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 1 <= value <= MAX_PHASES - total):
        raise _FieldError(key, f"must be an integer in [1, {MAX_PHASES}] (phases, summed over branches: each costs a "
                               "draw per job and a row of the PH matrix)", value)
    return int(value)


def _vector(value: Any, key: str, what: str, item: Callable[[Any, str], T]) -> tuple[T, ...]:
    """A non-empty list, each entry checked by ``item(entry, 'key[i]')``."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) == 0:
        raise _FieldError(key, f"must be a non-empty list of {what}", value)
    return tuple(item(v, f"{key}[{i}]") for i, v in enumerate(value))


def _reals(value: Any, key: str, **bounds: float) -> tuple[float, ...]:
    return _vector(value, key, f"finite numbers{_range_text(**bounds)}", lambda v, k: _real(v, k, **bounds))


def _integers(value: Any, key: str, *, ge: int = 1) -> tuple[int, ...]:
    return _vector(value, key, f"integers >= {ge}", lambda v, k: _integer(v, k, ge=ge))


def _probabilities(value: Any, key: str, *, positive: bool = True) -> tuple[float, ...]:
    """A probability vector: entries in (0, 1] (or [0, 1] if not ``positive``) summing to 1 within PROB_TOL."""
    probs = _reals(value, key, **({"gt": 0.0} if positive else {"ge": 0.0}), le=1.0)
    total = math.fsum(probs)
    if abs(total - 1.0) > PROB_TOL:
        raise _FieldError(key, f"entries must sum to 1 (within {PROB_TOL:g}); they sum to {total!r}")
    return probs


def _same_length(key: str, values: Sequence, ref_key: str, ref: Sequence) -> None:
    if len(values) != len(ref):
        raise _FieldError(key, f"must have as many entries as '{ref_key}' ({len(ref)}); it has {len(values)}")


def _low_high(low: Any, high: Any, **low_bounds: float) -> tuple[float, float]:
    low = _real(low, "low", **low_bounds)
    if not (is_finite(high) and high > low):
        raise _FieldError("high", f"must be a finite number > low ({low:g})", high)
    return low, float(high)


def _required(params: Mapping, key: str, dist: str) -> Any:
    if key not in params:
        raise _FieldError(key, f"missing; required for dist '{dist}'")
    return params[key]


def _choose(params: Mapping, *options: str | tuple[str, ...]) -> int:
    """Index of the one option (a key, or a tuple of keys given together) present in ``params``."""
    groups = [(o,) if isinstance(o, str) else o for o in options]
    given = [i for i, keys in enumerate(groups) if any(k in params for k in keys)]
    if len(given) != 1:
        if all(len(keys) == 1 for keys in groups):
            raise _FieldError("", "give exactly one of " + " or ".join(f"'{k}'" for (k,) in groups))
        raise _FieldError("", "give either " + ", or ".join(" and ".join(f"'{k}'" for k in keys) for keys in groups))
    keys = groups[given[0]]
    for key in keys:
        if key not in params:
            partners = " and ".join(f"'{k}'" for k in keys if k != key)
            raise _FieldError(key, f"missing; required with {partners}")
    return given[0]


def _one_positive(params: Mapping, *keys: str) -> tuple[str, float]:
    """The one of ``keys`` present in ``params`` and its value, which must be a finite number > 0."""
    key = keys[_choose(params, *keys)]
    return key, _real(params[key], key, gt=0.0)


def _cumulative(probs: Sequence[float]) -> np.ndarray:
    """Cumulative probabilities, normalised, with every entry from the last positive one on exactly 1.0.

    ``searchsorted(cum, U, side='right')`` (NumPy) and ``sampling.pick`` (kernel) then never return a zero-probability
    index, whatever the rounding.
    """
    p = np.asarray(probs, dtype=np.float64)
    cum = np.cumsum(p) / math.fsum(p)
    cum[np.flatnonzero(p > 0.0)[-1]:] = 1.0
    return cum


def _branches(rng: np.random.Generator, probs: Sequence[float], size: int) -> np.ndarray:
    return np.searchsorted(_cumulative(probs), rng.random(size), side="right")


def _plain(value: Any) -> Any:
    """Tuples to lists (recursively), for TOML-shaped specs."""
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _g(x: float) -> str:
    return f"{x:.6g}"


def _gs(xs: Sequence[float]) -> str:
    return "[" + ", ".join(_g(x) for x in xs) + "]"


# ----------------------------------------------------------------------------------------------------------------
# The laws
# ----------------------------------------------------------------------------------------------------------------

class Distribution(abc.ABC):
    """A service-time law on [0, inf). Concrete laws are frozen dataclasses whose fields are their spec keys.

    Constructing one directly validates its fields (a bad field raises ``ScenarioError`` naming
    ``ClassName.field``); :func:`from_spec` also accepts the alternative parametrisations listed per law.
    """

    name: ClassVar[str]
    """Spec name (value of ``dist``)."""
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other accepted values of ``dist``."""
    spec_keys: ClassVar[tuple[str, ...]]
    """Keys accepted by :func:`from_spec` besides ``dist``."""

    def __post_init__(self) -> None:
        try:
            self._validate()
            self._check_moments()
        except _FieldError as error:
            error.where = type(self).__name__
            raise

    def _check_moments(self) -> None:
        """The mean within :data:`~msjgym.core.limits.TIME_RANGE` and a finite E[S^2]: a law whose moments over- or
        underflow float64 would give a silent 0, inf or NaN in the theory and the metrics, so it is refused."""
        low, high = TIME_RANGE
        try:
            mean = float(self.mean)
        except ZeroDivisionError:
            mean = math.nan
        except OverflowError:
            mean = math.inf
        if mean == math.inf:  # a law whose mean is infinite (or beyond float64): no run can estimate anything
            raise _FieldError("", "its mean is infinite (or overflows float64): a mean response time cannot be "
                                  "estimated; choose parameters with a finite mean")
        if not (math.isfinite(mean) and low <= mean <= high):
            raise _FieldError("", f"its mean {_g(mean)} is outside [{low:g}, {high:g}] time units, where moments and "
                                  "metrics stay exact in float64; rescale the time unit")
        try:
            second = float(self.second_moment)
        except (ZeroDivisionError, OverflowError):
            second = math.inf
        if not (math.isfinite(second) and second > 0):
            raise _FieldError("", f"its second moment E[S^2] = {_g(second)} overflows float64 (the variance is too "
                                  "large to simulate or compare honestly)")

    @abc.abstractmethod
    def _validate(self) -> None:
        """Check the fields and normalise them (floats, tuples) with ``_set``; raise ``_FieldError``."""

    def _set(self, **fields: Any) -> None:
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> Distribution:
        """Build from the spec keys (without ``dist``); default: the keys are exactly the fields."""
        for field in dataclasses.fields(cls):
            _required(params, field.name, cls.name)
        return cls(**params)

    @property
    @abc.abstractmethod
    def mean(self) -> float:
        """E[S], in time units."""

    @property
    @abc.abstractmethod
    def second_moment(self) -> float:
        """E[S^2], in squared time units."""

    @property
    def variance(self) -> float:
        return self.second_moment - self.mean**2

    @property
    def scv(self) -> float:
        """Squared coefficient of variation Var[S] / E[S]^2."""
        return self.variance / self.mean**2

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` i.i.d. draws (float64), the NumPy reference sampler."""

    @abc.abstractmethod
    def encode(self) -> tuple[int, np.ndarray]:
        """(kind code, float64 parameter block) for :func:`msjgym.core.sampling.sample`."""

    def phase_type(self) -> PhaseType | None:
        """An equivalent PH representation, or None if the law is not (finitely) phase-type."""
        return None

    def to_spec(self) -> dict[str, Any]:
        """TOML-shaped spec; ``from_spec(d.to_spec()) == d``."""
        spec: dict[str, Any] = {"dist": self.name}
        for field in dataclasses.fields(self):
            spec[field.name] = _plain(getattr(self, field.name))
        return spec

    @abc.abstractmethod
    def __str__(self) -> str:
        """Short human-readable form, e.g. ``Exp(rate=1)``."""


@dataclass(frozen=True)
class Exponential(Distribution):
    """Exponential law with ``rate`` > 0 per time unit (mean 1/rate, SCV 1). Spec: ``rate`` or ``mean``."""

    rate: float
    name = "exp"
    aliases = ("exponential",)
    spec_keys = ("rate", "mean")

    def _validate(self) -> None:
        self._set(rate=_real(self.rate, "rate", gt=0.0))

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> Exponential:
        key, value = _one_positive(params, "rate", "mean")
        return cls(rate=value if key == "rate" else 1.0 / value)

    @property
    def mean(self) -> float:
        return 1.0 / self.rate

    @property
    def second_moment(self) -> float:
        return 2.0 / self.rate**2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(1.0 / self.rate, size)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.EXP, np.array([1.0 / self.rate])

    def phase_type(self) -> PhaseType:
        return PhaseType(alpha=(1.0,), S=((-self.rate,),))

    def __str__(self) -> str:
        return f"Exp(rate={_g(self.rate)})"


@dataclass(frozen=True)
class Erlang(Distribution):
    """Erlang law: ``k`` >= 1 exponential phases, each of ``rate`` per time unit (mean k/rate, SCV 1/k).

    Spec: ``k`` and either ``rate`` (per phase) or ``mean`` (total).
    """

    k: int
    rate: float
    name = "erlang"
    spec_keys = ("k", "rate", "mean")

    def _validate(self) -> None:
        self._set(k=_phases(self.k, "k"), rate=_real(self.rate, "rate", gt=0.0))

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> Erlang:
        k = _phases(_required(params, "k", cls.name), "k")
        key, value = _one_positive(params, "rate", "mean")
        return cls(k=k, rate=value if key == "rate" else k / value)

    @property
    def mean(self) -> float:
        return self.k / self.rate

    @property
    def second_moment(self) -> float:
        return self.k * (self.k + 1) / self.rate**2

    @property
    def variance(self) -> float:
        return self.k / self.rate**2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.gamma(self.k, 1.0 / self.rate, size)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.ERLANG, np.array([self.k, 1.0 / self.rate])

    def phase_type(self) -> PhaseType:
        return _erlang_chain([1.0], [self.k], [self.rate])

    def __str__(self) -> str:
        return f"Erlang(k={self.k}, rate={_g(self.rate)})"


@dataclass(frozen=True)
class Deterministic(Distribution):
    """Deterministic service time ``value`` > 0 time units (SCV 0). Spec: ``value`` or ``mean``."""

    value: float
    name = "det"
    aliases = ("deterministic",)
    spec_keys = ("value", "mean")

    def _validate(self) -> None:
        self._set(value=_real(self.value, "value", gt=0.0))

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> Deterministic:
        return cls(value=_one_positive(params, "value", "mean")[1])

    @property
    def mean(self) -> float:
        return self.value

    @property
    def second_moment(self) -> float:
        return self.value**2

    @property
    def variance(self) -> float:
        return 0.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, self.value)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.DET, np.array([self.value])

    def __str__(self) -> str:
        return f"Det(value={_g(self.value)})"


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform law on [``low``, ``high``] time units, 0 <= low < high."""

    low: float
    high: float
    name = "uniform"
    spec_keys = ("low", "high")

    def _validate(self) -> None:
        low, high = _low_high(self.low, self.high, ge=0.0)
        self._set(low=low, high=high)

    @property
    def mean(self) -> float:
        return 0.5 * (self.low + self.high)

    @property
    def second_moment(self) -> float:
        return (self.low**2 + self.low * self.high + self.high**2) / 3.0

    @property
    def variance(self) -> float:
        return (self.high - self.low) ** 2 / 12.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.UNIFORM, np.array([self.low, self.high - self.low])

    def __str__(self) -> str:
        return f"Uniform(low={_g(self.low)}, high={_g(self.high)})"


@dataclass(frozen=True)
class HyperExponential(Distribution):
    """Mixture of exponentials: rate ``rates[i]`` (per time unit) with probability ``probs[i]``.

    Spec: ``rates`` and ``probs``, or ``mean``, ``scv`` >= 1 and optional ``f`` in (0, 1) (default 0.5) for the
    two-phase (f, SCV) parametrisation of :meth:`from_mean_scv`.
    """

    rates: tuple[float, ...]
    probs: tuple[float, ...]
    name = "hyperexp"
    aliases = ("h2", "hyperexponential")
    spec_keys = ("rates", "probs", "mean", "scv", "f")

    def _validate(self) -> None:
        rates = _reals(self.rates, "rates", gt=0.0)
        probs = _probabilities(self.probs, "probs")
        _same_length("probs", probs, "rates", rates)
        self._set(rates=rates, probs=probs)

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> HyperExponential:
        if _choose(params, ("rates", "probs"), ("mean", "scv")) == 1:
            return cls.from_mean_scv(params["mean"], params["scv"], params.get("f", 0.5))
        if "f" in params:
            raise _FieldError("f", "only valid with 'mean' and 'scv'", params["f"])
        return cls(rates=params["rates"], probs=params["probs"])

    @classmethod
    def from_mean_scv(cls, mean: float, scv: float, f: float = 0.5) -> HyperExponential:
        """Two-phase law with the given mean, SCV >= 1, and fraction ``f`` of the work in (short) phase 1.

        For mean 1 (Hellemans, Kielanski & Van Houdt, parametrisation of their ref. [10]), with
        R = sqrt((SCV-1)(SCV-1+8f(1-f))):
        mu1 = [SCV + 4f - 1 + R] / [2f(SCV+1)], mu2 = [SCV + 4(1-f) - 1 - R] / [2(1-f)(SCV+1)],
        p1 = f mu1, p2 = (1-f) mu2, so f = p1/mu1. mu2 is evaluated in the algebraically equal form
        4(1-f) / (SCV + 3 - 4f + R), free of cancellation at large SCV. Both rates are divided by ``mean``.
        SCV = 1 gives two phases of rate 1/mean: the exponential law.
        """
        mean = _real(mean, "mean", gt=0.0)
        scv = _real(scv, "scv", ge=1.0)
        f = _real(f, "f", gt=0.0, lt=1.0)
        if scv == 1.0:
            mu1 = mu2 = 1.0
        else:
            root = math.sqrt((scv - 1.0) * (scv - 1.0 + 8.0 * f * (1.0 - f)))
            mu1 = (scv + 4.0 * f - 1.0 + root) / (2.0 * f * (scv + 1.0))
            mu2 = 4.0 * (1.0 - f) / (scv + 3.0 - 4.0 * f + root)
        return cls(rates=(mu1 / mean, mu2 / mean), probs=(f * mu1, (1.0 - f) * mu2))

    @property
    def mean(self) -> float:
        return math.fsum(p / r for p, r in zip(self.probs, self.rates))

    @property
    def second_moment(self) -> float:
        return 2.0 * math.fsum(p / r**2 for p, r in zip(self.probs, self.rates))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        means = 1.0 / np.asarray(self.rates)
        return means[_branches(rng, self.probs, size)] * rng.standard_exponential(size)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.HYPEREXP, np.concatenate(
            ([len(self.rates)], _cumulative(self.probs), 1.0 / np.asarray(self.rates)))

    def phase_type(self) -> PhaseType:
        return _erlang_chain(self.probs, [1] * len(self.rates), self.rates)

    def __str__(self) -> str:
        if len(self.rates) == 2:
            f = self.probs[0] / self.rates[0] / self.mean
            return f"H2(mean={_g(self.mean)}, scv={_g(self.scv)}, f={_g(f)})"
        return f"H{len(self.rates)}(rates={_gs(self.rates)}, probs={_gs(self.probs)})"


@dataclass(frozen=True)
class HyperErlang(Distribution):
    """Mixture of Erlangs: with probability ``probs[i]``, ``k[i]`` phases each of rate ``rates[i]`` per time unit.

    Spec: ``probs``, ``k`` and either ``rates`` (per phase) or ``means`` (per branch, = k[i] / rates[i]).
    """

    probs: tuple[float, ...]
    k: tuple[int, ...]
    rates: tuple[float, ...]
    name = "hypererlang"
    spec_keys = ("probs", "k", "rates", "means")

    def _validate(self) -> None:
        probs = _probabilities(self.probs, "probs")
        k = _integers(self.k, "k")
        if sum(k) > MAX_PHASES:
            raise _FieldError("k", f"sum to {sum(k)} phases: must be at most {MAX_PHASES} (each phase costs a draw "
                                   "per job and a row of the PH matrix)")
        rates = _reals(self.rates, "rates", gt=0.0)
        _same_length("k", k, "probs", probs)
        _same_length("rates", rates, "probs", probs)
        self._set(probs=probs, k=k, rates=rates)

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> HyperErlang:
        probs = _required(params, "probs", cls.name)
        k = _required(params, "k", cls.name)
        if _choose(params, "rates", "means") == 0:
            return cls(probs=probs, k=k, rates=params["rates"])
        k = _integers(k, "k")
        means = _reals(params["means"], "means", gt=0.0)
        _same_length("means", means, "k", k)
        return cls(probs=probs, k=k, rates=tuple(ki / m for ki, m in zip(k, means)))

    @property
    def mean(self) -> float:
        return math.fsum(p * k / r for p, k, r in zip(self.probs, self.k, self.rates))

    @property
    def second_moment(self) -> float:
        return math.fsum(p * k * (k + 1) / r**2 for p, k, r in zip(self.probs, self.k, self.rates))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        branch = _branches(rng, self.probs, size)
        return rng.gamma(np.asarray(self.k)[branch], 1.0 / np.asarray(self.rates)[branch])

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.HYPERERLANG, np.concatenate(
            ([len(self.k)], _cumulative(self.probs), self.k, 1.0 / np.asarray(self.rates)))

    def phase_type(self) -> PhaseType:
        return _erlang_chain(self.probs, self.k, self.rates)

    def __str__(self) -> str:
        means = [k / r for k, r in zip(self.k, self.rates)]
        return f"HyperErlang(probs={_gs(self.probs)}, k={list(self.k)}, means={_gs(means)})"


@dataclass(frozen=True)
class PhaseType(Distribution):
    """Phase-type law PH(``alpha``, ``S``): time to absorption of a CTMC started in phase i w.p. alpha[i].

    ``S`` is the n x n sub-generator (rates per time unit): diagonal < 0, off-diagonal >= 0, row sums <= 0 (the
    exit rate of phase i is ``-sum_j S[i][j]``), and absorption reachable from every phase (S nonsingular).
    Mean alpha (-S)^-1 1, E[S^2] = 2 alpha S^-2 1.
    """

    alpha: tuple[float, ...]
    S: tuple[tuple[float, ...], ...]
    name = "ph"
    aliases = ("phase_type",)
    spec_keys = ("alpha", "S")

    def _validate(self) -> None:
        if isinstance(self.alpha, (Sequence, np.ndarray)) and len(self.alpha) > MAX_PHASES:
            raise _FieldError("alpha", f"has {len(self.alpha)} phases: must be at most {MAX_PHASES} (each phase costs "
                                       "a row of the PH matrix)")
        alpha = _probabilities(self.alpha, "alpha", positive=False)
        n = len(alpha)
        rows = _vector(self.S, "S", "rows", lambda row, key: _vector(row, key, "numbers", lambda x, _: x))
        if len(rows) != n or any(len(row) != n for row in rows):
            raise _FieldError("S", f"must be a square {n} x {n} matrix (n = number of entries of 'alpha')")
        matrix = tuple(
            tuple(_real(x, f"S[{i}][{j}]", lt=0.0, note=" (diagonal)") if i == j
                  else _real(x, f"S[{i}][{j}]", ge=0.0, note=" (off-diagonal)") for j, x in enumerate(row))
            for i, row in enumerate(rows))
        self._set(alpha=alpha, S=matrix)
        _check_absorbing(np.array(matrix), _exit_rates(np.array(matrix)))

    @cached_property
    def _matrix(self) -> np.ndarray:
        return np.array(self.S, dtype=np.float64)

    @cached_property
    def _moments(self) -> tuple[float, float]:
        minus_s = -self._matrix
        m1 = np.linalg.solve(minus_s, np.ones(len(self.alpha)))
        m2 = np.linalg.solve(minus_s, m1)
        alpha = np.asarray(self.alpha)
        return float(alpha @ m1), 2.0 * float(alpha @ m2)

    @cached_property
    def _chain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(initial cum[n], mean holding time[n], jump cum[n, n + 1] with column n = absorption)."""
        s = self._matrix
        n = len(self.alpha)
        total = -np.diag(s)
        jumps = np.hstack([s - np.diag(np.diag(s)), _exit_rates(s)[:, None]])
        return (_cumulative(self.alpha), 1.0 / total, np.array([_cumulative(row) for row in jumps]).reshape(n, n + 1))

    @property
    def mean(self) -> float:
        return self._moments[0]

    @property
    def second_moment(self) -> float:
        return self._moments[1]

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        start, hold, jumps = self._chain
        n = len(self.alpha)
        phase = np.searchsorted(start, rng.random(size), side="right")
        out = np.zeros(size)
        active = np.arange(size)
        while active.size:
            current = phase[active]
            out[active] += hold[current] * rng.standard_exponential(active.size)
            nxt = (rng.random(active.size)[:, None] >= jumps[current]).sum(axis=1)
            phase[active] = nxt
            active = active[nxt < n]
        return out

    def encode(self) -> tuple[int, np.ndarray]:
        start, hold, jumps = self._chain
        return sampling.PH, np.concatenate(([len(self.alpha)], start, hold, jumps.ravel()))

    def phase_type(self) -> PhaseType:
        return self

    def __str__(self) -> str:
        return f"PH(n={len(self.alpha)}, mean={_g(self.mean)}, scv={_g(self.scv)})"


def _exit_rates(s: np.ndarray) -> np.ndarray:
    """Exit rates -S 1, with row sums within ROW_SUM_TOL |S_ii| of 0 taken as 0; positive row sums rejected."""
    exits = -s.sum(axis=1)
    tol = ROW_SUM_TOL * np.abs(np.diag(s))
    for i in np.flatnonzero(exits < -tol):
        raise _FieldError(f"S[{i}]", f"row sum is {-exits[i]:g}; must be <= 0 (the exit rate is -row sum)")
    return np.where(exits > tol, exits, 0.0)


def _check_absorbing(s: np.ndarray, exits: np.ndarray) -> None:
    """Reject S unless every phase reaches absorption (for a sub-generator: iff S is nonsingular)."""
    absorbing = exits > 0.0
    while True:
        more = absorbing | ((s > 0.0) & absorbing[None, :]).any(axis=1)
        if (more == absorbing).all():
            break
        absorbing = more
    if not absorbing.all():
        stuck = int(np.flatnonzero(~absorbing)[0])
        raise _FieldError("S", f"absorption is not reachable from phase {stuck} (S is singular)")


def _erlang_chain(probs: Sequence[float], ks: Sequence[int], rates: Sequence[float]) -> PhaseType:
    """PH representation of the Erlang mixture: branch i is a chain of ks[i] phases of rate rates[i]."""
    n = int(sum(ks))
    alpha = np.zeros(n)
    s = np.zeros((n, n))
    first = 0
    for p, k, r in zip(probs, ks, rates):
        alpha[first] = p
        for j in range(first, first + k):
            s[j, j] = -r
            if j + 1 < first + k:
                s[j, j + 1] = r
        first += k
    return PhaseType(alpha=tuple(alpha), S=tuple(map(tuple, s)))


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Lognormal law: log S ~ Normal(``mu``, ``sigma``^2), S in time units (mean exp(mu + sigma^2/2)).

    Spec: ``mu`` and ``sigma`` > 0, or ``mean`` > 0 and ``scv`` > 0 (sigma^2 = log(1 + scv)).
    """

    mu: float
    sigma: float
    name = "lognormal"
    spec_keys = ("mu", "sigma", "mean", "scv")

    def _validate(self) -> None:
        self._set(mu=_real(self.mu, "mu"), sigma=_real(self.sigma, "sigma", gt=0.0))

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> LogNormal:
        if _choose(params, ("mean", "scv"), ("mu", "sigma")) == 1:
            return cls(mu=params["mu"], sigma=params["sigma"])
        mean = _real(params["mean"], "mean", gt=0.0)
        var_log = math.log1p(_real(params["scv"], "scv", gt=0.0))
        return cls(mu=math.log(mean) - 0.5 * var_log, sigma=math.sqrt(var_log))

    @property
    def mean(self) -> float:
        return math.exp(self.mu + 0.5 * self.sigma**2)

    @property
    def second_moment(self) -> float:
        return math.exp(2.0 * self.mu + 2.0 * self.sigma**2)

    @property
    def variance(self) -> float:
        return self.mean**2 * self.scv

    @property
    def scv(self) -> float:
        return math.expm1(self.sigma**2)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.lognormal(self.mu, self.sigma, size)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.LOGNORMAL, np.array([self.mu, self.sigma])

    def __str__(self) -> str:
        return f"LogNormal(mean={_g(self.mean)}, scv={_g(self.scv)})"


@dataclass(frozen=True)
class BoundedPareto(Distribution):
    """Bounded Pareto law on [``low``, ``high``] time units: density proportional to x^-(alpha+1), ``alpha`` > 0.

    0 < low < high. Sampled by inversion: S = low (1 - U (1 - (low/high)^alpha))^(-1/alpha).
    """

    alpha: float
    low: float
    high: float
    name = "bpareto"
    aliases = ("bounded_pareto",)
    spec_keys = ("alpha", "low", "high")

    def _validate(self) -> None:
        alpha = _real(self.alpha, "alpha", gt=0.0)
        low, high = _low_high(self.low, self.high, gt=0.0)
        self._set(alpha=alpha, low=low, high=high)

    @property
    def _log_ratio(self) -> float:
        return math.log(self.high / self.low)

    @property
    def _mass(self) -> float:
        """1 - (low/high)^alpha, the normalising constant of the truncated tail."""
        return -math.expm1(-self.alpha * self._log_ratio)

    def _moment(self, j: int) -> float:
        """E[S^j] = alpha low^j / (1 - (low/high)^alpha) * ((high/low)^(j-alpha) - 1) / (j - alpha).

        The last factor is log(high/low) at j = alpha (the alpha = 1 and alpha = 2 cases); expm1 keeps it accurate
        near there.
        """
        d = j - self.alpha
        lr = self._log_ratio
        factor = lr if d == 0.0 else math.expm1(d * lr) / d
        return self.alpha / self._mass * self.low**j * factor

    @property
    def mean(self) -> float:
        return self._moment(1)

    @property
    def second_moment(self) -> float:
        return self._moment(2)

    @property
    def tail_index(self) -> float:
        """α, the index of the (truncated) power tail: α <= 2 would be an infinite variance without the bound
        ``high``, so the variance is finite but carried by the rare jobs near ``high`` (docs/statistics.md#checks)."""
        return self.alpha

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.low * (1.0 - rng.random(size) * self._mass) ** (-1.0 / self.alpha)

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.BPARETO, np.array([self.low, self._mass, -1.0 / self.alpha])

    def __str__(self) -> str:
        return f"BPareto(alpha={_g(self.alpha)}, low={_g(self.low)}, high={_g(self.high)})"


@dataclass(frozen=True)
class Empirical(Distribution):
    """Resampling (uniformly, with replacement) of ``values`` >= 0 time units, not all 0; moments are the sample's.

    Spec: ``values`` (list) or ``file`` (one number per line; blank lines and '#' lines ignored; a relative path is
    resolved against the scenario's directory). ``to_spec`` gives ``values``.
    """

    values: tuple[float, ...]
    name = "empirical"
    spec_keys = ("values", "file")

    def _validate(self) -> None:
        values = _reals(self.values, "values", ge=0.0)
        if not any(values):
            raise _FieldError("values", "must not all be 0")
        self._set(values=values)

    @classmethod
    def _from_params(cls, params: Mapping[str, Any], base_dir: Path | None) -> Empirical:
        if _choose(params, "values", "file") == 0:
            return cls(values=params["values"])
        return cls(values=_read_values(params["file"], base_dir))

    @cached_property
    def _array(self) -> np.ndarray:
        return np.array(self.values, dtype=np.float64)

    @property
    def mean(self) -> float:
        return float(self._array.mean())

    @property
    def second_moment(self) -> float:
        return float(np.mean(self._array**2))

    @property
    def variance(self) -> float:
        return float(self._array.var())

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self._array[rng.integers(0, len(self.values), size)]

    def encode(self) -> tuple[int, np.ndarray]:
        return sampling.EMPIRICAL, np.concatenate(([len(self.values)], self._array))

    def __str__(self) -> str:
        return f"Empirical(n={len(self.values)}, mean={_g(self.mean)}, scv={_g(self.scv)})"


MAX_VALUES_BYTES = 256 * 2**20
"""An empirical law's values file: read into memory (a Python float a value); 256 MiB is ~2·10^7 values."""


def _read_values(file: Any, base_dir: Path | None) -> tuple[float, ...]:
    """The numbers of a values file: one per line, each finite and >= 0, not all 0."""
    if not isinstance(file, (str, os.PathLike)):
        raise _FieldError("file", "must be a path (string)", file)
    path = Path(file)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    try:
        lines = read_user_text(path, "values file", MAX_VALUES_BYTES, ScenarioError).splitlines()
    except ScenarioError as exc:
        raise _FieldError("file", str(exc).partition(": ")[2], file) from None
    values = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0.0):
            raise _FieldError("file", f"line {number} of {path}: {show(text, 60)} is not a finite number >= 0", file)
        values.append(value)
    if not any(values):
        raise _FieldError("file", f"{path} has no value > 0", file)
    return tuple(values)


# ----------------------------------------------------------------------------------------------------------------
# Specs and encoding
# ----------------------------------------------------------------------------------------------------------------

LAWS: tuple[type[Distribution], ...] = (
    Exponential, Erlang, Deterministic, Uniform, HyperExponential, HyperErlang, PhaseType, LogNormal, BoundedPareto,
    Empirical,
)
_BY_NAME: dict[str, type[Distribution]] = {n: law for law in LAWS for n in (law.name, *law.aliases)}
_VALID_NAMES = ", ".join(law.name for law in LAWS)


def _law(spec: Mapping[str, Any]) -> type[Distribution]:
    if "dist" not in spec:
        raise _FieldError("dist", f"missing; valid: {_VALID_NAMES}")
    name = spec["dist"]
    if not isinstance(name, str) or name not in _BY_NAME:
        raise _FieldError("dist", f"unknown distribution; valid: {_VALID_NAMES}", name)
    return _BY_NAME[name]


def from_spec(spec: Mapping[str, Any], where: str = "service", base_dir: Path | None = None) -> Distribution:
    """Parse and validate a distribution table; ``where`` is its key path, used in error messages.

    Raises ``ScenarioError`` with a one-line message naming the offending key path and the valid range.
    """
    if not isinstance(spec, Mapping):
        raise ScenarioError(f"{where} = {show(spec, 60)}: must be a table with a 'dist' key, "
                            "e.g. {dist = \"exp\", rate = 1.0}")
    try:
        law = _law(spec)
        params = {key: value for key, value in spec.items() if key != "dist"}
        for key in params:
            if key not in law.spec_keys:
                valid = ", ".join(law.spec_keys)
                raise _FieldError(str(key), f"unknown key for dist '{law.name}'; valid keys: {valid}")
        return law._from_params(params, base_dir)
    except _FieldError as error:
        raise ScenarioError(error.render(where)) from None


def encode_all(dists: Sequence[Distribution]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kinds int64[K], starts int64[K], data float64[D]): law k is encoded at ``data[starts[k]:]``."""
    kinds = np.empty(len(dists), dtype=np.int64)
    starts = np.empty(len(dists), dtype=np.int64)
    blocks = []
    offset = 0
    for k, dist in enumerate(dists):
        kinds[k], block = dist.encode()
        starts[k] = offset
        blocks.append(np.asarray(block, dtype=np.float64))
        offset += len(block)
    data = np.concatenate(blocks) if blocks else np.empty(0, dtype=np.float64)
    return kinds, starts, data
