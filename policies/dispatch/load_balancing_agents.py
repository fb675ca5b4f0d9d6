"""The dispatch policies as agents of ``msjgym/Dispatch-v0``: plain Python on the observation, no access to the
system, agreeing draw for draw with the compiled ``choose`` of :mod:`msjgym.policies.load_balancing`
(``tests/test_dispatch_env.py``: the env path and the compiled built-in give identical replications for the same
seed).

=============  ===============  ==============================================================================
policy         observation      agent
=============  ===============  ==============================================================================
``jsq-d``      ``sampled``      ``ShortestSampled``: the first shortest queue of the sample (the sample is in
                                random order, so this is jsq-d's uniform tie-break)
``sed-d``      ``sampled``      ``ShortestExpectedDelaySampled``: the first least (q + 1)/speed of the sample
                                (speeds shown: the environment made with ``fast_fraction`` and ``speed_ratio``)
``jsq``        ``histogram``    ``LowestLevel``: the lowest queue length with a server; the environment picks a
                                uniformly random server there with the uniform ``choose`` draws
``push``       ``estimates``    ``LowestLevel`` on the estimates (push information)
``pull``       ``estimates``    ``LowestLevel`` on the estimates (pull information: ``information="pull"``)
=============  ===============  ==============================================================================

Not expressible as an agent of these observations (``NOT_EXPRESSIBLE``, with the reason): ``random`` and
``resource-pooling`` (a uniformly random server: as a level it would need the agent's own draw, weighted by the
level counts, which the kernel does not make), ``round-robin`` (needs server identities), ``jiq`` (its fallback is a
random server, as ``random``; and it draws an idle server with ``below`` from the idle set, not from the level
bucket), ``least-loaded-d`` (needs remaining work, which no observation shows), ``water-filling`` (places batches
of M jobs at once; an environment step is one job).
"""
from __future__ import annotations

import numpy as np

class ShortestSampled:
    """jsq-d (observation "sampled"): the index of the first shortest queue among the d sampled servers."""

    def act(self, observation: np.ndarray) -> int:
        return int(np.argmin(observation))


class ShortestExpectedDelaySampled:
    """sed-d (observation "sampled" with per-server speeds: d queue lengths, then the d speeds): the index of the
    first sampled server with the least (q + 1)/speed (the sample is in random order: sed-d's uniform tie-break).

    The speeds arrive as float32 and the kernel divides by its float64 speeds: the two agree draw for draw when the
    speeds are float32 numbers (e.g. ``pool_speeds(2, 0.5, 7)`` = (1.75, 0.25)); otherwise a near-tie may go the
    other way."""

    def act(self, observation: np.ndarray) -> int:
        obs = np.asarray(observation, np.float64)
        d = obs.size // 2
        return int(np.argmin((obs[:d] + 1.0) / obs[d:]))


class LowestLevel:
    """jsq (observation "histogram"), push and pull (observation "estimates"): the lowest level with a server.

    The observation is the tail t_i = fraction with at least i (jobs or estimate), i = 1..L; level a < L holds
    t_a − t_{a+1} of the servers (t_0 = 1), level L all those with at least L. When every server is at L or more
    (t_L = 1) the lowest level is not visible: the agent raises rather than diverge from the policy (use more
    ``levels``).
    """

    def act(self, observation: np.ndarray) -> int:
        tails = np.concatenate(([1.0], np.asarray(observation, np.float64), [0.0]))
        if tails[-2] == 1.0:
            raise RuntimeError(f"every server is at level >= L = {tails.size - 2}: the lowest level is not visible; "
                               "make the environment with more levels")
        return int(np.flatnonzero(tails[:-1] > tails[1:])[0])


def __getattr__(name: str):
    # computed on use from the declarations (``DispatchPolicy.agent_class`` / ``not_expressible``), which import
    # this module
    if name not in ("AGENTS", "NOT_EXPRESSIBLE"):
        raise AttributeError(name)
    from msjgym.policies import registered

    POLICIES = registered("dispatch")

    if name == "AGENTS":
        return {n: (p.agent_observation, p.agent_class) for n, p in POLICIES.items() if p.agent_class is not None}
    return {n: p.not_expressible for n, p in POLICIES.items() if p.agent_class is None}


AGENTS: dict[str, tuple[str, type]]
"""policy name -> (observation mode, agent class) for the built-in policies an agent reproduces exactly."""

NOT_EXPRESSIBLE: dict[str, str]
"""policy name -> why no agent of the environment's observations can reproduce it."""
