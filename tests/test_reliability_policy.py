"""Reliability at the boundary with the user's code: one wrapper for every policy of the user's on
every family, one action check for every environment (single and vector), and the trust boundary documented.

Every case found when policy files and actions were tried carelessly is one parametrized test here; each docstring
quotes the finding.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments
import cli_run  # noqa: E402
from msjgym import api, cli, envs  # noqa: E402
from msjgym.core import actions  # noqa: E402
from msjgym.core.user_policy import load_user_policy  # noqa: E402
from msjgym.errors import PolicyError  # noqa: E402
from msjgym.systems.finite_skip.agent import FiniteSkipSpec, RateDecider, agent_replication  # noqa: E402
from msjgym.systems.finite_skip.scenarios import load_finite_skip  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ policy files, the same on every family
BAD_POLICIES = '''
import sys
import numpy as np

def raises(obs):
    raise RuntimeError("boom")

def none(obs):
    return None

def string(obs):
    return "x"

def floating(obs):
    return 1.0

def too_big(obs):
    if isinstance(obs, dict):                       # finite-skip: rates far above capacity
        return np.full(len(obs["params"]), 1e6)
    return 10**6                                    # discrete: an action far out of range

def no_args():
    return 0

def three_args(a, b, c):
    return 0

class CtorRaises:
    def __init__(self, spec):
        raise ValueError("bad spec")

    def act(self, obs):
        return 0

class CtorExits:
    def __init__(self):
        sys.exit(3)
'''

FAMILIES = [f.name for f in api.families() if api.smoke_case(f).user_options is not None]
"""Every family that runs a policy of the user's: each family's smoke case (scenario and user-policy options)."""
TINY = ["--reps", "2", "--jobs", "300", "--no-progress"]


def _smoke(family: str) -> list[str]:
    """The family's smoke scenario and the flags under which a policy of the user's runs on it."""
    smoke = api.smoke_case(api.family(family))
    return [smoke.scenario, *smoke.flags(smoke.user_options)]


@pytest.fixture(scope="module")
def bad_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("policies")
    (folder / "bad.py").write_text(BAD_POLICIES)
    (folder / "import_fails.py").write_text("import this_module_does_not_exist_msjgym\n")
    (folder / "syntax_error.py").write_text("def act(obs:\n")
    (folder / "exits.py").write_text("import sys\nsys.exit(0)\n")
    return folder


def _cli(capsys, *argv: str) -> tuple[int, list[str]]:
    """Exit status and stderr lines of ``msjgym ARGV`` (in this process: the CLI's own error mapping)."""
    status = cli.main(list(argv))
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name, message", [
    ("raises", r"it raised RuntimeError: boom"),
    ("none", r"None \(NoneType\) is not (an action|a rate vector)"),
    ("string", r"'x' \(str\) is not (an action|a rate vector)"),
    ("too_big", r"(action 1000000 is not allowed: out of range|rate\[0\] = 1000000\.0: job 0 can use at most)"),
])
def test_a_misbehaving_policy_is_one_line_on_every_family(capsys, bad_file, family, name, message):
    """Issue: "on the loss path a raising policy is a traceback, and on the finite-skip path `None`, a scalar, a
    string, a wrong signature or an exception are tracebacks, while out-of-range rates (negative, NaN, far above
    capacity, a vector of the wrong length) are accepted and reported as results or as 'unstable'". Now: one line
    naming the policy, the replication, the step and the value, exit status 2, on every family."""
    scenario, *flags = _smoke(family)
    policy = f"{bad_file / 'bad.py'}:{name}"
    status, lines = _cli(capsys, "evaluate", scenario, "--policy", policy, *TINY, *flags)
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"msjgym: error: policy {policy}: replication 0, step "), lines
    assert re.search(message, lines[0]), lines[0]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target, message", [
    ("import_fails.py:act", r"importing .*import_fails\.py failed: ModuleNotFoundError: No module named "),
    ("syntax_error.py:act", r"importing .*syntax_error\.py failed: SyntaxError"),
    ("exits.py:act", r"importing .*exits\.py called sys\.exit\(0\)"),
    ("bad.py:missing", r"bad\.py defines no 'missing'"),
    ("bad.py:CtorRaises", r"constructing it failed: ValueError: bad spec"),
    ("bad.py:CtorExits", r"constructing it called sys\.exit\(3\)"),
    ("bad.py:no_args", r"no_args\(\) cannot be called as act\(observation\) or act\(observation, action_mask\)"),
    ("bad.py:three_args", r"three_args\(a, b, c\) cannot be called as act\(observation\)"),
])
def test_a_policy_file_that_cannot_load_is_one_line_before_any_run(capsys, bad_file, family, target, message):
    """Issue: "a policy FILE that fails to import, or names an object that does not exist, or whose class
    constructor raises: one line, exit 2, on every family" — and a wrong signature ("a wrong signature ... are
    tracebacks") is refused when the file is loaded, before any replication runs, not at step 0."""
    scenario, *flags = _smoke(family)
    policy = str(bad_file / target)
    status, lines = _cli(capsys, "evaluate", scenario, "--policy", policy, *TINY, *flags)
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"msjgym: error: --policy {policy!r}: "), lines
    assert re.search(message, lines[0]), lines[0]


def test_the_finite_skip_case_from_the_issue_through_the_command(bad_file):
    """Issue: "on the finite-skip path `None` ... [is a] traceback": the command itself exits 2 with one line on
    stderr and no traceback (in this process, warnings on stderr as a shell shows them: tests/cli_run.py; the real
    process's exit status and stderr: tests/test_cli.py, tests/test_reliability_limits.py)."""
    out = cli_run.msjgym("evaluate", "finite-skip-fig4a", "--policy", f"{bad_file / 'bad.py'}:none", "--reps", "2",
                         "--jobs", "300", cwd=ROOT)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert "replication 0, step 0: None (NoneType) is not a rate vector" in lines[0]


# ------------------------------------------------------------------ finite-skip rates: the model's capacity
FIG = {"het": "finite-skip-fig2", "lps": "finite-skip-fig3", "threshold": "finite-skip-fig4a"}


def _first_decision_with_jobs(jobs: int):
    """A policy that answers with the function ``bad(n, params)`` once ``jobs`` jobs are present, else zeros."""
    def make(bad):
        def act(obs):
            n = len(obs["params"])
            return bad(n, np.asarray(obs["params"])) if n >= jobs else np.zeros(n)
        return act
    return make


@pytest.mark.parametrize("case, bad, message", [
    ("scalar", lambda n, p: 0.5, r"0\.5 \(float\) is not a rate vector: expected 1 service rates"),
    ("wrong length", lambda n, p: np.zeros(n + 1), r"2 rates for 1 jobs present: expected one rate per job"),
    ("negative", lambda n, p: -np.ones(n), r"rate\[0\] = -1\.0: every rate must be a finite number >= 0"),
    ("NaN", lambda n, p: np.full(n, np.nan), r"rate\[0\] = nan: every rate must be a finite number >= 0"),
    ("infinite", lambda n, p: np.full(n, np.inf), r"rate\[0\] = inf: every rate must be a finite number >= 0"),
    ("bools", lambda n, p: np.ones(n, bool), r".* is not a rate vector"),
    ("strings", lambda n, p: ["0.1"] * n, r".* is not a rate vector"),
    ("a 2-d array", lambda n, p: np.zeros((n, 1)), r".* is not a rate vector"),
    ("above capacity", lambda n, p: np.full(n, 1e6), r"rate\[0\] = 1000000\.0: job 0 can use at most"),
])
def test_finite_skip_rates_are_checked_by_the_one_wrapper(case, bad, message):
    """Issue: "The finite-skip user policy returns a vector of service rates, not a discrete action: it needs its own
    validity check — length, finite, non-negative, within the capacity the model allows — in the same one wrapper."
    """
    model = load_finite_skip("finite-skip-fig4a", {})
    act = _first_decision_with_jobs(1)(bad)
    with pytest.raises(PolicyError, match=rf"^policy act: replication 3, step \d+: {message}") as info:
        agent_replication(model, RateDecider(model, act), jobs=50, stream=np.random.SeedSequence(0), rep=3)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("system, rates, message", [
    ("threshold", lambda p: p / 8.0 * 1.5, r"job 0 can use at most 0\.125 of the capacity"),  # > P/k
    ("lps", lambda p: np.full(p.size, 0.6), r"rates sum to 1\.2: the capacity is 1\.0"),
    ("het", lambda p: np.full(p.size, 0.5), r"job 0 can use at most 0\.4 of the capacity"),  # > fastest speed
])
def test_finite_skip_rates_within_what_each_system_allows(system, rates, message):
    """Issue: "out-of-range rates (negative, NaN, far above capacity, a vector of the wrong length) are accepted":
    what a job can use is the system's — P/k under threshold parallelism, the fastest speed on heterogeneous
    servers — and the rates sum to at most the capacity 1."""
    model = load_finite_skip(FIG[system], {})
    jobs = 2 if system == "lps" else 1
    act = _first_decision_with_jobs(jobs)(lambda n, p: rates(p))
    with pytest.raises(PolicyError, match=message):
        agent_replication(model, RateDecider(model, act), jobs=200, stream=np.random.SeedSequence(1))


def test_valid_rates_are_not_refused_and_the_example_runs():
    """The checks refuse nothing valid: the documented example policy (docs/families/finite-skip.md) and rounding at
    the capacity pass."""
    assert actions.rates_error([1 / 3, 1 / 3, 1 / 3 + 1e-15], np.ones(3)) is None  # rounding at the capacity
    assert actions.rates_error(np.array([0.875, 0.125]), np.array([1.0, 0.125])) is None
    assert actions.rates_error([], np.zeros(0)) is None
    model = load_finite_skip("finite-skip-fig4a", {})
    _, decide = load_user_policy(f"{ROOT / 'examples' / 'my_finite_skip_policy.py'}:EqualShare", FiniteSkipSpec(model))
    rep = agent_replication(model, RateDecider(model, decide), jobs=300, stream=np.random.SeedSequence(0))
    assert rep.stable


# ------------------------------------------------------------------ environments: one action check, single and vector
SMALL = {"msjgym/MSJ-v0": {"horizon_jobs": 30}, "msjgym/AdaptiveLoss-v0": {"servers": 6, "d": 3, "lam": 0.95},
         "msjgym/Dispatch-v0": {"servers": 6, "observation": "histogram", "levels": 3}}
SMALL = {env_id: {**kwargs, "invalid_action": "raise"} for env_id, kwargs in SMALL.items()}  # masked: refused here
IDS = [reg.id for reg in envs.registrations()]


def _venv_with_a_masked_action(env_id: str, num_envs: int):
    """A seeded vector env stepped (random allowed actions) until copy 0 has a masked action."""
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        **SMALL.get(env_id, {"invalid_action": "raise"}))
    venv.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        masks = venv.action_masks()
        if not masks[0].all():
            return venv
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    raise AssertionError(f"{env_id}: no masked action in 5000 steps")


BAD_ACTIONS = {  # kind -> (the value for one copy, the error)
    "float": (lambda good, masked, count: float(good), TypeError),
    "numpy float": (lambda good, masked, count: np.float64(good), TypeError),
    "str": (lambda good, masked, count: str(good), TypeError),
    "bool": (lambda good, masked, count: True, TypeError),
    "None": (lambda good, masked, count: None, TypeError),
    "shape (1,)": (lambda good, masked, count: np.array([good]), TypeError),
    "out of range": (lambda good, masked, count: count, ValueError),
    "negative": (lambda good, masked, count: -1, ValueError),
    "masked": (lambda good, masked, count: masked, ValueError),
}


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("kind", BAD_ACTIONS)
def test_every_env_refuses_each_bad_action_the_same_single_and_vector(env_id, kind):
    """Issue: "Some environments accept a float, a string or a bool as an action, or accept out-of-range actions in
    the vector environment while every action is masked valid; the families disagree on whether a shape-(1,) array is
    an action." Now: the same error type in the single env and the vector env (for the copy's element of the actions
    array), and nothing advances."""
    make, error = BAD_ACTIONS[kind]
    venv = _venv_with_a_masked_action(env_id, 2)
    masks = venv.action_masks()
    good, masked, count = int(np.flatnonzero(masks[0])[0]), int(np.flatnonzero(~masks[0])[0]), masks.shape[1]
    value = make(good, masked, count)
    before = venv._batch.obs.copy()
    if kind in ("out of range", "negative", "masked"):
        chosen = np.array([value, int(np.flatnonzero(masks[1])[0])])
        with pytest.raises(error, match=r"^env 0, step \d+: action -?\d+ is not allowed"):
            venv.step(chosen)
    else:  # the copy's element is not an integer: the array is not an integer array of shape (2,)
        chosen = np.array([value, 0], dtype=object) if kind != "shape (1,)" else np.array([[good], [0]])
        with pytest.raises(error, match=r"must be an integer array of 2 actions, one per copy: shape \(2,\)"):
            venv.step(chosen)
    assert np.array_equal(venv._batch.obs, before)  # no copy advanced

    single = gym.make(env_id, **SMALL.get(env_id, {"invalid_action": "raise"})).unwrapped
    single.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        mask = single.action_masks()
        if not mask.all():
            break
        _, _, _, truncated, _ = single.step(int(rng.choice(np.flatnonzero(mask))))
        if truncated:
            single.reset()
    mask = single.action_masks()
    value = make(int(np.flatnonzero(mask)[0]), int(np.flatnonzero(~mask)[0]), mask.size)
    with pytest.raises(error, match=r"^step \d+: ") as info:
        single.step(value)
    assert "\n" not in str(info.value)
    if kind == "shape (1,)":
        assert "pass an int or a 0-d array" in str(info.value)


@pytest.mark.parametrize("env_id", IDS)
def test_the_vector_env_takes_exactly_one_integer_per_copy(env_id):
    """Issue: "the families disagree on whether a shape-(1,) array is an action" — decided once: the single env
    takes an int (or a 0-d array), the vector env an integer array of shape (num_envs,); a scalar, shape
    (num_envs, 1), bools or floats are a ``TypeError``, and an integer beyond int64 does not wrap around."""
    kwargs = SMALL.get(env_id, {})
    one = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point", **kwargs)
    one.reset(seed=0)
    good = int(one.action_masks()[0].argmax())
    for value in (good, np.int64(good), np.array(good), np.array([[good]]), np.array([True]), np.array([0.0])):
        with pytest.raises(TypeError, match=r"must be an integer array of 1 actions, one per copy: shape \(1,\)"):
            one.step(value)
    with pytest.raises(ValueError, match=r"env 0, step 0: action 9223372036854775808 is not allowed: out of range"):
        one.step(np.array([2**63], np.uint64))
    one.step([good])  # a list is fine
    one.step(np.array([good], np.uint8))  # any integer dtype


@pytest.mark.parametrize("env_id", IDS)
def test_a_resetting_copy_still_gets_a_range_check(env_id):
    """Issue: "accept out-of-range actions in the vector environment": the copy whose episode ended is reset at the
    next step and its action ignored — but an action out of range is still the caller's bug, and refused."""
    masks = np.ones((2, 3), np.bool_)
    steps, resetting = np.zeros(2, np.int64), np.array([True, False])
    assert actions.check_actions([2, 1], masks, steps, resetting).tolist() == [2, 1]
    masks[0, 2] = False  # an ended copy's mask does not constrain it
    assert actions.check_actions([2, 1], masks, steps, resetting).tolist() == [2, 1]
    with pytest.raises(ValueError, match=r"^env 0, step 0: action 7 is not allowed: out of range 0\.\.2"):
        actions.check_actions([7, 1], masks, steps, resetting)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **SMALL.get(env_id, {}))
    venv.reset(seed=0)
    venv._reset_next[0] = True  # as after copy 0's episode ended
    with pytest.raises(ValueError, match=r"^env 0, step \d+: action -1 is not allowed: out of range"):
        venv.step(np.array([-1, int(venv.action_masks()[1].argmax())]))


@pytest.mark.parametrize("env_id", IDS)
def test_every_env_docstring_documents_the_one_action_check(env_id):
    """Issue: "Decide the shape-(1,) question once (refuse it, with a message saying to pass an int or a 0-d array)
    and document it in the env docstrings"."""
    env = gym.make(env_id, **SMALL.get(env_id, {})).unwrapped
    venv = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point", **SMALL.get(env_id, {}))
    for cls in (type(env), type(venv)):
        text = " ".join(cls.__doc__.split())
        assert "Action check" in text and "shape (1,)" in text and "pass an int or a 0-d array" in text, cls
        assert "shape (num_envs,)" in text, cls


# ------------------------------------------------------------------ the trust boundary
def test_the_trust_boundary_is_documented():
    """Issue: "`--policy FILE.py` runs the user's code and `sb3:MODEL.zip` unpickles; say so in the README (section
    about your own scheduler) and in docs/ ...: load only models and files you trust, as Stable-Baselines3's docs
    say." The README's warning is one line; the custom-policy tutorial (which the README's section moved to) has the
    section."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "Load only files and models you trust" in readme and "(docs/security.md)" in readme
    assert "unpickles" in readme and "FILE.py:NAME" in readme
    tutorial = (ROOT / "docs" / "tutorials" / "custom-policy.md").read_text()
    section = tutorial[tutorial.index("## 5. Policies are code: the trust boundary"):]
    end = section.find("\n## ", 10)                    # the section runs to the next one or the page's end
    section = " ".join((section if end < 0 else section[:end]).split())
    assert "Load only files and models you trust" in section and "(../security.md)" in section
    assert "unpickles" in section and "FILE.py:NAME" in section and "save_format" in section
    security = " ".join((ROOT / "docs" / "security.md").read_text().split())
    for needle in ("load only files and models you trust", "FILE.py:NAME", "sb3:MODEL.zip", "unpickling",
                   "Stable-Baselines3", "save_format"):
        assert needle in security, needle
    assert "security.md" in (ROOT / "docs" / "extending.md").read_text()
