"""The built-in policy contract: what every policy in ``msjgym.policies`` declares."""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel


@dataclass(frozen=True)
class Policy:
    """A built-in multiserver-job scheduling policy that runs inside the compiled fast path.

    Attributes:
        name: the command-line name (``msjgym evaluate ... --policy NAME``).
        summary: one line for ``msjgym list``.
        preemptive: whether the policy may pause a job in service (preempt-resume: no work is lost).
        kernel_id: the policy's code in the compiled scheduler (``msjgym.policies.dispatch``).
        source: the paper (and section) that defines or studies the policy.
    """

    name: str
    summary: str
    preemptive: bool
    kernel_id: int
    source: str

    def validate(self, model: MSJModel) -> None:
        """Raise ``PolicyError`` if the policy cannot run on ``model``; the default accepts every model."""

    def scratch_size(self, model: MSJModel) -> int:
        """Extra int64 scratch entries the compiled kernel needs per system (beyond 3 per class)."""
        return 0

    def agent(self, spec):
        """This policy as an agent of ``msjgym/MSJ-v0`` (``spec``: the environment's ``EnvSpec``): a
        ``Callable[[np.ndarray], int]`` with ``act(observation)``, deciding from the observation alone exactly as
        the compiled kernel does (``msjgym.policies.agents``)."""
        from .agents import make_agent
        return make_agent(self, spec)


def require_divisible(policy: str, model: MSJModel, chain: bool) -> None:
    """Check the divisibility setting a ServerFilling variant needs, or raise a ``PolicyError`` saying why.

    ``chain=False``: every need divides the number of servers (the divisible setting).
    ``chain=True``: additionally every need divides every larger need (the exponential setting, e.g. powers of 2).
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
                        f"{small} does not divide {large} (needs={needs}); use server-filling-divisible")
