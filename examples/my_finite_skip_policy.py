"""A finite-skip policy of your own: threshold parallelism with the k servers water-filled over all jobs present.

    msjgym evaluate finite-skip-fig4a --policy examples/my_finite_skip_policy.py:EqualShare --jobs 20000

The agent gets the jobs in arrival order (``spec.view(obs).params``: each job's parallelism threshold P) and returns
each job's service rate as a fraction of capacity: q/k for q servers (fractional shares allowed here). It serves every
job, so it is not finite-skip; the pathwise diagnostics printed by ``msjgym evaluate`` show it.
"""
from __future__ import annotations

import numpy as np


class EqualShare:
    def __init__(self, spec) -> None:
        """``spec``: the system's spec (``spec.servers`` = k, ``spec.model``, ``spec.view``), as every policy of one's
        own gets."""
        self.spec, self.k = spec, spec.servers

    def act(self, obs: dict) -> np.ndarray:
        view = self.spec.view(obs)
        caps = view.params.astype(float)  # a job cannot use more than P servers
        servers = np.zeros(view.jobs)
        free, active = float(self.k), list(range(view.jobs))
        while active and free > 1e-12:
            share = free / len(active)
            capped = [j for j in active if caps[j] - servers[j] <= share]
            if not capped:
                servers[active] += share
                break
            for j in capped:
                free -= caps[j] - servers[j]
                servers[j] = caps[j]
            active = [j for j in active if j not in capped]
        return servers / self.k
