"""The declaration of a built-in dispatcher: ``DispatchPolicy``, the dispatch family's ``PolicySpec``, and the
parameters several dispatchers share.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msjgym.api import Param
from msjgym.policies import BuiltinPolicy
from msjgym.systems.dispatch.state import INFORMATION


HKV = ("Hellemans, Kielanski & Van Houdt, 'Performance of Load Balancers with Bounded Maximum Queue Length in case "
       "of Non-Exponential Job Sizes'")


@dataclass(frozen=True, kw_only=True)
class DispatchPolicy(BuiltinPolicy):
    """A built-in dispatcher of the large-scale load-balancing system.

    Its decision is its ``choose`` kernel, a small compiled function that the family's one event loop
    (:func:`msjgym.systems.dispatch.kernel.run`) takes as an argument and calls at every arrival; it is compiled on
    first use against the loop's interface (``msjgym.systems.dispatch.kernel.CHOOSE``) and cached by its own file.
    The events the loop runs for the dispatcher's information (probes, server updates, the central server's tokens,
    the idle queue's messages) are named by ``information``. Its parameters are those of
    :class:`msjgym.systems.dispatch.model.DispatchModel` it reads (given as ``--param`` on a dispatch scenario).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        choose: its compiled decision ``choose(st, pr, b, now) -> server`` (``now``: the arrival's time; the
            state and parameter records of :mod:`msjgym.systems.dispatch.kernel`); :data:`BATCH` when it placed a
            batch of jobs instead (water filling: ``perm[0:K]`` receive ``wfl[0:K]`` jobs each).
        information: the information model the event loop runs for it, one of :data:`INFORMATION`: ``none``;
            ``idle-queue`` (a message when a server becomes idle: JIQ); ``queue-order`` (the servers kept ordered
            by queue length: JSQ); ``push`` (probes at rate δN); ``pull`` (updates at completions and from idle
            servers); ``pooling`` (a central server's tokens at rate pN, servers ordered by queue length).
        agent_class: its agent form, acting on ``msjgym/Dispatch-v0`` observations of mode ``agent_observation``
            (beside its kernel, in its file); None with ``not_expressible`` saying why no
            observation of the environment can express it.
    """

    family: str = "dispatch"
    preemptive: bool = False
    choose: Any = None
    information: str = "none"
    agent_class: type | None = None
    agent_observation: str | None = None
    not_expressible: str | None = None

    def __post_init__(self) -> None:
        if self.information not in INFORMATION:
            raise ValueError(f"dispatch policy {self.name!r}: information = {self.information!r}; must be one of "
                             f"{', '.join(INFORMATION)}")

    @property
    def information_code(self) -> int:
        """``information`` as the event loop reads it (``params.ints[P_INFO]``: its index in :data:`INFORMATION`)."""
        return INFORMATION.index(self.information)


D = Param("d", 2, "servers sampled per arrival, an integer in [1, servers]", low=1, integer=True)
"""jsq-d, least-loaded-d, sed-d: the sample size."""
DELTA = Param("delta", None, "probe/update rate per server, > 0", low=0.0)
"""push, pull, water filling: the message rate per server."""
