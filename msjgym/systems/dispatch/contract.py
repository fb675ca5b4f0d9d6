"""The contract between the large-scale dispatch system and its dispatchers: the declaration class
(:class:`DispatchPolicy`), what both read (the information models, the parameter slots a dispatcher reads, the batch
code), the compiled helpers both call (sampling servers, counting messages), the signature of a dispatcher's
decision (:data:`CHOOSE`) and the family's kernel-slot table (:data:`KERNELS`).

The built-in dispatchers (``msjgym.policies.dispatch``) and a compiled dispatcher of the user's
(:mod:`msjgym.systems.dispatch.compiled`) import this module; the system reaches the built-ins only through
``msjgym.core.policy_registry.registered("dispatch")``. The event loop (:mod:`msjgym.systems.dispatch.loop`) calls a
dispatcher's ``choose`` at its address (``KERNELS.addresses(policy)``), compiled on its own for :data:`CHOOSE`.

What a dispatcher reads and owns:

* the parameters ``pr`` (``P_N`` .. ``P_LCAP``, ``F_SPEEDS``; the rest of the layout is the loop's) and the state
  record ``st`` (:mod:`msjgym.systems.dispatch.state`: ``V_Q``, the buckets, the idle set, the job rows);
* the **information** it declares (``DispatchPolicy.information``) is part of the system, not of the dispatcher: the
  loop runs its events (probes at rate δN, server updates at completions and from idle servers, the central server's
  tokens, the idle queue's messages) and keeps what they produce in the record: the estimates ``e_i`` (``V_E``,
  ordered in ``eord`` / ``estart``: set to ``q_i`` by a probe or an update, the events of the push and pull
  information models) and the servers ordered by true queue length (``qord`` / ``qstart``: the queue-order and pooling
  information; the central server removes a job from a longest queue). These fields are the system's information
  model, shared by every dispatcher (and by the environment's "estimates" and "histogram" observations), which is why
  they stay in the record;
* a **batch** (``choose`` returns :data:`BATCH`): the arrival is a batch of ``P_BATCH`` jobs (the model's batch
  arrivals, rate λN/M), placed as ``batch[j]`` jobs on server ``perm[j]``, j < ``P_K``;
* its **own area** ``st.own[0 : own_ints]``: state a dispatcher keeps between arrivals, or scratch, sized by its
  declaration (``DispatchPolicy.own_ints``: a number, or a function of the model) and zeroed at every reset; nothing
  else reads it (round-robin's pointer, water filling's level histogram). A dispatcher that needs state adds no field
  to the record and recompiles nothing but its own kernel.

Source of the system and its policies: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded
Maximum Queue Length in case of Non-Exponential Job Sizes" (:data:`HKV`), §2.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.jit import njit
from msjgym.core.plug import Ref
from msjgym.core.policy_registry import BuiltinPolicy, Param
from msjgym.core.rng import below
from msjgym.systems.dispatch.state import S_MSG, S_PHASE, STATE

HKV = ("Hellemans, Kielanski & Van Houdt, 'Performance of Load Balancers with Bounded Maximum Queue Length in case "
       "of Non-Exponential Job Sizes'")

# ---------------------------------------------------------------- information models
INFORMATION = ("none", "idle-queue", "queue-order", "push", "pull", "pooling")
"""The information models the event loop runs (``DispatchPolicy.information``; codes: their positions)."""
INFO_NONE, INFO_IDLE_QUEUE, INFO_QUEUE_ORDER, INFO_PUSH, INFO_PULL, INFO_POOLING = range(len(INFORMATION))
BATCH = -1
"""What ``choose`` returns when it placed a batch of jobs (``perm[0:K]`` receive ``batch[0:K]`` each) rather than
naming one server."""

# ---------------------------------------------------------------- parameters a dispatcher reads
# params.ints (the loop's own fields follow: msjgym.systems.dispatch.loop, from P_JOBS = 6 on)
P_N = 0  # servers N
P_INFO = 1  # the information model's code (INFO_*)
P_D = 2  # servers sampled per arrival d (0 unless the policy takes d)
P_BATCH = 3  # jobs per arrival batch M (1 without batches)
P_K = 4  # servers a batch samples K (0 without batches)
P_LCAP = 5  # the largest queue length (estimate) the arrays hold

# params.floats: fields 0 .. F_SPEEDS - 1 are the event loop's (msjgym.systems.dispatch.loop); then one per server
F_SPEEDS = 7  # params.floats[F_SPEEDS + i]: server i's speed (work per unit time; all equal unless speeds are given)

DispatchParams = namedtuple("DispatchParams", "ints floats ddata")
DispatchParams.__doc__ = ("Read-only parameters: ``ints[NPI]``, ``floats[NPF + N]`` (the last N: the servers' "
                          "speeds), the encoded size law ``ddata`` (layout: :mod:`msjgym.systems.dispatch.loop`).")

PARAMS = types.NamedTuple((types.int64[::1], types.float64[::1], types.float64[::1]), DispatchParams)
"""numba type of a ``DispatchParams`` (C-contiguous arrays)."""

# ---------------------------------------------------------------- the decision and the slot table
CHOOSE = types.int64(Ref(STATE), Ref(PARAMS), types.int64, types.float64)
"""The signature of a dispatcher's decision, ``choose(st, pr, b, now) -> server`` (or ``BATCH``): the state and the
parameters by reference (:class:`msjgym.core.plug.Ref`, read like the records), the replication ``b`` (its stream
``st.rng[b]``) and the arrival's time ``now``. Each dispatcher's kernel is compiled for it on its own
(:func:`msjgym.core.plug.address`) and the loop calls it at its address."""

KERNELS = KernelTable(family="dispatch", loop_label="the dispatch event loop", policy_label="dispatcher",
                      slots=(Slot("choose", CHOOSE),))
"""The dispatch loop's one kernel slot, a dispatcher's ``choose``: ``KERNELS.units(policy, loops=...)`` is what a
run compiles, ``KERNELS.addresses(policy)`` the address the loop calls (built-in and compiled dispatchers alike)."""


@dataclass(frozen=True, kw_only=True)
class DispatchPolicy(BuiltinPolicy):
    """A dispatcher of the large-scale load-balancing system (a built-in, or a compiled one of the user's).

    Its decision is its ``choose`` kernel, a small compiled function that the family's one event loop
    (:func:`msjgym.systems.dispatch.loop.run`) calls at every arrival at its address (:data:`KERNELS`); it is compiled
    on first use against the loop's interface (:data:`CHOOSE`) and cached by its own file. The events the loop runs
    for the dispatcher's information (probes, server updates, the central server's tokens, the idle queue's messages)
    are named by ``information``. Its parameters are those of :class:`msjgym.systems.dispatch.model.DispatchModel` it
    reads (given as ``--param`` on a dispatch scenario).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        choose: its compiled decision ``choose(st, pr, b, now) -> server`` (``now``: the arrival's time; the
            state record of :mod:`msjgym.systems.dispatch.state`, the parameters of this module);
            :data:`BATCH` when it placed a batch of jobs instead (``perm[0:K]`` receive ``batch[0:K]`` jobs each).
        information: the information model the event loop runs for it, one of :data:`INFORMATION`: ``none``;
            ``idle-queue`` (a message when a server becomes idle: JIQ); ``queue-order`` (the servers kept ordered
            by queue length: JSQ); ``push`` (probes at rate δN); ``pull`` (updates at completions and from idle
            servers); ``pooling`` (a central server's tokens at rate pN, servers ordered by queue length).
        own_ints: the int64 cells of its own area ``st.own`` (zeroed at every reset): a number, or a function of the
            :class:`~msjgym.systems.dispatch.model.DispatchModel` (a module-level function, so the declaration
            pickles); 0: none.
        reads_sizes: whether ``choose`` reads the work in the queues (``W_PEND``, ``W_CT``): the loop then draws
            every job's size at arrival (no competing completion clocks).
        agent_class: its agent form, acting on ``msjgym/Dispatch-v0`` observations of mode ``agent_observation``
            (beside its kernel, in its file); None with ``not_expressible`` saying why no
            observation of the environment can express it.
    """

    family: str = "dispatch"
    preemptive: bool = False
    choose: Any = None
    information: str = "none"
    own_ints: int | Callable[[Any], int] = 0
    reads_sizes: bool = False
    agent_class: type | None = None
    agent_observation: str | None = None
    not_expressible: str | None = None

    def __post_init__(self) -> None:
        if self.information not in INFORMATION:
            raise ValueError(f"dispatch policy {self.name!r}: information = {self.information!r}; must be one of "
                             f"{', '.join(INFORMATION)}")

    @property
    def information_code(self) -> int:
        """``information`` as the event loop reads it (``params.ints[P_INFO]``: its index in :data:`INFORMATION`)."""
        return INFORMATION.index(self.information)

    def own_size(self, model: Any) -> int:
        """The cells of its own area ``st.own`` on ``model`` (``own_ints``, evaluated); a ValueError if negative."""
        size = self.own_ints(model) if callable(self.own_ints) else self.own_ints
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"dispatch policy {self.name!r}: own_ints = {size!r}; must be an integer >= 0")
        return size


# ---------------------------------------------------------------- shared parameter declarations
D = Param("d", 2, "servers sampled per arrival, an integer in [1, servers]", low=1, integer=True)
"""jsq-d, least-loaded-d, sed-d: the sample size."""
DELTA = Param("delta", None, "probe/update rate per server, > 0", low=0.0)
"""push, pull, water filling: the message rate per server."""


# ---------------------------------------------------------------- compiled helpers the system and dispatchers share
@njit(inline="always")
def sample_servers(st, b, n, d):
    """perm[0:d] := d distinct servers, uniformly at random and in uniformly random order (partial Fisher-Yates);
    O(d). The environment's "sampled" observation draws its sample here, as jsq-d's ``choose`` does."""
    perm = st.perm
    for j in range(d):
        r = j + below(st.rng, b, n - j)
        x = perm[r]
        perm[r] = perm[j]
        perm[j] = x


@njit(inline="always")
def count_messages(st, d):
    """d messages between the dispatcher and sampled servers, counted once the warm-up is over (``S_PHASE`` 1)."""
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += d
