"""The loss system family (loss systems with adaptive multiserver jobs), on the skeleton every family shares:
``contract`` (the policy declaration and its kernel slots), ``model``, ``state`` (one record), ``loop`` (the compiled
event loop), ``control`` (the environment's decision path), ``simulation`` (replications of the loop), ``env``,
``scenarios``, ``scorecard``, ``family``; and its own ``theory``, ``metrics``, ``observation``, ``agent``, ``compiled``
(the user's compiled width rules)."""
