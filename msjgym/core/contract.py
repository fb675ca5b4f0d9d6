"""The table of kernel slots a family's event loop calls, and the one function that turns a policy declaration into
what a run compiles and the addresses the loop calls.

Every family declares, in its ``systems/<family>/contract.py``, a :class:`KernelTable`: the slots of its event loop
(a policy declaration's attribute that holds a compiled kernel, and the explicit numba signature the loop calls it
with). The loop is compiled once per machine and calls a slot at its address (:func:`msjgym.core.plug.address`); each
policy's kernels are compiled on their own, so a new policy compiles only its own kernels. Nothing here names a
family::

    TABLE = KernelTable(family="loss", loop_label="the loss event loop", policy_label="policy",
                        slots=(Slot("width_kernel", WIDTH), Slot("block_probability", PROBABILITY), ...))
    units = TABLE.units(policy, loops=[(run, RUN)])     # for msjgym.core.compiling.compile_units / note
    addresses = TABLE.addresses(policy)                 # one int per slot, in the table's order (0: empty slot)

A slot's ``field`` may be a dotted path (``"compiled.kernel"``: a user policy's compiled kernel on its declaration's
``compiled`` attribute); an optional slot whose field is missing or None has address 0, and the loop skips it.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from msjgym.core.compiling import Unit


@dataclass(frozen=True)
class Slot:
    """One kernel the event loop calls.

    Attributes:
        field: the policy declaration's attribute holding the compiled kernel (a numba dispatcher); a dotted path
            reads nested attributes.
        signature: the explicit numba signature the loop calls it with (declared in the family's contract).
        optional: whether a policy may leave it empty (None): the loop then does not call it (address 0).
    """

    field: str
    signature: Any
    optional: bool = False


@dataclass(frozen=True)
class KernelTable:
    """A family's kernel slots, in the order the loop receives their addresses.

    Attributes:
        family: the family's name; compile-time records are kept per kind (``"<family> loop"``, ``"<family> policy"``).
        loop_label: how the compile notice names the event loop ("the MSJ event loop").
        policy_label: how it names a policy ("policy", "dispatcher").
        slots: the slots.
    """

    family: str
    loop_label: str
    policy_label: str
    slots: tuple[Slot, ...]

    def kernel(self, policy: Any, slot: Slot) -> Any:
        """The kernel in ``slot`` of ``policy`` (None for an empty optional slot)."""
        value = policy
        for part in slot.field.split("."):
            value = getattr(value, part, None)
            if value is None:
                break
        if value is None and not slot.optional:
            raise TypeError(f"{self.family} policy {getattr(policy, 'name', policy)!r} has no kernel {slot.field!r}, "
                            "which its family's event loop calls")
        return value

    def loop_units(self, loops: Iterable[tuple[Any, Any]]) -> list[Unit]:
        """The event loop's entry points ``(dispatcher, signature)`` as compile units."""
        return [Unit(self.loop_label, f"{self.family} loop", fn, sig) for fn, sig in loops]

    def units(self, policy: Any, loops: Sequence[tuple[Any, Any]] = ()) -> list[Unit]:
        """What a run of ``policy`` compiles: the loop's entry points (``loops``; once per machine) and the policy's
        kernels, each for its slot's signature (empty slots skipped)."""
        name = getattr(policy, "name", str(policy))
        mine = [Unit(f"{self.policy_label} {name}", f"{self.family} policy", kernel, slot.signature)
                for slot in self.slots if (kernel := self.kernel(policy, slot)) is not None]
        return self.loop_units(loops) + mine

    def addresses(self, policy: Any) -> tuple[int, ...]:
        """The address of each slot's kernel for ``policy`` (compiled, or loaded from the cache, on first use), in the
        table's order; 0 for an empty optional slot."""
        from msjgym.core.plug import address

        out = []
        for slot in self.slots:
            kernel = self.kernel(policy, slot)
            out.append(0 if kernel is None else address(kernel, slot.signature))
        return tuple(out)
