"""pull: the smallest estimate, as push; the servers update e_i = q_i at completions (probability δ₁) and at rate
δ₀ while idle (Hellemans, Kielanski & Van Houdt §2, §8 Table 3). Its agent form: the lowest level of the "estimates"
observation with pull's information.
"""
from __future__ import annotations

from msjgym.core.policy_registry import Param
from msjgym.systems.dispatch.contract import DELTA, HKV, DispatchPolicy

from .common import LowestLevel, choose_estimate


PULL_POLICY = DispatchPolicy(
    name="pull", summary="smallest estimate; servers update at completions (prob. delta1) and at rate delta0 when idle",
    source=f"{HKV} §2, §8 Table 3", choose=choose_estimate, information="pull", agent_class=LowestLevel,
    agent_observation="estimates",
    params=(
        DELTA,
        Param("delta0", None, "update rate of an idle server (instead of delta: delta = lam·delta1 + (1 − "
              "lam·E[size])·delta0)", low=0.0),
        Param("delta1", 0.0, "update probability at a completion", low=0.0, high=1.0)))
