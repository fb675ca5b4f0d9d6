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

from msjgym.core.compiling import compile_units
from msjgym.core.env_batch import EnvBatch
from msjgym.core.fast_call import FastCall
from msjgym.core.observation import ObservationView
from msjgym.core.user_policy import UserPolicy, checked_action
from msjgym.errors import MsjgymError
from msjgym.systems.finite_skip import control as fc
from msjgym.systems.finite_skip.agent import Epoch
from msjgym.systems.finite_skip.contract import HET, LPS, MSJ, THRESHOLD
from msjgym.systems.finite_skip.model import FiniteSkipModel, FiniteSkipParams, compiled_params, front_rule
from msjgym.systems.finite_skip.scenarios import FIGURES, RATE_MODEL_FIGURES, load_finite_skip
from msjgym.systems.finite_skip.simulation import loop_units
from msjgym.systems.finite_skip.state import F_TIME, I_CHOSEN, I_N, FiniteSkipState, new_state

SYSTEM_LABELS = {HET: "heterogeneous M/G/k", LPS: "LPS(k)", THRESHOLD: "threshold parallelism",
                 MSJ: "multiserver jobs"}


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
            -fig4b, -fig6, -fig7); ``model`` its :class:`~msjgym.systems.finite_skip.model.FiniteSkipModel`.
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
    """B finite-skip systems under an agent's control (an :class:`~msjgym.core.env_batch.EnvBatch`): one state
    record (:mod:`msjgym.systems.finite_skip.state`) stepped by :func:`msjgym.systems.finite_skip.control.step_batch`."""

    def __init__(self, spec: FiniteSkipEnvSpec, num: int) -> None:
        self.spec = spec
        self.params = decision_params(spec.model)
        self.state: FiniteSkipState = new_state(num, spec.model.servers, len(self.params.levels), spec.capacity)
        self._reset_actions = np.zeros(num, np.int64)
        self._resetting = np.ones(num, np.bool_)
        self._buffers(num, spec.observation_size, spec.action_count)
        compile_units(loop_units())  # the loop first: step_batch calls its one compiled signature
        self._step = FastCall(fc.step_batch, (self.state, self.params, spec.classes, spec.window, spec.horizon_jobs),
                              (0, num, self._reset_actions, self._resetting, self.obs, self.masks, self.rewards,
                               self.dts, self.ended))

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        self._call(0, len(actions), actions, resetting)

    def reset_copies(self, which: np.ndarray) -> None:
        for b in which:
            self._call(int(b), int(b) + 1, self._reset_actions, self._resetting)

    def info(self, b: int) -> dict[str, Any]:
        return fc.info(self.state, b)

    def _call(self, lo: int, hi: int, actions: np.ndarray, resetting: np.ndarray) -> None:
        self._step(lo, hi, actions, resetting, self.obs, self.masks, self.rewards, self.dts, self.ended)


def decision_params(model: FiniteSkipModel) -> FiniteSkipParams:
    """The compiled parameters of ``model`` on the decision path: the system's own front rule, nothing measured."""
    return compiled_params(model, rule=front_rule(model))


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
        self._params = decision_params(m)
        self._system: FiniteSkipState = new_state(1, m.servers, len(self._params.levels), capacity)
        self._obs = np.zeros((1, spec.observation_size), np.float32)
        self._mask = np.zeros((1, spec.action_count), np.bool_)
        self._steps: dict[int, int] = {}

    def __call__(self, epoch: Epoch, rep: int, step: int) -> tuple[np.ndarray, None]:
        spec, st, pr = self.spec, self._system, self._params
        n = len(epoch.classes)
        st.ints[0, I_N] = n
        st.flts[0, F_TIME] = epoch.time
        st.cls[0, :n] = epoch.classes
        st.arr[0, :n] = epoch.arrivals
        fc.new_epoch(st, pr, 0)
        count = self._steps.get(rep, 0)
        while fc.observe(st, pr, 0, spec.classes, spec.window, self._obs, self._mask):
            action = checked_action(self.decide, self._obs[0], self._mask[0], self.name, rep, count)
            count += 1
            if action == spec.window:  # commit
                break
            fc.choose(st, pr, 0, action)
        self._steps[rep] = count
        chosen = st.ints[0, I_CHOSEN]
        if spec.model.system == LPS and chosen > 0:  # the chosen jobs share the capacity (as at the commit)
            return np.where(st.chosen[0, :n], 1.0 / chosen, 0.0), None
        return st.rates[0, :n].copy(), None
