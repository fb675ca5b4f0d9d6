"""The bases of the agent forms: a built-in policy as an agent of ``msjgym/MSJ-v0``, deciding from the observation alone.

Each policy's agent form lives in the policy's own file, beside its kernel (``FCFSAgent`` in ``fcfs.py``,
``ServerFillingAgent`` in ``server_filling.py``, ...), as a subclass of one of the bases here: :class:`StartAgent`
(non-preemptive, ``mode="start"``: implement ``pick``), :class:`SetAgent` (preemptive, ``mode="preemptive"``:
implement ``targets``), or :class:`NotExpressibleAgent` / :class:`EstimatesNotObservedAgent` (no agent form: a
one-line reason). ``make_agent(policy, spec)`` returns an agent (callable, with ``act(observation) -> action``) that takes exactly the
decisions of the policy's compiled ``schedule`` kernel, tie-breaking included, so that driving the environment with
it reproduces the fast path's trajectory and statistics bit for bit (the twin test, ``tests/test_twin.py``). The
agent may use static facts of the scenario from the ``EnvSpec`` (each class's need, the number of servers n, the
number of classes K, the window size, the mode); everything about the system's current state comes from the
observation vector (see ``msjgym.systems.msj.env.MSJEnv`` for its layout).

Modes. Non-preemptive policies (``fcfs``, ``first-fit``, ``msf-nonpreemptive``, ``lsf-nonpreemptive``, ``msfq``,
``smash``) act in
``mode="start"``: one job started per step (always the oldest waiting job of the chosen class, action ``W + c``),
or wait (``W + K``) when the kernel would start nothing more. Preemptive policies (``preemptive-first-fit``,
``msf``, ``lsf``, ``server-filling``, ``server-filling-divisible``, ``maxweight``) act in ``mode="preemptive"``:
the agent computes the kernel's per-class target counts (how many of the oldest jobs of each class to serve) from
the observation, chooses classes one at a time (lowest class index first) until the chosen counts shown in the
observation reach the targets, then commits (``K``). Only the counts matter: a commit serves the oldest ``target_c``
class-c jobs, exactly as the kernel's ``apply_targets``.

What the observation shows, and the one limitation. The kernels look at every job; the observation shows only
the W oldest waiting jobs (``start``) or the L oldest jobs present (``preemptive``), plus per-class counts (and, in
``start`` mode, the age of each class's oldest waiting job). Counts settle most decisions; where the kernel needs
the arrival order of jobs beyond the window (for example two classes sharing a need whose oldest jobs are not all
among the L shown, or ServerFilling's front not reaching n within the L oldest jobs), the agent cannot know what the
kernel would do and raises ``RuntimeError`` rather than silently diverge. **Built-in agents need a window large
enough for the system's queue.** In ``preemptive`` mode: with one class per need, ``msf``, ``lsf`` and
``maxweight`` decide from the per-class counts (any L works); ``server-filling``'s front holds at most n jobs
(L >= n works); ``preemptive-first-fit``, ``server-filling-divisible`` and classes sharing a need need the arrival
order of the jobs concerned, so choose L above the number of jobs the system holds (the observation's "truncated"
flag shows when more are present). In ``start`` mode the window only orders the oldest waiting jobs of the
candidate classes; beyond it the agent compares the per-class ages shown, and only an exact tie there (float32
ages) is the error case.

In the episode's initial state (time 0, empty system) every action is allowed and all are equivalent: the agents
then return wait (``start``) or commit (``preemptive``), as in any empty state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from msjgym.errors import PolicyError
from msjgym.systems.msj import observation as ob
from msjgym.systems.msj.state import MODE_SET, MODE_START

if TYPE_CHECKING:
    from msjgym.systems.msj.contract import Policy

EnvSpec = Any
"""The environment's spec, :class:`msjgym.systems.msj.agent.EnvSpec` (not imported: the agent path imports this
package, for its ``Policy``)."""

_MODE_NAMES = {MODE_START: "start", MODE_SET: "preemptive"}


class BuiltinAgent:
    """A built-in policy acting on ``msjgym/MSJ-v0`` observations (base class; see the module docstring).

    Call it, or its ``act``, with an observation: it returns the action (an int). Stateless: the action is a function
    of the observation only (a one-entry cache of the last decision's targets is kept for speed), except for
    ``MSFQAgent``, which keeps the policy's phase from the observations it has seen.
    """

    policy_name: str = ""
    mode: int = MODE_START
    not_expressible: str = ""
    """Non-empty: why the observation cannot determine the policy's decisions; constructing the agent then raises
    ``PolicyError`` with this reason (the policy runs on the compiled path only)."""

    def __init__(self, spec: EnvSpec, policy: Policy | None = None) -> None:
        if self.not_expressible:
            raise PolicyError(f"policy {self.policy_name!r} has no agent form on msjgym/MSJ-v0: "
                              f"{self.not_expressible}")
        model = spec.scenario.model
        if spec.mode != self.mode:
            raise PolicyError(
                f"agent {self.policy_name!r}: acts in mode={_MODE_NAMES[self.mode]!r}; the environment is in "
                f"mode={_MODE_NAMES.get(spec.mode, spec.mode)!r}")
        if policy is None:
            from msjgym.policies import registered
            policy = registered("msj")[self.policy_name]
        policy.validate(model)
        self.policy = policy  # the declaration, with its bound parameter values
        self.spec = spec
        self.n = int(model.servers)
        self.K = int(model.num_classes)
        self.need = [int(m) for m in model.needs]
        self.window = int(spec.window)
        self.size = spec.observation_size
        # the observation's offsets (msjgym.systems.msj.observation): each class's first entry, the window's
        self.cls = [int(ob.class_at(self.mode, c)) for c in range(self.K)]
        self.base = int(ob.slot_at(self.mode, self.K, 0))
        self.row = int(ob.slot_size(self.mode, self.K))
        # need groups exactly as the kernels see them (simulation._need_groups): decreasing need, classes in order
        self.grp_need = sorted(set(self.need), reverse=True)
        self.grp_cls = [[c for c in range(self.K) if self.need[c] == v] for v in self.grp_need]

    def __call__(self, observation: np.ndarray) -> int:
        return self.act(observation)

    def act(self, observation: np.ndarray) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.policy_name!r}, n={self.n}, K={self.K}, window={self.window})"

    def _check(self, obs: np.ndarray) -> np.ndarray:
        if not isinstance(obs, np.ndarray):
            obs = np.asarray(obs)
        if obs.shape != (self.size,):
            raise ValueError(f"agent {self.policy_name!r}: observation of shape {obs.shape}; expected ({self.size},) "
                             f"(mode={_MODE_NAMES[self.mode]!r}, K={self.K}, window={self.window})")
        return obs

    def _not_enough(self, what: str) -> RuntimeError:
        kind = "W (waiting jobs shown)" if self.mode == MODE_START else "L (jobs shown)"
        return RuntimeError(
            f"agent {self.policy_name!r}: the observation is not enough to take the policy's decision: {what}; "
            f"the window {kind} = {self.window} is too small for this state: make the environment with a larger "
            f"window")


class NotExpressibleAgent(BuiltinAgent):
    """The agent form of a policy whose decisions ``msjgym/MSJ-v0`` cannot express: constructing it raises a
    ``PolicyError`` giving the reason (``not_expressible``). Job-level policies (ServerFilling-SRPT, -Gittins,
    backfilling) serve jobs by what the observation does not show (remaining duration, age, runtime estimate) and
    regardless of their class's arrival order, which the actions (the oldest jobs of a class) cannot choose;
    Balanced Splitting decides by the server set each job runs in, which the observation does not show either."""

    mode = MODE_SET


class EstimatesNotObservedAgent(NotExpressibleAgent):
    """The agent form of a policy that decides from runtime estimates (the backfilling policies); its compiled
    kernel is checked against a pure-Python reference of its definition instead of a twin
    (``tests/test_backfilling.py``)."""

    mode = MODE_START
    not_expressible = ("it plans with every job's runtime estimate, which the observation shows at most for the "
                       "window's jobs (estimates=True), and it may start a younger job of a class while an older one "
                       "waits, which a start action cannot express; run it with `msjgym evaluate` (the compiled "
                       "kernel)")


# ==================================================================================================== start mode
class StartAgent(BuiltinAgent):
    """Non-preemptive: start the oldest waiting job of the class the kernel's ``admit`` picks, or wait."""

    mode = MODE_START

    def __init__(self, spec: EnvSpec, policy: Policy | None = None) -> None:
        super().__init__(spec, policy)
        self.start = [int(ob.class_action(self.window, c)) for c in range(self.K)]
        self.wait = int(ob.wait_action(MODE_START, self.K, self.window))

    def _state(self, obs: np.ndarray) -> tuple[int, list[int]]:
        """(free servers, waiting jobs per class)."""
        free = round(float(obs[ob.FREE]) * self.n)
        waiting = [int(obs[at + ob.WAITING]) for at in self.cls]
        return free, waiting

    def _window_classes(self, obs: np.ndarray) -> list[int]:
        """Classes of the waiting jobs shown, oldest first."""
        rows = obs[self.base:self.base + self.window * self.row].reshape(self.window, self.row)
        present = rows[:, ob.SLOT_PRESENT] > 0.5
        return np.argmax(rows[present, ob.SLOT_CLASS:], axis=1).tolist()

    def _oldest_head(self, obs: np.ndarray, candidates: list[int], waiting: list[int]) -> int:
        """The candidate class whose oldest waiting job arrived first."""
        if len(candidates) == 1:
            return candidates[0]
        chosen = set(candidates)
        shown = self._window_classes(obs)
        for c in shown:
            if c in chosen:
                return c
        if len(shown) >= sum(waiting):
            raise AssertionError(f"agent {self.policy_name!r}: classes {candidates} have waiting jobs, none shown")
        # every candidate's oldest waiting job is beyond the window: order them by their ages (float32, so a
        # strict maximum is the true order; an equal maximum cannot be resolved)
        ages = [float(obs[self.cls[c] + ob.OLDEST_AGE]) for c in candidates]
        top = max(ages)
        if ages.count(top) > 1:
            tied = [c for c, a in zip(candidates, ages) if a == top]
            raise self._not_enough(f"classes {tied} have their oldest waiting jobs beyond the window with equal "
                                   f"observed ages ({top})")
        return candidates[ages.index(top)]

    def act(self, observation: np.ndarray) -> int:
        obs = self._check(observation)
        free, waiting = self._state(obs)
        c = self.pick(obs, free, waiting)
        return self.wait if c < 0 else self.start[c]

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        """The class whose oldest waiting job the kernel starts next (-1: none, wait)."""
        raise NotImplementedError


# ==================================================================================================== preemptive mode
class SetView:
    """What a preemptive-mode observation says about the system: per class jobs present (``N``), chosen so far,
    in service; the classes of the L oldest jobs in arrival order (``seq``); whether more jobs are present; jobs
    present per need group."""

    __slots__ = ("N", "chosen", "seq", "truncated", "groups")

    def __init__(self, N: list[int], chosen: list[int], seq: list[int], truncated: bool,
                 groups: list[int]) -> None:
        self.N, self.chosen, self.seq, self.truncated, self.groups = N, chosen, seq, truncated, groups


class SetAgent(BuiltinAgent):
    """Preemptive: compute the kernel's targets (per-class counts of the oldest jobs to serve), choose up to them
    one class at a time, then commit."""

    mode = MODE_SET

    def __init__(self, spec: EnvSpec, policy: Policy | None = None) -> None:
        super().__init__(spec, policy)
        self.commit = int(ob.wait_action(MODE_SET, self.K, self.window))
        self._end = self.base + self.window * self.row
        first, end = int(ob.class_at(MODE_SET, 0)), int(ob.class_at(MODE_SET, self.K))
        self._present, self._chosen, self._serving = (slice(first + f, end, ob.CLASS_FIELDS)
                                                      for f in (ob.PRESENT, ob.CHOSEN, ob.SERVING))
        self._key: tuple[bool, bytes, bytes, bytes] | None = None
        self._targets: list[int] = []

    def _view(self, obs: np.ndarray) -> SetView:
        N = [int(x) for x in obs[self._present].tolist()]
        chosen = [int(x) for x in obs[self._chosen].tolist()]
        rows = obs[self.base:self._end].reshape(self.window, self.row)
        seq = np.nonzero(rows[:, ob.SEQ_CLASS:])[1].tolist()  # the class one-hots of the jobs shown, in arrival order
        groups = [sum(N[c] for c in classes) for classes in self.grp_cls]
        return SetView(N, chosen, seq, bool(obs[ob.TRUNCATED] > 0.5), groups)

    def act(self, observation: np.ndarray) -> int:
        obs = self._check(observation)
        # the entries that describe the system, not the choice in progress: the truncated flag, in service and jobs
        # per class, the sequence
        key = (bool(obs[ob.TRUNCATED] > 0.5), obs[self._serving].tobytes(), obs[self._present].tobytes(),
               obs[self.base:self._end].tobytes())
        if key != self._key:
            self._targets = self.targets(self._view(obs))
            self._key = key
        targets = self._targets
        for c, chosen in enumerate(obs[self._chosen].tolist()):
            if chosen < targets[c]:
                return c
            if chosen > targets[c]:
                raise RuntimeError(f"agent {self.policy_name!r}: {int(chosen)} class-{c} jobs are chosen, more than "
                                   f"the policy's {targets[c]} (the choice in progress was not made by this agent)")
        return self.commit

    def targets(self, view: SetView) -> list[int]:
        """Per-class counts of the oldest jobs the kernel serves."""
        raise NotImplementedError

    # ---- helpers mirroring policies/common.py
    def group_count(self, view: SetView, g: int) -> int:
        """Jobs present in need group g."""
        return view.groups[g]

    def split_group(self, view: SetView, g: int, count: int, targets: list[int]) -> None:
        """``common.split_group``: the ``count`` oldest jobs of need group g (classes merged by arrival order)."""
        classes = self.grp_cls[g]
        if len(classes) == 1:
            targets[classes[0]] = count
            return
        if count == self.group_count(view, g):  # the whole group: no order needed
            for c in classes:
                targets[c] = view.N[c]
            return
        for c in classes:
            targets[c] = 0
        if count == 0:
            return
        members = set(classes)
        left = count
        for c in view.seq:
            if c in members:
                targets[c] += 1
                left -= 1
                if left == 0:
                    return
        raise self._not_enough(f"the {count} oldest jobs of the classes {classes} (need {self.grp_need[g]}) are not "
                               f"all among the {len(view.seq)} oldest jobs shown")

    def group_positions(self, view: SetView, g: int) -> list[int]:
        """Positions in the shown sequence of need group g's jobs."""
        members = set(self.grp_cls[g])
        return [i for i, c in enumerate(view.seq) if c in members]


# ==================================================================================================== registry
def __getattr__(name: str):
    if name == "AGENTS":  # computed on use: the declarations import this module
        from msjgym.policies import registered
        POLICIES = registered("msj")
        return {p.name: p.agent_class for p in POLICIES.values()}
    raise AttributeError(name)


AGENTS: dict[str, type[BuiltinAgent]]
"""Agent class of every built-in policy, by the policy's name (each takes an ``EnvSpec``, and the declaration)."""


def agent_mode(policy: str | Policy) -> str:
    """The environment mode the policy's agent acts in: "start" (non-preemptive) or "preemptive"."""
    return _MODE_NAMES[_declaration(policy).agent_class.mode]


def make_agent(policy: str | Policy, spec: EnvSpec) -> BuiltinAgent:
    """The built-in ``policy`` (its name or its declaration, with any bound parameters) as an agent of the
    environment described by ``spec``.

    The returned agent is callable and has ``act(observation) -> int``. Raises ``PolicyError`` for an unknown
    policy, an environment in the wrong mode (non-preemptive policies act in ``mode="start"``, preemptive ones in
    ``mode="preemptive"``) or a scenario the policy does not accept.
    """
    declaration = _declaration(policy)
    return declaration.agent_class(spec, declaration)


def _declaration(policy: str | Policy) -> Policy:
    from msjgym.policies import registered

    POLICIES = registered("msj")

    if not isinstance(policy, str):
        return policy
    try:
        declaration = POLICIES[policy]
    except KeyError:
        raise PolicyError(f"agent for policy {policy!r}: unknown; built-in agents: {', '.join(POLICIES)}") from None
    if declaration.agent_class is None:
        raise PolicyError(f"policy {policy!r} has no agent form")
    return declaration
