"""push: the smallest estimate e_i (e_i += 1 on assignment); the dispatcher probes at rate δN and sets e_i = q_i
(Hellemans, Kielanski & Van Houdt §2, §8 Table 1). Its agent form: the lowest level of the "estimates" observation.
"""
from __future__ import annotations

from msjgym.systems.dispatch.contract import DELTA, HKV, DispatchPolicy

from .common import LowestLevel, choose_estimate


PUSH_POLICY = DispatchPolicy(
    name="push", summary="smallest estimate (e_i += 1 on assignment); probes at rate delta·N set e_i = q_i",
    source=f"{HKV} §2, §8 Table 1", params=(DELTA,), choose=choose_estimate, information="push",
    agent_class=LowestLevel, agent_observation="estimates")
