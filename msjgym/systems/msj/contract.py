"""What the multiserver-job system and its policies share: the policy declaration (:class:`Policy`), the signatures
of the kernels the event loop calls (:func:`hook_signatures`), and the family's table of kernel slots
(:data:`KERNELS`).

Policies (``policies/msj/*.py``) import this module and the state layout (:mod:`msjgym.systems.msj.state`: field
indices, parameter slots, the transitions a kernel may call); the system reaches its built-in policies only through
the registry (``msjgym.core.policy_registry.registered("msj")``), never by import.

The event loop (:mod:`msjgym.systems.msj.loop`) is compiled once per machine and calls a policy's kernels at their
native addresses, in the order of :data:`KERNELS`:

* ``schedule(st, pr, b)`` after every event, to update the set of jobs in service (a built-in policy);
* ``on_arrival(st, pr, b, j)`` after job j joins (before ``schedule``);
* ``on_departure(st, pr, b, c)`` after a class-c job leaves (before ``schedule``);
* ``compiled.kernel(s)`` after every event, with ``s = SystemView(st, pr, b, preemptive)``: a compiled policy of the
  user's (:mod:`msjgym.systems.msj.compiled`).

Every slot is optional (address 0: the loop skips it); ``st`` and ``pr`` reach the kernels by reference
(:class:`msjgym.core.plug.Ref`, read like the records).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.plug import Ref, record_type
from msjgym.core.policy_registry import BuiltinPolicy
from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import SystemView, example_params, example_state

FAMILY = "msj"


@functools.lru_cache(maxsize=1)
def record_types() -> tuple[types.Type, types.Type]:
    """The numba types of the state record and of the parameters (every array C-contiguous)."""
    return record_type(example_state()), record_type(example_params())


@functools.lru_cache(maxsize=1)
def hook_signatures() -> tuple[types.Type, types.Type, types.Type, types.Type]:
    """The signatures a policy's ``schedule``, ``on_arrival``, ``on_departure`` and a user's compiled ``kernel`` are
    compiled for (in the order of :data:`KERNELS`)."""
    state, params = (Ref(t) for t in record_types())
    i = types.int64
    view = types.NamedTuple((state, params, i, types.boolean), SystemView)
    return (types.void(state, params, i), types.void(state, params, i, i), types.void(state, params, i, i),
            types.void(view))


HOOKS = types.UniTuple(types.int64, 4)
"""The numba type of the loop's ``hooks`` argument: one address per slot of :data:`KERNELS`."""

KERNELS = KernelTable(
    family=FAMILY, loop_label="the MSJ event loop", policy_label="policy",
    slots=tuple(Slot(field, sig, optional=True) for field, sig in zip(
        ("schedule", "on_arrival", "on_departure", "compiled.kernel"), hook_signatures())))
"""The MSJ event loop's kernel slots, in the order of its ``hooks`` argument."""


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
        agent_class: the agent form: a :class:`msjgym.policies.msj.agent_forms.BuiltinAgent` subclass, constructed as
            ``agent_class(env_spec, policy)``, taking the kernel's decisions from ``msjgym/MSJ-v0`` observations.
        estimates: whether the kernel reads the jobs' runtime estimates (a run then says when they are the exact run
            times; :meth:`uses_estimates` may decide from the bound parameters).

    Each kernel is compiled on its own, on first use, for the signature the event loop calls it with
    (:func:`hook_signatures`: ``st`` and ``pr`` by reference), and cached by its file (:mod:`msjgym.core.jit`); the
    event loop is compiled once and calls it (:mod:`msjgym.systems.msj.loop`).
    """

    family: str = FAMILY
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
