"""FCFS with head-of-line blocking: jobs start in arrival order; the first job that does not fit blocks all others.

Sources: Wang, Xie & Harchol-Balter, "Zero Queueing for Multi-Server Jobs" (2021), §3 (FCFS-MSJ, Fig. 2);
Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling", §3.1.
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.msj import observation as ob
from msjgym.systems.msj.contract import Policy
from .agent_forms import StartAgent
from .common import ORDER_ARRIVAL, admit


@njit(inline="always")
def schedule(st, pr, b):
    """Admit waiting jobs in arrival order until the oldest waiting job does not fit (non-preemptive)."""
    admit(st, pr, b, ORDER_ARRIVAL, True)


# ---------------------------------------------------------------- agent form
class FCFSAgent(StartAgent):
    """``fcfs``: start the oldest waiting job if it fits; otherwise wait (head-of-line blocking)."""

    policy_name = "fcfs"

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        if obs[self.base + ob.SLOT_PRESENT] <= 0.5:  # nothing waiting
            return -1
        c = int(np.argmax(obs[self.base + ob.SLOT_CLASS:self.base + ob.SLOT_CLASS + self.K]))
        return c if self.need[c] <= free else -1


# ---------------------------------------------------------------- declaration
FCFS = Policy(
    name="fcfs",
    summary="FCFS with head-of-line blocking: start jobs in arrival order; a job that does not fit blocks the queue",
    preemptive=False,
    source="Wang, Xie & Harchol-Balter (2021) §3; Grosof & Ayhan §3.1",
    schedule=schedule,
    agent_class=FCFSAgent,
)
