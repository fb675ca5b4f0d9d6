"""The multi-resource family object (``FAMILY``): MSJ's family (:class:`msjgym.systems.msj.family.MSJFamily`) with
this family's name, scenarios, policies, simulation and references; its run lengths, option handling and judging
are MSJ's."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msjgym import api
from msjgym.core.policy_registry import registered
from msjgym.core.references import Reference
from msjgym.systems.msj.family import MSJFamily, check_combinations, check_state_size
from msjgym.systems.multi_resource import scenarios, scorecard
from msjgym.systems.multi_resource.contract import FAMILY as FAMILY_NAME
from msjgym.systems.multi_resource.contract import MultiResourcePolicy
from msjgym.systems.multi_resource.model import MultiResourceModel
from msjgym.systems.multi_resource.job_agent import (
    RESOURCE_JOB_AGENT, RESOURCE_JOB_ENV_ID, ResourceAgentRuns, check_user_policy)
from msjgym.systems.multi_resource.simulation import MultiResourceRuns

_OPTIONS = ("saturated", "backlog", "no_instability_check", "bsld_threshold", "debug", "windows", "window_jobs",
            "per_job", "per_job_format", "skip_bad_lines", "window")
"""MSJ's options this family takes (trace replays and windows; ``window``: K of a policy of the user's deciding through
``msjgym/MultiResourceJobs-v0``)."""


def _builtin(policy: str | MultiResourcePolicy) -> MultiResourcePolicy:
    return policy if isinstance(policy, MultiResourcePolicy) else api.policy_spec(FAMILY, policy)


class MultiResourceFamily(MSJFamily):
    """Jobs holding a vector of resources (cores, GPUs, memory, ...) on one of identical nodes (the module
    docstring)."""

    name = FAMILY_NAME
    title = "multi-resource jobs: a capacity vector (cores, GPUs, memory, ...), jobs holding a demand vector at once"
    order = 5
    env_ids: tuple[str, ...] = (RESOURCE_JOB_ENV_ID,)
    smoke = api.Smoke("gpu-cluster", "fcfs")
    reads_files = True
    """Scenario TOML files with ``system = "multi-resource"`` are this family's."""

    def scenarios(self) -> list[tuple[str, str]]:
        return [(name, text) for name, (text, _) in scenarios.BUILTINS.items()]

    def owns(self, name: str) -> bool:
        return scenarios.owns(name)

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return scenarios.load(name, overrides)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        """A bare :class:`MultiResourceModel` as a scenario named "model"."""
        return api.Scenario("model", self.name, "", {}, model) if isinstance(model, MultiResourceModel) else None

    def policies(self) -> Mapping[str, MultiResourcePolicy]:
        return registered(FAMILY_NAME)

    def validate(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> None:
        user = api.is_user_policy(policy)
        if user:
            check_user_policy(policy, run)
        api.check_options(self, run.options, user=user)
        check_combinations(scenario, run)
        check_state_size(scenario.model, run)
        if not user:
            _builtin(policy).validate(scenario.model)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        if api.is_user_policy(policy):
            return ResourceAgentRuns(scenario, policy, run, seed)
        return MultiResourceRuns(scenario, _builtin(policy), run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        pol = RESOURCE_JOB_AGENT if api.is_user_policy(policy) else _builtin(policy)
        return scorecard.references(scenario.model, pol, saturated=bool(run.options.get("saturated")))

    def options(self) -> tuple[api.Option, ...]:
        return tuple(o for o in super().options() if o.name in _OPTIONS)


FAMILY = MultiResourceFamily()
