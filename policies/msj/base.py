"""The declaration of a built-in multiserver-job policy: ``Policy``, the MSJ family's ``PolicySpec``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msjgym.errors import PolicyError
from msjgym.policies import BuiltinPolicy
from msjgym.systems.msj.model import MSJModel


@dataclass(frozen=True, kw_only=True)
class Policy(BuiltinPolicy):
    """A built-in multiserver-job scheduling policy: its declaration, compiled kernel and agent form.

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s name, summary, preemptive, source, params):
        schedule: the compiled kernel ``schedule(st, pr, b)`` (``msjgym.core.jit.njit``), called after every event
            of system ``b`` to update the set of jobs in service; it reads parameter i of ``params`` at
            ``pr.ints[P_ARG + i]`` (integer parameters) and ``pr.floats[P_FARG + i]`` (real ones). ``None``: no
            kernel (decisions taken from outside, by an agent).
        on_arrival, on_departure: optional compiled bookkeeping hooks ``(st, pr, b, j)`` after job j joins and
            ``(st, pr, b, c)`` after a class-c job leaves (before ``schedule``).

    Each kernel is compiled on its own, on first use, for the signature the event loop calls it with
    (:func:`msjgym.systems.msj.loop.hook_signatures`: ``st`` and ``pr`` by reference), and cached by its file
    (:mod:`msjgym.core.jit`); the event loop is compiled once and calls it (:mod:`msjgym.systems.msj.loop`).
        agent_class: the agent form: a :class:`msjgym.policies.msj.agent_forms.BuiltinAgent` subclass, constructed as
            ``agent_class(env_spec, policy)``, taking the kernel's decisions from ``msjgym/MSJ-v0`` observations.
        estimates: whether the kernel reads the jobs' runtime estimates (a run then says when they are the exact run
            times; :meth:`uses_estimates` may decide from the bound parameters).
    """

    family: str = "msj"
    schedule: Any = None
    on_arrival: Any = None
    on_departure: Any = None
    agent_class: Any = None
    estimates: bool = False

    def validate(self, model: MSJModel) -> None:
        """Raise ``PolicyError`` if the policy cannot run on ``model``; the default accepts every model."""

    def uses_estimates(self) -> bool:
        """Whether the kernel reads runtime estimates (with its bound parameters): ``estimates`` by default."""
        return self.estimates

    def scratch_size(self, model: MSJModel) -> int:
        """Extra int64 scratch entries the compiled kernel needs per system (beyond 3 per class)."""
        return 0

    def agent(self, spec):
        """This policy as an agent of ``msjgym/MSJ-v0`` (``spec``: the environment's ``EnvSpec``): a
        ``Callable[[np.ndarray], int]`` with ``act(observation)``, deciding from the observation alone exactly as
        the compiled kernel does (``msjgym.policies.msj.agent_forms``)."""
        if self.agent_class is None:
            raise PolicyError(f"policy {self.name!r} has no agent form")
        return self.agent_class(spec, self)


def require_divisible(policy: str, model: MSJModel, chain: bool,
                      instead: str | None = "server-filling-divisible") -> None:
    """Check the divisibility setting a ServerFilling variant needs, or raise a ``PolicyError`` saying why.

    ``chain=False``: every need divides the number of servers (the divisible setting).
    ``chain=True``: additionally every need divides every larger need (the exponential setting, e.g. powers of 2);
    ``instead`` names a policy to suggest when only that fails (None: no suggestion).
    """
    n = model.servers
    needs = sorted(set(int(m) for m in model.needs))
    bad = [m for m in needs if n % m]
    if bad:
        raise PolicyError(
            f"policy {policy}: every need must divide servers={n}; needs {bad} do not (needs={needs})")
    if chain:
        for i, small in enumerate(needs):
            for large in needs[i + 1:]:
                if large % small:
                    raise PolicyError(
                        f"policy {policy}: every need must divide every larger need (the exponential setting); "
                        f"{small} does not divide {large} (needs={needs})" + (f"; use {instead}" if instead else ""))
