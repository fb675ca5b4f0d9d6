"""The named views of every environment's observation (``spec.view(obs)``, ``env.unwrapped.view(obs)``): each field
equals what the simulation's own state says, read independently of the observation's layout (class lists, job
records, server queues), along seeded random trajectories; the action helpers agree with the masks; a view of the
wrong shape is a ValueError naming both lengths; views are read-only and copy nothing."""
from __future__ import annotations

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments
from msjgym.systems.dispatch.state import V_E, V_Q  # noqa: E402
from msjgym.systems.loss import state as ls  # noqa: E402
from msjgym.systems.msj import state as ms  # noqa: E402
from msjgym.systems.msj.control import X_CHOSEN, X_INITIAL  # noqa: E402

STEPS = 300


def _walk(env, seed: int, steps: int = STEPS):
    """Yield (observation, view, mask) along a random trajectory of allowed actions (resetting at an episode's end)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        mask = env.action_masks()
        yield obs, env.view(obs), mask
        obs, _, _, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if truncated:
            obs, _ = env.reset()


# ---------------------------------------------------------------- multiserver jobs
def _msj_jobs(st, c: int) -> list[int]:
    """Class c's jobs present, oldest first (its list)."""
    jobs, j = [], st.cls_i[0, c, ms.C_HEAD]
    while j >= 0:
        jobs.append(int(j))
        j = st.job_i[0, j, ms.J_NEXT]
    return jobs


def test_msj_start_view_is_the_system_state() -> None:
    env = gym.make("msjgym/MSJ-v0", scenario="finite-skip-fig6", window=3, horizon_jobs=200).unwrapped
    model = env.model
    n, K, W, needs = model.servers, model.num_classes, 3, model.needs
    checked_truncated = checked_age = 0
    for obs, view, mask in _walk(env, seed=11):
        if env._venv._batch.ctl.ints[0, X_INITIAL]:  # an episode's initial state: every action is allowed
            continue
        st, ctl = env._venv._batch.sim.state, env._venv._batch.ctl
        now = st.sys_f[0, ms.T_NOW]
        free = n - st.sys_i[0, ms.S_BUSY]
        assert view.free_servers == free
        waiting = [st.cls_i[0, c, ms.C_N] - st.cls_i[0, c, ms.C_X] for c in range(K)]
        assert view.waiting.tolist() == waiting
        assert view.in_service.tolist() == [st.cls_i[0, c, ms.C_X] for c in range(K)]
        for c in range(K):
            head = st.cls_i[0, c, ms.C_BOUND]
            age = np.float32(now - st.job_f[0, head, ms.J_ARR]) if head >= 0 else 0.0
            assert view.oldest_ages[c] == age
            assert mask[view.start_class(c)] == (waiting[c] > 0 and needs[c] <= free)
        slots = ctl.slots[0]
        classes = [int(st.job_i[0, j, ms.J_CLS]) if j >= 0 else -1 for j in slots]
        assert view.window_classes.tolist() == classes
        assert view.window_present.tolist() == [j >= 0 for j in slots]
        assert view.window_needs.tolist() == [int(needs[c]) if c >= 0 else 0 for c in classes]
        ages = [np.float32(now - st.job_f[0, j, ms.J_ARR]) if j >= 0 else 0.0 for j in slots]
        assert view.window_ages.tolist() == ages
        assert view.oldest_waiting_age == ages[0]
        oldest = max((now - st.job_f[0, st.cls_i[0, c, ms.C_BOUND], ms.J_ARR]) for c in range(K) if waiting[c]) \
            if sum(waiting) else 0.0
        assert view.oldest_waiting_age == np.float32(oldest)
        assert view.truncated == (sum(waiting) > W)
        for s in range(W):
            assert mask[view.start_slot(s)] == (slots[s] >= 0 and needs[classes[s]] <= free)
        assert mask[view.wait] and view.wait == env.action_space.n - 1
        checked_truncated += view.truncated
        checked_age += view.oldest_waiting_age > 0
    assert checked_truncated > 10 and checked_age > 10  # the trajectory visits long queues


def test_msj_preemptive_view_is_the_system_state() -> None:
    L = 4
    env = gym.make("msjgym/MSJ-v0", scenario="finite-skip-fig6", mode="preemptive", window=L,
                   horizon_jobs=200).unwrapped
    model = env.model
    n, K, needs = model.servers, model.num_classes, model.needs
    seen = {"truncated": 0, "chosen": 0}
    for obs, view, mask in _walk(env, seed=12):
        if env._venv._batch.ctl.ints[0, X_INITIAL]:
            continue
        st, ctl = env._venv._batch.sim.state, env._venv._batch.ctl
        left = n - ctl.ints[0, X_CHOSEN]
        present = [int(st.cls_i[0, c, ms.C_N]) for c in range(K)]
        chosen = [int(st.scratch[0, c]) for c in range(K)]
        assert view.servers_left == left
        assert view.present.tolist() == present
        assert view.in_service.tolist() == [st.cls_i[0, c, ms.C_X] for c in range(K)]
        assert view.chosen.tolist() == chosen
        jobs = sorted((st.job_i[0, j, ms.J_SEQ], j) for c in range(K) for j in _msj_jobs(st, c))
        assert view.truncated == (len(jobs) > L)
        shown = [j for _, j in jobs[:L]] + [-1] * (L - min(L, len(jobs)))
        assert view.sequence_classes.tolist() == [int(st.job_i[0, j, ms.J_CLS]) if j >= 0 else -1 for j in shown]
        assert view.sequence_present.tolist() == [j >= 0 for j in shown]
        assert view.sequence_in_service.tolist() == [bool(j >= 0 and st.job_i[0, j, ms.J_HPOS] >= 0) for j in shown]
        for c in range(K):
            assert mask[view.choose(c)] == (chosen[c] < present[c] and needs[c] <= left)
        assert mask[view.commit] and view.commit == view.wait == K
        seen["truncated"] += view.truncated
        seen["chosen"] += sum(chosen) > 0
    assert seen["truncated"] > 10 and seen["chosen"] > 10


# ---------------------------------------------------------------- loss
def test_loss_view_is_the_system_state() -> None:
    env = gym.make("msjgym/AdaptiveLoss-v0", scenario="loss-sampled", servers=30, d=3, k=5, lam=0.98,
                   horizon_jobs=100).unwrapped
    d, n = env.model.d, env.model.servers
    widths = set()
    for obs, view, mask in _walk(env, seed=13):
        st = env._venv._batch.state
        assert view.idle_sampled == st.ints[0, ls.I_M]
        assert view.busy_servers == st.ints[0, ls.I_BUSY]
        assert view.jobs == sum(int(st.x[0, i]) for i in range(1, d + 1))
        assert view.busy_fraction == pytest.approx(view.busy_servers / n, rel=1e-6)
        assert view.jobs_per_server == pytest.approx(view.jobs / n, rel=1e-6)
        assert mask.tolist() == [a <= view.idle_sampled for a in range(d + 1)] and mask[view.block]
        widths.add(view.idle_sampled)
    assert widths == set(range(d + 1))


# ---------------------------------------------------------------- dispatch
def test_dispatch_sampled_view_is_the_sampled_queues() -> None:
    env = gym.make("msjgym/Dispatch-v0", servers=10, lam=0.95, observation="sampled", d=3, horizon=200).unwrapped
    longest = 0
    for obs, view, mask in _walk(env, seed=14):
        st = env._venv._batch.state
        queues = [int(st.srv[0, st.perm[0, j], V_Q]) for j in range(3)]
        assert view.queue_lengths.tolist() == queues
        assert view.shortest == queues.index(min(queues))
        longest = max(longest, max(queues))
    assert longest >= 2


@pytest.mark.parametrize("observation, key, extra", [("histogram", V_Q, {}), ("estimates", V_E, {"delta": 0.2})])
def test_dispatch_level_view_is_the_servers_by_level(observation: str, key: int, extra: dict) -> None:
    L, n = 4, 10
    env = gym.make("msjgym/Dispatch-v0", servers=n, lam=0.95, observation=observation, levels=L, horizon=200,
                   **extra).unwrapped
    top = 0
    for obs, view, mask in _walk(env, seed=15):
        q = env._venv._batch.state.srv[0, :n, key]
        counts = [int((q == a).sum()) for a in range(L)] + [int((q >= L).sum())]
        assert view.level_servers.tolist() == counts
        assert view.at_least.tolist() == [np.float32((q >= i).sum() / n) for i in range(1, L + 1)]
        assert view.level_fractions == pytest.approx(np.array(counts) / n, abs=1e-6)
        assert mask.tolist() == [c > 0 for c in counts]
        assert view.lowest_level == next(a for a, c in enumerate(counts) if c)
        assert view.estimated == (observation == "estimates")
        top = max(top, max(a for a, c in enumerate(counts) if c))
    assert top >= 2


# ---------------------------------------------------------------- finite-skip
def test_finite_skip_view_names_the_jobs() -> None:
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec
    from msjgym.systems.finite_skip.scenarios import load_finite_skip

    spec = FiniteSkipSpec(load_finite_skip("finite-skip-fig4a", {}))
    params, servers = np.array([1, 8, 2]), np.full(3, -1)
    view = spec.view({"params": params, "servers": servers})
    assert view.jobs == 3 and view.params.tolist() == [1, 8, 2] and view.servers_held.tolist() == [-1, -1, -1]
    assert view.capacity == spec.servers == 8 and np.shares_memory(view.params, params)
    assert "jobs=3" in repr(view)
    with pytest.raises(ValueError, match=r"expected a dict with keys 'params' and 'servers'"):
        spec.view(np.zeros(3))
    with pytest.raises(ValueError, match=r"'params'\] has 3 jobs, observation\['servers'\] 2"):
        spec.view({"params": params, "servers": servers[:2]})


def test_finite_skip_policies_see_the_view_of_their_observation() -> None:
    """Through the agent path, the view of every observation a policy receives holds the same arrays."""
    import msjgym
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec
    from msjgym.systems.finite_skip.scenarios import load_finite_skip

    model = load_finite_skip("finite-skip-fig4a", {})
    spec, sizes = FiniteSkipSpec(model), []

    def act(observation):
        view = spec.view(observation)
        assert view.params is not observation["params"] and np.array_equal(view.params, observation["params"])
        assert set(view.params.tolist()) <= set(model.params) and (view.servers_held == -1).all()
        sizes.append(view.jobs)
        # an equal share, capped at what each job can use (P/k: a P = 1 job cannot take the whole capacity)
        return np.minimum(view.params / view.capacity, 1.0 / view.jobs) if view.jobs else np.zeros(0)

    msjgym.evaluate(model, act, jobs=200, reps=1, seed=1, references=False)
    assert max(sizes) >= 3


# ---------------------------------------------------------------- every environment
CONFIGS = {
    "msj-start": ("msjgym/MSJ-v0", {"scenario": "one-and-n", "window": 5}),
    "msj-preemptive": ("msjgym/MSJ-v0", {"scenario": "finite-skip-fig6", "mode": "preemptive", "window": 2}),
    "loss": ("msjgym/AdaptiveLoss-v0", {}),
    "dispatch-sampled": ("msjgym/Dispatch-v0", {"observation": "sampled", "d": 4}),
    "dispatch-histogram": ("msjgym/Dispatch-v0", {"observation": "histogram", "levels": 6}),
    "dispatch-estimates": ("msjgym/Dispatch-v0", {"observation": "estimates", "levels": 3}),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_views_are_read_only_cheap_and_check_the_shape(name: str) -> None:
    env_id, kwargs = CONFIGS[name]
    env = gym.make(env_id, **kwargs).unwrapped
    obs, _ = env.reset(seed=3)
    obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    view = env.view(obs)
    size = env.observation_space.shape[0]
    assert env.spec_.layout.size == env.spec_.observation_size == size
    assert type(view) is type(env.spec_.view(obs)) and repr(view).startswith(type(view).__name__ + "(")
    assert np.shares_memory(view.observation, obs) and not view.observation.flags.writeable
    assert obs.flags.writeable  # the caller's array is untouched
    for field in view.fields:
        value = getattr(view, field)
        if isinstance(value, np.ndarray) and value.dtype == np.float32:
            assert np.shares_memory(value, obs)  # a slice, not a copy
    with pytest.raises(AttributeError, match="read-only"):
        view.observation = obs
    for bad in (obs[:-1], np.append(obs, 0.0), obs.reshape(1, -1)):
        with pytest.raises(ValueError, match=rf"observation of shape \({', '.join(map(str, bad.shape))},?\): "
                                             rf"expected \({size},\)"):
            env.view(bad)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **kwargs).unwrapped
    batch, _ = venv.reset(seed=3)
    assert type(venv.view(batch[1])) is type(view)
