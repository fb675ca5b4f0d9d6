"""Direct policy search for the pick action of ``msjgym/JobScheduling-v0``: an evolution strategy over the weights of
the job-scoring network, judged by the greedy schedule itself.

The evaluation policy of a job-scoring model is deterministic (the argmax of the masked per-row scores,
:func:`msjgym.envs.scoring.numpy_scores`), so this module optimises exactly that: a candidate weight vector θ is
scored by running its greedy scheduler on whole trace windows (each from an empty machine, every job to completion)
and taking the mean over windows of log(mean bounded slowdown of the window). Every candidate of a generation runs on
the SAME windows (common random numbers: the comparison within a generation has no window noise), each generation on
fresh windows. This is how the F1 priority function was found (Carastan-Santos & de Camargo, "Obtaining dynamic
scheduling policies with simulation and machine learning", SC'17, §3: simulate many sequences, fit a priority
function to what the simulations say is good); the search is the evolution strategy of Salimans, Ho, Chen, Sidor &
Sutskever, "Evolution strategies as a scalable alternative to reinforcement learning", arXiv:1703.03864, 2017
(antithetic Gaussian perturbations, centred-rank fitness shaping, §2.1–2.2), with Adam steps (Kingma & Ba, ICLR 2015).

The parametrisations of the per-row score (the same network :class:`~msjgym.envs.scoring.JobScoringPolicy` evaluates):

* ``"linear"``: score = x·w over the F features of a row (F weights). :func:`linear_as_mlp` writes it into the
  F→32→16→8→1 ReLU network exactly (x·w = relu(x·w) − relu(−x·w), carried through the hidden layers), so a
  linear search can warm-start the full network.
* ``"mlp"``: the 1,153 weights of that network (``SCORE_ARCH``), flattened layer by layer (W then b).
* ``"gated"``: F weights v of a second, linear score added to a fixed one f (the previous stage's result), weighted
  by one minus the ``accuracy`` column (``estimate_accuracy=True``): score = f(x) + (1 − x_accuracy)·x·v, the
  policy's ``gate_column`` (:mod:`msjgym.envs.scoring`). On a trace with exact requested times the accuracy is 1 and
  the score is f's: the search changes only how the model scores jobs once requested times prove inaccurate.

The start :func:`base_order_weights` (weight 1 on the ``heuristic`` column, 0 elsewhere) picks row 0, the base
order's job, at every decision: the search starts at the base heuristic's schedule. :func:`save_sb3_model` writes a
weight vector into a MaskablePPO model with the job-scoring policy (the critic untrained) and the environment's
settings, so ``msjgym evaluate --policy sb3:MODEL.zip`` runs it as any trained model.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from msjgym.core.jit import njit
from msjgym.envs.scoring import SCORE_ARCH
from msjgym.systems.msj import job_control as jc
from msjgym.systems.msj.job_agent import JobBatch, JobSpec
from msjgym.systems.msj.job_observation import ACCURACY, FEATURES, HEURISTIC, PRESENT
from msjgym.systems.msj.state import T_NOW

__all__ = ["MLPShape", "linear_as_mlp", "base_order_weights", "WindowRunner", "SearchSettings", "evolve",
           "save_sb3_model", "linear_weights_of_model", "mlp_weights_of_model", "gated_score", "penalised_fitness",
           "PARAMETRISATIONS", "OBJECTIVES", "fitness"]

PARAMETRISATIONS = ("linear", "mlp", "gated")
OBJECTIVES = ("mean-log", "log-mean")
"""The fitness of a candidate on one trace's windows (:func:`fitness`): ``"mean-log"``, the mean over windows of
log(the window's mean bounded slowdown); ``"log-mean"``, log(the mean over windows of it), the log of the evaluation
metric's mean on those windows."""


# ---------------------------------------------------------------- the score functions
@dataclass(frozen=True)
class MLPShape:
    """The per-row scoring MLP: ``features`` → ``hidden`` widths → 1, ReLU between layers (the scorer of
    :class:`~msjgym.envs.scoring.JobScoringPolicy`); θ holds each layer's W (in × out, y = x W + b) then b."""

    features: int = FEATURES
    hidden: tuple[int, ...] = SCORE_ARCH

    @property
    def sizes(self) -> list[int]:
        return [self.features, *self.hidden, 1]

    @property
    def size(self) -> int:
        """Weights in θ (1,153 for 14 → 32 → 16 → 8 → 1)."""
        s = self.sizes
        return sum(s[i] * s[i + 1] + s[i + 1] for i in range(len(s) - 1))

    def unpack(self, theta: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """[(W, b)] of each layer (views of θ)."""
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (self.size,):
            raise ValueError(f"theta of shape {theta.shape}: expected ({self.size},) for sizes {self.sizes}")
        layers, at, s = [], 0, self.sizes
        for i in range(len(s) - 1):
            w = theta[at:at + s[i] * s[i + 1]].reshape(s[i], s[i + 1])
            at += s[i] * s[i + 1]
            layers.append((w, theta[at:at + s[i + 1]]))
            at += s[i + 1]
        return layers

    def scores(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """float64[N]: the score of each row of x (float[N, F])."""
        layers = self.unpack(theta)
        h = x
        for i, (w, b) in enumerate(layers):
            h = h @ w + b
            if i < len(layers) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]


def linear_as_mlp(w: np.ndarray, shape: MLPShape = MLPShape()) -> np.ndarray:
    """θ of ``shape``'s MLP computing exactly x·w (F weights): the first layer's units 0 and 1 hold ±x·w, each later
    layer passes relu(x·w) and relu(−x·w) on through units 0 and 1, the output is their difference; every other
    weight is 0. Needs hidden widths ≥ 2."""
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (shape.features,):
        raise ValueError(f"w of shape {w.shape}: expected ({shape.features},)")
    if min(shape.hidden) < 2:
        raise ValueError(f"hidden widths {shape.hidden}: each must be >= 2 to carry ±x·w")
    theta = np.zeros(shape.size)
    layers = shape.unpack(theta)  # views: writing them writes θ
    layers[0][0][:, 0], layers[0][0][:, 1] = w, -w
    for wl, _ in layers[1:-1]:
        wl[0, 0], wl[1, 1] = 1.0, 1.0
    layers[-1][0][0, 0], layers[-1][0][1, 0] = 1.0, -1.0
    return theta


def base_order_weights(features: int = FEATURES) -> np.ndarray:
    """Linear weights (``features`` of them: 14, or 17 with ``estimate_accuracy``) picking row 0 (the base order's
    job) at every decision: 1 on the ``heuristic`` column."""
    w = np.zeros(features)
    w[HEURISTIC] = 1.0
    return w


def score_function(parametrisation: str, shape: MLPShape = MLPShape()) -> tuple[int, Callable]:
    """(θ's size, scores(θ, x) → float64[N]) of ``"linear"`` or ``"mlp"`` (``"gated"``: :func:`gated_score`)."""
    if parametrisation == "linear":
        return shape.features, lambda theta, x: x @ theta
    if parametrisation == "mlp":
        return shape.size, shape.scores
    raise ValueError(f"parametrisation = {parametrisation!r}: one of 'linear', 'mlp'")


def gated_score(base: Callable[[np.ndarray], np.ndarray], gate: int = ACCURACY) -> Callable:
    """scores(v, x) = base(x) + (1 − x[:, gate])·(x·v): the ``"gated"`` parametrisation, ``base`` the fixed first
    score (e.g. ``lambda x: mlp_scores(theta, x)``)."""
    return lambda v, x: base(x) + (1.0 - x[:, gate]) * (x @ v)


# ---------------------------------------------------------------- running candidates on common windows
@njit
def _step_active(st, pr, ctl, jcs, actions, active, obs, masks, codes):
    """``job_control.step_system`` for the copies still running (the finished ones stay as they are)."""
    for b in range(actions.size):
        if active[b]:
            codes[b] = jc.step_system(st, pr, ctl, jcs, b, actions[b], obs[b], masks[b])
        else:
            codes[b] = 0


class WindowRunner:
    """P candidates × W windows of one trace scenario, scheduled greedily through ``msjgym/JobScheduling-v0``'s
    compiled decision path (no gymnasium): copy p·W + w runs candidate p on window w; ``action`` "pick" (default) or
    "backfill" (the rows the mask allows are scored alike).

    ``env``: the environment's arguments (window, base_order, backfill, time_scale, bsld_threshold, ...);
    ``window_jobs``: jobs per window (each replayed from an empty machine to the completion of all of them)."""

    def __init__(self, scenario: Any, env: dict[str, Any], window_jobs: int, windows: int, candidates: int) -> None:
        known = ("window", "action", "base_order", "backfill", "time_scale", "bsld_threshold", "estimate_accuracy")
        if env.get("action", "pick") not in ("pick", "backfill"):
            raise ValueError(f"action = {env['action']!r}: the search scores rows, \"pick\" or \"backfill\"")
        self.spec = JobSpec.make(scenario, reward="mean-bounded-slowdown", horizon_jobs=window_jobs,
                                 trace_windows=True, **{k: v for k, v in env.items() if k in known})
        self.windows, self.candidates = int(windows), int(candidates)
        self.batch = JobBatch(self.spec, self.windows * self.candidates)
        self.decisions = 0
        self.seconds = 0.0
        self.makespans = np.full((self.candidates, self.windows), np.nan)
        """The last :meth:`run`'s makespans: from each window's first arrival to its last completion (the scenario's
        time unit), float64[P, W]."""

    def run(self, score: Callable[[np.ndarray, np.ndarray], np.ndarray], thetas: np.ndarray,
            seeds: Sequence[np.random.SeedSequence]) -> np.ndarray:
        """float64[P, W]: the mean bounded slowdown of window w (drawn from ``seeds[w]``) under candidate p's greedy
        scheduler (argmax of ``score(thetas[p], rows)`` over the allowed rows; ties to the first row)."""
        P, W = self.candidates, self.windows
        if len(thetas) != P or len(seeds) != W:
            raise ValueError(f"{len(thetas)} candidates and {len(seeds)} window seeds: expected {P} and {W}")
        start = time.perf_counter()
        batch = self.batch
        B = P * W
        batch.seed([seeds[b % W] for b in range(B)])
        batch.step(np.zeros(B, np.int64), np.ones(B, np.bool_))
        active = ~batch.ended.copy()
        result = np.full(B, np.nan)
        span = np.full(B, np.nan)
        actions = np.zeros(B, np.int64)
        st, pr = batch.sim.state, batch.sim.params
        while active.any():
            for p in range(P):
                rows = slice(p * W, (p + 1) * W)
                allowed = batch.masks[rows] & active[rows, None] & (batch.obs[rows, :, PRESENT] > 0.5)
                if not allowed.any():
                    continue
                values = np.full(allowed.shape, -np.inf)
                values[allowed] = score(thetas[p], batch.obs[rows][allowed].astype(np.float64))
                actions[rows] = np.argmax(values, axis=1)
            self.decisions += int(active.sum())
            _step_active(batch.sim.state, batch.sim.params, batch.ctl, batch.jc, actions, active, batch.obs,
                         batch.masks, batch.codes)
            if (batch.codes == 2).any():
                batch.finish()
                st = batch.sim.state
            if (batch.codes == 1).any():
                raise RuntimeError("the control layer refused an action its mask allowed")
            batch._outputs()
            done = active & batch.ended
            result[done] = -batch.rewards[done]
            span[done] = batch.sim.state.sys_f[done, T_NOW] - batch.jc.floats[done, jc.G_FIRST]
            active &= ~batch.ended
        del st, pr
        self.seconds += time.perf_counter() - start
        self.makespans = span.reshape(P, W)
        return result.reshape(P, W)


# ---------------------------------------------------------------- the evolution strategy
@dataclass
class SearchSettings:
    """One stage of the search. ``pairs``: antithetic pairs per generation (2·pairs perturbed candidates, plus the
    centre); ``sigma``: the perturbations' standard deviation; ``learning_rate``: Adam's step; ``seconds`` and
    ``generations``: whichever ends first; ``validate_every``: generations between validations of the centre;
    ``objective``: one of :data:`OBJECTIVES`, the fitness of each trace's windows (:func:`fitness`);
    ``makespan_weight``: λ ≥ 0 of :func:`penalised_fitness` (0: bounded slowdown alone)."""

    parametrisation: str = "linear"
    pairs: int = 8
    sigma: float = 0.1
    learning_rate: float = 0.05
    generations: int = 1000
    seconds: float = 600.0
    validate_every: int = 5
    weight_decay: float = 0.0
    objective: str = "mean-log"
    makespan_weight: float = 0.0
    log: list[dict[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective = {self.objective!r}: one of {', '.join(map(repr, OBJECTIVES))}")
        if not (isinstance(self.makespan_weight, (int, float)) and 0.0 <= self.makespan_weight <= 100.0):
            raise ValueError(f"makespan_weight = {self.makespan_weight!r}: a number in [0, 100]")


def centred_ranks(f: np.ndarray) -> np.ndarray:
    """Ranks of f scaled to [−0.5, 0.5] (Salimans et al. 2017, §2.2's fitness shaping); ties share their mean rank."""
    order = np.argsort(f, kind="stable")
    ranks = np.empty(len(f))
    ranks[order] = np.arange(len(f))
    for value in np.unique(f):  # equal fitness (e.g. identical schedules): equal weight
        same = f == value
        ranks[same] = ranks[same].mean()
    return ranks / max(len(f) - 1, 1) - 0.5


def fitness(bsld: np.ndarray, objective: str = "mean-log") -> np.ndarray:
    """float64[P]: the objective minimised from bsld (float[P, W]: candidate p's mean bounded slowdown on window w, the
    same windows for every candidate). ``"mean-log"``: the mean over windows of log(bsld) (a log, so a few heavy
    windows do not dominate); ``"log-mean"``: log(the mean over windows of bsld), which the heavy windows do
    dominate, as they dominate the evaluation metric (a mean over windows); the log keeps traces of different
    slowdown scales comparable when several are averaged."""
    bsld = np.maximum(bsld, 1.0)
    if objective == "mean-log":
        return np.log(bsld).mean(axis=1)
    if objective == "log-mean":
        return np.log(bsld.mean(axis=1))
    raise ValueError(f"objective = {objective!r}: one of {', '.join(map(repr, OBJECTIVES))}")


def penalised_fitness(bsld: np.ndarray, makespans: np.ndarray, objective: str = "mean-log",
                      makespan_weight: float = 0.0) -> np.ndarray:
    """float64[P]: :func:`fitness` + λ · the mean over windows of log(makespan) (λ = ``makespan_weight``; both
    float[P, W] on the same windows). Why: a window ends with its last arrival, and a scheduler that defers wide or
    long jobs past it lowers the mean bounded slowdown of the window (the deferred jobs are few, and long) at the cost
    of a longer makespan: the search finds that and the held-out windows reward it (``baselines/README.md``,
    ``hpc_pick_long``). The makespan of a window is its arrivals' span plus the drain after them, so λ · log(makespan)
    charges the drain (λ = 2: doubling the makespan costs as much as a 4× higher bounded slowdown)."""
    f = fitness(bsld, objective)
    if makespan_weight:
        f = f + makespan_weight * np.log(makespans).mean(axis=1)
    return f


def evolve(theta: np.ndarray, settings: SearchSettings, runners: Sequence[Any],
           validate: Callable[[np.ndarray], float] | None, seed: int,
           score: Callable[[np.ndarray, np.ndarray], np.ndarray], print_every: int = 1) -> tuple[np.ndarray, float]:
    """Minimise :func:`fitness` (``settings.objective``) from ``theta``: each generation draws fresh windows for every runner (the same for
    all candidates), runs the centre and ``pairs`` antithetic pairs θ ± σε, and moves the centre by Adam along the
    rank-weighted ε. ``validate(θ)`` (lower is better) is called on the start and every ``validate_every``
    generations; returns (the best validated centre, its validation value), or the last centre without ``validate``.
    Each runner must hold 2·pairs + 1 candidates (a :class:`WindowRunner`, or any object with ``windows``,
    ``decisions``, ``seconds`` and ``run(score, thetas, seeds)`` → float64[P, W] mean bounded slowdowns)."""
    rng = np.random.default_rng(seed)
    theta = np.asarray(theta, dtype=np.float64).copy()
    D = theta.size
    m, v = np.zeros(D), np.zeros(D)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    best, best_value = theta.copy(), validate(theta) if validate else math.inf
    if validate:
        print(f"    start: validation {best_value:.4f}", flush=True)
    start = time.perf_counter()
    seeds = np.random.SeedSequence(seed)
    for g in range(settings.generations):
        if time.perf_counter() - start >= settings.seconds:
            break
        noise = rng.standard_normal((settings.pairs, D))
        thetas = np.concatenate([theta[None], theta + settings.sigma * noise, theta - settings.sigma * noise])
        thetas = thetas.astype(np.float32).astype(np.float64)  # the weights a saved model holds (float32)
        f = np.zeros(len(thetas))
        windows = 0
        for runner in runners:
            window_seeds = seeds.spawn(runner.windows)
            bsld = runner.run(score, thetas, window_seeds)
            f += penalised_fitness(bsld, getattr(runner, "makespans", None), settings.objective,
                                   settings.makespan_weight) * runner.windows
            windows += runner.windows
        f /= windows
        r = centred_ranks(f[1:])
        plus, minus = r[:settings.pairs], r[settings.pairs:]
        grad = ((plus - minus)[:, None] * noise).sum(axis=0) / (2 * settings.pairs * settings.sigma)
        grad += settings.weight_decay * theta
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad ** 2
        step = settings.learning_rate * (m / (1 - beta1 ** (g + 1))) / (np.sqrt(v / (1 - beta2 ** (g + 1))) + eps)
        theta = theta - step  # minimising: lower ranks are better
        row = {"generation": g + 1, "seconds": round(time.perf_counter() - start, 1), "centre": float(f[0]),
               "best_candidate": float(f[1:].min()), "mean_candidate": float(f[1:].mean())}
        if validate and (g + 1) % settings.validate_every == 0:
            value = validate(theta)
            row["validation"] = value
            if value < best_value:
                best, best_value = theta.copy(), value
        settings.log.append(row)
        if (g + 1) % print_every == 0 or "validation" in row:
            decisions = sum(r.decisions for r in runners)
            busy = sum(r.seconds for r in runners)
            print(f"    gen {g + 1:4d} {row['seconds']:6.0f} s  centre {f[0]:.4f}  candidates {f[1:].min():.4f}.."
                  f"{f[1:].max():.4f}" + (f"  validation {row['validation']:.4f}" if "validation" in row else "")
                  + f"  ({decisions / max(busy, 1e-9):,.0f} decisions/s)", flush=True)
    if not validate:
        return theta, math.inf
    return best, best_value


# ---------------------------------------------------------------- the SB3 model
def _layers_of_model(path: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(W, b)] of the scoring network of a saved job-scoring model (W: in × out, float64)."""
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    linears = [m for m in model.policy.mlp_extractor.score_net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.astype(np.float64), m.bias.detach().numpy().astype(np.float64))
            for m in linears]


def linear_weights_of_model(path: str) -> np.ndarray:
    """The F linear weights w of a saved job-scoring model (``path``: a ``.zip`` of :func:`save_sb3_model`) whose
    network computes a linear score, i.e. holds exactly :func:`linear_as_mlp` (w) (a linear search's result);
    ValueError if the network is not of that form."""
    layers = _layers_of_model(path)
    shape = MLPShape(features=layers[0][0].shape[0], hidden=tuple(w.shape[1] for w, _ in layers[:-1]))
    theta = np.concatenate([a.ravel() for layer in layers for a in layer])
    w = layers[0][0][:, 0].copy()
    if not np.array_equal(theta, linear_as_mlp(w, shape)):
        raise ValueError(f"{path}: its scoring network is not a linear score (not linear_as_mlp of its first unit)")
    return w


def mlp_weights_of_model(path: str, shape: MLPShape) -> np.ndarray:
    """θ (``shape``) of a saved job-scoring model's whole network (an ``"mlp"`` search's result). A model of fewer
    features (the observation without the trailing ``estimate_accuracy`` columns) gets zero input weights for the
    columns it lacks, so it scores every job as before; ValueError if its hidden widths differ from ``shape``'s or
    it has more features."""
    layers = _layers_of_model(path)
    (w0, b0), rest = layers[0], layers[1:]
    hidden = tuple(w.shape[1] for w, _ in layers[:-1])
    if hidden != shape.hidden or w0.shape[0] > shape.features:
        raise ValueError(f"{path}: a network {w0.shape[0]} → {hidden} → 1; expected at most {shape.features} "
                         f"features → {shape.hidden} → 1")
    w0 = np.vstack([w0, np.zeros((shape.features - w0.shape[0], w0.shape[1]))])
    return np.concatenate([a.ravel() for layer in [(w0, b0), *rest] for a in layer])


def save_sb3_model(theta: np.ndarray, venv: Any, path: str, seed: int = 0, shape: MLPShape = MLPShape(),
                   gated: np.ndarray | None = None, **policy_kwargs: Any) -> Any:
    """Write the scoring MLP θ (``shape``; a linear θ of F weights is first written with :func:`linear_as_mlp`)
    into a MaskablePPO model with :class:`~msjgym.envs.scoring.JobScoringPolicy` on ``venv`` (a
    ``msjgym/JobScheduling-v0`` vector environment: its settings are saved with the model,
    :func:`msjgym.envs.sb3.record_env`) and save it to ``path``; returns the model. ``gated``: the linear weights v
    of the ``"gated"`` second score (the policy's ``gate_column`` = the ``accuracy`` column). The critic keeps its
    initial weights (the greedy actor does not use it)."""
    import torch
    from sb3_contrib import MaskablePPO

    from msjgym.envs import to_sb3
    from msjgym.envs.sb3 import record_env
    from msjgym.envs.scoring import JobScoringPolicy

    def as_mlp(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        return linear_as_mlp(t, shape) if t.shape == (shape.features,) else t

    policy_kwargs.setdefault("present_column", PRESENT)
    policy_kwargs["score_arch"] = shape.hidden
    if gated is not None:
        policy_kwargs["gate_column"] = ACCURACY
    model = MaskablePPO(JobScoringPolicy, to_sb3(venv), seed=seed, device="cpu", policy_kwargs=policy_kwargs,
                        verbose=0)
    net = model.policy.mlp_extractor
    with torch.no_grad():
        for module, t in ((net.score_net, theta), (net.gated_net, gated)):
            if t is None:
                continue
            linears = [m for m in module if isinstance(m, torch.nn.Linear)]
            for layer, (w, b) in zip(linears, shape.unpack(as_mlp(t)), strict=True):
                layer.weight.copy_(torch.as_tensor(w.T, dtype=torch.float32))
                layer.bias.copy_(torch.as_tensor(b, dtype=torch.float32))
    record_env(model, venv)
    model.save(path, exclude=["_last_obs", "_last_original_obs"])
    return model
