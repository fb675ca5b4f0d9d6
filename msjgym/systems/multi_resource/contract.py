"""What the multi-resource system and its policies share: the policy declaration (:class:`MultiResourcePolicy`),
the kernel signatures and the family's table of kernel slots (:data:`KERNELS`).

The family derives from the multiserver-job (MSJ) family by reuse: its state record is MSJ's with a resource area
(:mod:`msjgym.systems.multi_resource.state`), so MSJ's compiled event loop (:mod:`msjgym.systems.msj.loop`) runs it
unchanged and calls the same four slots, in the same order, with the same meaning (MSJ's contract,
:mod:`msjgym.systems.msj.contract`): ``schedule(st, pr, b)`` after every event, ``on_arrival(st, pr, b, j)``,
``on_departure(st, pr, b, c)``, and ``compiled.kernel`` (a compiled policy of the user's: not offered by this family
yet, so always empty). Only the record types differ, hence this family's own signatures and compile records
(``"multi-resource loop"`` / ``"multi-resource policy"``).

A policy keeps its own state as MSJ's do (:class:`OwnState`, sized by :class:`Sizes` of the model; ``servers`` is
then the model's bound on the jobs in service at once, :attr:`MultiResourceModel.servers`). A preemptive policy
(``preemptive=True``) may preempt a job in service with MSJ's ``preempt_job`` (preempt-resume) or ``kill_job``: the
resources it held are given back where MSJ counts the servers (``msjgym.systems.msj.state.hold_resources``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.plug import Ref, record_type
from msjgym.errors import PolicyError
from msjgym.systems.msj.contract import NO_STATE, OwnState, Policy, Sizes  # noqa: F401  (policies import them here)
from msjgym.systems.msj.state import SystemView
from msjgym.systems.multi_resource.state import example_params, example_state

FAMILY = "multi-resource"


@functools.lru_cache(maxsize=1)
def record_types() -> tuple[types.Type, types.Type]:
    """The numba types of this family's state record and parameters (MSJ's fields plus the resource area)."""
    return record_type(example_state()), record_type(example_params())


@functools.lru_cache(maxsize=1)
def hook_signatures() -> tuple[types.Type, types.Type, types.Type, types.Type]:
    """The signatures of ``schedule``, ``on_arrival``, ``on_departure`` and a compiled ``kernel`` (MSJ's, on this
    family's record types, by reference)."""
    state, params = (Ref(t) for t in record_types())
    i = types.int64
    view = types.NamedTuple((state, params, i, types.boolean), SystemView)
    return (types.void(state, params, i), types.void(state, params, i, i), types.void(state, params, i, i),
            types.void(view))


KERNELS = KernelTable(
    family=FAMILY, loop_label="the multi-resource event loop (MSJ's, on this family's record)", policy_label="policy",
    slots=tuple(Slot(field, sig, optional=True) for field, sig in zip(
        ("schedule", "on_arrival", "on_departure", "compiled.kernel"), hook_signatures())))
"""The event loop's kernel slots, in the order of its ``hooks`` argument (MSJ's slots)."""


@dataclass(frozen=True, kw_only=True)
class MultiResourcePolicy(Policy):
    """A built-in multi-resource policy: MSJ's declaration (:class:`msjgym.systems.msj.contract.Policy`: kernels
    ``schedule`` / ``on_arrival`` / ``on_departure``, ``state``, ``estimates``, ``preemptive``) in this family.

    ``max_nodes``: the most identical nodes the policy places jobs on (None: any number); :meth:`validate` refuses a
    larger machine with one line. ``table``: a module-level function ``table(model) -> float64[:, :]`` computed
    once per run before it starts (a configuration mixture from a linear program, say), which the kernels read as
    ``pr.pol_table`` (None: the table is empty, shape (0, 0)). ``agent_class``: none yet (the family's environment
    comes with ``msjgym.systems.multi_resource.env``).
    """

    family: str = FAMILY
    max_nodes: int | None = None
    table: Any = None

    def validate(self, model) -> None:
        if self.max_nodes is not None and model.nodes > self.max_nodes:
            raise PolicyError(f"policy {self.name!r}: nodes = {model.nodes}: this policy places jobs on at most "
                              f"{self.max_nodes} node(s) (use nodes = {self.max_nodes}, or another policy)")
