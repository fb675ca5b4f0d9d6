"""The one batched environment base (msjgym.envs.base): every registered environment has the same action check, the
same SB3 adapter and the same registration; the one user-policy loader and checked call (msjgym.core.user_policy);
no import cycle inside msjgym.envs."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments
from msjgym import envs  # noqa: E402
from msjgym.core.actions import action_error, check_action  # noqa: E402
from msjgym.core.user_policy import UserPolicy, checked_action, load_user_policy  # noqa: E402
from msjgym.envs.base import BatchedEnv, BatchedVectorEnv  # noqa: E402
from msjgym.errors import PolicyError  # noqa: E402
from masked_state import masked_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IDS = [reg.id for reg in envs.registrations()]
SMALL = {"msjgym/MSJ-v0": {"horizon_jobs": 30}, "msjgym/AdaptiveLoss-v0": {"servers": 6, "d": 3, "lam": 0.95},
         "msjgym/Dispatch-v0": {"servers": 6, "observation": "histogram", "levels": 3}}


def _kwargs(env_id: str) -> dict:
    """Small systems that raise on a masked action (``invalid_action="raise"``: what these tests check)."""
    return {**SMALL.get(env_id, {}), "invalid_action": "raise"}


def _single_with_a_masked_action(env_id: str) -> tuple[BatchedEnv, int]:
    return masked_state(env_id, **_kwargs(env_id))


def test_every_family_env_is_registered_from_its_module():
    assert {"msjgym/MSJ-v0", "msjgym/AdaptiveLoss-v0", "msjgym/Dispatch-v0"} <= set(IDS)
    for reg in envs.registrations():
        assert reg.id in gym.registry and reg.family
        assert issubclass(gym.registry[reg.id].entry_point.__class__, str)
    source = (ROOT / "msjgym" / "envs" / "__init__.py").read_text()
    assert not re.search(r"MSJ|Loss|Dispatch|msj_env|loss_env|dispatch_env", source), "envs/__init__ names a family"


@pytest.mark.parametrize("env_id", IDS)
def test_single_and_vector_envs_are_the_batched_base(env_id):
    env = gym.make(env_id, **_kwargs(env_id)).unwrapped
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **_kwargs(env_id))
    assert isinstance(env, BatchedEnv) and isinstance(venv, BatchedVectorEnv)
    shape = getattr(env.spec_, "observation_shape", (env.spec_.observation_size,))  # a vector, or rows × features
    assert env.observation_space.shape == venv.single_observation_space.shape == shape
    assert env.spec_.observation_size == int(np.prod(shape))
    assert env.spec_.action_count == env.action_space.n == venv.single_action_space.n
    assert env.model is env.spec_.model and isinstance(env.spec_.describe(), str)
    for cls in (type(env), type(venv)):
        assert all(word in cls.__doc__ for word in ("Action space", "Observation space", "Reward", "Episode end",
                                                    "Arguments")), cls


@pytest.mark.parametrize("env_id", IDS)
def test_one_action_check_in_the_single_env(env_id):
    env, masked = _single_with_a_masked_action(env_id)
    mask = env.action_masks()
    good = int(np.flatnonzero(mask)[0])
    count = mask.size
    step = env._venv._steps[0]
    for value in (float(good), str(good), True, np.array([good]), np.float64(good), None):
        with pytest.raises(TypeError, match=rf"step {step}: .* is not an action: actions are integers .* in "
                                            rf"0\.\.{count - 1}"):
            env.step(value)
    with pytest.raises(ValueError, match=rf"step {step}: action {count} is not allowed: out of range "
                                         rf"0\.\.{count - 1}"):
        env.step(count)
    with pytest.raises(ValueError, match=rf"step {step}: action -1 is not allowed: out of range"):
        env.step(-1)
    with pytest.raises(ValueError, match=re.escape(f"step {step}: action {masked} is not allowed now; valid actions: "
                                                   f"{np.flatnonzero(mask).tolist()}")):
        env.step(masked)
    assert np.array_equal(env.action_masks(), mask)  # nothing changed
    for value in (np.int32(good), np.array(good), np.int64(good)):  # NumPy integers, 0-d arrays: accepted
        env.reset(seed=1)
        env.step(value)


@pytest.mark.parametrize("env_id", IDS)
def test_one_action_check_in_the_vector_env(env_id):
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **_kwargs(env_id))
    obs, _ = venv.reset(seed=2)
    venv.step(venv.action_masks().argmax(axis=1))
    rng = np.random.default_rng(0)
    for _ in range(5000):
        masks = venv.action_masks()
        if not masks[1].all():
            break
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    masks = venv.action_masks()
    assert not masks[1].all()
    first = masks.argmax(axis=1)
    before = venv._batch.obs.copy()
    with pytest.raises(TypeError, match="must be an integer array of 3 actions"):
        venv.step(first.astype(float))
    with pytest.raises(TypeError, match="must be an integer array of 3 actions"):
        venv.step(first[:2])
    bad = first.copy()
    bad[1] = masks.shape[1]
    with pytest.raises(ValueError, match=rf"env 1, step \d+: action {masks.shape[1]} is not allowed: out of range"):
        venv.step(bad)
    bad[1] = int(np.flatnonzero(~masks[1])[0])
    with pytest.raises(ValueError, match=rf"env 1, step \d+: action {bad[1]} is not allowed now; valid actions"):
        venv.step(bad)
    assert np.array_equal(venv._batch.obs, before) and np.array_equal(venv.action_masks(), masks)  # none advanced
    venv.step(first)


@pytest.mark.parametrize("env_id", IDS)
def test_the_sb3_adapter_takes_every_vector_env(env_id):
    pytest.importorskip("stable_baselines3")
    from msjgym.envs import to_sb3

    adapter = to_sb3(gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **_kwargs(env_id)))
    adapter.seed(0)
    obs = adapter.reset()
    assert obs.shape == (2, *adapter.observation_space.shape)
    adapter.step(adapter.action_masks().argmax(axis=1))
    with pytest.raises(TypeError, match="expected a native vector environment"):
        to_sb3(gym.make(env_id).unwrapped)


def test_action_error_cases():
    mask = np.array([True, False, True])
    assert action_error(0, mask) is None and action_error(np.int8(2), mask) is None
    assert action_error(np.array(2), mask) is None
    for value in (0.0, "0", True, np.bool_(True), np.array([0]), [0], None, 2.5):
        assert isinstance(action_error(value, mask), TypeError), value
    assert "out of range 0..2" in str(action_error(3, mask)) and "out of range" in str(action_error(-1, mask))
    assert str(action_error(1, mask)) == "action 1 is not allowed now; valid actions: [0, 2]"
    with pytest.raises(ValueError, match=r"^env 4, step 7: action 1 is not allowed now"):
        check_action(1, mask, "env 4, step 7: ")


# ------------------------------------------------------------------ the user's policy, the same for every family
POLICY_FILE = '''
import numpy as np

class WithSpec:
    def __init__(self, spec):
        self.count = spec.action_count
        self.size = spec.observation_size
        self.model = spec.model

    def act(self, observation, action_mask):
        assert observation.size == self.size and action_mask.shape == (self.count,)
        return int(np.flatnonzero(action_mask)[0])

class NoArgs:
    def act(self, observation):
        return 0

def function(observation, action_mask):
    return int(np.flatnonzero(action_mask)[-1])
'''


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("name", ["WithSpec", "NoArgs", "function"])
def test_a_policy_file_loads_the_same_way_on_every_env(tmp_path, env_id, name):
    path = tmp_path / "mine.py"
    path.write_text(POLICY_FILE)
    env = gym.make(env_id, **_kwargs(env_id)).unwrapped
    text, decide = load_user_policy(f"{path}:{name}", env.spec_)
    assert text == f"{path}:{name}" and isinstance(decide, UserPolicy)
    if name == "WithSpec":
        assert decide.policy.model is env.spec_.model
    obs, _ = env.reset(seed=0)
    for step in range(20 if name != "NoArgs" else 1):  # NoArgs always takes 0, allowed in the initial state
        action = checked_action(decide, obs, env.action_masks(), text, 0, step)
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            break


@pytest.mark.parametrize("returned, message", [
    (lambda obs, mask: 1.0, r"replication 2, step 5: 1\.0 \(float\) is not an action"),
    (lambda obs, mask: 9, r"replication 2, step 5: action 9 is not allowed: out of range 0\.\.2"),
    (lambda obs, mask: 1, r"replication 2, step 5: action 1 is not allowed now; valid actions: \[0, 2\]"),
    (lambda obs, mask: {}["x"], r"replication 2, step 5: it raised KeyError"),
])
def test_checked_action_errors_are_one_line_policy_errors(returned, message):
    with pytest.raises(PolicyError, match=r"^policy mine: " + message) as info:
        checked_action(returned, np.zeros(2, np.float32), np.array([True, False, True]), "mine", 2, 5)
    assert "\n" not in str(info.value)


def test_sb3_model_on_a_policy_without_discrete_actions_is_refused(tmp_path):
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec
    from msjgym.systems.finite_skip.scenarios import load_finite_skip

    model_file = tmp_path / "m.zip"
    model_file.write_bytes(b"")
    spec = FiniteSkipSpec(load_finite_skip("finite-skip-fig3", {}))
    with pytest.raises(PolicyError, match="no Gymnasium environment"):
        load_user_policy(f"sb3:{model_file}", spec)


# ------------------------------------------------------------------ layering inside msjgym.envs
def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_no_import_cycle_inside_envs_and_nothing_below_imports_envs():
    from test_layers import FAMILY_ENV

    package = ROOT / "msjgym" / "envs"
    modules = {f"msjgym.envs.{p.stem}": p for p in package.glob("*.py") if p.stem != "__init__"}
    graph = {m: {i for i in _imports(p) if i in modules} for m, p in modules.items()}

    def visit(node: str, stack: list[str]) -> None:
        if node in stack:
            raise AssertionError(f"import cycle: {' -> '.join(stack[stack.index(node):] + [node])}")
        for nxt in sorted(graph[node]):
            visit(nxt, stack + [node])

    for m in graph:
        visit(m, [])
    below = [*(ROOT / "msjgym" / "core").rglob("*.py"), *(ROOT / "msjgym" / "systems").rglob("*.py"),
             *(ROOT / "policies").rglob("*.py")]
    for path in below:  # the agent paths (specs, batches, replications) live in msjgym.systems.<family>.agent
        if path.parent.parent.name == "systems" and FAMILY_ENV.fullmatch(f"msjgym.systems.{path.parent.name}.{path.stem}"):
            continue  # a family's environment module, in its folder: it builds on msjgym.envs (test_layers)
        assert not any(i.startswith("msjgym.envs") for i in _imports(path)), f"{path} imports msjgym.envs"


def test_the_families_env_ids_are_the_registered_ones():
    """Each family's ``env_ids`` (msjgym.api) are ids its env module declares for it, and every declared env names a
    family of the registry."""
    from msjgym import api

    families = [f for f in api.families() if hasattr(f, "env_ids")]
    if not families:
        pytest.skip("no family objects registered yet")
    declared = {(reg.family, reg.id) for reg in envs.registrations()}
    names = {f.name for f in api.families()}
    for f in families:
        assert {(f.name, i) for i in f.env_ids} <= declared, f.name
    assert {family for family, _ in declared} <= names


def test_a_finite_skip_policy_loads_the_same_way():
    """A finite-skip policy of one's own: built with the FiniteSkipSpec, act(observation[, mask]) with mask None; the
    same replications through ``msjgym.evaluate`` as the object given directly."""
    import msjgym
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec
    from msjgym.systems.finite_skip.scenarios import load_finite_skip

    model = load_finite_skip("finite-skip-fig4a", {})
    text = f"{ROOT / 'examples' / 'my_finite_skip_policy.py'}:EqualShare"
    name, decide = load_user_policy(text, FiniteSkipSpec(model))
    assert decide.policy.k == model.servers
    loaded = msjgym.evaluate(model, text, jobs=400, reps=1, seed=2, references=False)
    direct = msjgym.evaluate(model, decide.policy, jobs=400, reps=1, seed=2, references=False)
    assert loaded.replications == direct.replications and loaded.policy == text

    def with_mask(observation, action_mask):
        assert action_mask is None
        return decide.policy.act(observation)

    masked = msjgym.evaluate(model, with_mask, jobs=400, reps=1, seed=2, references=False)
    assert masked.replications == direct.replications
