"""The observation of ``msjgym/Dispatch-v0``: its layout, defined once (the compiled control layer,
:mod:`msjgym.systems.dispatch.control`, writes with these offsets), and the named views a policy reads it with.

* ``observation="sampled"`` (float32[d]): entry ``SAMPLES + j`` is the queue length (jobs, the one in service
  included) of the j-th server sampled for this arrival. Action j sends the job to that server. With per-server
  speeds (float32[2d]) entry ``SAMPLES + d + j`` is that server's speed (work per unit time).
* ``"histogram"`` / ``"estimates"`` (float32[L]): entry ``AT_LEAST + i − 1`` is the fraction of servers with at least
  i jobs (i = 1..L), by exact queue lengths (histogram) or by the dispatcher's estimates. Action a < L sends the job
  to a uniformly random server at level a (exactly a jobs), a = L to one with at least L.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msjgym.core.observation import WIDTH, ObservationView

SAMPLES = 0  # sampled: the first sampled server's queue length
AT_LEAST = 0  # histogram, estimates: the fraction of servers with at least 1 job (then 2, ..., L)


def observation_size(observation: str, d: int, levels: int, speeds: bool = False) -> int:
    """D: d sampled queue lengths (and, with ``speeds``, their d speeds), or L fractions."""
    return SAMPLES + (2 * d if speeds else d) if observation == "sampled" else AT_LEAST + levels


@dataclass(frozen=True)
class DispatchLayout:
    """The layout of one environment's observations: its ``observation`` mode, N ``servers``, ``d`` (sampled) and L
    ``levels`` (histogram, estimates); ``speeds``: the sampled servers' speeds are shown (per-server speeds)."""

    observation: str
    servers: int
    d: int | None
    levels: int
    speeds: bool = False

    @property
    def size(self) -> int:
        return observation_size(self.observation, self.d, self.levels, self.speeds)

    def describe(self) -> str:
        return (f"msjgym/Dispatch-v0 observation={self.observation!r}, d={self.d}, levels={self.levels}"
                + (", with speeds" if self.speeds else ""))

    def view(self, observation) -> SampledView | LevelsView:
        return (SampledView if self.observation == "sampled" else LevelsView)(observation, self)


class SampledView(ObservationView):
    """``observation="sampled"``: the d servers sampled for this arrival. The action is a sample index j < d."""

    __slots__ = ()
    layout: DispatchLayout
    fields = ("queue_lengths", "speeds")

    @property
    def queue_lengths(self) -> np.ndarray:
        """int64[d]: jobs at each sampled server (the one in service included), in sample order."""
        return self.observation[SAMPLES:SAMPLES + self.layout.d].astype(np.int64)

    @property
    def speeds(self) -> np.ndarray:
        """float64[d]: each sampled server's speed (work per unit time); all 1 when the system has equal speeds."""
        d = self.layout.d
        if not self.layout.speeds:
            return np.ones(d)
        return self.observation[SAMPLES + d:SAMPLES + 2 * d].astype(np.float64)

    @property
    def shortest_expected_delay(self) -> int:
        """The sample index of the least (q + 1)/speed (the first of the tied): sed-d's choice."""
        return int(np.argmin((self.queue_lengths + 1.0) / self.speeds))

    @property
    def shortest(self) -> int:
        """The sample index of the shortest sampled queue (the first of the tied): jsq-d's choice."""
        return int(np.argmin(self.observation[SAMPLES:SAMPLES + self.layout.d]))

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): the sampled servers' queues (and speeds)."""
        queues = " ".join(f"[{'#' * int(q)}]{int(q)}" for q in self.queue_lengths)
        lines = [f"arrival; sampled servers' queues: {queues}"]
        if self.layout.speeds:
            lines.append("             their speeds: " + " ".join(f"{s:g}" for s in self.speeds))
        return lines


class LevelsView(ObservationView):
    """``observation="histogram"`` (exact queue lengths) or ``"estimates"`` (the dispatcher's estimates): the
    servers by level. The action is a level a <= L (L: at least L jobs)."""

    __slots__ = ()
    layout: DispatchLayout
    fields = ("estimated", "at_least", "level_servers")

    @property
    def estimated(self) -> bool:
        """Whether the levels are the dispatcher's estimates (else exact queue lengths)."""
        return self.layout.observation == "estimates"

    @property
    def at_least(self) -> np.ndarray:
        """float32[L]: ``at_least[i - 1]`` = the fraction of servers with at least i jobs, i = 1..L."""
        return self.observation[AT_LEAST:AT_LEAST + self.layout.levels]

    @property
    def level_fractions(self) -> np.ndarray:
        """float64[L + 1]: the fraction of servers at level a (exactly a jobs; a = L: at least L), one per action."""
        tails = np.concatenate(([1.0], self.at_least.astype(np.float64), [0.0]))
        return tails[:-1] - tails[1:]

    @property
    def level_servers(self) -> np.ndarray:
        """int64[L + 1]: the servers at level a (exactly a jobs; a = L: at least L); action a is allowed iff > 0."""
        return np.rint(self.level_fractions * self.layout.servers).astype(np.int64)

    @property
    def lowest_level(self) -> int:
        """The lowest level with a server (jsq's, push's and pull's choice)."""
        return int(np.flatnonzero(self.level_servers)[0])

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): a histogram of the servers by level."""
        what = "estimated" if self.estimated else "exact"
        counts = self.level_servers
        top = max(int(counts.max()), 1)
        lines = [f"arrival; servers by {what} queue length (N = {self.layout.servers}):"]
        for a, c in enumerate(counts):
            label = f">={a}" if a == counts.size - 1 else f"{a:>3}"
            lines.append(f"  {label:>4} | {'#' * int(round(WIDTH * c / top))} {int(c)}")
        return lines
