"""The discrete-action agent path of the finite-skip systems (``msjgym/FiniteSkip-v0``; no gymnasium needed): the
environment's spec (validated arguments), the named view of its observation, the batch of systems under an agent's
control (:mod:`msjgym.systems.finite_skip.control`), and :class:`ChoiceDecider`, which lets such a policy (an
``sb3:`` model trained on the environment, or ``FILE.py:NAME`` written for it) decide the replications of
:func:`msjgym.evaluate`.

The rate agents of :mod:`msjgym.systems.finite_skip.agent` decide a vector of rates; this path decides the same
allocation one job at a time (choose a window slot, then commit), so that any RL library's discrete policies apply.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from msjgym.core.distributions import encode_all
from msjgym.core.env_batch import EnvBatch
from msjgym.core.observation import ObservationView
from msjgym.core.user_policy import UserPolicy, checked_action
from msjgym.errors import MsjgymError
from msjgym.systems.finite_skip import control as fc
from msjgym.systems.finite_skip.scenarios import FIGURES, RATE_MODEL_FIGURES, load_finite_skip
from msjgym.systems.finite_skip.agent import Epoch
from msjgym.systems.finite_skip.simulate import FiniteSkipModel

SYSTEM_LABELS = {fc.HET: "heterogeneous M/G/k", fc.LPS: "LPS(k)", fc.THRESHOLD: "threshold parallelism",
                 fc.MSJ: "multiserver jobs"}


@dataclass(frozen=True)
class FiniteSkipEnvLayout:
    """The static facts of the observations: k ``servers``, K ``classes``, the ``window`` W, the ``system``."""

    servers: int
    classes: int
    window: int
    system: int

    @property
    def size(self) -> int:
        return fc.observation_size(self.classes, self.window)

    @property
    def commit(self) -> int:
        """The commit action (W)."""
        return self.window

    def describe(self) -> str:
        return f"msjgym/FiniteSkip-v0 k={self.servers}, K={self.classes}, window={self.window}"

    def view(self, observation: np.ndarray) -> FiniteSkipEnvView:
        return FiniteSkipEnvView(observation, self)


class FiniteSkipEnvView(ObservationView):
    """One observation of ``msjgym/FiniteSkip-v0``, named: the allocation being built at this decision epoch and the
    W oldest jobs present. Arrays are over the W window slots (oldest first). Actions: ``choose(i)`` (window slot i),
    ``commit``."""

    __slots__ = ()
    layout: FiniteSkipEnvLayout
    fields = ("free_capacity", "jobs", "truncated", "window_present", "window_chosen", "window_params",
              "window_classes", "window_ages")

    @property
    def _slots(self) -> np.ndarray:
        lay = self.layout
        return self.observation[fc.HEAD:].reshape(lay.window, fc.slot_size(lay.classes))

    @property
    def free_capacity(self) -> float:
        """The fraction of the capacity (1) not yet given to a chosen job at this epoch."""
        return float(self.observation[fc.FREE])

    @property
    def jobs(self) -> int:
        """N, the jobs present."""
        return int(round(float(self.observation[fc.JOBS])))

    @property
    def truncated(self) -> bool:
        """Whether more jobs are present than the window shows."""
        return bool(self.observation[fc.TRUNCATED] > 0.5)

    @property
    def window_present(self) -> np.ndarray:
        """bool[W]: whether slot i holds a job."""
        return self._slots[:, fc.SLOT_PRESENT] > 0.5

    @property
    def window_chosen(self) -> np.ndarray:
        """bool[W]: whether the job in slot i has been chosen at this epoch."""
        return self._slots[:, fc.SLOT_CHOSEN] > 0.5

    @property
    def window_params(self) -> np.ndarray:
        """int64[W]: the job's threshold P (threshold parallelism) or need v (multiserver jobs), else 1 (0: empty)."""
        return np.rint(self._slots[:, fc.SLOT_PARAM].astype(np.float64) * self.layout.servers).astype(np.int64)

    @property
    def window_classes(self) -> np.ndarray:
        """int64[W]: the job's class (-1: empty slot)."""
        slots = self._slots
        return np.where(slots[:, fc.SLOT_PRESENT] > 0.5, np.argmax(slots[:, fc.SLOT_CLASS:], axis=1), -1)

    @property
    def window_ages(self) -> np.ndarray:
        """float32[W]: time since the job's arrival (time units; 0: empty slot)."""
        return self._slots[:, fc.SLOT_AGE]

    @property
    def commit(self) -> int:
        """The action that commits the chosen allocation and runs to the next event."""
        return self.layout.commit

    def choose(self, i: int) -> int:
        """The action that chooses the job in window slot i."""
        if not 0 <= i < self.layout.window:
            raise ValueError(f"window slot {i}: must be in [0, {self.layout.window})")
        return int(i)

    def render_lines(self) -> list[str]:
        """The text picture of ``render_mode="ansi"``."""
        used = 1.0 - self.free_capacity
        cells = 20
        filled = int(round(cells * used))
        jobs = " ".join(f"{'*' if c else ''}c{k}(p={p})" for k, p, c, present in
                        zip(self.window_classes, self.window_params, self.window_chosen, self.window_present)
                        if present)
        return [f"{SYSTEM_LABELS[self.layout.system]}, k = {self.layout.servers} servers",
                f"capacity chosen [{'#' * filled}{'.' * (cells - filled)}] {used:.2f} of 1",
                f"jobs present {self.jobs}; oldest first (* chosen): {jobs}" + (" ..." if self.truncated else "")]


@dataclass(frozen=True)
class FiniteSkipEnvSpec:
    """A validated ``msjgym/FiniteSkip-v0`` configuration (what a policy's constructor receives).

    Attributes:
        scenario: the finite-skip scenario's name (``msjgym list scenarios``: finite-skip-fig2, -fig3, -fig4a,
            -fig4b, -fig6, -fig7); ``model`` its :class:`~msjgym.systems.finite_skip.simulate.FiniteSkipModel`.
        window: W, the oldest jobs the agent sees and can choose.
        horizon_jobs: the episode ends at this arrival.
        capacity: the most jobs present (an arrival beyond ends the episode, ``info["overflow"]``).
    """

    scenario: str
    model: FiniteSkipModel
    window: int = 8
    horizon_jobs: int = 1000
    capacity: int = 2000

    @classmethod
    def make(cls, scenario: str = "finite-skip-fig4a", window: int = 8, horizon_jobs: int = 1000,
             capacity: int = 2000, **params: Any) -> FiniteSkipEnvSpec:
        if not isinstance(scenario, str) or scenario not in FIGURES:
            raise MsjgymError(f"scenario = {scenario!r}: must be one of {', '.join(FIGURES)}")
        for name, value, low in (("window", window, 1), ("horizon_jobs", horizon_jobs, 1),
                                 ("capacity", capacity, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise MsjgymError(f"{name} = {value!r}: must be an integer >= {low}")
        return cls(scenario, load_finite_skip(scenario, params), int(window), int(horizon_jobs), int(capacity))

    @property
    def servers(self) -> int:
        return self.model.servers

    @property
    def classes(self) -> int:
        return len(self.model.probs)

    @property
    def observation_size(self) -> int:
        return self.layout.size

    @property
    def action_count(self) -> int:
        return self.window + 1

    def describe(self) -> str:
        return f"scenario={self.scenario!r}, window={self.window}"

    @cached_property
    def layout(self) -> FiniteSkipEnvLayout:
        return FiniteSkipEnvLayout(self.model.servers, self.classes, self.window, self.model.system)

    def view(self, observation: np.ndarray) -> FiniteSkipEnvView:
        """The named view of an observation; ValueError for one of the wrong shape."""
        return self.layout.view(observation)


RATE_MODEL_SCENARIOS = RATE_MODEL_FIGURES
"""The scenarios whose systems are rate models of their own (fig6/fig7 are multiserver jobs as a rate model)."""


class FiniteSkipEnvBatch(EnvBatch):
    """B finite-skip systems under an agent's control (an :class:`~msjgym.core.env_batch.EnvBatch`)."""

    def __init__(self, spec: FiniteSkipEnvSpec, num: int) -> None:
        m = spec.model
        self.spec = spec
        k = m.servers
        self._cumprob = np.cumsum(np.asarray(m.probs, dtype=np.float64))
        self._cumprob[-1] = 1.0
        self._prm = np.asarray(m.params, dtype=np.int64)
        self._scale = np.asarray(m.size_scales, dtype=np.float64)
        self._dkind, self._dstart, self._ddata = encode_all(m.laws)
        speeds = m.speeds if m.system == fc.HET else [1.0 / k] * k
        self._speeds = np.sort(np.asarray(speeds, dtype=np.float64))[::-1].copy()  # fastest first
        self.arrays = fc.new_arrays(num, k, spec.capacity)
        self.state = _State(np.zeros((num, 4), np.uint64) + np.uint64(1))
        self._buffers(num, spec.observation_size, spec.action_count)

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        self._call(slice(None), actions, resetting)

    def reset_copies(self, which: np.ndarray) -> None:
        for b in which:
            self._call(slice(int(b), int(b) + 1), np.zeros(1, np.int64), np.ones(1, np.bool_))

    def info(self, b: int) -> dict[str, Any]:
        ints, flts = self.arrays["ints"], self.arrays["flts"]
        return {"time": float(flts[b, fc.F_TIME]), "events": int(ints[b, fc.I_EVENTS]),
                "arrivals": int(ints[b, fc.I_SEQ]), "jobs": int(ints[b, fc.I_N]),
                "overflow": bool(ints[b, fc.I_OVERFLOW])}

    def _call(self, sub: slice, actions: np.ndarray, resetting: np.ndarray) -> None:
        m, a, spec = self.spec.model, self.arrays, self.spec
        fc.step_batch(m.system, m.servers, float(m.arrival_rate), self._cumprob, self._prm, self._scale, self._dkind,
                      self._dstart, self._ddata, self._speeds, spec.classes, spec.window, spec.horizon_jobs,
                      a["ints"][sub], a["flts"][sub], a["cls"][sub], a["rem"][sub], a["arr"][sub], a["chosen"][sub],
                      a["rates"][sub], a["taken"][sub], self.state.rng[sub], actions, resetting, self.obs[sub],
                      self.masks[sub], self.rewards[sub], self.dts[sub], self.ended[sub])


@dataclass
class _State:
    """The batch's random streams (``rng``: uint64[B, 4]; :mod:`msjgym.core.rng`)."""

    rng: np.ndarray


class ChoiceDecider:
    """A policy of ``msjgym/FiniteSkip-v0`` as a decider of
    :func:`~msjgym.systems.finite_skip.agent.agent_replication` (``msjgym.evaluate(..., mode="choose")``).

    At each decision epoch it builds the allocation exactly as the environment does, with the same compiled steps of
    :mod:`msjgym.systems.finite_skip.control`: the observation and mask of the W oldest jobs, one choice at a time,
    until the policy commits (automatic when nothing more can be chosen, as in the environment); LPS shares the
    capacity equally among the chosen jobs. So a policy evaluates on what it was trained on, and every choice goes
    through the one check of every family (:func:`msjgym.core.user_policy.checked_action`: a masked or malformed action
    stops the run with one ``PolicyError`` naming the replication and the step, the choice's index in it).
    """

    def __init__(self, spec: FiniteSkipEnvSpec, decide: UserPolicy, capacity: int) -> None:
        m = spec.model
        self.spec, self.decide, self.name = spec, decide, decide.name
        self._prm = np.asarray(m.params, dtype=np.int64)
        speeds = m.speeds if m.system == fc.HET else [1.0 / m.servers] * m.servers
        self._speeds = np.sort(np.asarray(speeds, dtype=np.float64))[::-1].copy()  # fastest first
        self._arrays = fc.new_arrays(1, m.servers, capacity)
        self._obs = np.zeros((1, spec.observation_size), np.float32)
        self._mask = np.zeros((1, spec.action_count), np.bool_)
        self._steps: dict[int, int] = {}

    def __call__(self, epoch: Epoch, rep: int, step: int) -> tuple[np.ndarray, None]:
        m, spec, a = self.spec.model, self.spec, self._arrays
        system, k, n = m.system, m.servers, len(epoch.classes)
        ints, flts, cls, arr = a["ints"], a["flts"], a["cls"], a["arr"]
        chosen, rates, taken = a["chosen"], a["rates"], a["taken"]
        ints[0, fc.I_N] = n
        flts[0, fc.F_TIME] = epoch.time
        cls[0, :n] = epoch.classes
        arr[0, :n] = epoch.arrivals
        fc.new_epoch(0, ints, chosen, rates, taken, k)
        count = self._steps.get(rep, 0)
        while fc.observe(system, 0, ints, flts, cls, arr, chosen, rates, self._prm, k, spec.classes, spec.window,
                         self._obs, self._mask):
            action = checked_action(self.decide, self._obs[0], self._mask[0], self.name, rep, count)
            count += 1
            if action == spec.window:  # commit
                break
            fc.choose(system, 0, action, ints, cls, chosen, rates, taken, self._prm, self._speeds, k)
        self._steps[rep] = count
        if system == fc.LPS and ints[0, fc.I_CHOSEN] > 0:  # the chosen jobs share the capacity (as at the commit)
            return np.where(chosen[0, :n], 1.0 / ints[0, fc.I_CHOSEN], 0.0), None
        return rates[0, :n].copy(), None
