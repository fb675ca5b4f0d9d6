"""Built-in dispatch scenarios (large-scale load balancing): one per table of the bounded-queue paper, and one more.

==============================  ======================================================================================
``lb-push-table1``              Table 1 (push): parameters servers, dist, lam, delta
``lb-water-filling-table2``     Table 2 (water filling): servers, dist, lam, delta, C (M = C·log10 N) or batch_size
``lb-pull-table3``              Table 3 (pull): servers, dist, lam, delta, delta1 (default 0: δ₀ = δ/(1 − λ))
``lb-pooling-table4``           Table 4 (resource pooling): servers, dist, lam, p
``lb-dispatch``                 no table: servers, dist, lam, and the policy's parameters
==============================  ======================================================================================

Any scenario also takes ``fast_fraction`` and ``speed_ratio``: a fast pool of ``fast_fraction``·N servers, each
``speed_ratio`` times as fast as the others, the mean speed 1 (so λ stays the load;
:func:`msjgym.systems.dispatch.model.pool_speeds`); with them the paper's tables and theory do not apply, and the
speed-aware dispatchers ``sed`` and ``sed-d`` differ from jsq and jsq-d.

Every scenario also takes the other policies' parameters (``d`` for jsq-d / least-loaded-d, ``delta``, ``delta0``
(pull: the idle servers' update rate, instead of ``delta``), ``delta1``,
``C`` / ``batch_size``, ``p``, ``remove``), so any of the 12 dispatch policies of
:mod:`msjgym.policies.dispatch` runs on any scenario: the scenario fixes N, λ and the job-size law.

Defaults: N = 100 and the table's first row. An omitted parameter comes from the table's row with the given ``dist``
(``--param dist=erlang(k=6)`` on Table 1 gives λ = 0.8, δ = 0.25), or from the first row when no row has that law.
``dist`` is a job-size law by the paper's name (:mod:`msjgym.systems.dispatch.distributions`: exp, hyperexp(f, scv),
erlang(k), hypererlang(k, l, p), z(eps), det). Giving ``batch_size`` drops the default ``C``.

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §8 Tables 1–4 (:mod:`msjgym.systems.dispatch.paper_tables`).
"""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from msjgym.core.distributions import Distribution
from msjgym.systems.dispatch.distributions import paper_law, parse_paper_law
from msjgym.systems.dispatch.params import require_load, water_filling_batch_size
from msjgym.core.limits import MAX_SERVERS
from msjgym.core.validation import check_int
from msjgym.core.validation import is_finite, show
from msjgym.errors import ScenarioError, UnknownParameter
from msjgym.api import Scenario
from msjgym.core.policy_registry import registered
from msjgym.systems.dispatch.model import DispatchModel, pool_speeds
from msjgym.systems.dispatch.paper_tables import TABLE_ROWS, TABLES, TableRow, settings

TABLE_SCENARIOS = {"lb-push-table1": 1, "lb-water-filling-table2": 2, "lb-pull-table3": 3, "lb-pooling-table4": 4}
"""Scenario name -> table number."""
GENERAL = "lb-dispatch"
DEFAULT_SERVERS = 100
KEYS = ("servers", "dist", "lam", "delta", "delta0", "delta1", "C", "batch_size", "p", "d", "remove", "fast_fraction",
        "speed_ratio")
"""Parameters every dispatch scenario accepts."""

SPEED_KEYS = ("fast_fraction", "speed_ratio")
"""Two pools of servers (:func:`msjgym.systems.dispatch.model.pool_speeds`): give both or neither."""
POLICY_KEYS = ("delta", "delta0", "delta1", "C", "batch_size", "p", "d", "remove")
"""The scenario keys that are policies' parameters: each policy reads some of them (:meth:`DispatchSetting.keys_read`),
and the system is the same whatever the others are."""


def policy_keys() -> dict[str, tuple[str, ...]]:
    """The scenario parameters each built-in policy reads: its declaration's parameters that a scenario sets."""
    return {name: tuple(p.name for p in spec.params if p.name in KEYS) for name, spec in registered("dispatch").items()}


_OPTIONAL = {"delta0", "delta1", "remove"}
_WHAT = {"delta": "probe/update rate per server, > 0", "batch_size": "water-filling batch size M (or C: "
         "M = C·log10 N), with K = (delta/lam)·M an integer", "p": "central server's share, in [0, 1)",
         "d": "sampled servers, an integer in [1, servers]"}

_HKV = "Hellemans, Kielanski & Van Houdt §8"
_DESCRIPTIONS = {
    "lb-push-table1": f"{_HKV} Table 1: push (dispatcher probes at rate δN, greedy on estimates), N servers, "
                      "Poisson λN, mean-1 jobs",
    "lb-water-filling-table2": f"{_HKV} Table 2: water filling (batches of M = C·log10 N tasks fill K = (δ/λ)M "
                               "sampled queues)",
    "lb-pull-table3": f"{_HKV} Table 3: pull (idle servers report at rate δ₀ = δ/(1 − λ); δ₁ = 0)",
    "lb-pooling-table4": f"{_HKV} Table 4: resource pooling (random routing, central server at rate pN on a "
                         "longest queue)",
    GENERAL: "N unit-rate FIFO servers behind one dispatcher, Poisson λN, any paper law; any of the 12 dispatch "
             "policies with its parameters (e.g. --policy jsq-d --param d=2); fast_fraction and speed_ratio: a fast "
             "and a slow pool",
}


def _law_key(dist: Any) -> tuple:
    """A comparable form of a law name: ("hyperexp", (("f", 0.5), ("scv", 15.0))); f defaults to 1/2."""
    name, params = parse_paper_law(dist)
    if name == "hyperexp":
        params.setdefault("f", 0.5)
    return name, tuple(sorted(params.items()))


def _same_law(a: Any, b: Any) -> bool:
    (na, pa), (nb, pb) = _law_key(a), _law_key(b)
    return na == nb and len(pa) == len(pb) and all(
        ka == kb and math.isclose(va, vb, rel_tol=1e-12) for (ka, va), (kb, vb) in zip(pa, pb))


@dataclass(frozen=True)
class DispatchSetting:
    """A dispatch scenario resolved: N, λ, the job-size law and the policies' parameters (None: not given).

    The policy is chosen when evaluating (:meth:`model`). ``batch_size`` is M (from ``scale`` C when given as C);
    ``table`` is the table whose rows supplied the defaults (None for ``lb-dispatch``).
    """

    servers: int
    dist_name: str
    dist: Distribution
    lam: float
    table: int | None = None
    delta: float | None = None
    delta0: float | None = None
    delta1: float | None = None
    scale: float | None = None
    batch_size: int | None = None
    p: float | None = None
    d: int | None = None
    remove: str | None = None
    fast_fraction: float | None = None
    speed_ratio: float | None = None
    defaulted: frozenset[str] = frozenset()
    """The policies' parameters that hold the scenario's defaults (not given by the user)."""

    @property
    def load(self) -> float:
        return self.lam * self.dist.mean

    @property
    def speeds(self) -> tuple[float, ...] | None:
        """The servers' speeds (fast pool first; mean 1), or None for unit-rate servers."""
        if self.fast_fraction is None:
            return None
        return pool_speeds(self.servers, self.fast_fraction, self.speed_ratio)

    @property
    def default_policy(self) -> str | None:
        """The table's policy (None for the general scenario)."""
        return None if self.table is None else TABLES[self.table]

    def policy_params(self, policy: str) -> dict[str, Any]:
        """The keyword parameters of :class:`DispatchModel` that ``policy`` reads from the setting."""
        keys = policy_keys()
        if policy not in keys:
            raise ScenarioError(f"policy = {policy!r}: unknown dispatch policy; valid: {', '.join(keys)}")
        out: dict[str, Any] = {}
        for key in keys[policy]:
            value = getattr(self, key)
            if key == "delta" and policy == "pull" and self.delta0 is not None:
                continue  # pull with the idle servers' rate delta0 given instead of the overall rate delta
            if value is None and key not in _OPTIONAL:
                raise ScenarioError(f"{key}: missing; policy '{policy}' needs it ({_WHAT[key]}): add --param "
                                    f"{'C' if key == 'batch_size' else key}=VALUE")
            if value is not None:
                out[key] = value
        return out

    def model(self, policy: str) -> DispatchModel:
        """The validated dispatch model of ``policy`` on this setting; a default the policy cannot use is said to be
        the scenario's default, with the flag that changes it."""
        try:
            return DispatchModel(policy, self.servers, self.lam, self.dist, speeds=self.speeds,
                                 **self.policy_params(policy))
        except ScenarioError as exc:
            name = str(exc).split(" =", 1)[0].split(":", 1)[0]
            if name in self.defaulted:
                raise ScenarioError(f"{exc}; {name} is the scenario's default here, not a value you gave: set it "
                                    f"with --param {name}=VALUE") from None
            raise

    def bound(self, values: Mapping[str, Any]) -> DispatchSetting:
        """This setting with a built-in policy's bound parameter values (``policy.bind(d=3)``) in place of the
        scenario's, exactly as if they were given as ``--param d=3``: ``batch_size`` replaces ``C``, ``delta``
        replaces a ``delta0`` and ``delta0`` a ``delta``. The values were checked by ``bind``; the model checks the
        rest (e.g. d <= servers) when the policy runs."""
        changes = dict(values)
        unknown = [key for key in changes if key not in KEYS]
        if unknown:
            raise ScenarioError(f"{unknown[0]}: not a parameter of a dispatch scenario; valid: {', '.join(KEYS)}")
        if "batch_size" in changes:
            changes["scale"] = None
        if "delta" in changes:
            changes.setdefault("delta0", None)
        elif "delta0" in changes:
            changes["delta"] = None
        return replace(self, **changes)

    def paper_row(self, policy: str) -> TableRow | None:
        """The row of Tables 1–4 this run reproduces (same policy, law, N, λ, δ or p, M; pull with δ₁ = 0; unit-rate
        servers)."""
        if self.speeds is not None:
            return None
        for row in TABLE_ROWS:
            if row.policy != policy or row.servers != self.servers or not _same_law(row.dist, self.dist_name):
                continue
            param = self.p if policy == "resource-pooling" else self.delta
            if param is None or not math.isclose(row.param, param) or not math.isclose(row.lam, self.lam):
                continue
            if policy == "pull" and ((self.delta1 or 0.0) != 0.0 or self.delta0 is not None):
                continue
            if policy == "water-filling" and self.batch_size != row.batch_size:
                continue
            return row
        return None

    def params(self, used: Collection[str] | None = None) -> dict[str, Any]:
        """The parameters as used (for the report): N, the law, λ, the pools' speeds, and the policies' parameters
        (``d``, ``delta``, ...): with ``used`` (the keys the run's dispatcher reads, :meth:`keys_read`) only those, so
        a report never shows a default its policy does not read (``d = 2`` beside JSQ); without it every one set."""
        out: dict[str, Any] = {"servers": self.servers, "dist": self.dist_name, "lam": self.lam}
        for key in ("delta", "delta0", "delta1", "scale", "batch_size", "p", "d", "remove", "fast_fraction", "speed_ratio"):
            value = getattr(self, key)
            shown = "C" if key == "scale" else key
            if value is not None and (used is None or key in SPEED_KEYS or
                                      (key if key != "scale" else "batch_size") in used):
                out[shown] = value
        return out

    def keys_read(self, policy: str) -> tuple[str, ...]:
        """The policies' parameters built-in ``policy`` runs with on this setting (:meth:`policy_params`: pull reads
        ``delta0`` instead of ``delta`` when it is given)."""
        return tuple(self.policy_params(policy))


def is_lb_scenario(name: str) -> bool:
    return name in TABLE_SCENARIOS or name == GENERAL


def list_lb_scenarios() -> list[tuple[str, str]]:
    return list(_DESCRIPTIONS.items())


def _defaults(name: str, dist: str | None) -> dict[str, Any]:
    """The scenario's defaults: from its table's row with law ``dist`` (else the first row); N = 100."""
    base: dict[str, Any] = {key: None for key in KEYS} | {"servers": DEFAULT_SERVERS, "d": 2}
    if name == GENERAL:
        return base | {"dist": "exp", "lam": 0.9}
    table = TABLE_SCENARIOS[name]
    rows = settings(table)
    row = next((r for r in rows if dist is not None and _same_law(r.dist, dist)), None)
    source = row or rows[0]
    base |= {"dist": source.dist, "lam": source.lam}
    if source.policy == "resource-pooling":
        base["p"] = source.param
    else:
        base["delta"] = source.param
    if source.policy == "pull":
        base["delta1"] = 0.0
    if source.policy == "water-filling":
        base["C"] = source.batch_scale
    return base


def load_lb_scenario(name: str, overrides: Mapping[str, object]) -> Scenario:
    """Resolve a dispatch built-in with ``overrides``; every error is a one-line ``ScenarioError``."""
    unknown = [key for key in overrides if key not in KEYS]
    if unknown:
        valid = ", ".join(KEYS)
        raise UnknownParameter(f"{name}: unknown parameter {unknown[0]!r}; valid parameters: {valid}", key=unknown[0])
    try:
        dist = overrides.get("dist")
        if dist is not None:
            _law_key(dist)  # an unknown law name fails here, naming the valid ones
        defaults = _defaults(name, None if dist is None else str(dist))
        merged = defaults | dict(overrides)
        if "batch_size" in overrides and "C" not in overrides:
            merged["C"] = None
        setting = _setting(name, merged, set(overrides))
        setting = replace(setting, defaulted=frozenset(k for k in ("d", "delta", "delta1", "p", "C") if k in defaults
                                                      and defaults[k] is not None and k not in overrides))
    except ScenarioError as exc:
        raise ScenarioError(f"{name}: {exc}") from None
    params = setting.params()
    return Scenario(name=name, family="dispatch", description=_DESCRIPTIONS[name], params=params, model=setting)


def _setting(name: str, p: dict[str, Any], given: set[str] | None = None) -> DispatchSetting:
    """The setting of scenario ``name`` with the merged parameters ``p``; the policies' parameters among ``given``
    (the user's, not the scenario's defaults: None, all) are checked now for every policy that reads them (a default
    such as d = 2 is checked only when a policy that uses it runs: JSQ on one server never sees it)."""
    servers = check_int("servers", p["servers"], 1, MAX_SERVERS, ScenarioError, "the engine keeps per-server state")
    dist_name = str(p["dist"])
    dist = paper_law(dist_name)
    lam = require_load(p["lam"])
    scale, batch = p["C"], p["batch_size"]
    if scale is not None and batch is not None:
        raise ScenarioError(f"C = {show(scale)}, batch_size = {show(batch)}: give one (M = C·log10 N)")
    if scale is not None:
        batch = water_filling_batch_size(scale, servers)
    fast, ratio = p["fast_fraction"], p["speed_ratio"]
    if (fast is None) != (ratio is None):
        raise ScenarioError(f"fast_fraction = {show(fast)}, speed_ratio = {show(ratio)}: give both (a fast and a "
                            "slow pool) or neither (unit-rate servers)")
    if fast is not None:
        pool_speeds(servers, fast, ratio)  # the one-line error naming the parameter
        fast, ratio = float(fast), float(ratio)
    setting = DispatchSetting(
        servers=servers, dist_name=dist_name, dist=dist, lam=lam, table=TABLE_SCENARIOS.get(name),
        delta=p["delta"], delta0=p["delta0"], delta1=p["delta1"], scale=scale, batch_size=batch, p=p["p"], d=p["d"], remove=p["remove"],
        fast_fraction=fast, speed_ratio=ratio)
    # a key every policy reads (servers, lam, dist, ...) given by the user: check every policy with it, as before
    per_policy = policy_keys()
    everyone = given is None or bool(given - {k for keys in per_policy.values() for k in keys})
    for key in per_policy:       # check every parameter the user set (e.g. delta <= 0, K not an integer) now
        if not everyone and not given & set(per_policy[key]):
            continue
        if all(getattr(setting, k) is not None or k in _OPTIONAL for k in per_policy[key]):
            if "d" in per_policy[key] and _integer_above(setting.d, servers):
                continue          # d > servers only matters for the policies that sample; refused when one is chosen
            setting.model(key)
    return setting


def _integer_above(value: object, bound: int) -> bool:
    """Whether ``value`` is an integer (an integral number) greater than ``bound``; anything else, even ``inf`` or a
    string, is checked (and refused) by the policy's model."""
    return is_finite(value) and float(value).is_integer() and value > bound
