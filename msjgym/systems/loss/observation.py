"""The observation of ``msjgym/AdaptiveLoss-v0``: its layout, defined once (the compiled control layer,
:mod:`msjgym.systems.loss.control`, writes with these offsets), and the named view a policy reads it with.

float32[3]: ``[IDLE_SAMPLED]`` m = min(l, d), the idle servers the arriving job's sample of k shows (capped at d);
``[BUSY]`` busy servers / n; ``[JOBS]`` jobs in system / n. Only m is what the paper's sampling dispatcher sees.
Actions: the width, ``BLOCK`` (0) blocks the job, 1..m runs it on that many of the idle servers its sample shows.
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.observation import ObservationView, server_bar

IDLE_SAMPLED, BUSY, JOBS = 0, 1, 2
OBS_SIZE = 3
BLOCK = 0  # the action that blocks the arriving job


@dataclass(frozen=True)
class LossLayout:
    """The layout of one environment's observations: n ``servers``, maximum width ``d``."""

    servers: int
    d: int
    size: int = OBS_SIZE

    def describe(self) -> str:
        return f"msjgym/AdaptiveLoss-v0 d={self.d}"

    def view(self, observation) -> LossView:
        return LossView(observation, self)


class LossView(ObservationView):
    """An arrival waiting for its width. Actions: ``block`` (0) or a width 1..``idle_sampled``."""

    __slots__ = ()
    layout: LossLayout
    fields = ("idle_sampled", "busy_servers", "jobs", "busy_fraction", "jobs_per_server")
    block = BLOCK

    @property
    def idle_sampled(self) -> int:
        """m: idle servers in the arriving job's sample, capped at d (the widest width allowed now)."""
        return round(float(self.observation[IDLE_SAMPLED]))

    @property
    def busy_fraction(self) -> float:
        """Busy servers / n."""
        return float(self.observation[BUSY])

    @property
    def jobs_per_server(self) -> float:
        """Jobs in the system / n."""
        return float(self.observation[JOBS])

    @property
    def busy_servers(self) -> int:
        """Busy servers."""
        return round(float(self.observation[BUSY]) * self.layout.servers)

    @property
    def jobs(self) -> int:
        """Jobs in the system (each holds 1..d servers)."""
        return round(float(self.observation[JOBS]) * self.layout.servers)

    def render_lines(self) -> list[str]:
        """``render_mode="ansi"`` (:mod:`msjgym.envs.render`): the servers, the jobs and the arrival's sample."""
        return [f"servers {server_bar(self.busy_servers, self.layout.servers)}",
                f"jobs in system {self.jobs}; arrival sees {self.idle_sampled} idle server(s) in its sample"]
