"""The multi-resource family object (``FAMILY``): MSJ's family (:class:`msjgym.systems.msj.family.MSJFamily`) with
this family's name, scenarios, policies, simulation and references; its run lengths, option handling and judging
are MSJ's."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msjgym import api
from msjgym.core.policy_registry import registered
from msjgym.core.references import Reference
from msjgym.errors import MsjgymError
from msjgym.systems.msj.family import MSJFamily, _check_combinations, _check_state_size
from msjgym.systems.multi_resource import scenarios, scorecard
from msjgym.systems.multi_resource.contract import FAMILY as FAMILY_NAME
from msjgym.systems.multi_resource.contract import MultiResourcePolicy
from msjgym.systems.multi_resource.model import MultiResourceModel
from msjgym.systems.multi_resource.simulation import MultiResourceRuns

_OPTIONS = ("saturated", "backlog", "no_instability_check", "bsld_threshold", "debug")
"""MSJ's options this family takes (its policies are built-ins; no trace replay yet)."""


def _builtin(policy: str | MultiResourcePolicy) -> MultiResourcePolicy:
    return policy if isinstance(policy, MultiResourcePolicy) else api.policy_spec(FAMILY, policy)


class MultiResourceFamily(MSJFamily):
    """Jobs holding a vector of resources (cores, GPUs, memory, ...) on one of identical nodes (the module
    docstring)."""

    name = FAMILY_NAME
    title = "multi-resource jobs: a capacity vector (cores, GPUs, memory, ...), jobs holding a demand vector at once"
    order = 5
    env_ids: tuple[str, ...] = ()
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
        if api.is_user_policy(policy):
            raise MsjgymError(f"{policy}: the multi-resource family runs its built-in policies only (no environment "
                              f"for a policy of yours yet); built-ins: {', '.join(self.policies())}")
        api.check_options(self, run.options, user=False)
        _check_combinations(scenario, run)
        _check_state_size(scenario.model, run)
        _builtin(policy).validate(scenario.model)

    def simulation(self, scenario: api.Scenario, policy: str, run: api.RunSettings, seed: int) -> api.Simulation:
        return MultiResourceRuns(scenario, _builtin(policy), run, seed)

    def references(self, scenario: api.Scenario, policy: str, run: api.RunSettings) -> list[Reference]:
        return scorecard.references(scenario.model, _builtin(policy), saturated=bool(run.options.get("saturated")))

    def options(self) -> tuple[api.Option, ...]:
        return tuple(o for o in super().options() if o.name in _OPTIONS)


FAMILY = MultiResourceFamily()
