"""msjgym: a scheduling-policy gym for multiserver-job and load-balancing systems.

Quick start::

    import msjgym
    scenario = msjgym.load_scenario("one-and-n", {"servers": 16})
    result = msjgym.evaluate(scenario, "server-filling", reps=10, jobs=100_000, seed=7)
    print(result.metrics["response_time"])          # Estimate(mean=..., ci95=...)
"""
from msjgym.errors import MsjgymError, PolicyError, ScenarioError
from msjgym.evaluate.runner import EvaluationResult, evaluate
from msjgym.evaluate.scenarios import Scenario, list_scenarios, load_scenario

__version__ = "0.1.0"

try:  # the Gymnasium environments need the optional `rl` extra; registering them costs nothing otherwise
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:
    pass
else:
    from msjgym.envs import register as _register_envs

    _register_envs()

__all__ = ["evaluate", "EvaluationResult", "load_scenario", "list_scenarios", "Scenario",
           "MsjgymError", "ScenarioError", "PolicyError", "__version__"]
