"""msjgym: a scheduling-policy gym for multiserver-job and load-balancing systems.

Quick start::

    import msjgym
    scenario = msjgym.load_scenario("one-and-n", {"servers": 16})
    result = msjgym.evaluate(scenario, "server-filling", reps=10, jobs=100_000, seed=7)
    print(result.metrics["response_time"])          # Estimate(mean=..., ci95=...)
"""
from msjgym import _source_tree

_source_tree.install()  # msjgym.policies from a source checkout's policies/ (before anything imports a policy)

from msjgym.api import Scenario, list_scenarios, load_scenario  # noqa: E402
from msjgym.errors import MsjgymError, PolicyError, ScenarioError  # noqa: E402
import msjgym.evaluate as evaluate  # noqa: E402  the package, callable as the function (msjgym/evaluate/__init__.py)
from msjgym.evaluate import Result  # noqa: E402

__version__ = "0.1.0"  # pyproject.toml's version (tests/test_packaging.py checks that they agree)

import msjgym.envs  # noqa: E402  registers every Gymnasium environment (msjgym/MSJ-v0, ...)

__all__ = ["evaluate", "Result", "load_scenario", "list_scenarios", "Scenario",
           "MsjgymError", "ScenarioError", "PolicyError", "__version__"]
