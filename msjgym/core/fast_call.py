"""Call a compiled function from Python many times with the same records: numba's argument typing done once.

A call of a numba dispatcher from Python types every argument before it runs the compiled code. For arrays and
numbers that is fast, but a family's state record (a ``NamedTuple`` of up to 17 arrays) and its run parameters are
fingerprinted field by field at every call: measured on numba 0.68, 2–4 µs of CPU per record, 5–10 µs per step of an
environment or of an agent path (3–7 times the compiled step itself), where the same step with loose arrays took
1–3 µs. Environments and agent paths call their family's control step once per decision with the same records, so
:class:`FastCall` binds them:

    step = FastCall(control.step_batch, bound=(state, params, horizon), example=(actions, obs, masks))
    step(actions, obs, masks)        # = control.step_batch(state, params, horizon, actions, obs, masks)

It types the bound arguments and the example once, compiles (or loads from the cache) that version of the function,
and calls its compiled entry point (``Dispatcher.get_overload``) directly. The arguments given per call are checked
with numba's own fingerprint of a value (the key numba's dispatcher uses to find a value's type; one C call per
argument, about 0.15 µs for an array): arguments whose types differ from the example's are passed to the dispatcher
with the bound ones, which types them (and compiles another version, or raises numba's typing error) exactly as a
plain call would. So a bound call computes what the plain call computes, for any arguments.

The bound records must stay the same objects (their arrays are changed in place by the compiled code, never
replaced); a call on other records (a sub-batch of views) is a plain dispatcher call. ``numba._dispatcher.
compute_fingerprint`` is a private name of numba (:mod:`msjgym.core.numba_hooks`, docs/compile-machinery.md).
"""
from __future__ import annotations

from typing import Any

from msjgym.core import numba_hooks

numba_hooks.check()  # the numba internals used below are there, or one line saying how to fix it

from numba._dispatcher import compute_fingerprint  # noqa: E402
from numba.core.typing.typeof import Purpose, typeof  # noqa: E402

from msjgym.core.compiling import older_objects_frozen  # noqa: E402


class FastCall:
    """``dispatcher(*bound, *args)`` from Python, typed once for ``bound`` and arguments like ``example``.

    Attributes:
        dispatcher: the numba dispatcher (an ``njit`` function).
        bound: the leading arguments, the same objects at every call (the family's records, run constants).
        signature: the argument types of the compiled version called directly.
    """

    def __init__(self, dispatcher: Any, bound: tuple = (), example: tuple = ()) -> None:
        self.dispatcher = dispatcher
        self.bound = tuple(bound)
        self.signature = tuple(typeof(value, Purpose.argument) for value in (*self.bound, *example))
        if self.signature not in dispatcher.overloads:  # (an event loop's entry point refuses compile() once ready)
            with older_objects_frozen():
                dispatcher.compile(self.signature)
        self._entry = dispatcher.get_overload(self.signature)
        self._fingerprints = tuple(compute_fingerprint(value) for value in example)

    def __call__(self, *args: Any) -> Any:
        try:
            same = tuple(map(compute_fingerprint, args)) == self._fingerprints
        except (TypeError, ValueError, NotImplementedError):  # a value numba cannot fingerprint: let it type it
            same = False
        if same:
            return self._entry(*self.bound, *args)
        return self.dispatcher(*self.bound, *args)
