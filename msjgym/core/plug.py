"""Plug small, separately compiled kernels into an event loop compiled once: the policy hooks of every family.

A family's event loop is compiled once per machine, with an explicit signature, and calls its policy's kernels
(``schedule``, ``on_arrival``, ...) through their native addresses, passed in as plain integers. Each policy kernel
is compiled on its own, for the one signature the loop calls it with, and cached by its own file
(:mod:`msjgym.core.jit`), so a new policy compiles its kernels only, never the loop again.

Three pieces, none of them specific to a family:

* :class:`Ref` / :func:`ref` — a state record (a ``NamedTuple`` of C-contiguous arrays) passed *by reference*: one
  pointer per call instead of a few hundred flattened array fields, which would cost ~250 ns a call (measured on
  numba 0.68 for the MSJ state record; by reference ~13 ns). Inside a kernel a ``Ref`` reads like the record
  (``st.sys_i[b, 0]``), so a kernel written for the record compiles for its ``Ref`` unchanged; the field loads are
  marked invariant, so LLVM loads each array's pointer and shape once per call.
* :func:`address` — compile (or load from the cache) a kernel for a signature; returns its entry's address.
* :func:`call` (and :func:`call_int`, :func:`call_float` for kernels returning a value) — call the kernel at an
  address from compiled code, with the arguments' types as the signature, propagating an exception it raises (a
  user's policy reports invalid decisions that way).

The loop is compiled for ``int64`` addresses rather than numba's ``FunctionType`` arguments: the latter cost about
0.5 ms of type hashing per call from Python (each ``advance`` call, each environment step), the addresses nothing.
An address of 0 means "no hook": the loop skips the call (a family's agent-driven runs pass zeros).

The calls and records by reference use private parts of numba (its calling convention, ``cgutils``, a compiled
function's address), listed and checked at import in :mod:`msjgym.core.numba_hooks` (docs/compile-machinery.md).
"""
from __future__ import annotations

from typing import Any

from msjgym.core import numba_hooks

numba_hooks.check()  # the numba internals used below are there, or one line saying how to fix it

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba.core import cgutils, types  # noqa: E402
from numba.core.imputils import impl_ret_borrowed  # noqa: E402
from numba.core.typing.templates import AttributeTemplate  # noqa: E402
from numba.extending import infer_getattr, intrinsic, lower_getattr_generic, models, register_model  # noqa: E402

from msjgym.errors import MsjgymError  # noqa: E402


class Ref(types.Type):
    """A record (a numba ``NamedTuple``) passed by reference: a pointer to it, read like the record."""

    def __init__(self, record: types.BaseNamedTuple) -> None:
        self.record = record
        super().__init__(name=f"Ref({record})")

    @property
    def key(self) -> Any:
        return self.record


@register_model(Ref)
class _RefModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type: Ref) -> None:
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.record).get_data_type().as_pointer())


@infer_getattr
class _RefAttributes(AttributeTemplate):
    key = Ref

    def generic_resolve(self, typ: Ref, attr: str) -> Any:
        fields = typ.record.fields
        if attr in fields:
            return typ.record.types[fields.index(attr)]
        return None


@lower_getattr_generic(Ref)
def _ref_getattr(context, builder, typ, value, attr):
    i = typ.record.fields.index(attr)
    raw = builder.load(cgutils.gep_inbounds(builder, value, 0, i))
    raw.set_metadata("invariant.load", builder.module.add_metadata([]))  # the record does not change during a call
    member = typ.record.types[i]
    return impl_ret_borrowed(context, builder, member, context.data_model_manager[member].from_data(builder, raw))


@intrinsic
def ref(typingctx, record):
    """``ref(record)``: the record by reference (valid until the calling function returns)."""
    if not isinstance(record, types.BaseNamedTuple):
        return None

    def codegen(context, builder, signature, args):
        model = context.data_model_manager[record]
        slot = cgutils.alloca_once(builder, model.get_data_type())
        builder.store(model.as_data(builder, args[0]), slot)
        return slot

    return Ref(record)(record), codegen


def _caller(rtype: types.Type):
    """The typing and code of a call of the kernel at an address, returning ``rtype``, with the arguments' types as
    its signature; an exception the kernel raises propagates to the caller."""

    def typer(typingctx, addr, *args):
        argtys = tuple(args[0]) if len(args) == 1 and isinstance(args[0], types.StarArgTuple) else tuple(args)
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, signature, llargs):
            values = cgutils.unpack_tuple(builder, llargs[1], len(argtys))
            fnty = context.call_conv.get_function_type(rtype, argtys)
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            status, res = context.call_conv.call_function(builder, fn, rtype, argtys, values)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return context.get_dummy_value() if rtype == types.void else res

        return rtype(addr, types.StarArgTuple.from_types(argtys)), codegen

    return typer


call = intrinsic(_caller(types.void))
call.__doc__ = """``call(addr, *args)``: call the kernel at ``addr`` (from :func:`address`, compiled for exactly these
argument types, returning nothing); an exception it raises propagates to the caller."""
call_int = intrinsic(_caller(types.int64))
call_int.__doc__ = """``call_int(addr, *args)``: as :func:`call`, for a kernel returning an ``int64`` (e.g. a chosen
server)."""
call_float = intrinsic(_caller(types.float64))
call_float.__doc__ = """``call_float(addr, *args)``: as :func:`call`, for a kernel returning a ``float64``."""


def record_type(record: Any) -> types.BaseNamedTuple:
    """The numba type of a record whose arrays are all C-contiguous (a ``MsjgymError`` naming a field otherwise)."""
    for name, value in zip(record._fields, record):
        if isinstance(value, np.ndarray) and not (value.flags.c_contiguous and value.flags.writeable
                                                  and value.flags.aligned):
            raise MsjgymError(f"{type(record).__name__}.{name}: must be a C-contiguous, aligned, writeable array")
    return numba.typeof(record)


_ADDRESSES: dict[tuple[int, Any], tuple[Any, int]] = {}


def address(kernel: Any, signature: Any) -> int:
    """The native entry address of the compiled ``kernel`` (a numba dispatcher) for ``signature``, compiling it (or
    loading it from the cache) on first use; the dispatcher keeps the code alive."""
    key = (id(kernel), signature)
    hit = _ADDRESSES.get(key)
    if hit is not None and hit[0] is kernel:
        return hit[1]
    kernel.compile(signature)
    cres = kernel.overloads[tuple(signature.args)]
    addr = int(cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
    _ADDRESSES[key] = (kernel, addr)
    return addr
