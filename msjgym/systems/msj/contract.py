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

**Policies own their state.** The state record (:mod:`msjgym.systems.msj.state`) holds the system only; a policy
that keeps something between events (ServerFilling's front, conservative backfilling's profile and reservations, a
phase, a mark per job) declares it in its declaration's ``state`` (:class:`OwnState`), as functions of the model's
sizes (:class:`Sizes`), and gets an area of the record of its own:

* ``st.own_i[b, 0:ints(sizes)]`` (int64) and ``st.own_f[b, 0:floats(sizes)]`` (float64): per system, zero in a new
  state; when the job storage doubles, the areas are sized again for the new capacity and keep their first entries
  (so a policy puts what must last first, and checks anything laid out by capacity: conservative backfilling keeps
  the capacity its profile was built for);
* ``st.job_i[b, j, NJI + k]`` for k < ``job_ints`` and ``st.job_f[b, j, NJF + k]`` for k < ``job_floats``: per job,
  after the system's own fields; every new job starts with -1 (ints) and +inf (floats) there, and they are kept when
  the storage grows.

The areas' sizes are the record's array shapes, not its type, so the loop's signature does not change with a policy's
state: adding such a policy compiles that policy's kernels only. ``st.scratch[b, 0:3K]`` is the system's working
area (per-class targets of ``apply_targets``, walk pointers, a per-class flag), which any kernel may overwrite during
its call. Shared machinery declares its own areas for the policies that use it
(:mod:`msjgym.systems.msj.backfilling`).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.plug import Ref, record_type
from msjgym.core.policy_registry import BuiltinPolicy
from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import OwnArea, SystemView, example_params, example_state

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


@dataclass(frozen=True)
class Sizes:
    """The sizes of a model a policy's own state may depend on.

    Attributes:
        classes: K, job classes. groups: G, distinct needs. servers: n. capacity: J, job slots per system (it doubles
            as the system grows: the areas are sized again then).
    """

    classes: int
    groups: int
    servers: int
    capacity: int


@dataclass(frozen=True)
class OwnState:
    """The state a policy keeps in the record (the module docstring says where it lives and how it starts).

    Attributes:
        ints: entries of ``st.own_i[b]`` per system, a function of :class:`Sizes` (a module-level function, so the
            declaration pickles); None: none.
        floats: entries of ``st.own_f[b]``, likewise.
        job_ints: int64 entries per job, at ``st.job_i[b, j, NJI + k]``.
        job_floats: float64 entries per job, at ``st.job_f[b, j, NJF + k]``.
    """

    ints: Callable[[Sizes], int] | None = None
    floats: Callable[[Sizes], int] | None = None
    job_ints: int = 0
    job_floats: int = 0

    def area(self, sizes: Sizes) -> OwnArea:
        """How large the areas are for ``sizes``."""
        return OwnArea(ints=0 if self.ints is None else int(self.ints(sizes)),
                       floats=0 if self.floats is None else int(self.floats(sizes)),
                       job_ints=int(self.job_ints), job_floats=int(self.job_floats))


NO_STATE = OwnState()
"""A policy that keeps nothing of its own."""


def sizes_of(model: MSJModel, capacity: int) -> Sizes:
    """The :class:`Sizes` of ``model`` with ``capacity`` job slots per system."""
    return Sizes(classes=model.num_classes, groups=len(set(int(m) for m in model.needs)), servers=model.servers,
                 capacity=capacity)


def own_area(policy: Policy, model: MSJModel, capacity: int) -> OwnArea:
    """The areas of the record ``policy`` declares (its ``state``; none for a declaration without one) on ``model``
    with ``capacity`` job slots."""
    return getattr(policy, "state", NO_STATE).area(sizes_of(model, capacity))


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
        state: what the kernels keep in the record between events (:class:`OwnState`; the module docstring).

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
    state: OwnState = NO_STATE

    def validate(self, model: MSJModel) -> None:
        """Raise ``PolicyError`` if the policy cannot run on ``model``; the default accepts every model."""

    def uses_estimates(self) -> bool:
        """Whether the kernel reads runtime estimates (with its bound parameters): ``estimates`` by default."""
        return self.estimates

    def agent(self, spec):
        """This policy as an agent of ``msjgym/MSJ-v0`` (``spec``: the environment's ``EnvSpec``): a
        ``Callable[[np.ndarray], int]`` with ``act(observation)``, deciding from the observation alone exactly as
        the compiled kernel does (``msjgym.policies.msj.agent_forms``)."""
        if self.agent_class is None:
            raise PolicyError(f"policy {self.name!r} has no agent form")
        return self.agent_class(spec, self)
