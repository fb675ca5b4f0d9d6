"""A policy of the user's, the same for every family: loaded once, called through one check.

**The contract.** A policy is a class, an object or a function with ``act(observation, action_mask) -> action``
(``act(observation)`` is accepted too; a bare function is its own ``act``). A class is constructed with the
environment's *spec* if its constructor takes an argument, else with none. The spec is one object per environment
(``MSJEnv(...).spec_``, ``DispatchEnv(...).spec_``, ...) with at least

* ``observation_size`` — the length D of the observation vector (None where the observation is not a vector; the
  number of entries, K·F, where it is an array of K rows × F features, whose shape is then ``observation_shape``);
* ``action_count`` — the number A of discrete actions (None where actions are not discrete);
* ``model`` — the system's validated model (servers, rates, ...), and the family's static facts beside it
  (``mode`` and ``window``, ``d``, ``levels``, ...), as each environment documents;
* ``describe()`` — the options that fix D and A, for messages (``"mode='start', window=8"``);
* ``view(observation)`` — the observation's named view (:mod:`msjgym.core.observation`): read
  ``spec.view(observation).waiting`` rather than an offset.

On the command line a policy is ``--policy FILE.py:NAME`` (NAME: a class, an object or a function in the file) or
``--policy sb3:MODEL.zip`` (a saved Stable-Baselines3 model: MaskablePPO, PPO, A2C or DQN; MaskablePPO acts
greedily on the allowed actions; PPO, A2C and DQN, which trained through the environments' ``invalid_action``
fallback, act as trained: their most likely action, replaced by the mask's default action if forbidden; a model
trained by RL Zoo acts as trained: its run's observation normalization is applied, anything else that cannot be
reproduced is refused, :mod:`msjgym.core.rl_zoo`) or
``--policy rllib:CHECKPOINT_DIR`` (an RLlib checkpoint's RLModule, greedy on the allowed actions:
:mod:`msjgym.core.rllib_policy`). :func:`load_user_policy` turns any of these into a :class:`UserPolicy`, called as
``decide(observation, mask)``, and :func:`checked_action` calls it for replication ``rep``'s step ``step``: anything
the policy does wrong (it raises, returns something that is not an action, or an action out of range or masked,
see :mod:`msjgym.core.actions`) stops the run with one ``PolicyError`` naming the policy, the replication, the step and
the value. A finite-skip policy decides service rates, not a discrete action: :func:`checked_rates` is the same
wrapper (:func:`checked_call`) with the rates' check. Loading checks as much as it can before anything runs: the file
imports, defines NAME, the class constructs, and ``act`` can be called with (observation) or (observation, mask).

**Trust.** ``FILE.py:NAME`` runs the file's code with your privileges, and ``sb3:MODEL.zip`` and
``rllib:CHECKPOINT_DIR`` unpickle the model (which can run code too, as Stable-Baselines3's documentation warns; every
file of an RLlib checkpoint is a pickle): load only files and models you trust
(``docs/security.md``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from msjgym.core.actions import action_error, rates_error
from msjgym.core.numpy_net import Layer, mlp_forward, numpy_layer
from msjgym.core.inputs import note_read
from msjgym.core.paths import is_regular_file, path_kind, shown
from msjgym.errors import PolicyError

Decide = Callable[[np.ndarray, np.ndarray], Any]
"""``decide(observation, mask) -> action``."""


class AgentSpec(Protocol):
    """What a policy's constructor receives: the environment's spec (see the module docstring)."""

    observation_size: int | None
    action_count: int | None
    model: Any

    def describe(self) -> str: ...

    def view(self, observation: Any) -> Any: ...


class UserPolicy:
    """A loaded policy: ``decide(observation, mask)`` calls its ``act`` (with the mask if ``act`` takes two
    arguments). ``name`` is how results name it; ``policy`` the object built from the user's file (or the model)."""

    def __init__(self, name: str, policy: Any, act: Callable[..., Any], takes_mask: bool) -> None:
        self.name, self.policy, self._act, self.takes_mask = name, policy, act, takes_mask

    def __call__(self, observation: Any, mask: np.ndarray | None) -> Any:
        return self._act(observation, mask) if self.takes_mask else self._act(observation)

    def __repr__(self) -> str:
        return f"UserPolicy({self.name!r})"


def load_user_policy(policy: Any, spec: AgentSpec) -> tuple[str, UserPolicy]:
    """(display name, decide) for ``FILE.py:NAME``, ``sb3:MODEL.zip``, ``rllib:CHECKPOINT_DIR``, or a class, object
    or function given directly; a class is constructed with ``spec`` if its constructor takes an argument.
    One-line ``PolicyError`` for anything that cannot be loaded."""
    if isinstance(policy, str):
        if policy.startswith("sb3:"):
            act = _sb3_policy(Path(policy[4:]), spec)
            return policy, UserPolicy(policy, act, act, True)
        if policy.startswith("rllib:"):
            from msjgym.core.rllib_policy import rllib_policy  # imports Ray only now

            act = rllib_policy(Path(policy[6:]), spec, policy)
            return policy, UserPolicy(policy, act, act, True)
        path, sep, name = policy.rpartition(":")
        if not sep or not path.endswith(".py"):
            raise PolicyError(f"--policy {policy!r}: expected a built-in name, FILE.py:NAME, sb3:MODEL.zip or "
                              "rllib:CHECKPOINT_DIR")
        return policy, _wrap(load_object(Path(path), name, policy), spec, policy)
    name = getattr(policy, "name", None)
    if not isinstance(name, str):  # an object's display name: its name attribute, else its (class) name
        name = getattr(policy, "__name__", None) or type(policy).__name__
    return name, _wrap(policy, spec, name)


def load_object(path: Path, name: str, text: str) -> Any:
    """The object ``name`` defined by the Python file ``path`` (``text``: the ``--policy`` value, for messages)."""
    kind, what = path_kind(path)
    if kind != "file":
        raise PolicyError(f"--policy {shown(text)}: {shown(path)}: {'no such file' if kind == 'missing' else what}")
    note_read(path)
    # Registered under a name of its own (in sys.modules, as an import would): compiled code cached from this file
    # names its module, and a later process must find it there (else numba looks for a module '<dynamic>').
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"_msjgym_policy_{''.join(ch if ch.isalnum() else '_' for ch in path.stem)}_{digest}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except KeyboardInterrupt:  # Ctrl-C keeps its meaning
        sys.modules.pop(module_name, None)
        raise
    except SystemExit as exc:
        sys.modules.pop(module_name, None)
        raise PolicyError(f"--policy {text!r}: importing {path} {_exited(exc)}") from None
    except BaseException as exc:  # the user's file: any failure (GeneratorExit, CancelledError too) in one line
        sys.modules.pop(module_name, None)
        raise PolicyError(f"--policy {text!r}: importing {path} failed: {_failure(exc)}") from None
    if not hasattr(module, name):
        raise PolicyError(f"--policy {text!r}: {path} defines no {name!r}")
    return getattr(module, name)


def _wrap(obj: Any, spec: AgentSpec, text: str) -> UserPolicy:
    if inspect.isclass(obj):
        try:
            takes_spec = len(inspect.signature(obj).parameters) >= 1
        except (TypeError, ValueError):
            takes_spec = False
        try:
            obj = obj(spec) if takes_spec else obj()
        except KeyboardInterrupt:
            raise
        except SystemExit as exc:
            raise PolicyError(f"--policy {text!r}: constructing it {_exited(exc)}") from None
        except BaseException as exc:  # GeneratorExit, asyncio.CancelledError, ... of the user's code: one line
            raise PolicyError(f"--policy {text!r}: constructing it failed: {_failure(exc)}") from None
    try:  # an act property runs the user's code
        act = getattr(obj, "act", obj)
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        raise PolicyError(f"--policy {text!r}: reading its act {_exited(exc)}") from None
    except BaseException as exc:
        raise PolicyError(f"--policy {text!r}: reading its act failed: {_failure(exc)}") from None
    if not callable(act):
        raise PolicyError(f"--policy {text!r}: needs an act(observation, action_mask) method or to be callable")
    try:
        signature = inspect.signature(act)
    except (TypeError, ValueError):  # no signature (a builtin): give it the observation only
        return UserPolicy(text, obj, act, False)
    params = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_mask = len(params) >= 2
    try:  # the arguments it will get: checked now, before any simulation, rather than as an error at step 0
        signature.bind(*(None,) * (2 if takes_mask else 1))
    except TypeError:
        where = "act" if act is not obj else getattr(act, "__name__", "it")
        raise PolicyError(f"--policy {text!r}: {where}{signature} cannot be called as act(observation) or "
                          "act(observation, action_mask)") from None
    return UserPolicy(text, obj, act, takes_mask)


def _failure(exc: BaseException) -> str:
    """``"Type: message"`` of an exception from the user's code, on one line."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def checked_call(decide: Decide, obs: Any, mask: np.ndarray | None, name: str, rep: int, step: int,
                 check: Callable[[Any], Exception | None]) -> Any:
    """The one wrapper of a user's decision, for every family: ``decide(obs, mask)`` for replication ``rep``'s step
    ``step``, and its value if ``check(value)`` finds no error; else one ``PolicyError`` naming the policy, the
    replication, the step and the value (it raised, or returned something ``check`` refuses)."""
    try:
        raw = decide(obs, mask)
    except KeyboardInterrupt:  # Ctrl-C stops the run
        raise
    except SystemExit as exc:  # sys.exit() in the policy must not end the run silently
        raise PolicyError(f"policy {name}: replication {rep}, step {step}: {_exited(exc)}") from None
    except BaseException as exc:  # the user's code (GeneratorExit, asyncio.CancelledError too): one line
        raise PolicyError(f"policy {name}: replication {rep}, step {step}: it raised {_failure(exc)}") from None
    try:
        error = check(raw)
    except Exception as exc:  # a value so odd that checking it fails (e.g. its __array__ raises)
        error = TypeError(f"its value could not be checked: {_failure(exc)}")
    if error is not None:
        raise PolicyError(f"policy {name}: replication {rep}, step {step}: {' '.join(str(error).split())}")
    return raw


def checked_action(decide: Decide, obs: np.ndarray, mask: np.ndarray, name: str, rep: int, step: int) -> int:
    """``decide``'s action for replication ``rep``'s step ``step`` (it gets copies of ``obs`` and ``mask``), or one
    ``PolicyError`` naming them and the value if it raises or returns anything but an allowed action
    (:func:`checked_call` with :func:`msjgym.core.actions.action_error`)."""
    return int(checked_call(decide, obs.copy(), mask.copy(), name, rep, step, lambda raw: action_error(raw, mask)))


def checked_rates(decide: Decide, obs: Any, caps: np.ndarray, name: str, rep: int, step: int) -> np.ndarray:
    """``decide``'s service rates for replication ``rep``'s step ``step`` (no mask: it gets None), as float64[N]; or
    one ``PolicyError`` naming them and the value if it raises or returns anything but N finite non-negative rates,
    rate j at most ``caps[j]``, summing to at most 1 (:func:`checked_call` with
    :func:`msjgym.core.actions.rates_error`)."""
    raw = checked_call(decide, obs, None, name, rep, step, lambda value: rates_error(value, caps))
    return np.asarray(raw, dtype=np.float64)


def _exited(exc: SystemExit) -> str:
    """What a policy that called ``sys.exit`` (or raised ``SystemExit``) did, for a one-line error."""
    return (f"called sys.exit({exc.code!r}) (raised SystemExit); a policy must return an action, not end the "
            "program")


# ---------------------------------------------------------------- saved Stable-Baselines3 models
SAVED_ENV_KEY = "msjgym_env"
"""The attribute of an SB3 model (saved in its zip's ``data`` JSON) holding the environment arguments that fix its
observation and actions (``{"id": "msjgym/MSJ-v0", "mode": ..., "window": ..., "estimates": ...}``), written by
:func:`msjgym.envs.sb3.record_env` before ``model.save``."""


def saved_env_settings(policy: Any) -> dict[str, Any]:
    """The environment arguments saved with ``sb3:MODEL.zip`` (:data:`SAVED_ENV_KEY`; read from the zip's JSON,
    without unpickling anything or importing torch), or ``{}`` for any other policy, a model saved without them, or
    a file that is not a readable model (loading it later says why)."""
    if not isinstance(policy, str) or not policy.startswith("sb3:"):
        return {}
    import json
    import zipfile

    try:
        with zipfile.ZipFile(policy[4:]) as archive:
            saved = json.loads(archive.read("data")).get(SAVED_ENV_KEY)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return {}
    return dict(saved) if isinstance(saved, dict) else {}


Scores = Callable[[np.ndarray], np.ndarray]
"""``scores(x)``: a model's action preferences (logits or Q-values, float64[A]) for the float32 observation ``x`` it
sees (after any observation normalization)."""


_LOADED: dict[tuple[Any, ...], Decide] = {}
"""The saved models loaded in this process, by file (path, size, modification time and content digest) and the
observation they were checked against: an evaluation over many replications or windows loads its model once."""
_LOADED_MAX = 8


def _check_sb3_file(path: Path) -> None:
    kind, what = path_kind(path)
    if kind != "file":
        raise PolicyError(f"--policy sb3:{shown(path)}: {'no such file' if kind == 'missing' else what}")


def check_saved_model(policy: Any) -> None:
    """``sb3:MODEL.zip`` that is not a file, or ``rllib:CHECKPOINT_DIR`` that is not an RLlib checkpoint directory:
    the one-line error loading it gives (nothing is unpickled, Ray is not imported); any other policy passes. For a
    check that reads what a model was saved for before loading it."""
    if isinstance(policy, str) and policy.startswith("sb3:"):
        _check_sb3_file(Path(policy[4:]))
    elif isinstance(policy, str) and policy.startswith("rllib:"):
        from msjgym.core.rllib_policy import module_dir
        module_dir(Path(policy[6:]), policy)


def _file_key(path: Path) -> tuple[Any, ...]:
    """What identifies a saved model's file: its resolved path, size, modification time and SHA-256 (a file
    rewritten in place within the clock's resolution is still told apart)."""
    stat = path.stat()
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())


def _sb3_policy(path: Path, spec: AgentSpec) -> Decide:
    """A saved model's greedy ``decide``, after checking its spaces against ``spec`` and reading what RL Zoo saved
    beside it (:mod:`msjgym.core.rl_zoo`: observation normalization, the ``MaskFallback`` rule; refused if it cannot
    be reproduced). Loaded once per process for a given file and observation (:data:`_LOADED`)."""
    _check_sb3_file(path)
    if spec.observation_size is None or spec.action_count is None:
        raise PolicyError(f"--policy sb3:{path}: this system's policies do not act on a vector observation with "
                          "discrete actions (no Gymnasium environment to train on); use FILE.py:NAME")
    shape = getattr(spec, "observation_shape", None)
    key = (*_file_key(path), spec.observation_size, None if shape is None else tuple(shape), spec.action_count)
    decide = _LOADED.get(key)
    if decide is None:
        decide = _load_sb3(path, spec)
        while len(_LOADED) >= _LOADED_MAX:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = decide
    return decide


def _load_sb3(path: Path, spec: AgentSpec) -> Decide:
    """:func:`_sb3_policy`'s loading, uncached."""
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import A2C, DQN, PPO
    except ImportError:
        raise PolicyError("--policy sb3:...: needs stable-baselines3 and sb3-contrib (pip install torch==2.13.0 "
                          "then pip install \"msjgym[rl]\")") from None
    from msjgym.core.rl_zoo import read_run

    expected = tuple(getattr(spec, "observation_shape", None) or (spec.observation_size,))
    for cls in (MaskablePPO, PPO, A2C, DQN):
        try:
            model = cls.load(str(path), device="cpu")
        except Exception:  # not this algorithm's file
            continue
        shape, actions = model.observation_space.shape, getattr(model.action_space, "n", None)
        if shape != expected or actions != spec.action_count:
            saved = saved_env_settings(f"sb3:{path}")
            hint = (f"it was saved with {', '.join(f'{k}={v!r}' for k, v in saved.items())}" if saved else
                    "pass the options it was trained with (--mode, --window, --estimates)")
            raise PolicyError(f"--policy sb3:{path}: the model was trained on observations of shape {shape} and "
                              f"{actions} actions; this environment ({spec.describe()}) has "
                              f"{expected} and {spec.action_count}: {hint}")
        run = read_run(path, spec.observation_size)
        try:
            scores = actor_scores(model)  # numpy copy of the network: the same greedy actions, ~30x faster
        except ValueError:
            scores = _torch_scores(model)
        # MaskablePPO samples among allowed actions only: its rule is the masked one. Any other algorithm trained on
        # an msjgym environment saw its forbidden choices replaced by the mask's default action (the environments'
        # invalid_action="fallback" default, or MaskFallback; with "raise" it never chose one): the same rule here.
        return greedy_decide(scores, run.transform, cls is not MaskablePPO)
    raise PolicyError(f"--policy sb3:{path}: not a saved MaskablePPO, PPO, A2C or DQN model")


def greedy_decide(scores: Scores, transform: Callable[[np.ndarray], np.ndarray] | None = None,
                  fallback: bool = False) -> Decide:
    """``decide(observation, mask)`` from a model's ``scores``: the observation as float32 (SB3 feeds float32), then
    ``transform`` (VecNormalize's observation normalization, if the model was trained with it), then the greedy rule:
    the allowed action of highest score, or, with ``fallback`` (a model trained through
    :class:`msjgym.envs.wrappers.MaskFallback`), the action of highest score, replaced by the highest-numbered allowed
    action if the mask forbids it (the wrapper's rule, :func:`msjgym.core.actions.fallback_action`)."""
    from msjgym.core.actions import fallback_action

    def decide(obs: np.ndarray, mask: np.ndarray) -> int:
        x = np.asarray(obs, dtype=np.float32).reshape(-1)
        if transform is not None:
            x = transform(x)
        values = scores(x)
        if fallback:
            return fallback_action(int(np.argmax(values)), mask)
        return int(np.argmax(np.where(mask, values, -np.inf)))

    return decide


def greedy_actor(model: Any) -> Decide:
    """``decide(observation, mask)``: a saved SB3 actor-critic model's greedy action (its most likely allowed one),
    computed in numpy from a copy of the policy network.

    The same action as ``model.predict(obs, action_masks=mask, deterministic=True)`` (MaskablePPO; for PPO/A2C the
    mask is applied to the logits too), at ~10 µs a decision instead of ~0.3 ms through torch, which makes evaluating
    millions of decisions practical. Supports MLP policies with a Flatten or log(1 + x) features extractor (one whose
    class sets ``features_transform = "log1p"``, as ``msjgym.envs.sb3.Log1pExtractor``), Tanh/ReLU activations and a
    Discrete action space; raises ``ValueError`` otherwise (then use ``model.predict``).
    """
    return greedy_decide(actor_scores(model))


def actor_scores(model: Any) -> Scores:
    """The action logits of a saved SB3 actor-critic model (:func:`greedy_actor`'s network), computed in numpy from a
    copy of its policy network; ``ValueError`` for what it does not support (see :func:`greedy_actor`)."""
    import gymnasium as gym
    from stable_baselines3.common.torch_layers import FlattenExtractor

    policy = model.policy
    own = getattr(policy, "numpy_scores", None)  # a policy class with its own numpy copy (msjgym.envs.scoring)
    if callable(own):
        scores = own()
        if scores is None:
            raise ValueError(f"greedy_actor: {type(policy).__name__} has no numpy copy in this configuration")
        return scores
    extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
    log1p = getattr(extractor, "features_transform", None) == "log1p"
    if not log1p and not isinstance(extractor, FlattenExtractor):
        raise ValueError(f"greedy_actor: unsupported features extractor {type(extractor).__name__}")
    if not hasattr(policy, "mlp_extractor") or not isinstance(model.action_space, gym.spaces.Discrete):
        raise ValueError("greedy_actor: needs an actor-critic MLP policy with a Discrete action space")
    layers: list[Layer] = []
    for module in [*policy.mlp_extractor.policy_net, policy.action_net]:
        layer = numpy_layer(module)
        if layer is None:
            raise ValueError(f"greedy_actor: unsupported layer {module}")
        layers.append(layer)
    return mlp_forward(layers, log1p)



def _torch_scores(model: Any) -> Scores:
    """A saved model's action preferences through torch (any network SB3 loads): a DQN's Q-values, an actor-critic's
    logits (before any mask); one torch thread (a decision is far too small to share), no gradients, the observation
    viewed as a tensor without a copy."""
    import torch

    if torch.get_num_threads() > 1:
        torch.set_num_threads(1)
    shape = (1, *model.observation_space.shape)

    def scores(x32: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            obs = torch.from_numpy(np.ascontiguousarray(x32, dtype=np.float32).reshape(shape))
            if hasattr(model, "q_net"):
                return model.q_net(obs).numpy()[0].astype(np.float64)
            return model.policy.get_distribution(obs).distribution.logits.numpy()[0].astype(np.float64)

    return scores


_DECLARED: dict[tuple[str, int, str], Any] = {}


def declared_in_file(policy: Any, cls: type) -> Any:
    """The ``cls`` instance (a compiled policy's declaration) given as ``FILE.py:NAME`` or as the object itself
    (possibly bound); None when ``policy`` is not one. The file is executed once per version (its modification time):
    the one loader of every family's compiled policies (``msjgym.systems.<family>.compiled``)."""
    if isinstance(policy, cls):
        return policy
    if not isinstance(policy, str) or policy.startswith(("sb3:", "rllib:")):
        return None
    text, sep, name = policy.rpartition(":")
    path = Path(text)
    if not sep or not text.endswith(".py") or not path.is_file():
        return None
    key = (str(path.resolve()), path.stat().st_mtime_ns, name)
    if key not in _DECLARED:
        _DECLARED[key] = load_object(path, name, policy)
    obj = _DECLARED[key]
    return obj if isinstance(obj, cls) else None


def compiled_params(decorator: str, params: Any, room: int, what: str, alias: str) -> tuple[Any, ...]:
    """The parameters a compiled policy of the user's declares (``@decorator(params=...)``), checked: at most
    ``room`` (the slots its family's loop passes, ``NARG``), each a :class:`msjgym.api.Param` (``alias.Param``, as the
    family's module re-exports it); a one-line ``PolicyError`` naming the decorator otherwise. The one check of every
    family's compiled declarations (``msjgym.systems.<family>.compiled``)."""
    from msjgym.core.policy_registry import Param

    params = tuple(params)
    if len(params) > room:
        raise PolicyError(f"@{decorator}: {len(params)} parameters; a compiled {what} has room for {room}")
    if any(not isinstance(p, Param) for p in params):
        raise PolicyError(f"@{decorator}: params must be msjgym.api.Param declarations ({alias}.Param(name, default, "
                          "...))")
    return params


def compiled_source(f: Callable) -> tuple[str, str]:
    """(the file that defines the user's compiled function ``f`` (an ``@njit`` one included), the first line of its
    docstring, or ""); the file is registered so that its kernels are cached by its content and the msjgym modules it
    imports (:func:`msjgym.core.jit.register_source`)."""
    from msjgym.core.jit import register_source

    py = getattr(f, "py_func", f)
    source = inspect.getsourcefile(py) or "<unknown>"
    if is_regular_file(source):
        register_source(source)
    doc = (inspect.getdoc(py) or "").strip().splitlines()
    return source, doc[0] if doc else ""
