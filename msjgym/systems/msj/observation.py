"""The observation and actions of ``msjgym/MSJ-v0``: their layout, defined once (the compiled control layer,
:mod:`msjgym.systems.msj.control`, writes with these offsets), and the named views a policy reads them with.

``mode="start"`` (K classes, window W, n servers): ``[FREE]`` free servers / n; class c's entries at
``class_at(mode, c) +`` ``WAITING`` (jobs waiting), ``IN_SERVICE`` (jobs in service), ``OLDEST_AGE`` (age of its
oldest waiting job, time units; 0 when none waits); window slot i's (the i-th oldest waiting job's) at
``slot_at(mode, K, i) +`` ``SLOT_PRESENT`` (1 if a job is there), ``SLOT_NEED`` (its need / n), ``SLOT_AGE`` (its age)
and ``SLOT_CLASS + c`` (its class, one-hot). Actions: i < W starts slot i's job, ``class_action(W, c)`` class c's
oldest waiting job, ``wait_action(mode, K, W)`` waits for the next event.

``mode="preemptive"`` (sequence length L = window): ``[LEFT]`` servers not yet chosen / n, ``[TRUNCATED]`` 1 if more
than L jobs are present; class c's entries at ``class_at(mode, c) +`` ``PRESENT`` (jobs present), ``CHOSEN`` (chosen
so far), ``SERVING`` (in service); sequence slot i's (the i-th oldest job present) at ``slot_at(mode, K, i) +``
``SEQ_PRESENT``, ``SEQ_IN_SERVICE``, ``SEQ_CLASS + c``. Actions: c < K adds class c's oldest not yet chosen job,
``wait_action(mode, K, L)`` = K commits.

With ``estimates`` (an environment argument, off by default so that observations keep their size), W (L) more
entries at ``estimates_at(mode, K, W) + i``: the requested run time (the runtime estimate of the whole job, time
units; 0: empty slot) of window (sequence) slot i's job.

A policy reads them through :class:`StartView` / :class:`PreemptiveView` (``spec.view(observation)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from msjgym.core.jit import njit
from msjgym.core.observation import ObservationView, counts_text, server_bar
from msjgym.errors import MsjgymError
from msjgym.systems.msj.state import MODE_START

# ---------------------------------------------------------------- layout (the control layer writes with it)
FREE = 0  # start: free servers / n
LEFT = 0  # preemptive: servers not yet chosen / n
TRUNCATED = 1  # preemptive: 1 if more than L jobs are present
CLASS_FIELDS = 3  # entries per class
WAITING, IN_SERVICE, OLDEST_AGE = 0, 1, 2  # start: a class's entries
PRESENT, CHOSEN, SERVING = 0, 1, 2  # preemptive: a class's entries
SLOT_PRESENT, SLOT_NEED, SLOT_AGE, SLOT_CLASS = 0, 1, 2, 3  # start: a window slot's entries (class one-hot last)
SEQ_PRESENT, SEQ_IN_SERVICE, SEQ_CLASS = 0, 1, 2  # preemptive: a sequence slot's entries (class one-hot last)


@njit(inline="always")
def class_at(mode, c):
    """Offset of class c's first entry."""
    return (FREE + 1 if mode == MODE_START else TRUNCATED + 1) + CLASS_FIELDS * c


@njit(inline="always")
def slot_size(mode, classes):
    """Entries per window (sequence) slot."""
    return (SLOT_CLASS if mode == MODE_START else SEQ_CLASS) + classes


@njit(inline="always")
def slot_at(mode, classes, i):
    """Offset of window (sequence) slot i's first entry."""
    return class_at(mode, classes) + slot_size(mode, classes) * i


@njit(inline="always")
def class_action(window, c):
    """Start mode: the action that starts class c's oldest waiting job."""
    return window + c


@njit(inline="always")
def wait_action(mode, classes, window):
    """The last action: wait for the next event (start), commit the chosen set (preemptive)."""
    return window + classes if mode == MODE_START else classes


@njit(inline="always")
def estimates_at(mode, classes, window):
    """Offset of the requested run times of the window's (sequence's) jobs, when observed (after every slot)."""
    return slot_at(mode, classes, window)


def observation_size(mode: int, classes: int, window: int, estimates: bool = False) -> int:
    """D, the observation's length (``estimates``: with the W (L) requested run times)."""
    return int(slot_at(mode, classes, window)) + (window if estimates else 0)


def action_count(mode: int, classes: int, window: int) -> int:
    """A, the number of actions."""
    return int(wait_action(mode, classes, window)) + 1


@dataclass(frozen=True)
class MSJLayout:
    """The layout of one environment's observations: ``mode`` (``MODE_START`` or ``MODE_SET``), K ``classes``,
    ``window`` (W or L), n ``servers``, each class's ``needs`` (servers) and whether the window's requested run times
    are observed (``estimates``)."""

    mode: int
    classes: int
    window: int
    servers: int
    needs: tuple[int, ...]
    estimates: bool = False

    @cached_property
    def size(self) -> int:
        return observation_size(self.mode, self.classes, self.window, self.estimates)

    @cached_property
    def class_entries(self) -> slice:
        """The per-class entries (K rows of ``CLASS_FIELDS``)."""
        return slice(int(class_at(self.mode, 0)), int(class_at(self.mode, self.classes)))

    @cached_property
    def slot_entries(self) -> slice:
        """The window's (sequence's) entries (W rows of ``slot_size``)."""
        return slice(int(slot_at(self.mode, self.classes, 0)), int(slot_at(self.mode, self.classes, self.window)))

    @cached_property
    def estimate_entries(self) -> slice:
        """The window's (sequence's) requested run times (W entries; empty without ``estimates``)."""
        at = int(estimates_at(self.mode, self.classes, self.window))
        return slice(at, self.size)

    @cached_property
    def slot_size(self) -> int:
        return int(slot_size(self.mode, self.classes))

    @cached_property
    def wait_action(self) -> int:
        return int(wait_action(self.mode, self.classes, self.window))

    def describe(self) -> str:
        mode = "start" if self.mode == MODE_START else "preemptive"
        extra = ", estimates=True" if self.estimates else ""
        return f"msjgym/MSJ-v0 mode={mode!r}, K={self.classes}, window={self.window}{extra}"

    def view(self, observation: np.ndarray) -> StartView | PreemptiveView:
        return (StartView if self.mode == MODE_START else PreemptiveView)(observation, self)


# ---------------------------------------------------------------- views
class _MSJView(ObservationView):
    __slots__ = ()
    layout: MSJLayout

    @property
    def _classes(self) -> np.ndarray:
        return self.observation[self.layout.class_entries].reshape(self.layout.classes, CLASS_FIELDS)

    @property
    def _slots(self) -> np.ndarray:
        return self.observation[self.layout.slot_entries].reshape(self.layout.window, self.layout.slot_size)

    def _count(self, entry: int) -> int:
        return round(float(self.observation[entry]) * self.layout.servers)

    def _slot_classes(self, present: int, one_hot: int) -> np.ndarray:
        slots = self._slots
        return np.where(slots[:, present] > 0.5, np.argmax(slots[:, one_hot:], axis=1), -1)

    @property
    def wait(self) -> int:
        """The last action: wait for the next event (start), commit the chosen set (preemptive)."""
        return self.layout.wait_action

    def _estimates(self) -> np.ndarray:
        if not self.layout.estimates:
            raise MsjgymError("the requested run times are not observed: make the environment with "
                              "estimates=True")
        return self.observation[self.layout.estimate_entries]


class StartView(_MSJView):
    """``mode="start"``: the system at a decision epoch (some waiting job fits). Counts are int64 arrays of K (one
    per class) or W (one per window slot, the W oldest waiting jobs, oldest first); ages are float32, in the
    scenario's time unit. Actions: ``start_slot(i)``, ``start_class(c)``, ``wait``."""

    __slots__ = ()
    fields = ("free_servers", "waiting", "in_service", "oldest_ages", "window_classes", "window_needs",
              "window_ages", "truncated")

    @property
    def free_servers(self) -> int:
        """Servers free now."""
        return self._count(FREE)

    @property
    def waiting(self) -> np.ndarray:
        """int64[K]: jobs waiting per class."""
        return self._classes[:, WAITING].astype(np.int64)

    @property
    def in_service(self) -> np.ndarray:
        """int64[K]: jobs in service per class."""
        return self._classes[:, IN_SERVICE].astype(np.int64)

    @property
    def oldest_ages(self) -> np.ndarray:
        """float32[K]: age of each class's oldest waiting job (time units; 0 when none waits)."""
        return self._classes[:, OLDEST_AGE]

    @property
    def window_present(self) -> np.ndarray:
        """bool[W]: whether window slot i holds a job (the first ``min(W, waiting jobs)`` do)."""
        return self._slots[:, SLOT_PRESENT] > 0.5

    @property
    def window_classes(self) -> np.ndarray:
        """int64[W]: the class of the job in window slot i (-1: empty slot)."""
        return self._slot_classes(SLOT_PRESENT, SLOT_CLASS)

    @property
    def window_needs(self) -> np.ndarray:
        """int64[W]: the servers the job in window slot i needs (0: empty slot)."""
        return np.rint(self._slots[:, SLOT_NEED].astype(np.float64) * self.layout.servers).astype(np.int64)

    @property
    def window_ages(self) -> np.ndarray:
        """float32[W]: the age of the job in window slot i (time units; 0: empty slot)."""
        return self._slots[:, SLOT_AGE]

    @property
    def window_estimates(self) -> np.ndarray:
        """float32[W]: the requested run time (runtime estimate) of the job in window slot i (time units; 0: empty
        slot). Only with ``estimates=True``."""
        return self._estimates()

    @property
    def oldest_waiting_age(self) -> float:
        """The age of the oldest waiting job (time units; 0 when none waits): window slot 0's."""
        return float(self._slots[0, SLOT_AGE])

    @property
    def truncated(self) -> bool:
        """Whether more jobs wait than the window shows."""
        return int(self._classes[:, WAITING].sum()) > self.layout.window

    def start_slot(self, i: int) -> int:
        """The action that starts the job in window slot i."""
        if not 0 <= i < self.layout.window:
            raise ValueError(f"window slot {i}: must be in [0, {self.layout.window})")
        return int(i)

    def start_class(self, c: int) -> int:
        """The action that starts class c's oldest waiting job."""
        if not 0 <= c < self.layout.classes:
            raise ValueError(f"class {c}: must be in [0, {self.layout.classes})")
        return int(class_action(self.layout.window, c))

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): the servers, the counts per class, the window."""
        n = self.layout.servers
        return [f"servers {server_bar(n - self.free_servers, n)}",
                "in service per class " + counts_text(self.in_service),
                "waiting per class    " + counts_text(self.waiting),
                "queue (oldest first, needs) " + " ".join(f"[{v}]" for v in self.window_needs if v > 0)
                + (" ..." if self.truncated else "")]


class PreemptiveView(_MSJView):
    """``mode="preemptive"``: the set in service being chosen, one job at a time, after an event. Counts are int64
    arrays of K (one per class) or L (one per sequence slot: the L oldest jobs present, in arrival order). Actions:
    ``choose(c)``, ``commit`` (= ``wait``)."""

    __slots__ = ()
    fields = ("servers_left", "truncated", "present", "chosen", "in_service", "sequence_classes",
              "sequence_in_service")

    @property
    def servers_left(self) -> int:
        """Servers not yet given to a chosen job."""
        return self._count(LEFT)

    @property
    def truncated(self) -> bool:
        """Whether more jobs are present than the sequence shows (L)."""
        return bool(self.observation[TRUNCATED] > 0.5)

    @property
    def present(self) -> np.ndarray:
        """int64[K]: jobs in the system per class (waiting or in service)."""
        return self._classes[:, PRESENT].astype(np.int64)

    @property
    def chosen(self) -> np.ndarray:
        """int64[K]: jobs chosen so far per class (the oldest of the class first)."""
        return self._classes[:, CHOSEN].astype(np.int64)

    @property
    def in_service(self) -> np.ndarray:
        """int64[K]: jobs in service per class (before this choice is committed)."""
        return self._classes[:, SERVING].astype(np.int64)

    @property
    def sequence_present(self) -> np.ndarray:
        """bool[L]: whether sequence slot i holds a job."""
        return self._slots[:, SEQ_PRESENT] > 0.5

    @property
    def sequence_classes(self) -> np.ndarray:
        """int64[L]: the class of the i-th oldest job present (-1: empty slot)."""
        return self._slot_classes(SEQ_PRESENT, SEQ_CLASS)

    @property
    def sequence_in_service(self) -> np.ndarray:
        """bool[L]: whether the i-th oldest job present is in service."""
        return self._slots[:, SEQ_IN_SERVICE] > 0.5

    @property
    def sequence_estimates(self) -> np.ndarray:
        """float32[L]: the requested run time (runtime estimate of the whole job) of the i-th oldest job present (time
        units; 0: empty slot). Only with ``estimates=True``."""
        return self._estimates()

    @property
    def commit(self) -> int:
        """The action that commits the chosen set (the jobs not chosen are preempted) and waits for the next event:
        ``wait``."""
        return self.layout.wait_action

    def choose(self, c: int) -> int:
        """The action that adds class c's oldest not yet chosen job to the set to serve."""
        if not 0 <= c < self.layout.classes:
            raise ValueError(f"class {c}: must be in [0, {self.layout.classes})")
        return int(c)

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): the servers chosen, the counts per class, the jobs."""
        n = self.layout.servers
        return [f"servers chosen {server_bar(n - self.servers_left, n)}",
                "present per class    " + counts_text(self.present),
                "in service per class " + counts_text(self.in_service),
                "chosen per class     " + counts_text(self.chosen),
                "jobs (oldest first; * in service) " + " ".join(
                    f"c{c}{'*' if s else ''}" for c, s in zip(self.sequence_classes, self.sequence_in_service)
                    if c >= 0) + (" ..." if self.truncated else "")]
