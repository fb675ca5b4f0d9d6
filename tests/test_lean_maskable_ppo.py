"""The lean MaskablePPO path of the job-scoring policy: its masked distribution equals sb3-contrib's (values and
gradients), samples only allowed actions with the right frequencies, the reused rollout buffer keeps every transition
together and hands each out once per epoch, MaskablePPO learns with both, and the recorded models keep their greedy
actions."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer  # noqa: E402
from sb3_contrib.common.maskable.distributions import (  # noqa: E402
    MaskableCategorical, MaskableCategoricalDistribution)

from job_env_standin import JobWindowStandIn  # noqa: E402
from msjgym.envs.masked_categorical import LeanMaskableCategoricalDistribution, MaskedLogits  # noqa: E402
from msjgym.envs.rollout_buffer import LeanMaskableRolloutBuffer  # noqa: E402
from msjgym.envs.scoring import ABSENT_LOGIT  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _logits_masks(seed: int, batch: int = 64, actions: int = 128) -> tuple[torch.Tensor, np.ndarray]:
    """Random logits (absent slots at ABSENT_LOGIT, as the scoring network gives) and masks with 1 to all allowed."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 3.0, (batch, actions)).astype(np.float32)
    present = rng.random((batch, actions)) < rng.random((batch, 1))
    present[:, 0] = present[1, 5] = True
    logits[~present] = ABSENT_LOGIT
    masks = present & (rng.random((batch, actions)) < 0.7)  # the environment allows only shown jobs
    masks[:, 0] = True  # at least one allowed per row
    masks[1] = False
    masks[1, 5] = True  # one row with a single allowed action
    return torch.tensor(logits), masks


@pytest.mark.parametrize("with_masks", [True, False])
def test_values_and_gradients_equal_sb3_contribs(with_masks):
    logits, masks = _logits_masks(1)
    given = masks.astype(np.float32) if with_masks else None  # the rollout buffer's float masks, as sb3-contrib's
    raw_ref = logits.clone().requires_grad_(True)
    raw_new = logits.clone().requires_grad_(True)
    ref = MaskableCategorical(logits=raw_ref, masks=given)
    new = MaskedLogits(raw_new, given)
    allowed = torch.as_tensor(masks) if with_masks else torch.ones_like(logits, dtype=torch.bool)
    real = allowed & (logits > -1e7)  # absent slots' logits are about -1e8 (equal to float32 rounding)
    actions = torch.as_tensor([np.flatnonzero(row)[i % row.sum()] for i, row in enumerate(real.numpy())])
    torch.testing.assert_close(new.probs, ref.probs, rtol=0, atol=1e-6)
    torch.testing.assert_close(new.logits[real], ref.logits[real], rtol=0, atol=1e-5)
    assert (new.logits[~real] < -1e7).all() and (ref.logits[~real] < -1e7).all()
    torch.testing.assert_close(new.log_prob(actions.float()), ref.log_prob(actions), rtol=0, atol=1e-5)
    torch.testing.assert_close(new.entropy(), ref.entropy(), rtol=0, atol=1e-5)
    assert new.entropy()[1].item() == pytest.approx(0.0, abs=1e-6) or not with_masks
    torch.testing.assert_close(new.mode(), torch.argmax(ref.probs, dim=1), rtol=0, atol=0)
    # the PPO loss's terms: the same gradients with respect to the network's logits
    loss_ref = -(ref.log_prob(actions) * torch.linspace(-1, 1, len(actions))).sum() - 0.3 * ref.entropy().sum()
    loss_new = -(new.log_prob(actions) * torch.linspace(-1, 1, len(actions))).sum() - 0.3 * new.entropy().sum()
    loss_ref.backward()
    loss_new.backward()
    torch.testing.assert_close(raw_new.grad, raw_ref.grad, rtol=0, atol=1e-6)
    assert raw_ref.grad.abs().max() > 1e-3  # the comparison is not of zeros


def test_samples_are_allowed_and_follow_the_probabilities():
    from scipy.stats import chisquare

    logits, masks = _logits_masks(2, batch=6, actions=16)
    dist = MaskedLogits(logits, masks)
    torch.manual_seed(0)
    draws = torch.stack([dist.sample() for _ in range(20_000)]).numpy()  # [draws, batch]
    assert masks[np.arange(6), draws].all()
    probs = dist.probs.double().numpy()
    for row in range(6):
        allowed = np.flatnonzero(probs[row] > 0)
        counts = np.bincount(draws[:, row], minlength=16)[allowed]
        expected = probs[row, allowed] / probs[row, allowed].sum() * len(draws)
        if len(allowed) > 1:  # seeded: a chi-square test at level 1e-4 (it fails for a wrong sampler)
            assert chisquare(counts, expected).pvalue > 1e-4, row


def test_the_sb3_wrapper_applies_masks_as_sb3_contribs():
    logits, masks = _logits_masks(3)
    lean = LeanMaskableCategoricalDistribution(128).proba_distribution(logits)
    stock = MaskableCategoricalDistribution(128).proba_distribution(logits)
    for wrapper in (lean, stock):
        wrapper.apply_masking(masks)
    torch.testing.assert_close(lean.mode(), stock.mode(), rtol=0, atol=0)
    torch.testing.assert_close(lean.entropy(), stock.entropy(), rtol=0, atol=1e-5)
    lean.apply_masking(None)  # None removes the mask, as sb3-contrib's
    stock.apply_masking(None)
    torch.testing.assert_close(lean.distribution.probs, stock.distribution.probs, rtol=0, atol=1e-6)


def _fill(buffer, steps: int, envs: int, rows: int, offset: int) -> None:
    """Transition (step, copy) carries the id offset + step·envs + copy in every field."""
    buffer.reset()
    for step in range(steps):
        ids = offset + step * envs + np.arange(envs)
        obs = np.zeros((envs, rows, 2), np.float32)
        obs[:, 0, 1] = ids
        masks = np.zeros((envs, rows), bool)
        masks[np.arange(envs), ids % rows] = True
        buffer.add(obs, (ids % rows).astype(np.int64), ids.astype(np.float32), np.zeros(envs, np.float32),
                   torch.as_tensor(ids, dtype=torch.float32), torch.as_tensor(-ids, dtype=torch.float32),
                   action_masks=masks)
    buffer.compute_returns_and_advantage(torch.zeros(envs), np.zeros(envs, bool))


def test_rollout_buffer_keeps_transitions_together_and_reuses_its_arrays():
    steps, envs, rows = 6, 4, 8
    space = gym.spaces.Box(0.0, 1e6, (rows, 2), np.float32)
    lean = LeanMaskableRolloutBuffer(steps, space, gym.spaces.Discrete(rows), gamma=0.0, gae_lambda=1.0, n_envs=envs)
    stock = MaskableRolloutBuffer(steps, space, gym.spaces.Discrete(rows), gamma=0.0, gae_lambda=1.0, n_envs=envs)
    storage = lean.observations
    for offset in (0, 1000):  # two rollouts: the second overwrites the first's arrays
        _fill(lean, steps, envs, rows, offset)
        _fill(stock, steps, envs, rows, offset)
        assert lean.observations is storage
        returns = {int(i): r for i, r in zip(stock.values.ravel() + 0, stock.returns.ravel())}
        seen = []
        for batch in lean.get(5):
            ids = batch.observations[:, 0, 1].numpy().astype(int)
            seen.extend(ids)
            assert batch.action_masks.dtype == torch.bool
            np.testing.assert_array_equal(batch.actions.numpy()[:, 0], ids % rows)
            np.testing.assert_array_equal(batch.old_values.numpy(), ids)
            np.testing.assert_array_equal(batch.old_log_prob.numpy(), -ids)
            np.testing.assert_array_equal(batch.action_masks.numpy().argmax(axis=1), ids % rows)
            np.testing.assert_allclose(batch.returns.numpy(), [returns[i] for i in ids], rtol=1e-6)
        assert sorted(seen) == list(range(offset, offset + steps * envs))  # each transition once per epoch


def test_maskable_ppo_learns_with_the_lean_path():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from msjgym.envs.scoring import JobScoringPolicy

    env = DummyVecEnv([lambda: JobWindowStandIn(rows=8, features=4) for _ in range(2)])
    model = MaskablePPO(JobScoringPolicy, env, n_steps=32, batch_size=16, n_epochs=2, seed=0, device="cpu",
                        rollout_buffer_class=LeanMaskableRolloutBuffer)
    assert isinstance(model.policy.action_dist, LeanMaskableCategoricalDistribution)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(256)
    assert model.num_timesteps == 256
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    probe = JobWindowStandIn(rows=8, features=4)
    obs, _ = probe.reset(seed=3)
    for _ in range(50):
        mask = probe.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=False)
        assert mask[int(action)]
        obs, *_ = probe.step(action)


@pytest.mark.parametrize("name", ["hpc_pick", "hpc_pick_easy", "hpc_pick_v1", "hpc_pick_easy_v1", "hpc_pick_est",
                                  "hpc_pick_easy_est"])
def test_recorded_models_keep_their_greedy_actions(name):
    """A recorded model loads without custom objects, gets the lean distribution, and its greedy actions and
    log-probabilities on a few hundred of its environment's states equal those of sb3-contrib's distribution."""
    path = ROOT / "baselines" / "results" / f"{name}.zip"
    if not path.is_file():
        pytest.skip(f"{path} not recorded")
    from msjgym.core.user_policy import saved_env_settings

    settings = saved_env_settings(f"sb3:{path}")
    env_id = settings.pop("id")
    settings.update(scenario=str(ROOT / "baselines" / "scenarios" / "lublin_256_train.toml"), trace_windows=True,
                    horizon_jobs=256)  # the training trace's windows: queues with a choice
    model = MaskablePPO.load(str(path), device="cpu")
    policy = model.policy
    assert isinstance(policy.action_dist, LeanMaskableCategoricalDistribution)
    venv = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point", **settings)
    obs, _ = venv.reset(seed=4)
    rng = np.random.default_rng(4)
    states, masks = [], []
    for _ in range(100):
        mask = venv.action_masks()
        states.append(obs.copy())
        masks.append(mask.copy())
        obs, *_ = venv.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
    x, m = torch.as_tensor(np.concatenate(states)), np.concatenate(masks)
    with torch.no_grad():
        greedy, _ = model.predict(x.numpy(), action_masks=m, deterministic=True)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(x)))
        stock = MaskableCategoricalDistribution(logits.shape[1]).proba_distribution(logits)
        stock.apply_masking(m)
        np.testing.assert_array_equal(greedy, stock.mode().numpy())
        lean = policy.get_distribution(x, action_masks=m)
        taken = torch.as_tensor(greedy)
        torch.testing.assert_close(lean.log_prob(taken), stock.log_prob(taken), rtol=0, atol=1e-5)
    assert len(greedy) == 400 and (m.sum(axis=1) > 1).sum() >= 50  # a choice in many states


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_numpy_rollout_step_equals_the_torch_path(activation):
    """MaskablePPO's rollout call (no gradients) goes through numpy: the same values, log-probabilities and greedy
    actions as sb3-contrib's torch forward on the same network, and sampled actions are allowed."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from msjgym.envs.scoring import JobScoringPolicy

    env = JobWindowStandIn(rows=16, features=5)
    model = MaskablePPO(JobScoringPolicy, env, n_steps=32, batch_size=16, seed=0, device="cpu",
                        policy_kwargs={"activation_fn": {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]})
    policy = model.policy
    assert policy._numpy_layers is not None
    with torch.no_grad():  # logits that differ visibly (the initial output layer is near zero)
        policy.mlp_extractor.score_net[-1].weight.mul_(300.0)
    rng = np.random.default_rng(5)
    obs = np.zeros((64, 16, 5), np.float32)
    count = rng.integers(1, 17, 64)  # a decision: some job waits
    for i, c in enumerate(count):
        obs[i, :c, 1:] = rng.random((c, 4))
        obs[i, :c, 0] = 1.0
    masks = (obs[:, :, 0] > 0.5) & (rng.random((64, 16)) < 0.8)
    masks[:, 0] = True
    x = torch.as_tensor(obs)
    with torch.no_grad():
        for deterministic in (True, False):
            actions, values, log_prob = policy(x, deterministic=deterministic, action_masks=masks)
            assert masks[np.arange(64), actions.numpy()].all()
            ref_values, ref_log_prob, _ = policy.evaluate_actions(x, actions, action_masks=masks)
            torch.testing.assert_close(values, ref_values, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(log_prob, ref_log_prob, rtol=1e-5, atol=1e-5)
            if deterministic:
                ref_actions, _, _ = MaskableActorCriticPolicy.forward(policy, x, True, masks)
                np.testing.assert_array_equal(actions.numpy(), ref_actions.numpy())
        assert np.ptp(log_prob.numpy()[count > 1]) > 0.1  # the check is not of uniform choices
    with torch.enable_grad():  # with gradients: the torch path
        _, values, _ = policy(x, action_masks=masks)
        assert values.requires_grad


def test_numpy_rollout_samples_follow_the_policys_probabilities():
    from scipy.stats import chisquare

    from msjgym.envs.scoring import JobScoringPolicy

    model = MaskablePPO(JobScoringPolicy, JobWindowStandIn(rows=8, features=4), n_steps=32, batch_size=16, seed=0,
                        device="cpu")
    policy = model.policy
    with torch.no_grad():
        policy.mlp_extractor.score_net[-1].weight.mul_(2000.0)
    rng = np.random.default_rng(6)
    obs = np.zeros((4, 8, 4), np.float32)
    obs[:, :6, 1:] = rng.random((4, 6, 3))
    obs[:, :6, 0] = 1.0
    masks = obs[:, :, 0] > 0.5
    masks[0, 2] = False
    x = torch.as_tensor(obs)
    torch.manual_seed(1)
    with torch.no_grad():
        draws = np.stack([policy(x, action_masks=masks)[0].numpy() for _ in range(4000)])
        probs = policy.get_distribution(x, action_masks=masks).distribution.probs.double().numpy()
    assert masks[np.arange(4), draws].all()
    for row in range(4):  # seeded: a chi-square test at level 1e-4 (it fails for a wrong sampler)
        allowed = np.flatnonzero(masks[row])
        counts = np.bincount(draws[:, row], minlength=8)[allowed]
        expected = probs[row, allowed] / probs[row, allowed].sum() * len(draws)
        assert chisquare(counts, expected).pvalue > 1e-4, row
    assert probs[:, :6].max() > 0.3  # not uniform: the frequencies say something
