"""resource-pooling: a uniformly random server; a central server at rate pN removes a job from a longest queue,
the servers run at rate 1 − p (Hellemans, Kielanski & Van Houdt §2, §8 Table 4). The tokens are events of the loop
(``information="pooling"``); the decision is a uniformly random server.
"""
from __future__ import annotations

from msjgym.core.policy_registry import Choice, Param
from msjgym.systems.dispatch.contract import HKV, DispatchPolicy

from .common import choose_uniform


RESOURCE_POOLING_POLICY = DispatchPolicy(
    name="resource-pooling",
    summary="a random server; a central server at rate p·N removes a job from a longest queue",
    source=f"{HKV} §2, §8 Table 4", choose=choose_uniform, information="pooling", params=(
        Param("p", None, "central server's share, in [0, 1); the servers run at rate 1 − p", low=0.0, high=1.0),
        Choice("remove", "last", "which waiting job a token removes: last (in line), next (to start), random",
               choices=("last", "next", "random"))),
    not_expressible="dispatches to a uniformly random server (see random) and adds a central server")
