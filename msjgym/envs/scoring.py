"""A job-scoring policy for Stable-Baselines3 / sb3-contrib: one small network shared by every job of the window.

The observation of ``msjgym/JobScheduling-v0`` is a window of K waiting jobs, one row of F normalised features per
job (machine features repeated in every row, one column saying whether the slot holds a job). This policy follows
RLScheduler (Zhang, Dai, He, Bao & Xie, "RLScheduler: an automated HPC batch job scheduler using reinforcement
learning", SC'20, §4: the "kernel" network): one MLP maps each row to one logit (the same weights for every row, so
the logits are *permutation-equivariant*: permuting the rows permutes the logits; the network does not depend on K;
F→32→16→8→1 is about 1,000 weights), and the action is a masked softmax over the slots (sb3-contrib's masking: a
forbidden slot's logit is replaced by −10⁸). The critic pools over the present rows (the mean of a per-row
embedding, with the fraction of present slots beside it) and maps the pool to one value with an MLP, so it is
permutation-*invariant*. ``attention=True`` adds one self-attention layer over the present rows (a residual
multi-head attention on a per-row embedding, absent rows masked out) before the scoring MLP: each job's score can
then depend on the other jobs.

With a ``Discrete(2)`` action space (the environment's ``action="inspect"``: accept or delay the base heuristic's
pick, SchedInspector) the actor pools as the critic does and its head gives the two logits.

``gate_column=g`` (pick, no attention) adds a second scoring MLP f₂ of the same shape, weighted by one minus a column
in [0, 1]: logit = f(x) + (1 − x_g)·f₂(x). With g the ``accuracy`` column of ``msjgym/JobScheduling-v0``'s
``estimate_accuracy=True`` (:mod:`msjgym.systems.msj.job_observation`: 1 while every completed job's requested time
was its run time), f alone scores the jobs of a trace with exact requested times, and f₂ corrects it as requested
times turn out to be users' estimates: one model, two regimes (``baselines/hpc_pick_easy_gated.toml``).

    >>> from sb3_contrib import MaskablePPO
    >>> from msjgym.envs.scoring import JobScoringPolicy
    >>> model = MaskablePPO(JobScoringPolicy, env, policy_kwargs={"present_column": col})

Training speed: the rollouts' calls (no gradients) run in numpy (:mod:`msjgym.envs.scoring_rollout`, the same
numbers); in the gradient epochs the actor and the critic select the present rows once per call
(``JobScoringNetwork.forward``) and the masked softmax is :mod:`msjgym.envs.masked_categorical`'s (sb3-contrib's
distribution computed with one ``log_softmax``); ``baselines/train.py`` also gives MaskablePPO
:mod:`msjgym.envs.rollout_buffer`'s buffer.
``benchmarks/bench_train.py`` measures the training rate beside the environment's.

Saved models name the class by reference (``msjgym.envs.scoring.JobScoringPolicy``): loading one in a fresh process
needs msjgym installed and nothing else (no ``custom_objects``). Torch is imported when a class is first used:
``import msjgym`` stays torch-free. :func:`numpy_scores` computes the same logits in numpy (the ``sb3:MODEL.zip``
evaluation path, :func:`msjgym.core.user_policy.actor_scores`). No RLlib equivalent (not built: the RLlib adapter
takes flat observations, :mod:`msjgym.envs.rllib`).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["JobScoringPolicy", "JobScoringActorCriticPolicy", "numpy_scores", "SCORE_ARCH", "VALUE_ARCH",
           "ABSENT_LOGIT"]

SCORE_ARCH = (32, 16, 8)
"""The hidden widths of the per-job scoring MLP (RLScheduler's kernel network: F→32→16→8→1)."""
VALUE_ARCH = (32, 16)
"""The critic: a per-row embedding of width ``VALUE_ARCH[0]``, pooled, then an MLP of these widths → 1."""
ABSENT_LOGIT = -1e8
"""The logit of an empty slot (no job): never chosen, with or without the environment's mask (sb3-contrib gives a
masked slot the same value)."""


def __getattr__(name: str) -> Any:  # the torch classes are defined on first use
    if name in ("JobScoringPolicy", "JobScoringActorCriticPolicy", "JobScoringNetwork", "RowsExtractor"):
        return _classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_arch(name: str, arch: Sequence[int]) -> tuple[int, ...]:
    widths = tuple(arch)
    if not widths or any(isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1 for w in widths):
        raise ValueError(f"{name} = {arch!r}: a non-empty list of layer widths, each an integer >= 1")
    return tuple(int(w) for w in widths)


@functools.cache
def _classes() -> dict[str, type]:
    import torch
    from torch import nn
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    from msjgym.envs.masked_categorical import HUGE_NEG, LeanMaskableCategoricalDistribution
    from msjgym.envs.scoring_rollout import numpy_layers, rollout_step

    def mlp(sizes: Sequence[int], activation: type[nn.Module], last_activation: bool) -> list[nn.Module]:
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if last_activation or i < len(sizes) - 2:
                layers.append(activation())
        return layers

    class RowsExtractor(BaseFeaturesExtractor):
        """The observation as it is: float[batch, K, F] (no flattening: the rows are scored one by one)."""

        def __init__(self, observation_space: Any) -> None:
            if len(observation_space.shape) != 2:
                raise ValueError(f"JobScoringPolicy: needs observations of shape (K, F) (one row per job); got "
                                 f"{observation_space.shape}")
            super().__init__(observation_space, int(np.prod(observation_space.shape)))

        def forward(self, observations: torch.Tensor) -> torch.Tensor:
            return observations

    class JobScoringNetwork(nn.Module):
        """The actor and the critic of :class:`JobScoringPolicy` (SB3's ``mlp_extractor`` slot): ``forward_actor``
        gives float[batch, K] logits (pick) or the pooled actor features (inspect), ``forward_critic`` the pooled
        critic features."""

        def __init__(self, rows: int, features: int, actions: int, score_arch: Sequence[int],
                     value_arch: Sequence[int], activation: type[nn.Module], attention: bool, heads: int,
                     present_column: int, gate_column: int | None = None) -> None:
            super().__init__()
            self.rows, self.features, self.pick = rows, features, actions == rows
            self.present_column = present_column % features
            self.gate_column = None if gate_column is None else gate_column % features
            self.attention = attention
            width = score_arch[0]
            if attention:
                self.embed = nn.Sequential(nn.Linear(features, width), activation())
                self.attend = nn.MultiheadAttention(width, heads, batch_first=True)
                self.norm = nn.LayerNorm(width)
                score_sizes = [width, *score_arch[1:]]
            else:
                score_sizes = [features, *score_arch]
            # pick: the per-row MLP down to one logit; inspect: the per-row encoder, pooled, then a head (action_net)
            self.score_net = nn.Sequential(*mlp([*score_sizes, 1] if self.pick else score_sizes, activation,
                                                False if self.pick else True))
            # gate_column: the second score f2, weighted by 1 - x[gate_column] (module docstring)
            self.gated_net = None if self.gate_column is None else nn.Sequential(*mlp([*score_sizes, 1], activation,
                                                                                      False))
            pooled = (score_sizes[-1] + 1)
            self.actor_head = nn.Sequential(*mlp([pooled, *value_arch], activation, True)) if not self.pick else None
            self.value_embed = nn.Sequential(nn.Linear(features, value_arch[0]), activation())
            self.value_head = nn.Sequential(*mlp([value_arch[0] + 1, *value_arch], activation, True))
            self.latent_dim_pi = rows if self.pick else value_arch[-1]
            self.latent_dim_vf = value_arch[-1]

        def present(self, x: torch.Tensor) -> torch.Tensor:
            return x[..., self.present_column] > 0.5

        def rows_out(self, x: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
            """The scoring MLP's output for every row (attention: it needs every row at once)."""
            h = self.embed(x)
            pad = ~present
            empty = pad.all(dim=1)  # no job at all: attend to every row rather than to none (NaNs)
            pad = pad & ~empty[:, None]
            a, _ = self.attend(h, h, h, key_padding_mask=pad, need_weights=False)
            return self.score_net(self.norm(h + a))

        @staticmethod
        def pool(h: torch.Tensor, where: tuple[torch.Tensor, torch.Tensor], present: torch.Tensor) -> torch.Tensor:
            """[mean of the present rows' h, fraction of rows present]: h is float[N, H] for the N present rows
            (``where``: their (batch, row) indices); zeros where no row is present."""
            count = present.sum(dim=1, keepdim=True).to(h.dtype)
            total = h.new_zeros(present.shape[0], h.shape[1]).index_add(0, where[0], h)
            return torch.cat([total / count.clamp(min=1.0), count / present.shape[1]], dim=1)

        def _actor(self, x: torch.Tensor, present: torch.Tensor, where: tuple[torch.Tensor, torch.Tensor],
                   rows: torch.Tensor) -> torch.Tensor:
            """``forward_actor`` given the present mask, its indices and the present rows (``x[where]``)."""
            if self.attention:
                out = self.rows_out(x, present)[where]
            else:  # only the present rows: the cost grows with the jobs waiting, not with K
                out = self.score_net(rows)
                if self.gated_net is not None:
                    g = self.gate_column
                    out = out + (1.0 - rows[:, g:g + 1]) * self.gated_net(rows)
            if self.pick:
                logits = x.new_full(present.shape, ABSENT_LOGIT)
                return logits.index_put(where, out[:, 0])
            return self.actor_head(self.pool(out, where, present))

        def _critic(self, present: torch.Tensor, where: tuple[torch.Tensor, torch.Tensor],
                    rows: torch.Tensor) -> torch.Tensor:
            return self.value_head(self.pool(self.value_embed(rows), where, present))

        def _rows(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
            present = self.present(x)
            where = present.nonzero(as_tuple=True)
            return present, where, x[where]

        def forward_actor(self, x: torch.Tensor) -> torch.Tensor:
            present, where, rows = self._rows(x)
            return self._actor(x, present, where, rows)

        def forward_critic(self, x: torch.Tensor) -> torch.Tensor:
            return self._critic(*self._rows(x))

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """Both heads from one selection of the present rows (what MaskablePPO's rollouts and updates call)."""
            present, where, rows = self._rows(x)
            return self._actor(x, present, where, rows), self._critic(present, where, rows)

    class _Scoring:
        """What the two policy classes share: the job-scoring network in SB3's ``mlp_extractor`` slot, and logits
        that are the network's own output (pick: no ``action_net`` layer mixing the slots)."""

        def _scoring_init(self, kwargs: dict[str, Any], score_arch: Sequence[int], value_arch: Sequence[int],
                          attention: bool, heads: int, present_column: int, gate_column: int | None) -> None:
            self.score_arch = _check_arch("score_arch", score_arch)
            self.value_arch = _check_arch("value_arch", value_arch)
            if isinstance(present_column, bool) or not isinstance(present_column, (int, np.integer)):
                raise ValueError(f"present_column = {present_column!r}: the index of the column that is 1 for a "
                                 "slot holding a job")
            if gate_column is not None and (isinstance(gate_column, bool) or
                                            not isinstance(gate_column, (int, np.integer))):
                raise ValueError(f"gate_column = {gate_column!r}: None or the index of a column in [0, 1] weighting "
                                 "the second score by one minus it")
            if gate_column is not None and attention:
                raise ValueError("gate_column: not with attention=True (the second score is a per-row MLP)")
            self.gate_column = None if gate_column is None else int(gate_column)
            if not isinstance(heads, int) or heads < 1 or self.score_arch[0] % heads:
                raise ValueError(f"heads = {heads!r}: an integer >= 1 dividing score_arch[0] = {self.score_arch[0]}")
            self.attention, self.heads, self.present_column = bool(attention), heads, int(present_column)
            kwargs.setdefault("features_extractor_class", RowsExtractor)
            kwargs.setdefault("activation_fn", nn.ReLU)
            kwargs["net_arch"] = None

        def _build_mlp_extractor(self) -> None:
            rows, features = self.observation_space.shape
            actions = int(self.action_space.n)
            if actions not in (rows, 2):
                raise ValueError(f"JobScoringPolicy: {actions} actions for {rows} rows; needs one action per row "
                                 "(pick) or two (inspect)")
            if not -features <= self.present_column < features:
                raise ValueError(f"present_column = {self.present_column}: not a column of the {features} features")
            if self.gate_column is not None and not (-features <= self.gate_column < features and actions == rows):
                raise ValueError(f"gate_column = {self.gate_column}: a column of the {features} features, with one "
                                 "action per row (pick)")
            self.mlp_extractor = JobScoringNetwork(rows, features, actions, self.score_arch, self.value_arch,
                                                   self.activation_fn, self.attention, self.heads,
                                                   self.present_column, self.gate_column)

        def _build(self, lr_schedule: Any) -> None:
            self._build_mlp_extractor()
            net = self.mlp_extractor
            self.action_net = nn.Identity() if net.pick else nn.Linear(net.latent_dim_pi, int(self.action_space.n))
            self.value_net = nn.Linear(net.latent_dim_vf, 1)
            if self.ortho_init:
                for module, gain in ((net, np.sqrt(2)), (self.action_net, 0.01), (self.value_net, 1.0)):
                    module.apply(functools.partial(self.init_weights, gain=gain))
                if net.pick:  # the last scoring layer is the output layer: small, so the first policy is near uniform
                    self.init_weights(net.score_net[-1], gain=0.01)
                if net.gated_net is not None:  # the second score starts at 0: the gated model starts as f alone
                    nn.init.zeros_(net.gated_net[-1].weight)
                    nn.init.zeros_(net.gated_net[-1].bias)
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

        def numpy_scores(self) -> Callable[[np.ndarray], np.ndarray] | None:
            """:func:`numpy_scores` of this policy (what ``sb3:MODEL.zip`` evaluates with)."""
            return numpy_scores(self)

        def _get_constructor_parameters(self) -> dict[str, Any]:
            data = super()._get_constructor_parameters()
            data.update(score_arch=self.score_arch, value_arch=self.value_arch, attention=self.attention,
                        heads=self.heads, present_column=self.present_column)
            if self.gate_column is not None:  # a model saved without it loads as before
                data.update(gate_column=self.gate_column)
            return data

    class JobScoringPolicy(_Scoring, MaskableActorCriticPolicy):
        """sb3-contrib's ``MaskableActorCriticPolicy`` (MaskablePPO) scoring each job with one shared MLP (module
        docstring). ``score_arch``: the scoring MLP's hidden widths (default 32, 16, 8); ``value_arch``: the
        critic's (default 32, 16); ``attention``: one self-attention layer first (``heads`` heads);
        ``present_column``: the observation column that is 1 for a slot holding a job (default 0, ``PRESENT`` of
        ``msjgym/JobScheduling-v0``'s layout, :mod:`msjgym.systems.msj.job_observation`); ``gate_column``: None
        (default) or the column g of the second score, logit f(x) + (1 − x_g)·f₂(x) (module docstring);
        ``activation_fn`` default ``nn.ReLU``; other keyword arguments as ``MaskableActorCriticPolicy``'s."""

        def __init__(self, *args: Any, score_arch: Sequence[int] = SCORE_ARCH,
                     value_arch: Sequence[int] = VALUE_ARCH, attention: bool = False, heads: int = 1,
                     present_column: int = 0, gate_column: int | None = None, **kwargs: Any) -> None:
            self._scoring_init(kwargs, score_arch, value_arch, attention, heads, present_column, gate_column)
            super().__init__(*args, **kwargs)
            # sb3-contrib's masked categorical computed directly (msjgym.envs.masked_categorical): the same
            # distribution, one log_softmax instead of two Categorical constructions per call
            self.action_dist = LeanMaskableCategoricalDistribution(int(self.action_space.n))
            self._numpy_layers = numpy_layers(self) if self.gate_column is None else None

        def forward(self, obs: torch.Tensor, deterministic: bool = False,
                    action_masks: np.ndarray | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            """(actions, values, log-probabilities): without gradients (MaskablePPO's rollouts) in numpy where the
            network allows it (:mod:`msjgym.envs.scoring_rollout`: the same numbers), else sb3-contrib's."""
            if self._numpy_layers is None or torch.is_grad_enabled() or obs.dtype != torch.float32 or \
                    obs.device.type != "cpu":
                return super().forward(obs, deterministic, action_masks)
            masks = action_masks.detach().cpu().numpy() if isinstance(action_masks, torch.Tensor) else action_masks
            return rollout_step(self._numpy_layers, self.mlp_extractor.present_column, obs.numpy(), masks,
                                deterministic, ABSENT_LOGIT, HUGE_NEG)

    class JobScoringActorCriticPolicy(_Scoring, ActorCriticPolicy):
        """The same network as :class:`JobScoringPolicy` as a plain SB3 ``ActorCriticPolicy`` (PPO, A2C: no
        masks; the environment's ``invalid_action`` fallback applies)."""

        def __init__(self, *args: Any, score_arch: Sequence[int] = SCORE_ARCH,
                     value_arch: Sequence[int] = VALUE_ARCH, attention: bool = False, heads: int = 1,
                     present_column: int = 0, gate_column: int | None = None, **kwargs: Any) -> None:
            self._scoring_init(kwargs, score_arch, value_arch, attention, heads, present_column, gate_column)
            super().__init__(*args, **kwargs)

    classes = {"JobScoringPolicy": JobScoringPolicy, "JobScoringActorCriticPolicy": JobScoringActorCriticPolicy,
               "JobScoringNetwork": JobScoringNetwork, "RowsExtractor": RowsExtractor}
    for name, cls in classes.items():  # importable (and picklable) as msjgym.envs.scoring.NAME
        cls.__module__, cls.__qualname__ = __name__, name
    globals().update(classes)
    return classes


def numpy_scores(policy: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    """``scores(x)``: the logits (float64[A]) of a :class:`JobScoringPolicy` (or its plain twin) for one observation
    ``x`` (any shape holding K·F values), computed in float64 numpy from a copy of its weights; None for another
    policy or one with ``attention`` (then use torch)."""
    classes = _classes()
    if not isinstance(policy, (classes["JobScoringPolicy"], classes["JobScoringActorCriticPolicy"])):
        return None
    net = policy.mlp_extractor
    if net.attention:
        return None
    from msjgym.core.numpy_net import numpy_layer

    rows, features, column, gate = net.rows, net.features, net.present_column, net.gate_column
    score = [numpy_layer(m) for m in net.score_net]
    gated = [] if net.gated_net is None else [numpy_layer(m) for m in net.gated_net]
    head = None if net.pick else [numpy_layer(m) for m in (*net.actor_head, policy.action_net)]
    if any(layer is None for layer in score + gated + (head or [])):  # an activation numpy_layer does not copy
        return None

    def run(layers: list[Any], x: np.ndarray) -> np.ndarray:
        for kind, w, b in layers:
            x = x @ w + b if kind == "linear" else np.tanh(x) if kind == "tanh" else np.maximum(x, 0.0)
        return x

    def scores(obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32).reshape(rows, features).astype(np.float64)
        present = x[:, column] > 0.5
        out = run(score, x[present])
        if gated:
            out = out + (1.0 - x[present, gate][:, None]) * run(gated, x[present])
        if head is None:
            logits = np.full(rows, ABSENT_LOGIT)
            logits[present] = out[:, 0]
            return logits
        count = int(present.sum())
        mean = out.sum(axis=0) / max(count, 1)
        return run(head, np.concatenate([mean, [count / rows]]))

    return scores
