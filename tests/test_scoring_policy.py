"""The job-scoring policy (msjgym.envs.scoring): permutation-equivariant masked logits, a pooled critic, the numpy
copy, the inspect head, and a saved model that loads in a fresh process without custom objects."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from job_env_standin import JobWindowStandIn  # noqa: E402
from msjgym.envs.scoring import numpy_scores  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _model(actions=None, **kwargs):
    from msjgym.envs.scoring import JobScoringPolicy

    env = JobWindowStandIn(rows=8, features=4, actions=actions)
    return MaskablePPO(JobScoringPolicy, env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu",
                       policy_kwargs=kwargs)


def _window(rng, rows=8, features=4, present=6):
    obs = np.zeros((rows, features), np.float32)
    obs[:present, 1:] = rng.random((present, features - 1))
    obs[:present, 0] = 1.0
    return obs


def _log_softmax(x):
    """torch's Categorical keeps its logits normalised (log-probabilities); the numpy copy gives raw scores."""
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


def _logits_value(model, obs, mask=None):
    policy = model.policy
    with torch.no_grad():
        t = torch.as_tensor(obs[None])
        dist = policy.get_distribution(t, action_masks=None if mask is None else mask[None])
        return dist.distribution.logits.numpy()[0], policy.predict_values(t).numpy()[0, 0]


@pytest.mark.parametrize("attention", [False, True])
def test_logits_are_permutation_equivariant_and_the_value_invariant(attention):
    model = _model(attention=attention, heads=2)
    # scale up the output layer so that the logits differ visibly (the initial ones are near uniform)
    rng = np.random.default_rng(1)
    obs = _window(rng)
    obs[:, 1] *= 3
    logits, value = _logits_value(model, obs)
    perm = rng.permutation(8)
    p_logits, p_value = _logits_value(model, obs[perm])
    np.testing.assert_allclose(p_logits, logits[perm], rtol=1e-5, atol=1e-6)
    assert p_value == pytest.approx(value, rel=1e-5, abs=1e-6)
    assert np.ptp(logits[:6]) > 0  # not constant: the equality above says something


def test_absent_rows_are_masked_and_do_not_change_the_value():
    model = _model()
    rng = np.random.default_rng(2)
    obs = _window(rng, present=5)
    mask = obs[:, 0] > 0.5
    logits, value = _logits_value(model, obs, mask)
    assert (logits[~mask] < -1e7).all() and (logits[mask] > -1e3).all()
    noisy = obs.copy()
    noisy[~mask, 1:] = rng.random((3, 3))  # garbage in absent rows: the pooled critic ignores it
    assert _logits_value(model, noisy, mask)[1] == pytest.approx(value, rel=1e-6)
    for _ in range(50):
        action, _ = model.predict(obs, action_masks=mask, deterministic=False)
        assert mask[int(action)]


def test_default_network_is_small_and_the_numpy_copy_agrees():
    model = _model()
    net = model.policy.mlp_extractor
    scoring = sum(p.numel() for p in net.score_net.parameters())
    assert scoring == 4 * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 + 1  # F→32→16→8→1, shared by the rows
    with torch.no_grad():  # random weights, so that the comparison is not of near-zero numbers
        for p in net.score_net.parameters():
            p.normal_()
    scores = numpy_scores(model.policy)
    rng = np.random.default_rng(3)
    for _ in range(5):
        obs = _window(rng, present=int(rng.integers(1, 9)))
        logits, _ = _logits_value(model, obs)
        np.testing.assert_allclose(_log_softmax(scores(obs.reshape(-1))), logits, rtol=1e-5, atol=1e-4)


def test_inspect_head_pools_two_logits_and_its_numpy_copy_agrees():
    model = _model(actions=2)
    assert model.policy.action_net.out_features == 2
    with torch.no_grad():
        for p in model.policy.parameters():
            p.normal_()
    rng = np.random.default_rng(4)
    obs = _window(rng)
    logits, _ = _logits_value(model, obs)
    perm = rng.permutation(8)
    np.testing.assert_allclose(_logits_value(model, obs[perm])[0], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_log_softmax(numpy_scores(model.policy)(obs)), logits, rtol=1e-5, atol=1e-4)


def test_bad_arguments_are_refused_in_one_line():
    with pytest.raises(ValueError, match="score_arch"):
        _model(score_arch=[])
    with pytest.raises(ValueError, match="heads"):
        _model(attention=True, heads=5)
    with pytest.raises(ValueError, match="present_column"):
        _model(present_column=4)


def test_a_saved_model_trains_and_loads_in_a_fresh_process(tmp_path):
    model = _model()
    model.learn(128)
    path = tmp_path / "scoring.zip"
    model.save(path)
    obs = _window(np.random.default_rng(5))
    expected = int(model.predict(obs, action_masks=obs[:, 0] > 0.5, deterministic=True)[0])
    code = ("import sys, numpy as np; from sb3_contrib import MaskablePPO; "
            f"m = MaskablePPO.load({str(path)!r}, device='cpu'); obs = np.load({str(tmp_path / 'o.npy')!r}); "
            "print(type(m.policy).__module__, type(m.policy).__name__, "
            "int(m.predict(obs, action_masks=obs[:, 0] > 0.5, deterministic=True)[0]))")
    np.save(tmp_path / "o.npy", obs)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["msjgym.envs.scoring", "JobScoringPolicy", str(expected)]
    assert path.stat().st_size < 1_000_000
