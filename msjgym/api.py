"""The small protocols every system family implements, and the registry that finds the families.

msjgym simulates several *families* of systems (multiserver jobs, large-scale dispatch, loss systems with adaptive
jobs, the finite-skip models, ...). Each family lives in one subpackage ``msjgym.systems.<family>`` and exposes one
object, ``FAMILY``, implementing :class:`Family`. Everything shared (the evaluator, the command line, sweeps, plots,
environment registration) asks the registry, never names a family:

>>> from msjgym import api
>>> family = api.family_of("one-and-n")          # the family that owns a scenario name or TOML file
>>> scenario = family.load("one-and-n", {"servers": 16})

A family is found by :func:`families`: every subpackage of :mod:`msjgym.systems` whose module ``family`` defines
``FAMILY``, then every object registered under the ``msjgym.families`` entry-point group (a family shipped in another
package), in the order of their ``order`` attribute. Adding a family is one folder under ``msjgym/systems/`` (see ``docs/extending.md``).
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from msjgym.core.paths import path_kind, shown
# Param and PolicySpec are defined beside the registry of built-in policies (not here) so that the compile keys of
# the event loops and policies, which import them, do not depend on this module (docs/compile-machinery.md)
from msjgym.core.policy_registry import Param, PolicySpec  # noqa: F401 (Param: public, re-exported)
from msjgym.core.validation import check_number, show
from msjgym.errors import MsjgymError, PolicyError, ScenarioError, UnknownParameter

RUNNING = 0
"""Status of a replication that has more events to run."""
DONE = 1
"""Status of a replication that ran its measured jobs."""
UNSTABLE = 2
"""Status of a replication stopped because its number in system kept growing."""


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario of one family.

    Attributes:
        name: the built-in name, or the file path as given.
        family: the name of the family that owns it (``msj``, ``dispatch``, ``loss``, ``finite-skip``, ...).
        description: one line.
        params: its parameters after overrides (a built-in: defaults filled in; a file: the whole spec).
        model: the family's validated model.
        regime: the scaling sequence the scenario belongs to, when it has one (the scorecard classifies it).
    """

    name: str
    family: str
    description: str
    params: dict
    model: Any
    regime: Any = None


@dataclass(frozen=True)
class RunSettings:
    """How long and how many times to simulate: what ``msjgym evaluate`` and sweeps pass to a family.

    ``None`` means the family's default (see each family's ``run_settings``). ``options`` holds the family-specific
    switches of ``msjgym evaluate`` (``saturated``, ``observation``, ``mode``, ...), by option name.
    """

    reps: int | None = None
    jobs: int | None = None
    warmup: int | None = None
    batches: int = 20
    seed: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


POLICY_KINDS = ("any", "builtin", "user")
"""The values of :attr:`Option.policies`."""


@dataclass(frozen=True)
class Option:
    """A switch that a family declares for ``msjgym evaluate`` and ``msjgym sweep`` (:meth:`Family.options`), or a
    reproduction for ``msjgym reproduce NAME``: the command line builds its flags from these declarations and names
    no family.

    Attributes:
        name: the key: the flag is ``--`` + name with ``_`` as ``-`` (:attr:`flag`), the keyword of
            ``msjgym.evaluate(..., name=value)``, the key of :attr:`RunSettings.options` (or of a reproduction's
            ``Settings.options``).
        help: one line, with units.
        type: ``bool`` for a switch (a flag without a value: True when given), else ``int``, ``float`` or ``str``.
        default: its value when not given (None: the family's default, which ``help`` states).
        choices: the valid values (empty: any value of ``type`` in [low, high]).
        low, high: the valid closed range of a number (None: unbounded on that side).
        scenario_key: where it goes: None for :attr:`RunSettings.options` ``[name]``; a dotted scenario key
            (``arrivals.skip_bad_lines``) for an option that is a scenario override (the command line merges it into
            the ``--param`` overrides).
        metavar: the value's placeholder in ``--help`` (default: the name in capitals).
        writes: the :class:`msjgym.evaluate.result.Result` attribute whose columns the command line writes, as CSV,
            to the file this option names (``per_job``); such an option is an output path (checked before the run,
            never one of the run's inputs) and is not offered by ``msjgym sweep``.
        command_line: False for an option of the Python API only (``debug``), not offered as a flag.
        many: the value is a non-empty list of such values (``--servers 100,1000``; a tuple in Python).
        policies: which policies it applies to: ``"any"``; ``"builtin"``, the family's built-ins (and the compiled
            policies of the user's, which run as built-ins do); ``"user"``, a policy of the user's that decides in
            Python through an observation (``FILE.py:NAME``, ``sb3:MODEL.zip``, ``rllib:CHECKPOINT_DIR``). Checked
            by :func:`check_options` when the family says which kind the run's policy is.
    """

    name: str
    help: str
    type: type = bool
    default: Any = None
    choices: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    scenario_key: str | None = None
    metavar: str | None = None
    writes: str | None = None
    command_line: bool = True
    many: bool = False
    policies: str = "any"

    def __post_init__(self) -> None:
        if self.policies not in POLICY_KINDS:
            raise ValueError(f"option {self.name}: policies = {self.policies!r}; valid: {', '.join(POLICY_KINDS)}")

    @property
    def flag(self) -> str:
        """The command-line flag: ``--window``, ``--bsld-threshold``."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """``value`` if valid for this option; else a one-line ``MsjgymError`` naming the flag and the valid
        values (:func:`msjgym.core.validation.check_number` for numbers)."""
        if self.many:
            if not isinstance(value, (tuple, list)) or not value:
                raise MsjgymError(f"{self.flag} = {show(value)}: must be a non-empty list of values")
            single = replace(self, many=False)
            return tuple(single.check(v) for v in value)
        if self.type is bool:
            if not isinstance(value, bool):
                raise MsjgymError(f"{self.flag} = {show(value)}: must be True or False (a switch)")
            return value
        if self.choices:
            if value not in self.choices:
                raise MsjgymError(f"{self.flag} = {show(value)}: must be one of {', '.join(map(str, self.choices))}")
            return value
        if self.type in (int, float):
            return check_number(self.flag, value, self.low, self.high, integer=self.type is int, why=self.help)
        if not isinstance(value, self.type):
            raise MsjgymError(f"{self.flag} = {show(value)}: must be a {self.type.__name__}")
        return value


def options_of(family_: Family) -> tuple[Option, ...]:
    """The options ``family_`` declares (none when it has no ``options`` method: a family of another package may
    predate it)."""
    declare = getattr(family_, "options", None)
    return tuple(declare()) if declare is not None else ()


def keys_not_read(family_: Family, scenario: Scenario, policy: Any) -> frozenset[str]:
    """The scenario keys (as a user names them) that ``policy``'s runs on ``scenario`` do not read, so that they are
    the same whatever their values (dispatch: ``d`` under JSQ; a table's name stands for its dotted keys: ``estimate``
    for ``estimate.factor``); the family's ``keys_not_read(scenario, policy)``,
    none when it has no such method. ``msjgym sweep`` runs such a policy once across a grid axis of them."""
    declare = getattr(family_, "keys_not_read", None)
    return frozenset(declare(scenario, policy)) if declare is not None else frozenset()


def command_aliases(family_: Family) -> tuple[str, ...]:
    """The other names under which ``family_`` keeps ``msjgym evaluate`` for scripts (its ``command_aliases``;
    none by default)."""
    declare = getattr(family_, "command_aliases", None)
    return tuple(declare()) if declare is not None else ()


def check_options(family_: Family, options: Mapping[str, Any], scenario_options: bool = False,
                  user: bool | None = None) -> dict[str, Any]:
    """``options`` (by name) checked against ``family_``'s declarations, the one place that does it: each valid for
    its option (:meth:`Option.check`); an option the family does not declare is a one-line ``MsjgymError`` naming the
    flag and the families that have it. A scenario-key option (:attr:`Option.scenario_key`) is refused unless
    ``scenario_options`` (it belongs in the scenario's overrides). ``user`` (given by the family's ``validate``,
    which knows how its policies run): whether the run's policy is a policy of the user's deciding through an
    observation; an option declared for the other kind (:attr:`Option.policies`) is then a one-line error. Returns
    the checked options."""
    own = {o.name: o for o in options_of(family_)}
    checked = {}
    for name, value in options.items():
        option = own.get(name)
        if option is None:
            raise MsjgymError(f"{Option(name, '').flag}: not for {family_.name} scenarios; {_owners(name)}")
        if option.scenario_key is not None and not scenario_options:
            raise MsjgymError(f"{option.flag}: a scenario key; give it when loading the scenario: "
                              f"load_scenario(NAME, {{{option.scenario_key!r}: {value!r}}})")
        checked[name] = option.check(value)
        if user is not None and option.policies == "user" and not user:
            raise MsjgymError(f"{option.flag}: only for a policy of your own (FILE.py:NAME, sb3:MODEL.zip, "
                              "rllib:CHECKPOINT_DIR)")
        if user is not None and option.policies == "builtin" and user:
            raise MsjgymError(f"{option.flag}: only for built-in policies")
    return checked


def _owners(name: str) -> str:
    """Which families declare the option ``name``, for an error message."""
    owners = [f for f in families() if any(o.name == name for o in options_of(f))]
    if not owners:
        return "no family has it (see `msjgym evaluate --help`)"
    return "only for " + ", ".join(
        f"{f.name} scenarios ({', '.join(n for n, _ in f.scenarios()[:3])}{', ...' if len(f.scenarios()) > 3 else ''})"
        for f in owners)


@dataclass(frozen=True)
class Smoke:
    """A family's smallest complete run, declared on the family (its ``smoke`` attribute): the shared tests run it
    for every family the registry finds (:func:`smoke_case`), so a new family is covered without editing a test.

    Attributes:
        scenario: a built-in scenario of the family. overrides: its ``--param`` overrides that make it small.
        policy: a built-in policy that runs on it. options: the family's options (:meth:`Family.options`, by name)
            for that run. reps, jobs: a tiny run's replications and measured units per replication.
        user_options: the options under which a policy of the user's (``FILE.py:NAME``, ``act(observation)``) runs
            on it; None when the family runs its built-in policies only.
    """

    scenario: str
    policy: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    reps: int = 2
    jobs: int = 300
    user_options: Mapping[str, Any] | None = None

    def flags(self, options: Mapping[str, Any]) -> list[str]:
        """``options`` as ``msjgym evaluate`` flags: ``{"mode": "start"}`` -> ``["--mode", "start"]`` (a switch: its
        flag alone when True), with the overrides as ``--param KEY=VALUE``."""
        argv = [f for k, v in self.overrides.items() for f in ("--param", f"{k}={v}")]
        for name, value in options.items():
            flag = Option(name, "").flag
            argv += [flag] if value is True else [] if value is False else [flag, str(value)]
        return argv


def smoke_case(family_: Family) -> Smoke:
    """``family_``'s smoke case (its ``smoke`` attribute); a one-line ``MsjgymError`` when it declares none."""
    smoke = getattr(family_, "smoke", None)
    if not isinstance(smoke, Smoke):
        raise MsjgymError(f"family {family_.name!r} declares no smoke case: give its family object a "
                          "`smoke = msjgym.api.Smoke(scenario, policy, ...)` attribute (docs/extending.md)")
    return smoke


Side = str | float | Callable[[Mapping[str, float]], float]
"""One side of an :class:`Invariant`: the name of a value in a measurement unit (a metric, or a quantity of
:meth:`Simulation.check_values`), a constant, or a function of the unit's values."""


@dataclass(frozen=True)
class Invariant:
    """A run-time check that needs no theory and holds for any policy, declared by a family for one run and judged
    by :mod:`msjgym.evaluate.checks` over the run's measurement units (replications, or batches of one replication).

    Attributes:
        name: short identifier (``work_arrived``, ``little[c1]``, ...), unique within the run.
        description: what is compared, in a few words (with the quantities' formulas).
        measured: the measured side (a unit value name, a constant or a function of the unit's values).
        expected: the side it must equal (``relation`` "=") or not fall below (">=").
        relation: "=" or ">=".
        allowance: relative slack for the finite window's edge effects (a fraction of the expected side's mean):
            0 for a comparison that holds exactly in every unit, as sampled work against a declared mean does; or a
            function of a unit's values giving that fraction (averaged over the units), when the edge effects
            depend on the run (the jobs in system at the window's ends against the jobs measured).
    """

    name: str
    description: str
    measured: Side
    expected: Side
    relation: str = "="
    allowance: float | Callable[[Mapping[str, float]], float] = 0.0


class Simulation:
    """Replications of one policy on one scenario, built by a family and run by the shared evaluator
    (:func:`msjgym.evaluate.evaluate`). A family subclasses it and implements the methods that raise here.

    Attributes (set by the family):
        name: the policy's display name. reps: replications. jobs, warmup: measured and discarded units per
        replication; per_rep: units a replication processes (for the progress bar); unit: what they are
        (``job``, ``arrival``). batches: measurement batches per replication (0: none). mode: ``open`` or
        ``saturated``. chunk: events per :meth:`advance` call between progress-bar updates. exact: the run is one
        replay of a fixed input (a trace): its metrics are exact values, reported without an interval, and its
        checks are judged without sampling error.
    """

    name: str = ""
    reps: int = 1
    jobs: int = 0
    warmup: int = 0
    per_rep: int = 1
    unit: str = "job"
    batches: int = 0
    mode: str = "open"
    chunk: int = 1 << 18
    exact: bool = False

    def prepare(self) -> None:
        """Compile or load the kernels (timed apart from the simulation); nothing by default."""

    def compile_note(self) -> str | None:
        """A line saying what :meth:`prepare` is about to compile and roughly how long it takes, when it will
        compile (None: its kernels are cached, or the family cannot tell; a generic note follows a slow prepare)."""
        return None

    def advance(self, rep: int, max_events: int) -> int:
        """Run replication ``rep`` for up to ``max_events`` events (or to its end); returns :meth:`status`."""
        raise NotImplementedError

    def status(self, rep: int) -> int:
        """:data:`RUNNING`, :data:`DONE` or :data:`UNSTABLE`."""
        raise NotImplementedError

    def progress(self, rep: int) -> int:
        """Units processed so far by replication ``rep``."""
        raise NotImplementedError

    def events(self, rep: int) -> int:
        """Events simulated by replication ``rep``."""
        raise NotImplementedError

    def growth_rate(self, rep: int) -> float:
        """The growth rate (jobs per unit time) of the number in system of an unstable replication."""
        return float("nan")

    def metrics(self, rep: int) -> dict[str, float]:
        """Replication ``rep``'s metric values (called once every replication has ended)."""
        raise NotImplementedError

    def batch_metrics(self, rep: int) -> list[dict[str, float]]:
        """Replication ``rep``'s values per measurement batch, for CIs from batch means when there is one
        replication; empty when the family has no batches (the single replication's CIs are then NaN)."""
        return []

    def diagnostics(self) -> dict[str, float]:
        """Family-specific checks of the whole run (pathwise invariants, ...); none by default."""
        return {}

    def per_job(self) -> dict | None:
        """Per-job columns of a replayed trace (replication 0); None by default."""
        return None

    def invariants(self) -> list[Invariant]:
        """The run-time invariants of this run (work conservation, response >= service, Little's law), judged by
        the evaluator after the run (:mod:`msjgym.evaluate.checks`); none by default."""
        return []

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        """Quantities the :meth:`invariants` read that are not metrics (the mean sampled work per job, ...), of
        replication ``rep`` (or of its measurement batch ``batch``); none by default."""
        return {}

    def service_laws(self) -> list[tuple[str, Any]]:
        """(label, law) of each service-time law the run samples (for the heavy-tail notes); none by default."""
        return []

    def summary_params(self) -> dict:
        """Model quantities to report beside the scenario's parameters (the load, the arrival rate, ...)."""
        return {}

    def run_params(self) -> dict | None:
        """The scenario's parameters as this run uses them, for the report (None: the scenario's ``params``): a
        scenario that holds every policy's parameters (dispatch: ``d``, ``delta``, ...) shows only those the run's
        policy reads, with the values it runs with (bound ones included)."""
        return None

    def notes(self) -> list[str]:
        """Lines for the report below the table (what a replayed trace skipped, ...); none by default."""
        return []


@runtime_checkable
class Family(Protocol):
    """A family of systems: its scenarios, policies, simulation, theory and environments."""

    name: str
    """Short name (``msj``), used in results and the ``system = ...`` key of scenario files."""
    title: str
    """One line for ``msjgym list``."""
    order: int
    """Position in listings (smaller first)."""
    env_ids: tuple[str, ...]
    """The Gymnasium ids of its environments (registered by :mod:`msjgym.envs`)."""
    smoke: Smoke
    """Its smallest complete run, which the shared tests run for every family (:class:`Smoke`)."""

    def scenarios(self) -> list[tuple[str, str]]:
        """Its built-in scenarios: (name, one-line description)."""

    def owns(self, name: str) -> bool:
        """Whether ``name`` (a built-in name or a scenario file) is one of its scenarios."""

    def load(self, name: str, overrides: Mapping[str, Any]) -> Scenario:
        """The scenario ``name`` with ``--param`` overrides, validated (``ScenarioError`` otherwise)."""

    def policies(self) -> Mapping[str, PolicySpec]:
        """Its built-in policies by name."""

    def validate(self, scenario: Scenario, policy: str, run: RunSettings) -> None:
        """Raise a one-line ``MsjgymError`` if ``policy`` cannot run on ``scenario`` with ``run``'s options.

        The caller validates once (:func:`msjgym.evaluate.evaluate` does, before anything else): :meth:`references`
        and :meth:`simulation` are called only with a validated (scenario, policy, run) and do not validate again."""

    def run_length(self, scenario: Scenario, policy: str, run: RunSettings) -> tuple[int, int, int]:
        """(reps, jobs, warm-up) that :meth:`simulation` will use, the family's defaults filled in."""

    def simulation(self, scenario: Scenario, policy: str, run: RunSettings, seed: int) -> Simulation:
        """Replications of ``policy`` (a built-in name, ``FILE.py:NAME``, ``sb3:MODEL.zip`` or
        ``rllib:CHECKPOINT_DIR``) on ``scenario``
        with the replication streams of ``SeedSequence(seed).spawn(reps)``."""

    def default_policy(self, scenario: Scenario) -> str | None:
        """The policy ``msjgym theory`` shows when none is given (None: the scenario has none)."""

    def references(self, scenario: Scenario, policy: str, run: RunSettings) -> list:
        """The theory's references for ``policy`` on ``scenario`` (before simulating)."""

    def judge(self, scenario: Scenario, references: list, result: Any) -> list:
        """``references`` with verdicts against ``result``."""

    def options(self) -> tuple[Option, ...]:
        """Its own switches of ``msjgym evaluate`` and ``msjgym sweep`` (``--window``, ``--saturated``, ...), which
        arrive in :attr:`RunSettings.options` (or, for a scenario-key option, in the scenario's overrides). The
        evaluator refuses an option the family does not declare (:func:`check_options`) before :meth:`validate`."""


_FAMILIES: list[Family] | None = None


def families() -> list[Family]:
    """Every registered family, in listing order (discovered once)."""
    global _FAMILIES
    if _FAMILIES is None:
        found: list[Family] = []  # found by name, like plugins: the registry sits below the families it lists
        for info in pkgutil.iter_modules([str(Path(__file__).resolve().parent / "systems")]):
            if info.ispkg and importlib.util.find_spec(f"msjgym.systems.{info.name}.family") is not None:
                module = importlib.import_module(f"msjgym.systems.{info.name}.family")
                if hasattr(module, "FAMILY"):
                    found.append(module.FAMILY)
        found += _entry_point_families()
        _FAMILIES = sorted(found, key=lambda f: (f.order, f.name))
    return _FAMILIES


def _entry_point_families() -> list[Family]:
    from importlib.metadata import entry_points

    return [ep.load() for ep in entry_points(group="msjgym.families")]


def family(name: str) -> Family:
    """The family called ``name``."""
    for f in families():
        if f.name == name:
            return f
    raise ScenarioError(f"family {name!r}: unknown; valid: {', '.join(f.name for f in families())}")


def family_of(scenario: str | Scenario) -> Family:
    """The family that owns a scenario (a loaded one, a built-in name, or a scenario file)."""
    if isinstance(scenario, Scenario):
        return family(scenario.family)
    for f in families():
        if f.owns(scenario):
            return f
    names = [n for f in families() for n, _ in f.scenarios()]  # every family's: `msjgym list` describes them
    path = Path(scenario).expanduser()
    kind, what = path_kind(path)
    if kind in ("special", "unusable") or (kind == "folder" and scenario.endswith(".toml")):
        raise ScenarioError(f"scenario file {shown(scenario)}: {what}; give a scenario TOML file")
    if kind == "file":  # a file no family reads: say why, not "no such file"
        system = _system_key(path)
        if system is not None:
            readers = [f.name for f in families() if getattr(f, "reads_files", False)]
            known = system in {f.name for f in families()}
            raise ScenarioError(
                f"scenario file {scenario!r}: system = {system!r} " + (
                    "has built-in scenarios only (no scenario files)" if known
                    else f"is not a family (valid: {', '.join(f.name for f in families())})")
                + f"; scenario files are read for system = {' or '.join(repr(r) for r in readers) or 'none'}"
                + (f"; its built-ins: {', '.join(n for n, _ in family(system).scenarios())}" if known else ""))
        raise ScenarioError(f"scenario file {scenario!r}: no family reads it (not a scenario TOML file?)")
    raise ScenarioError(f"scenario {shown(scenario)}: neither a built-in nor an existing file; built-ins of every family "
                        f"(see `msjgym list`): {', '.join(names)}")


def _system_key(path: Path) -> str | None:
    """The ``system`` key of a TOML file (None if it has none or is not TOML)."""
    from msjgym.core.inputs import load_toml

    try:
        if path.stat().st_size > 16 * 2**20:
            return None
        with path.open("rb") as f:
            system = load_toml(f.read().decode("utf-8-sig"), str(path)).get("system")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return show_text(system) if isinstance(system, str) else None


def show_text(text: str) -> str:
    """A user's string, with control characters escaped (as ``repr`` does), for a one-line message."""
    return text if text.isprintable() else repr(text)[1:-1]


def load_scenario(name: str, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """The scenario ``name`` (any family's built-in, or a scenario file) with ``overrides`` applied."""
    return family_of(name).load(name, dict(overrides or {}))


def as_scenario(obj: Scenario | str | Any) -> Scenario:
    """``obj`` as a scenario: a scenario, a scenario name or file, or a bare model that some family recognises
    (its ``scenario_of_model``), named "model"."""
    if isinstance(obj, Scenario):
        return obj
    if isinstance(obj, str):
        return load_scenario(obj)
    for f in families():
        wrap = getattr(f, "scenario_of_model", None)
        scenario = wrap(obj) if wrap is not None else None
        if scenario is not None:
            return scenario
    raise ScenarioError(f"scenario = {obj!r}: not a scenario, a scenario name or file, nor a model of a family")


def list_scenarios() -> list[tuple[str, str]]:
    """Every family's built-in scenarios, (name, description), in listing order."""
    return [s for f in families() for s in f.scenarios()]


def is_user_policy(policy: Any) -> bool:
    """Whether ``policy`` is a policy of the user's: ``FILE.py:NAME``, ``sb3:MODEL.zip``, ``rllib:CHECKPOINT_DIR``,
    or an object (a class, an
    object with ``act`` or a callable), as opposed to the name of a built-in."""
    if isinstance(policy, PolicySpec):
        return False  # a built-in's declaration, possibly with bound parameters (``policy.bind(...)``)
    if not isinstance(policy, str):
        return True
    return policy.startswith(("sb3:", "rllib:")) or ".py:" in policy or policy.endswith(".py")


def policy_spec(family_: Family | str, name: str) -> PolicySpec:
    """The built-in policy ``name`` of a family (the family object, or its name); a one-line ``PolicyError`` listing
    the valid names otherwise. The one lookup of a built-in policy by name, for every family."""
    if isinstance(family_, str):
        family_ = family(family_)
    table = family_.policies()
    if name not in table:
        raise PolicyError(f"--policy {name!r}: not a policy of the {family_.name} family; valid: "
                          f"{', '.join(table)}, or a policy of your own (FILE.py:NAME, sb3:MODEL.zip, "
                          "rllib:CHECKPOINT_DIR)")
    return table[name]


def declared_parameters(family_: Family | str, policy: str) -> frozenset[str]:
    """The parameters ``policy`` declares: a built-in's (:func:`policy_spec`) or a compiled policy file's
    (``FILE.py:NAME``); none for a saved model or a Python object."""
    if isinstance(family_, str):
        family_ = family(family_)
    if not is_user_policy(policy):
        return frozenset(p.name for p in policy_spec(family_, policy).params)
    compiled = getattr(family_, "compiled_policy", None)
    spec = compiled(policy) if compiled is not None and isinstance(policy, str) and ".py:" in policy else None
    return frozenset(p.name for p in spec.params) if spec is not None else frozenset()


def foreign_parameters(family_: Family | str, policy: str, among: Iterable[str] | None = None) -> frozenset[str]:
    """The parameters of other policies that ``policy`` does not declare (``order`` of ``priority`` for
    ``first-fit``): a sweep or plot axis of such a key is one the policy does not read. ``among``: the policies
    whose parameters count (a sweep's compared policies); default every built-in policy of the family."""
    if isinstance(family_, str):
        family_ = family(family_)
    others = (set().union(*(declared_parameters(family_, p) for p in among)) if among is not None else
              {q.name for spec in family_.policies().values() for q in spec.params})
    return frozenset(others - declared_parameters(family_, policy))


def scenario_and_policy(name: str, policy: Any, overrides: Mapping[str, Any]) -> tuple[Scenario, Any]:
    """The scenario ``name`` with ``overrides``, and the policy with its parameters: an override key that the scenario
    does not take but the built-in policy declares (``--policy smash --param w=8``; a sweep's ``--grid order=sjf``)
    binds the policy's parameter (``PolicySpec.bind``). A key the scenario takes stays the scenario's; a key that
    neither takes is the scenario's one-line ``UnknownParameter``."""
    family_ = family_of(name)
    if not isinstance(policy, str):
        spec = None
    elif is_user_policy(policy):  # a compiled policy of the user's (FILE.py:NAME) declares parameters too
        compiled = getattr(family_, "compiled_policy", None)
        spec = compiled(policy) if compiled is not None else None
    else:
        spec = family_.policies().get(policy)
    own = [k for k in overrides if spec is not None and k in {p.name for p in spec.params}]
    try:
        return family_.load(name, overrides), policy
    except UnknownParameter:
        if not own:
            raise
    scenario = family_.load(name, {k: v for k, v in overrides.items() if k not in own})
    return scenario, spec.bind(**{k: overrides[k] for k in own})
