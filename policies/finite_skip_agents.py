"""The finite-skip policies as agents: plain Python, written from the paper's definitions (Grosof, Harchol-Balter &
Scheller-Wolf §§4.2, 5.2, 6.3, 7.2–7.3, with docs/modelling-choices.md's conventions), independent of the compiled
:func:`msjgym.policies.finite_skip.allocate` they must agree with (``tests/test_finite_skip_agents.py``).

An agent's ``act(observation)`` takes the jobs present in arrival order and returns each job's service rate (fraction
of capacity). Observation (a dict):

============  =====================================================================================================
key           value
============  =====================================================================================================
``params``    int array [N]: each job's threshold P (threshold parallelism) or need v (MSJ); 1 otherwise
``servers``   int array [N]: heterogeneous M/G/k: the server each job holds (-1: none; 0 = fastest), else all -1
============  =====================================================================================================

Static facts come from the constructor: k and, for heterogeneous servers, the speeds (fastest first). Heterogeneous
agents also return the new server assignment (``last_servers``). ``random`` draws from a ``numpy.random.Generator``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .finite_skip import FINITE_SKIP_POLICIES


class FiniteSkipAgent:
    """Policy ``name`` on a system with ``k`` servers (``speeds``: heterogeneous speeds, any order)."""

    def __init__(self, name: str, k: int, speeds: Sequence[float] = (), rng: np.random.Generator | None = None):
        if name not in FINITE_SKIP_POLICIES:
            raise ValueError(f"unknown finite-skip policy {name!r}; valid: {', '.join(FINITE_SKIP_POLICIES)}")
        self.name, self.k = name, int(k)
        self.speeds = sorted(speeds, reverse=True) if speeds else [1.0 / k] * k
        self.rng = rng or np.random.default_rng(0)
        self.last_servers: list[int] = []

    def __call__(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.act(observation)

    def act(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        p = [int(x) for x in observation["params"]]
        n, k, name = len(p), self.k, self.name
        if name in ("fsf", "fsf-minmig", "fsf-np", "ssf", "ssf-np", "random"):
            return self._heterogeneous([int(s) for s in observation["servers"]])
        if name == "lps":
            m = min(n, k)
            return np.array([1.0 / m if j < m else 0.0 for j in range(n)])
        if name == "tp-fcfs":
            return self._partial(p, range(n))
        if name in ("inelastic-first", "elastic-first"):
            sign = 1 if name == "inelastic-first" else -1
            return self._partial(p, sorted(range(n), key=lambda j: (sign * p[j], j)))
        if name == "server-filling":
            total, m = 0, n
            for j in range(n):
                total += p[j]
                if total >= k:
                    m = j + 1
                    break
            return self._pack(p, sorted(range(m), key=lambda j: (-p[j], j)), n)
        if name == "server-filling-divisible":
            return self._server_filling_divisible(p)
        if name == "fcfs":
            rates, free = np.zeros(n), k
            for j in range(n):
                if p[j] > free:
                    break
                rates[j], free = p[j] / k, free - p[j]
            return rates
        order = {"preemptive-first-fit": lambda j: j, "msf": lambda j: (-p[j], j), "lsf": lambda j: (p[j], j)}[name]
        return self._pack(p, sorted(range(n), key=order), n)

    def _partial(self, p: list[int], order) -> np.ndarray:
        """Threshold parallelism: in ``order``, each job gets min(P, free servers)."""
        rates, free = np.zeros(len(p)), self.k
        for j in order:
            q = min(p[j], free)
            rates[j], free = q / self.k, free - q
        return rates

    def _pack(self, p: list[int], order, n: int) -> np.ndarray:
        """MSJ: in ``order``, serve each job whose need fits in the free servers (skip the others)."""
        rates, free = np.zeros(n), self.k
        for j in order:
            if p[j] <= free:
                rates[j], free = p[j] / self.k, free - p[j]
        return rates

    def _server_filling_divisible(self, p: list[int]) -> np.ndarray:
        k, n = self.k, len(p)
        if n == 0:
            return np.zeros(0)
        lists = {v: [j for j in range(n) if p[j] == v] for v in sorted(set(p), reverse=True)}
        fill = {v: js[k // v - 1] for v, js in lists.items() if len(js) >= k // v}
        if fill:
            v = min(fill, key=lambda u: (fill[u], -u))
            served = lists[v][: k // v]
        else:
            v = min(lists, key=lambda u: (-u * len(lists[u]), lists[u][-1]))
            served = lists[v]
        rates = np.zeros(n)
        rates[served] = v / k
        return rates

    def _heterogeneous(self, srv: list[int]) -> np.ndarray:
        n, k, name = len(srv), self.k, self.name
        m = min(n, k)
        if name in ("fsf", "ssf"):
            srv = [(i if name == "fsf" else k - 1 - i) if i < m else -1 for i in range(n)]
        else:
            taken = {s for s in srv if s >= 0}
            for j in range(m):
                if srv[j] >= 0:
                    continue
                idle = [s for s in range(k) if s not in taken]
                s = (idle[-1] if name == "ssf-np" else idle[0] if name in ("fsf-np", "fsf-minmig")
                     else idle[int(self.rng.integers(len(idle)))])
                srv[j] = s
                taken.add(s)
            if name == "fsf-minmig":  # the job on the slowest busy server moves to a faster idle one
                while True:
                    idle = [s for s in range(k) if s not in taken]
                    if not idle or not taken or idle[0] > max(taken):
                        break
                    slow = max(taken)
                    srv = [idle[0] if s == slow else s for s in srv]
                    taken = (taken - {slow}) | {idle[0]}
        self.last_servers = srv
        return np.array([self.speeds[s] if s >= 0 else 0.0 for s in srv])
