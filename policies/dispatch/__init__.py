"""The built-in dispatchers of the large-scale load-balancing system (family ``dispatch``), one file each.

A file holds a policy's declaration (a :class:`~msjgym.systems.dispatch.contract.DispatchPolicy`), its compiled
decision (``choose``, a small kernel the family's one event loop, :mod:`msjgym.systems.dispatch.loop`, calls at its
address) and its agent form (an ``act(observation)`` class acting on ``msjgym/Dispatch-v0`` observations) side by side;
the family's contract (:mod:`msjgym.systems.dispatch.contract`) declares the class, the shared parameters and the
helpers the system and the dispatchers share; ``common.py`` holds the kernels and the agent several dispatchers share.
``POLICIES`` holds every module-level declaration of this package, discovered from its modules
(:func:`msjgym.policies.discover`); a policy by name: ``msjgym.api.policy_spec("dispatch", name)`` or ``POLICIES``.

Each policy picks the server of an arriving job from the dispatcher's information; every choice costs O(1) or O(d)
(never O(N)) and breaks ties uniformly at random. The information models (probes, server updates, the central
server's tokens) are events of the system; here are only the decisions.

==========================  ===============================================================================
name                        rule (ties uniformly at random)
==========================  ===============================================================================
``random``                  a uniformly random server
``round-robin``             servers 0, 1, ..., N-1, 0, ... in turn
``jsq``                     a shortest queue (exact queue lengths; level buckets make it O(1))
``jsq-d``                   shortest of d servers sampled without replacement (d messages per arrival)
``least-loaded-d``          least remaining work among d sampled servers (d messages per arrival; with
                            per-server speeds: the least time to drain it, work / speed)
``jiq``                     an idle server if there is one (exact idle set), else a random server
``push``                    smallest estimate e_i (e_i += 1 on assignment); probes at rate δN set e_i = q_i
``pull``                    as push; servers update e_i = q_i at completions (prob. δ₁) and at rate δ₀ when idle
``water-filling``           batches of M tasks fill the shortest of K = (δ/λ)M sampled queues one task at a time
``resource-pooling``        a uniformly random server; a central server at rate pN removes a job from a
                            longest queue; servers run at rate 1 − p
``sed``                     shortest expected delay: a server minimising (q_i + 1)/s_i (s_i: its speed; exact
                            queue lengths; an O(N) scan, for small N)
``sed-d``                   the same among d servers sampled without replacement (d messages per arrival)
==========================  ===============================================================================

With equal speeds sed is jsq (in distribution) and sed-d is jsq-d (draw for draw); they matter with per-server ``speeds``
(:func:`msjgym.systems.dispatch.model.pool_speeds`); their sources are in ``sed.py`` and ``sed_d.py``.

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §2; choices the paper leaves open: docs/modelling-choices.md ("Load balancing").
"""
from __future__ import annotations

from msjgym.core.policy_registry import discover
from msjgym.systems.dispatch.contract import DispatchPolicy

POLICIES: dict[str, DispatchPolicy] = discover(__name__, "dispatch")
"""Every built-in dispatcher, by name (as the API and the command line spell them), in discovery order."""

AGENTS: dict[str, tuple[str, type]] = {name: (p.agent_observation, p.agent_class) for name, p in POLICIES.items()
                                       if p.agent_class is not None}
"""policy name -> (observation mode, agent class) for the built-in policies an agent reproduces exactly (the twin
tests of ``tests/test_dispatch_env.py``)."""

NOT_EXPRESSIBLE: dict[str, str] = {name: p.not_expressible for name, p in POLICIES.items() if p.agent_class is None}
"""policy name -> why no agent of the environment's observations can reproduce it."""

__all__ = ["AGENTS", "DispatchPolicy", "NOT_EXPRESSIBLE", "POLICIES"]
