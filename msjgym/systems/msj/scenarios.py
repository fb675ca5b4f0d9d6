"""Scenarios: the papers' systems as built-ins, and user systems as TOML files.

A scenario is a built-in name (see :func:`list_scenarios`) or the path of a TOML file of this shape::

    system = "msj"               # optional, default "msj" (the only system so far)
    description = "my cluster"   # optional one-line description
    servers = 10                 # n, identical servers
    arrival_rate = 2.33          # total Poisson rate λ, jobs per unit time; OR `load = 0.8`; OR arrival_rate per class
    [[classes]]
    name = "small"               # optional, default "class1", "class2", ... (1-based)
    need = 1                     # servers held at once, an integer in [1, servers]
    probability = 0.9            # fraction of arrivals (or give arrival_rate per class instead, in every class)
    service = { dist = "exp", rate = 1.0 }
    [[classes]]
    need = 10
    probability = 0.1
    service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }

Rules:
    * Give the arrival rate in exactly one way: top-level ``arrival_rate`` (λ), top-level ``load``
      (ρ = λ Σ_i p_i m_i E[S_i] / n, so λ = ρ n / Σ_i p_i m_i E[S_i]; any ρ in (0, ∞): ρ >= 1 is a valid but unstable
      scenario), or ``arrival_rate`` in every class (λ_i; then λ = Σ_i λ_i and p_i = λ_i / λ, and classes give no
      ``probability``).
    * Probabilities must lie in (0, 1] and sum to 1 within 1e-6 (they are then renormalised to sum to 1 exactly).
      A single class may omit its probability (it is 1).
    * ``service`` is a distribution table (see :mod:`msjgym.core.distributions`); relative ``file = ...`` paths
      are resolved against the TOML file's directory.
    * Unknown keys are errors. Every error is a :class:`~msjgym.errors.ScenarioError` with a one-line message naming
      the key path (``classes[1].need``, list indices 0-based), the value and the valid range.

Overrides (``--param KEY=VALUE`` on the command line, parsed by :func:`parse_override`):
    * for a file, KEY is a dotted path into the TOML table, list indices 0-based: ``servers``, ``arrival_rate``,
      ``classes.1.probability``, ``classes.0.service.rate``. The path must exist, except that setting ``load``
      replaces ``arrival_rate`` and vice versa (per-class arrival rates then become probabilities p_i = λ_i/λ),
      that the optional keys of a trace (``arrivals.time_scale``, ``arrivals.skip_bad_lines``) may be added, and
      that ``estimate`` and ``estimate.factor`` / ``estimate.allow_underestimate`` may be added or replaced;
    * for a built-in, KEY is one of its parameters.

Trace replay: instead of ``classes`` and a rate, ``arrivals = { trace = "file.swf" }`` replays the jobs of an SWF or
CSV trace (:mod:`msjgym.systems.msj.trace.files`) on the traced machine (its size from the SWF header: ``MaxProcs``, else
``MaxNodes`` × ``arrivals.processors_per_node``, default 1); a file that does not say (a CSV file, an SWF file
without those headers) needs ``servers = N``, the traced machine's processors. ``arrivals.scale_servers = S`` (or
``servers = S`` with a header) replays it on S servers instead, each job's processors scaled by S / (the traced
machine's size) and rounded up; optional ``time_scale`` (multiplies the arrival times), ``skip_bad_lines`` and
``overrun``: what happens to a job that ran longer than its requested time (SWF field 9, CSV ``requested``):
``"run"`` (the default: it runs its recorded duration, the scheduler seeing 0 estimated time left once its requested
time is used up) or ``"kill"`` (it is killed at its requested time, as batch systems do: its duration becomes its
requested time; the killed jobs are counted in the trace's notes); docs/modelling-choices.md#requested-times. The
classes are the trace's distinct needs, with empirical durations.

Runtime estimates (used only by the backfilling policies; every other policy ignores them), top-level ``estimate``:
    * ``estimate = "exact"`` (the default): each job's estimate is its duration;
    * ``estimate = { factor = 2.0 }``: over-estimation by a fixed factor (a number >= 1);
    * ``estimate = { factor = { dist = "uniform", low = 1, high = 5 } }``: estimate = f × duration with f uniform on
      [low, high] (``low`` defaults to 1: Mu'alem & Feitelson's model, f uniform on [1, F]), drawn per job from a
      separate estimate stream, so the jobs (classes, durations, arrival times) are those of the same scenario
      without estimates;
    * a factor below 1 (estimates below the durations) is an error unless the table says
      ``allow_underestimate = true``; a job that runs past its estimate then runs to completion, the scheduler seeing
      0 estimated time left (docs/modelling-choices.md#backfilling-overrun);
    * a replayed trace uses, by default, the requested time (SWF field 9, CSV ``requested``) where it is known,
      else the run time (``estimate = "requested"``); a requested time below the run time is kept (see
      ``arrivals.overrun``); ``"exact"`` or a factor table override it;
    * ``estimate = "tsafrir"`` (a replayed trace only, file or workload model): each job's estimate is drawn from the
      model of users' estimates of Tsafrir, Etsion & Feitelson (JSSPP 2005; :mod:`msjgym.systems.msj.trace.user_estimates`):
      a few round values, the queue's maximum the most popular, never below the run time; it replaces any requested
      times of the trace. ``estimate = { model = "tsafrir", seed = 1, max = 129600, max_fraction = 0.2 }`` sets its
      own seed (default 1; its draws never change the jobs), the maximum in seconds (default: the longest run time
      rounded up to whole hours) and the fraction of jobs at the maximum (default the model's, about 0.22).

Built-ins (parameters and defaults; each builds a TOML-shaped spec that goes through :func:`model_from_spec`, so
validation is shared):
    * ``one-and-n``: servers=10, p_n=0.1, mu_1=1.0, mu_n=1.0, arrival_rate = 0.8 × the FCFS stability threshold μ of
      Grosof & Ayhan's Lemma 5.3 (≈ 2.33 for the defaults);
    * ``finite-skip-fig6``, ``finite-skip-fig7``: load=0.6 (ρ = λE[VX]/k with k = 4);
    * ``zero-queueing-set1``, ``-set2``, ``-set3``: servers=256, load = the set's formula at n,
      load_split=[1/3, 1/3, 1/3] (class i carries load · load_split_i; the paper does not give its class mix), and
      for set 3 m3 in {"sqrt", "4th-root", "log"} (√n, 3n^(1/4), log₂ n + 2; default "sqrt").
      Needs that are not integers (log₂ n for n not a power of 2, 3n^(1/4), ...) are rounded to the nearest
      integer (halves up) and clipped to [1, n].
"""
from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from msjgym.core.distributions import Distribution, Empirical, from_spec
from msjgym.core.inputs import load_toml, read_user_text
from msjgym.core.limits import MAX_CLASSES, MAX_SERVERS, TIME_RANGE
from msjgym.core.paths import path_kind, shown
from msjgym.core.validation import check_int, check_time_spread
from msjgym.systems.msj.trace.files import Trace, kill_at_requested, read_trace
from msjgym.systems.msj.trace.generators import EstimatedDraw, LublinDraw, ScaledDraw
from msjgym.core.validation import is_finite, show
from msjgym.api import Scenario
from msjgym.errors import MsjgymError, ScenarioError, UnknownParameter, prefixed
from msjgym.systems.msj.model import EstimateLaw, JobClass, MSJModel
from msjgym.systems.msj.trace.user_estimates import TsafrirModel
from msjgym.theory.saturated import one_and_n_throughput
from msjgym.systems.msj.theory.zero_queueing import ScalingRegime

SYSTEMS = ("msj",)
_TOP_KEYS = ("system", "description", "servers", "arrival_rate", "load", "classes", "arrivals", "estimate")
_ESTIMATE_KEYS = ("factor", "allow_underestimate")
_ESTIMATE_MODEL_KEYS = ("model", "seed", "max", "max_fraction")
ESTIMATE_MODELS = ("tsafrir",)
_FACTOR_KEYS = ("dist", "low", "high")
_TRACE_KEYS = ("trace", "scale_servers", "processors_per_node", "time_scale", "skip_bad_lines", "overrun")
_MODEL_KEYS = ("model", "jobs", "processors", "seed", "skip", "scale_servers", "time_scale")
OVERRUNS = ("run", "kill")
"""What a replay does with a job that runs longer than its requested time (``arrivals.overrun``; default "run")."""
_CLASS_KEYS = ("name", "need", "probability", "arrival_rate", "service")
_PROBABILITY_TOLERANCE = 1e-6
_CLASS_RATES = "classes[*].arrival_rate"


# ==============================================================================================================# Shared validation helpers: each raises a one-line ScenarioError "PATH = VALUE: requirement".


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _bad(path: str, value: object, requirement: str) -> ScenarioError:
    return ScenarioError(f"{path} = {show(value)}: {requirement}")


def _fmt(x: float) -> str:
    return "inf" if x == math.inf else f"{x:g}"


def _real(value: object, path: str, low: float = 0.0, high: float = math.inf, *,
          closed: tuple[bool, bool] = (False, False)) -> float:
    """``value`` as a finite float in the interval (low, high), ends included where ``closed`` says."""
    ok = (is_finite(value)
          and (low <= value if closed[0] else low < value)
          and (value <= high if closed[1] else value < high))
    if not ok:
        interval = f"{'[' if closed[0] else '('}{_fmt(low)}, {_fmt(high)}{']' if closed[1] else ')'}"
        raise _bad(path, value, f"must be a finite number in {interval}")
    return float(value)


def _integer(value: object, path: str, low: int = 1, high: int | None = None, high_name: str = "") -> int:
    """``value`` as an int in [low, high] (integral floats such as 10.0 accepted; bools rejected)."""
    ok = (is_finite(value) and float(value).is_integer()
          and low <= value and (high is None or value <= high))
    if not ok:
        upper = f"{high_name}={high}" if high_name else f"{high}"
        rule = f"an integer >= {low}" if high is None else f"an integer in [{low}, {upper}]"
        raise _bad(path, value, f"must be {rule}")
    return int(value)


def _servers(value: object, path: str) -> int:
    """A number of servers, within :data:`~msjgym.core.limits.MAX_SERVERS` (checked before anything is built)."""
    return check_int(path, value, 1, MAX_SERVERS, ScenarioError, "the engine keeps per-server state")


def _string(value: object, path: str) -> str:
    if not isinstance(value, str) or not value.strip() or not value.isprintable() or len(value) > 4096:
        raise _bad(path, value, "must be a non-empty one-line string of printable characters (no control "
                   "characters: it is printed in tables and messages), at most 4096 characters")
    return value


def _choice(value: object, path: str, options: Sequence[str]) -> str:
    if value not in options:
        raise _bad(path, value, f"must be one of {', '.join(repr(o) for o in options)}")
    return str(value)


def _table(value: object, path: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _bad(path, value, "must be a table")
    return value


def _check_keys(table: Mapping, where: str, valid: Sequence[str]) -> None:
    for key in table:
        if key not in valid:
            place = f" of {where}" if where else ""
            raise ScenarioError(f"{_path(where, str(key))}: unknown key; valid keys{place}: {', '.join(valid)}")


def _required(table: Mapping, where: str, key: str) -> object:
    if key not in table:
        raise ScenarioError(f"{_path(where, key)}: missing (required)")
    return table[key]


def _fractions(value: object, path: str, count: int) -> list[float]:
    """A list of ``count`` numbers in (0, 1] summing to 1 (within 1e-6), renormalised to sum to 1 exactly."""
    if not isinstance(value, (list, tuple)) or len(value) != count:
        raise _bad(path, value, f"must be a list of {count} numbers in (0, 1] summing to 1")
    parts = [_real(v, f"{path}[{i}]", 0.0, 1.0, closed=(False, True)) for i, v in enumerate(value)]
    total = math.fsum(parts)
    if abs(total - 1.0) > _PROBABILITY_TOLERANCE:
        raise _bad(path, value, f"must sum to 1 (within {_PROBABILITY_TOLERANCE:g}); sum is {total!r}")
    return [p / total for p in parts]


# ==============================================================================================================# TOML spec -> MSJModel


@dataclass(frozen=True)
class _ClassSpec:
    name: str
    need: int
    service: Distribution
    probability: float | None
    arrival_rate: float | None


def model_from_spec(spec: Mapping, where: str = "", base_dir: Path | None = None) -> MSJModel:
    """Validate a TOML-shaped scenario table (module docstring) and build its :class:`MSJModel`.

    Args:
        spec: the table, e.g. from ``tomllib.load``.
        where: key path of ``spec`` inside a larger document, prefixed to every error's key path ("" for a file).
        base_dir: directory against which relative ``file = ...`` paths of empirical services are resolved.
    Raises:
        ScenarioError: one line naming the key path, the value and the valid range.
    """
    spec = _table(spec, where or "scenario")
    _check_keys(spec, where, _TOP_KEYS)
    _choice(spec.get("system", "msj"), _path(where, "system"), SYSTEMS)
    if "description" in spec:
        _string(spec["description"], _path(where, "description"))
    if "arrivals" in spec:
        return _trace_model(spec, where, base_dir)
    servers = _servers(_required(spec, where, "servers"), _path(where, "servers"))
    classes = [_class_from_spec(table, f"{_path(where, 'classes')}[{i}]", i, servers, base_dir)
               for i, table in enumerate(_class_tables(spec, where))]
    arrival_rate, probabilities = _arrival_rates(spec, where, classes, servers)
    job_classes = tuple(JobClass(c.name, c.need, p, c.service) for c, p in zip(classes, probabilities))
    estimate = estimate_law(spec, where, trace=False)
    try:
        given = _real(spec["load"], _path(where, "load")) if "load" in spec else None
        return MSJModel(servers=servers, arrival_rate=arrival_rate, classes=job_classes, estimate=estimate,
                        given_load=given)
    except ScenarioError as exc:  # e.g. duplicate class names: the model names the key relative to the spec
        raise ScenarioError(_path(where, str(exc))) from None


def _trace_model(spec: Mapping, where: str, base_dir: Path | None) -> MSJModel:
    """A scenario whose arrivals replay a trace: ``arrivals = {trace = FILE, ...}`` (see :mod:`msjgym.systems.msj.trace.files`)
    or a synthetic one, ``arrivals = {model = "lublin-feitelson", ...}`` (:mod:`msjgym.systems.msj.trace.lublin`); its
    classes are the trace's distinct needs, with empirical durations."""
    path = _path(where, "arrivals")
    table = _table(spec["arrivals"], path)
    synthetic = "model" in table
    _check_keys(table, path, _MODEL_KEYS if synthetic else _TRACE_KEYS)
    for key in ("classes", "arrival_rate", "load"):
        if key in spec:
            raise ScenarioError(f"{_path(where, key)}: not allowed with arrivals = {{{'model' if synthetic else 'trace'} "
                                f"= ...}} (the {'workload model' if synthetic else 'trace'} gives the jobs)")
    servers = None
    if "scale_servers" in table:
        servers = _servers(table["scale_servers"], _path(path, "scale_servers"))
    if "servers" in spec:
        given = _servers(spec["servers"], _path(where, "servers"))
        if servers is not None and given != servers:
            raise _bad(_path(where, "servers"), spec["servers"], f"must equal arrivals.scale_servers ({servers}) or "
                       "be left out")
        servers = given
    time_scale = _real(table.get("time_scale", 1.0), _path(path, "time_scale"))
    if synthetic:
        trace = _synthetic_trace(table, path)
    else:
        trace = _file_trace(table, path, base_dir, servers)
    servers = trace.machine if servers is None else servers
    check_int(_path(path, "scale_servers"), servers, 1, MAX_SERVERS, ScenarioError,
              "the engine keeps per-server state (the default is the traced machine's size)")
    if trace.generator is not None:
        trace = replace(trace, generator=ScaledDraw(trace.generator, trace.machine, servers, time_scale))
    law = estimate_law(spec, where, trace=True)
    if law.kind == "tsafrir":
        trace = _with_model_estimates(trace, law, _path(where, "estimate"))
    trace = trace.scaled(servers, time_scale)
    model = model_of_trace(trace, servers, law)
    check_time_spread(_path(path, "time_scale"), time_scale, 1.0 / model.arrival_rate,
                      min(c.service.mean for c in model.classes), ScenarioError,
                      what="the shortest mean duration of a need")
    return model


def _file_trace(table: Mapping, path: str, base_dir: Path | None, servers: int | None) -> Trace:
    """The trace file of ``arrivals = {trace = FILE, ...}``, read (module docstring, "Trace replay")."""
    per_node = None
    if "processors_per_node" in table:
        per_node = _integer(table["processors_per_node"], _path(path, "processors_per_node"), 1, 10**6)
    file = Path(_string(_required(table, path, "trace"), _path(path, "trace"))).expanduser()
    if not file.is_absolute() and base_dir is not None:
        file = base_dir / file
    skip = table.get("skip_bad_lines", False)
    if not isinstance(skip, bool):
        raise _bad(_path(path, "skip_bad_lines"), skip, "must be true or false")
    trace = read_trace(file, skip_bad_lines=skip, servers=servers, processors_per_node=per_node)
    if _choice(table.get("overrun", "run"), _path(path, "overrun"), OVERRUNS) == "kill":
        trace = kill_at_requested(trace)
    return trace


WORKLOAD_MODELS = ("lublin-feitelson",)
MAX_MODEL_JOBS = 10**6
"""Jobs of a synthetic trace (generated in Python at about 50,000 jobs/s)."""


def _synthetic_trace(table: Mapping, path: str) -> Trace:
    """The trace of ``arrivals = {model = "lublin-feitelson", jobs = J, processors = P, seed = S, skip = K}``: jobs
    K + 1 .. K + J of the model's draw from seed S (``skip``, default 0: a held-out part of a draw whose first K jobs
    a training trace ``{jobs = K, seed = S}`` holds; the generator draws jobs one after another from one stream, so
    a draw of K jobs is the first K of a longer draw), its first arrival at 0."""
    _choice(table["model"], _path(path, "model"), WORKLOAD_MODELS)
    jobs = _integer(table.get("jobs", 10_000), _path(path, "jobs"), 1, MAX_MODEL_JOBS)
    processors = _integer(table.get("processors", 256), _path(path, "processors"), 1, MAX_SERVERS)
    seed = _integer(table.get("seed", 1), _path(path, "seed"), 0, 2**63 - 1)
    skip = _integer(table.get("skip", 0), _path(path, "skip"), 0, MAX_MODEL_JOBS - jobs)

    trace = LublinDraw(processors)(skip + jobs, seed)
    if skip:
        trace = trace.window(skip, jobs)
        part = f"jobs {skip + 1:,}–{skip + jobs:,} of a draw"
    else:
        part = f"{jobs:,} jobs"
    return replace(trace, source=f"the Lublin-Feitelson model ({part}, {processors} processors, seed {seed})")


def _with_model_estimates(trace: Trace, law: EstimateLaw, path: str) -> Trace:
    """``trace`` with its estimates drawn from the law's estimate model (seconds; the model's own generator, seeded by
    its seed: the jobs are unchanged); for a synthetic trace, every trace its generator draws gets its own estimates,
    from the model's seed and the trace's seed sequence."""
    estimated = _ModelEstimates(law.model, path)
    out = estimated(trace, None)
    if trace.generator is not None:
        out = replace(out, generator=EstimatedDraw(trace.generator, estimated, law.model.seed))
    return out


@dataclass(frozen=True)
class _ModelEstimates:
    """A trace with its requested times drawn from ``model`` (``rng``: the model's generator; None: seeded by its
    seed); a bad draw is a ScenarioError naming ``what``. A class, not a closure: the scenario pickles."""

    model: TsafrirModel
    what: str

    def __call__(self, t: Trace, rng: np.random.Generator | None) -> Trace:
        from msjgym.systems.msj.trace.user_estimates import draw_estimates

        try:
            values = draw_estimates(t.duration, self.model, rng, what=self.what)
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
        return replace(t, estimate=values, estimated=len(t), notes=list(t.notes))


def model_of_trace(trace: Trace, servers: int, estimate: EstimateLaw) -> MSJModel:
    """The model that replays ``trace`` (already scaled to ``servers``): one class per distinct need, with the
    empirical durations of its jobs; λ the jobs per unit time over the span of the arrivals (used by the theory and
    the reported load only: a replay takes the trace's own arrival times; a trace whose jobs all arrive at once is one
    batch over its longest job)."""
    needs, counts = np.unique(trace.need, return_counts=True)
    classes = tuple(
        JobClass(f"need{m}", int(m), float(k / len(trace)),
                 Empirical(values=tuple(float(x) for x in trace.duration[trace.need == m])))
        for m, k in zip(needs, counts))
    return MSJModel(servers=servers, arrival_rate=trace_rate(trace), classes=classes, trace=trace, estimate=estimate)


def trace_rate(trace: Trace) -> float:
    """λ of a trace: its jobs per unit time over the span of its arrivals, (N − 1) / (last − first arrival); a trace
    whose jobs all arrive at once is one batch over its longest job."""
    span = float(trace.arrival[-1]) if trace.arrival[-1] > 0 else float(trace.duration.max())
    return max(len(trace) - 1, 1) / span


def replayed_load(trace: Trace, servers: int) -> float:
    """The load of replaying ``trace`` (a window of a trace, or a drawn one) on ``servers`` servers, as
    :func:`model_of_trace`'s model reports it for a whole trace: λ (:func:`trace_rate`) × the mean of need × run
    time / servers, the offered work per unit time over the arrivals' span as a fraction of the machine
    (docs/modelling-choices.md#trace-load: jobs that outlast the span count whole, so a short window of long jobs
    can show a load above 1 while every job starts on arrival)."""
    return trace_rate(trace) * float(np.mean(trace.need * trace.duration)) / servers


def estimate_law(spec: Mapping, where: str, trace: bool) -> EstimateLaw:
    """The scenario's runtime-estimate law (module docstring, "Runtime estimates")."""
    path = _path(where, "estimate")
    if "estimate" not in spec:
        return EstimateLaw("requested" if trace else "exact")
    value = spec["estimate"]
    if isinstance(value, str):
        valid = ("exact", "requested", *ESTIMATE_MODELS) if trace else ("exact",)
        kind = _choice(value, path, valid)
        return EstimateLaw(kind, model=TsafrirModel() if kind == "tsafrir" else None)
    if not isinstance(value, Mapping):
        raise _bad(path, value, 'must be "exact"' + (', "requested", "tsafrir"' if trace else "") +
                   " or a table { factor = ... }" + (" or { model = \"tsafrir\", ... }" if trace else ""))
    if "model" not in value and any(k in value for k in _ESTIMATE_MODEL_KEYS):
        key = next(k for k in _ESTIMATE_MODEL_KEYS if k in value)
        raise ScenarioError(f"{_path(path, key)}: a parameter of an estimate model; give {_path(path, 'model')} = "
                            f"{' or '.join(repr(m) for m in ESTIMATE_MODELS)} (or estimate = \"tsafrir\") with it")
    if "model" in value:
        if not trace:
            raise _bad(_path(path, "model"), value["model"], "an estimate model needs a replayed trace (arrivals = "
                       "{trace = ...} or {model = ...})")
        _check_keys(value, path, _ESTIMATE_MODEL_KEYS)
        _choice(value["model"], _path(path, "model"), ESTIMATE_MODELS)
        seed = _integer(value.get("seed", 1), _path(path, "seed"), 0, 2**63 - 1)
        top = value.get("max")
        if top is not None:
            top = float(_integer(top, _path(path, "max"), 3600, 10**9))
        frac = value.get("max_fraction")
        if frac is not None:
            frac = _real(frac, _path(path, "max_fraction"), 0.0, 0.89)
        return EstimateLaw("tsafrir", model=TsafrirModel(seed=seed, max_estimate=top, max_fraction=frac))
    _check_keys(value, path, _ESTIMATE_KEYS)
    under = value.get("allow_underestimate", False)
    if not isinstance(under, bool):
        raise _bad(_path(path, "allow_underestimate"), under, "must be true or false")
    low_bound = 0.0 if under else 1.0
    closed = (not under, False)
    why = "" if under else " (an estimate below the duration needs allow_underestimate = true)"
    factor = _required(value, path, "factor")
    fpath = _path(path, "factor")
    if not isinstance(factor, Mapping):
        try:
            f = _real(factor, fpath, low_bound, closed=closed)
        except ScenarioError as exc:
            raise ScenarioError(f"{exc}{why}") from None
        return EstimateLaw("exact" if f == 1.0 else "factor", f, f, under)
    _check_keys(factor, fpath, _FACTOR_KEYS)
    _choice(factor.get("dist", "uniform"), _path(fpath, "dist"), ("uniform",))
    try:
        low = _real(factor.get("low", 1.0), _path(fpath, "low"), low_bound, closed=closed)
        high = _real(_required(factor, fpath, "high"), _path(fpath, "high"), low_bound, closed=closed)
    except ScenarioError as exc:
        raise ScenarioError(f"{exc}{why}") from None
    if high < low:
        raise _bad(_path(fpath, "high"), high, f"must be >= low = {low:g}")
    if high == low:
        return EstimateLaw("exact" if low == 1.0 else "factor", low, low, under)
    return EstimateLaw("uniform", low, high, under)


def _class_tables(spec: Mapping, where: str) -> list[Mapping]:
    path = _path(where, "classes")
    tables = _required(spec, where, "classes")
    if not isinstance(tables, list) or not tables:
        raise _bad(path, tables, "must be a non-empty array of tables ([[classes]])")
    if len(tables) > MAX_CLASSES:
        raise ScenarioError(f"{path}: {len(tables):,} classes; must be at most {MAX_CLASSES:,} (the engine draws the "
                            "next event over the classes)")
    return [_table(t, f"{path}[{i}]") for i, t in enumerate(tables)]


def _class_from_spec(table: Mapping, path: str, index: int, servers: int, base_dir: Path | None) -> _ClassSpec:
    _check_keys(table, path, _CLASS_KEYS)
    name = _string(table.get("name", f"class{index + 1}"), _path(path, "name"))
    need = _integer(_required(table, path, "need"), _path(path, "need"), 1, servers, "servers")
    service_path = _path(path, "service")
    service = from_spec(_table(_required(table, path, "service"), service_path), where=service_path,
                        base_dir=base_dir)
    probability = table.get("probability")
    if probability is not None:
        probability = _real(probability, _path(path, "probability"), 0.0, 1.0, closed=(False, True))
    rate = table.get("arrival_rate")
    if rate is not None:
        rate = _real(rate, _path(path, "arrival_rate"))
    return _ClassSpec(name, need, service, probability, rate)


def _arrival_rates(spec: Mapping, where: str, classes: list[_ClassSpec], servers: int) -> tuple[float, list[float]]:
    """(λ, [p_i]) from exactly one of: top-level arrival_rate, top-level load, per-class arrival_rate."""
    given = [_path(where, k) for k in ("arrival_rate", "load") if k in spec]
    if any(c.arrival_rate is not None for c in classes):
        given.append(_path(where, _CLASS_RATES))
    if len(given) != 1:
        problem = f"{', '.join(given)}:" if given else f"{_path(where, 'arrival_rate')}: missing;"
        raise ScenarioError(f"{problem} give the arrival rate in exactly one way: arrival_rate (λ), load (ρ), or "
                            f"arrival_rate in every class")
    if given[0].endswith(_CLASS_RATES):
        return _rates_from_classes(classes, _path(where, "classes"))
    probabilities = _probabilities(classes, _path(where, "classes"))
    if "arrival_rate" in spec:
        return _real(spec["arrival_rate"], _path(where, "arrival_rate")), probabilities
    load = _real(spec["load"], _path(where, "load"))
    offered_per_job = math.fsum(p * c.need * c.service.mean for p, c in zip(probabilities, classes))
    return load * servers / offered_per_job, probabilities


def _rates_from_classes(classes: list[_ClassSpec], where: str) -> tuple[float, list[float]]:
    for i, c in enumerate(classes):
        if c.arrival_rate is None:
            raise ScenarioError(f"{where}[{i}].arrival_rate: missing; per-class arrival rates must be given in "
                                f"every class")
        if c.probability is not None:
            raise ScenarioError(f"{where}[{i}].probability: not allowed with per-class arrival_rate "
                                f"(p_i = λ_i/λ is derived)")
    total = math.fsum(c.arrival_rate for c in classes)
    return total, [c.arrival_rate / total for c in classes]


def _probabilities(classes: list[_ClassSpec], where: str) -> list[float]:
    if len(classes) == 1 and classes[0].probability is None:
        return [1.0]
    for i, c in enumerate(classes):
        if c.probability is None:
            raise ScenarioError(f"{where}[{i}].probability: missing; required when there are several classes "
                                f"and no per-class arrival_rate")
    return _fractions([c.probability for c in classes], f"{where}[*].probability", len(classes))


# ==============================================================================================================# Overrides



def apply_file_overrides(spec: dict, overrides: Mapping[str, object]) -> dict:
    """A deep copy of ``spec`` with each dotted-path override set (module docstring)."""
    spec = copy.deepcopy(spec)
    for key, value in overrides.items():
        if key in ("load", "arrival_rate"):
            _set_total_rate(spec, key, value)
            continue
        if key.startswith("arrivals.") and key.count(".") == 1 and isinstance(spec.get("arrivals"), dict) \
                and key.partition(".")[2] in _TRACE_KEYS:
            spec["arrivals"][key.partition(".")[2]] = copy.deepcopy(value)  # optional trace keys may be added
            continue
        if key == "servers" and isinstance(spec.get("arrivals"), dict) and "trace" in spec["arrivals"]:
            spec["servers"] = copy.deepcopy(value)  # the traced machine's size may be added (a CSV trace has none)
            continue
        if key == "estimate":  # the estimate law may be added or replaced
            spec["estimate"] = copy.deepcopy(value)
            continue
        if key.startswith("estimate.") and key.count(".") == 1:  # estimate.factor, estimate.seed, ...
            if spec.get("estimate") in ESTIMATE_MODELS:  # estimate = "tsafrir", then one of its parameters
                spec["estimate"] = {"model": spec["estimate"]}
            if not isinstance(spec.get("estimate"), dict):
                spec["estimate"] = {}
            spec["estimate"][key.partition(".")[2]] = copy.deepcopy(value)
            continue
        container, leaf = _locate(spec, key)
        container[leaf] = copy.deepcopy(value)
    return spec


def _locate(spec: dict, key: str) -> tuple[dict | list, str | int]:
    """The container holding dotted path ``key`` and the leaf key/index in it; the path must exist."""
    parts = key.split(".")
    node: object = spec
    for depth, part in enumerate(parts[:-1]):
        node = node[_step(node, part, key, ".".join(parts[:depth + 1]))]
    return node, _step(node, parts[-1], key, key)


_INDEX = re.compile(r"[0-9]{1,9}")


def _step(node: object, part: str, key: str, here: str) -> str | int:
    """The key or 0-based index ``part`` into ``node``, which must exist (``here`` is the path so far)."""
    if isinstance(node, list):
        if _INDEX.fullmatch(part) and int(part) < len(node):  # ASCII digits only: '²'.isdigit() is True
            return int(part)
        raise ScenarioError(f"override {key}: no entry {here} (list indices are 0-based, {len(node)} entries)")
    if isinstance(node, dict):
        if part in node:
            return part
        valid = ", ".join(str(k) for k in node) or "(none)"
        raise UnknownParameter(f"override {key}: no key {here} in the scenario; keys there: {valid}", key=key)
    raise ScenarioError(f"override {key}: {here.rpartition('.')[0]} is a value, not a table or array")


def _set_total_rate(spec: dict, key: str, value: object) -> None:
    """Set top-level ``load`` or ``arrival_rate``, dropping the other and turning per-class rates into probabilities."""
    spec.pop("load" if key == "arrival_rate" else "arrival_rate", None)
    spec[key] = value
    classes = spec.get("classes")
    if not isinstance(classes, list) or not all(isinstance(c, dict) and "arrival_rate" in c for c in classes):
        return
    rates = [c["arrival_rate"] for c in classes]
    if all(is_finite(r) and r > 0 for r in rates):
        total = math.fsum(rates)
        for c, rate in zip(classes, rates):
            del c["arrival_rate"]
            c["probability"] = rate / total


# ==============================================================================================================# Built-ins


@dataclass(frozen=True)
class _Param:
    """A built-in's parameter: its default (None: derived from the other parameters by the builder)."""

    default: object
    label: str = ""  # how the default is shown in error messages (required for a derived default)

    def shown(self) -> str:
        return self.label or repr(self.default)


@dataclass(frozen=True)
class _Builtin:
    description: str
    params: Mapping[str, _Param]
    build: Callable[[dict[str, object]], tuple[dict, dict]]  # merged params -> (resolved params, TOML-shaped spec)


def _exp(rate: float) -> dict:
    return {"dist": "exp", "rate": rate}


def _rate(value: object, path: str) -> float:
    """A service rate whose mean 1/rate lies in :data:`~msjgym.core.limits.TIME_RANGE`."""
    return _real(value, path, 1.0 / TIME_RANGE[1], 1.0 / TIME_RANGE[0], closed=(True, True))


def _build_one_and_n(p: dict[str, object]) -> tuple[dict, dict]:
    """Grosof & Ayhan's "1 and n" system (their §3.1): class "1" needs 1 server (Exp(mu_1) durations) w.p. 1 − p_n,
    class "n" needs all n (Exp(mu_n)) w.p. p_n; a class of probability 0 is left out. Default λ = 0.8 μ, μ of Lemma 5.3.
    """
    n = _servers(p["servers"], "servers")
    p_n = _real(p["p_n"], "p_n", 0.0, 1.0, closed=(True, True))
    mu_1, mu_n = _rate(p["mu_1"], "mu_1"), _rate(p["mu_n"], "mu_n")
    rate = p["arrival_rate"]
    rate = _real(0.8 * one_and_n_throughput(n, p_n, mu_1, mu_n) if rate is None else rate, "arrival_rate")
    classes = [{"name": "1", "need": 1, "probability": 1.0 - p_n, "service": _exp(mu_1)},
               {"name": "n", "need": n, "probability": p_n, "service": _exp(mu_n)}]
    spec = {"system": "msj", "servers": n, "arrival_rate": rate,
            "classes": [c for c in classes if c["probability"] > 0]}  # p_n in {0, 1} leaves one class
    return {"servers": n, "p_n": p_n, "mu_1": mu_1, "mu_n": mu_n, "arrival_rate": rate}, spec


# (need, rate of the Exp duration, probability) per class; Grosof, Harchol-Balter & Scheller-Wolf, Figs. 6 and 7.
_FINITE_SKIP_MIXES = {
    "finite-skip-fig6": ((1, 5.0, 1 / 3), (2, 2.0, 1 / 3), (4, 0.5, 1 / 3)),
    "finite-skip-fig7": ((1, 1.0, 4 / 7), (2, 8.0, 2 / 7), (4, 64.0, 1 / 7)),
}


def _finite_skip_builder(figure: str) -> Callable[[dict[str, object]], tuple[dict, dict]]:
    def build(p: dict[str, object]) -> tuple[dict, dict]:
        """k = 4 servers, Exp(rate) durations; λ from ρ = λE[VX]/k (Grosof, Harchol-Balter & Scheller-Wolf
        §7.5, Figs. 6 and 7)."""
        load = _real(p["load"], "load")
        classes = [{"name": f"v{need}", "need": need, "probability": prob, "service": _exp(rate)}
                   for need, rate, prob in _FINITE_SKIP_MIXES[figure]]
        return {"load": load}, {"system": "msj", "servers": 4, "load": load, "classes": classes}
    return build


_ZQ_RATES = (0.25, 0.5, 1.0)
_ZQ_M3 = {"sqrt": lambda n: math.sqrt(n), "4th-root": lambda n: 3.0 * n ** 0.25, "log": lambda n: math.log2(n) + 2}
_ZQ_LOAD = {
    1: ("1 − n^(−0.1)/4", lambda n: 1.0 - 0.25 * n ** -0.1),
    2: ("1 − n^(−0.3)", lambda n: 1.0 - n ** -0.3),
    3: ("1 − n^(−0.1)/4", lambda n: 1.0 - 0.25 * n ** -0.1),
}


def _round_need(x: float, servers: int) -> int:
    """Nearest integer (halves up), clipped to [1, servers]."""
    return min(max(math.floor(x + 0.5), 1), servers)


def _zero_queueing_builder(set_number: int) -> Callable[[dict[str, object]], tuple[dict, dict]]:
    def build(p: dict[str, object]) -> tuple[dict, dict]:
        """Sets I–III of Wang, Xie & Harchol-Balter §7 (Table 3): μ = (0.25, 0.5, 1), needs (3, log₂ n, m3) rounded
        to the nearest integer and clipped to [1, n] (docs/modelling-choices.md#zero-queueing-need-rounding); class i
        carries load ρ_i = load · load_split_i, so λ_i = n ρ_i μ_i / m_i. The paper does not state its class mix
        (docs/modelling-choices.md#zero-queueing-load-split): equal thirds by default.
        """
        n = _servers(p["servers"], "servers")
        m3_rule = _choice(p.get("m3", "sqrt"), "m3", tuple(_ZQ_M3))
        load = _real(_ZQ_LOAD[set_number][1](n) if p["load"] is None else p["load"], "load")
        split = _fractions(p["load_split"], "load_split", 3)
        needs = [_round_need(x, n) for x in (3.0, math.log2(n), _ZQ_M3[m3_rule](n))]
        classes = [{"name": f"c{i + 1}", "need": m, "arrival_rate": n * load * share * mu / m,  # λ_i = nρ_iμ_i/m_i
                    "service": _exp(mu)}
                   for i, (m, mu, share) in enumerate(zip(needs, _ZQ_RATES, split))]
        params = {"servers": n, "load": load, "load_split": split} | ({"m3": m3_rule} if set_number == 3 else {})
        return params, {"system": "msj", "servers": n, "classes": classes}
    return build


def _zero_queueing_params(set_number: int) -> dict[str, _Param]:
    params = {"servers": _Param(256),
              "load": _Param(None, f"{_ZQ_LOAD[set_number][0]} at n=servers"),
              "load_split": _Param([1 / 3, 1 / 3, 1 / 3], "[1/3, 1/3, 1/3]")}
    return params | ({"m3": _Param("sqrt")} if set_number == 3 else {})


_FS_CITE = ("the MSJ setting of Grosof, Harchol-Balter & Scheller-Wolf, 'The finite-skip method for multiserver "
            "analysis',")
_ZQ_CITE = "Wang, Xie & Harchol-Balter, 'Zero Queueing for Multi-Server Jobs' (2021) §7"
_ZQ_MIX = ("the paper does not give the class load split (docs/modelling-choices.md#zero-queueing-load-split): "
           "load_split, default equal thirds")
def _build_lublin(p: dict[str, object]) -> tuple[dict, dict]:
    """The Lublin–Feitelson workload model (:mod:`msjgym.systems.msj.trace.lublin`) as a synthetic trace of ``jobs`` jobs
    on ``processors`` processors, from ``seed``; ``time_scale`` multiplies the arrival times (< 1: a heavier
    load)."""
    arrivals = {"model": "lublin-feitelson", "jobs": p["jobs"], "processors": p["processors"], "seed": p["seed"],
                "time_scale": p["time_scale"]}
    return dict(p), {"system": "msj", "arrivals": arrivals}


_BUILTINS: dict[str, _Builtin] = {
    "one-and-n": _Builtin(
        "the '1 and n' FCFS system of Grosof & Ayhan, 'Multiserver-job Response Time under Multilevel Scaling': "
        "jobs need 1 or all n servers, Exp durations; default λ = 0.8 × the FCFS stability threshold μ (Lemma 5.3)",
        {"servers": _Param(10), "p_n": _Param(0.1), "mu_1": _Param(1.0), "mu_n": _Param(1.0),
         "arrival_rate": _Param(None, "0.8 × the FCFS stability threshold μ (Lemma 5.3)")},
        _build_one_and_n),
    "finite-skip-fig6": _Builtin(
        f"{_FS_CITE} Fig. 6: k=4, (need, duration) = (1, Exp(5)), (2, Exp(2)), (4, Exp(0.5)) each w.p. 1/3",
        {"load": _Param(0.6)}, _finite_skip_builder("finite-skip-fig6")),
    "finite-skip-fig7": _Builtin(
        f"{_FS_CITE} Fig. 7: k=4, (need, duration) = (1, Exp(1)) w.p. 4/7, (2, Exp(8)) w.p. 2/7, (4, Exp(64)) "
        "w.p. 1/7",
        {"load": _Param(0.6)}, _finite_skip_builder("finite-skip-fig7")),
    "zero-queueing-set1": _Builtin(
        f"{_ZQ_CITE} Set I: K=3, μ=(0.25, 0.5, 1), needs (3, log2 n, √n), ρ = 1 − n^(−0.1)/4; {_ZQ_MIX}",
        _zero_queueing_params(1), _zero_queueing_builder(1)),
    "zero-queueing-set2": _Builtin(
        f"{_ZQ_CITE} Set II: K=3, μ=(0.25, 0.5, 1), needs (3, log2 n, √n), ρ = 1 − n^(−0.3); {_ZQ_MIX}",
        _zero_queueing_params(2), _zero_queueing_builder(2)),
    "zero-queueing-set3": _Builtin(
        f"{_ZQ_CITE} Set III: K=3, μ=(0.25, 0.5, 1), needs (3, log2 n, m3 ∈ {{√n, 3n^(1/4), log2 n + 2}}), "
        f"ρ = 1 − n^(−0.1)/4; {_ZQ_MIX}",
        _zero_queueing_params(3), _zero_queueing_builder(3)),
    "lublin-feitelson": _Builtin(
        "a synthetic HPC trace from the workload model of Lublin & Feitelson, 'The workload on parallel "
        "supercomputers: modeling the characteristics of rigid jobs', JPDC 63(11), 2003 (published parameters): "
        "rigid jobs, interactive and batch, daily arrival cycle; replayed exactly (--reps R: R traces drawn from "
        "the model)",
        {"jobs": _Param(10_000), "processors": _Param(256), "seed": _Param(1), "time_scale": _Param(1.0)},
        _build_lublin),
}


# ==============================================================================================================# Public entry points


def is_builtin_msj(name: str) -> bool:
    """Whether ``name`` is a built-in multiserver-job scenario."""
    return name in _BUILTINS


def list_msj_scenarios() -> list[tuple[str, str]]:
    """The built-in multiserver-job scenarios as (name, one-line description)."""
    return [(name, b.description) for name, b in _BUILTINS.items()]


def scenario_system(path: Path) -> str | None:
    """The ``system`` key of a scenario file (None when it has none, or cannot be read: loading reports why)."""
    try:
        with path.open("rb") as f:
            text = f.read(MAX_SCENARIO_BYTES + 1).decode("utf-8-sig")
        system = load_toml(text, str(path)).get("system")
    except (OSError, ValueError):  # TOMLDecodeError, UnicodeDecodeError, too deep, an integer beyond 4300 digits
        return None
    return system if isinstance(system, str) else None


def load_msj_scenario(name_or_path: str, overrides: Mapping[str, object] | None = None) -> Scenario:
    """Resolve a built-in multiserver-job scenario or a TOML file path, apply ``overrides``, and validate.

    Args:
        name_or_path: a built-in name (:func:`list_msj_scenarios`), the path of a TOML scenario file, or of a trace
            (``.swf``, ``.csv``: its exact replay, as ``arrivals = { trace = PATH }``).
        overrides: for a built-in, parameter values by name; for a file, values by dotted key path.
    Raises:
        ScenarioError: one line naming the scenario, the key and the valid values.
    """
    name = str(name_or_path)
    overrides = dict(overrides or {})
    if name in _BUILTINS:
        return _load_builtin(name, overrides)
    path = Path(name).expanduser()
    kind, what = path_kind(path)
    if kind in ("special", "unusable"):
        raise ScenarioError(f"scenario {shown(name)}: {what}; give a scenario TOML file")
    if kind != "file":
        raise ScenarioError(f"scenario {shown(name)}: neither a built-in nor an existing file; built-ins: "
                            f"{', '.join(_BUILTINS)}")
    return load_scenario_file(name, overrides)


def _load_builtin(name: str, overrides: dict[str, object]) -> Scenario:
    builtin = _BUILTINS[name]
    unknown = [key for key in overrides if key not in builtin.params]
    if unknown:
        valid = ", ".join(f"{k}={p.shown()}" for k, p in builtin.params.items())
        raise UnknownParameter(f"{name}: unknown parameter {unknown[0]!r}; valid parameters (defaults): {valid}",
                               key=unknown[0])
    merged = {key: param.default for key, param in builtin.params.items()} | overrides
    try:
        params, spec = builtin.build(merged)
        model = model_from_spec(spec)
    except ScenarioError as exc:
        raise ScenarioError(f"{name}: {exc}") from None
    return Scenario(name=name, family="msj", description=builtin.description, params=params, model=model,
                    regime=_regime(name, params, overrides))


# (β, α) of ρ = 1 − βn^(−α) per zero-queueing set, and (c, γ) of m_max ≈ c·n^γ per m3 rule (log n: γ = 0).
_ZQ_SCALING = {"zero-queueing-set1": (0.25, 0.1), "zero-queueing-set2": (1.0, 0.3), "zero-queueing-set3": (0.25, 0.1)}
_ZQ_M3_SCALING = {"sqrt": (1.0, 0.5), "4th-root": (3.0, 0.25), "log": (1.0, 0.0)}


def _regime(name: str, params: dict, overrides: Mapping[str, object]) -> ScalingRegime | None:
    """The scaling sequence of a zero-queueing set (Wang, Xie & Harchol-Balter §7), unless its load was overridden."""
    if name not in _ZQ_SCALING or "load" in overrides:
        return None
    beta, alpha = _ZQ_SCALING[name]
    c, gamma = _ZQ_M3_SCALING[params.get("m3", "sqrt")]
    return ScalingRegime(beta=beta, alpha=alpha, gamma=gamma, c=c)


MAX_SCENARIO_BYTES = 16 * 2**20
"""A scenario file's size: TOML parsed into memory; a scenario is a page, its data (traces, values) in files."""

TRACE_SUFFIXES = (".swf", ".csv")
"""A path with one of these suffixes given as a scenario is a trace, replayed as ``arrivals = { trace = PATH }``."""


def _file_table(path: Path, text: str | None) -> dict:
    """The scenario table of the file at ``path``: its TOML ``text``, or for a trace file (:data:`TRACE_SUFFIXES`,
    ``text`` None) the table of its exact replay, so ``msjgym evaluate TRACE.swf`` needs no scenario file."""
    if text is None:
        return {"description": f"the trace {path.name}, replayed exactly", "arrivals": {"trace": path.name}}
    return load_toml(text, "TOML", ScenarioError)


def load_scenario_file(name: str, overrides: Mapping[str, object] | None = None, *, family: str = "msj",
                       to_msj: Callable[[dict], dict] | None = None,
                       build: Callable[[dict, Path], MSJModel | None] | None = None) -> Scenario:
    """The scenario of the TOML file ``name`` (or of a trace file: :data:`TRACE_SUFFIXES`), with ``overrides``
    (dotted key paths) applied, validated.

    A family derived from this one (``docs/extending.md``, "Derive a family from another") reads its own files
    here: ``family`` is its name (the scenario's ``family``), and ``to_msj`` translates its table, after the
    overrides, into this family's (raising a one-line ``ScenarioError`` that names its own key paths); ``build``,
    when it returns a model for the table (after the overrides) and the file's directory, builds it instead (e.g. a
    derived family's trace replay).
    """
    path = Path(name).expanduser()
    text = None if path.suffix.lower() in TRACE_SUFFIXES else read_user_text(
        path, "scenario", MAX_SCENARIO_BYTES, ScenarioError)  # a byte-order mark dropped
    try:
        raw = _file_table(path, text)
        spec = apply_file_overrides(raw, dict(overrides or {}))
        base_dir = path.resolve().parent
        model = None if build is None else build(spec, base_dir)
        if model is None:
            model = model_from_spec(spec if to_msj is None else to_msj(spec), base_dir=base_dir)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{name}: malformed TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{name}: cannot read the file: {exc}") from None
    except ScenarioError as exc:  # keeps the kind (UnknownParameter: the command line then tries the policy's)
        raise prefixed(exc, f"{name}: ") from None
    except ValueError as exc:  # tomllib on an integer of more than 4300 digits (Python's own limit)
        if isinstance(exc, MsjgymError) or "digits" not in str(exc):  # a trace's own one-line error passes on
            raise
        raise ScenarioError(f"{name}: cannot read the file: {str(exc).split(';')[0]}") from None
    description = spec.get("description") or _summary(model)
    return Scenario(name=name, family=family, description=description, params=spec, model=model)


def _summary(model: MSJModel) -> str:
    classes = ", ".join(f"{c.name}: need {c.need}, p={c.probability:.3g}, {c.service}" for c in model.classes)
    return (f"MSJ scenario file: n={model.servers}, λ={model.arrival_rate:.4g}, ρ={model.load:.3g}; "
            f"classes {classes}")
