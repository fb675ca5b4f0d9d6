"""Each environment's documentation as data (:class:`EnvDoc`), rendered two ways from the one source: the class
docstring's table (:meth:`EnvDoc.docstring`) and the environment's page in Gymnasium's docs format
(:func:`env_page`, written to ``docs/environments/`` by ``python -m msjgym.envs.docs``; ``tests/test_env_pages.py``
fails when a page is not current).

The page's facts that code can state are read from the environment itself, not written by hand: the action and
observation spaces of ``gym.make(id)`` with its defaults, ``metadata["render_modes"]``, and every argument with its
default (the signature of the spec's ``make`` and of the batched base); an argument without a description in
``EnvDoc.arguments`` fails the test.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["EnvDoc", "COMMON_ARGUMENTS", "env_page", "write_pages", "page_name"]

COMMON_ARGUMENTS: dict[str, str] = {
    "invalid_action": "what a masked action does: ``\"fallback\"`` (default) applies the mask's default action (the "
                      "highest-numbered allowed one) and counts it (``info[\"fallback\"]``, ``info[\"fallbacks\"]``); "
                      "``\"raise\"`` raises ``ValueError`` (for debugging); ``\"penalty\"`` falls back and subtracts "
                      "``invalid_action_penalty`` from the step's reward",
    "invalid_action_penalty": "the penalty of ``invalid_action=\"penalty\"``, in the reward's units (>= 0)",
    "render_mode": "None or ``\"ansi\"``: ``render()`` returns a text picture of the servers and the queue",
}
"""The arguments every environment takes (:class:`msjgym.envs.base.BatchedEnv`)."""

ACTION_CHECK = ("the one check of every environment (:mod:`msjgym.core.actions`): ``step(action)`` takes an int, a "
                "NumPy integer or a 0-d integer array, in range; a float (even 2.0), a bool, a str, None or an array "
                "of shape (1,) raises ``TypeError`` (pass an int or a 0-d array), out of range ``ValueError``; "
                "nothing is coerced. A masked action is handled as ``invalid_action`` says (default: the mask's "
                "default action, counted in ``info``). The vector env takes an integer array of shape (num_envs,), "
                "each copy checked the same way.")
"""The action check, the same for every environment (a row of every docstring and page)."""


@dataclass(frozen=True)
class EnvDoc:
    """What an environment's page and docstring say that code cannot read from it.

    Attributes:
        id: the Gymnasium id. title: a one-line title. description: a paragraph (Markdown).
        action_space: what each action does (the space itself is read from the environment).
        observation: rows ``(entries, name, meaning)`` of the observation table for the default arguments (and,
            after a row whose entries are ``""``, the other configurations' notes).
        reward, starting_state, episode_end, masks: paragraphs. info: the ``info`` keys beyond the common ones.
        arguments: every argument of the spec's ``make`` -> its meaning (the default is read from the signature).
        version_history: one line per version.
    """

    id: str
    title: str
    description: str
    action_space: str
    observation: tuple[tuple[str, str, str], ...]
    reward: str
    starting_state: str
    episode_end: str
    masks: str
    info: str
    arguments: dict[str, str] = field(default_factory=dict)
    version_history: tuple[str, ...] = ()

    def docstring(self) -> str:
        """The class docstring's table (reStructuredText), from the same fields as the page."""
        rows = [("Action space", self.action_space),
                ("Observation space", "; ".join(f"{e}: {n} ({m})" if e else m for e, n, m in self.observation)),
                ("Reward", self.reward), ("Starting state", self.starting_state), ("Episode end", self.episode_end),
                ("Action masks", self.masks), ("Action check", ACTION_CHECK), ("``info``", self.info),
                ("Arguments", "; ".join(f"``{k}``: {v}" for k, v in {**self.arguments, **COMMON_ARGUMENTS}.items()))]
        width = 95
        out = ["", "    " + "=" * 22 + "  " + "=" * width]
        for head, text in rows:
            lines = _wrap(text, width)
            out.append(f"    {head:<22}  {lines[0]}")
            out.extend(f"    {'':<22}  {line}" for line in lines[1:])
        out.append("    " + "=" * 22 + "  " + "=" * width)
        return "\n".join(out) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    import textwrap
    return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False) or [""]


def page_name(env_id: str) -> str:
    """``msjgym/MSJ-v0`` -> ``msj-v0.md``."""
    return env_id.split("/")[-1].lower() + ".md"


def _md(text: str) -> str:
    """reST literals (````x````) as Markdown (```x```); whitespace collapsed."""
    return " ".join(text.replace("``", "`").split())


def _arguments(env_cls: Any, doc: EnvDoc) -> list[tuple[str, str, str]]:
    """(name, default, meaning) of every argument: the spec's ``make`` then the common ones; KeyError naming an
    argument that ``doc.arguments`` does not describe."""
    rows = []
    spec_make = env_cls.vector_type.spec_type.make
    params = list(inspect.signature(spec_make).parameters.values())
    base = inspect.signature(env_cls.vector_type.__bases__[0].__init__).parameters
    for p in params + [base["invalid_action"], base["invalid_action_penalty"]]:
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in ("cls", "self"):
            continue
        meaning = doc.arguments.get(p.name, COMMON_ARGUMENTS.get(p.name))
        if meaning is None:
            raise KeyError(f"{doc.id}: argument {p.name!r} has no description in its EnvDoc.arguments")
        rows.append((p.name, repr(p.default), meaning))
    rows.append(("render_mode", "None", COMMON_ARGUMENTS["render_mode"]))
    if any(p.kind == p.VAR_KEYWORD for p in params):
        rows.append(("**params", "", doc.arguments.get("**params", "the scenario's parameters")))
    return rows


def env_page(env_id: str) -> str:
    """The Markdown page of the registered environment ``env_id`` (Gymnasium's docs format)."""
    import gymnasium as gym

    import msjgym.envs  # noqa: F401  registers the environments

    env = gym.make(env_id)
    core = env.unwrapped
    doc: EnvDoc = type(core).doc
    name = env_id.split("/")[-1]
    lines = [f"# {name}", "", f"<!-- generated by `python -m msjgym.envs.docs` from {type(core).__module__}"
             f".{type(core).__name__}.doc and the environment itself: do not edit -->", "",
             "| | |", "|---|---|",
             f"| Action space | `{core.action_space!r}` |".replace("MaskedDiscrete", "Discrete"),
             f"| Observation space | `{_space(core.observation_space)}` |",
             f"| Import | `gymnasium.make(\"{env_id}\")` |",
             f"| Vector | `gymnasium.make_vec(\"{env_id}\", num_envs=8, vectorization_mode=\"vector_entry_point\")` |",
             f"| Render modes | {', '.join(repr(m) for m in core.metadata['render_modes'])} |", "",
             f"**{doc.title}**", "", "## Description", "", _md(doc.description), "",
             "## Action space", "", _md(doc.action_space), "",
             "## Observation space", "",
             f"With the default arguments: `{_space(core.observation_space)}`.", "",
             "| Entries | Name | Meaning |", "|---|---|---|"]
    notes = []
    for entries, field_name, meaning in doc.observation:
        if entries:
            lines.append(f"| {_md(entries)} | {_md(field_name)} | {_md(meaning)} |")
        else:
            notes.append(_md(meaning))
    lines += [""] + sum(([n, ""] for n in notes), [])
    lines += ["Named view: `env.unwrapped.view(obs)` returns the observation's named view "
              f"(`{type(core.view(core.observation_space.sample() * 0)).__name__}` here).", "",
              "## Action masks", "", _md(doc.masks), "", _md(ACTION_CHECK).replace(":mod:", ""), "", "## Rewards", "", _md(doc.reward), "",
              "## Starting state", "", _md(doc.starting_state), "", "## Episode end", "", _md(doc.episode_end), "",
              "## Info", "", "Every step: `dt` (the time it advanced), `fallback` (this step's action was masked and "
              "replaced), `fallbacks` (their count in the episode); " + _md(doc.info), "",
              "## Arguments", "", f"`gymnasium.make(\"{env_id}\", ...)`:", "",
              "| Argument | Default | Meaning |", "|---|---|---|"]
    for arg, default, meaning in _arguments(type(core), doc):
        lines.append(f"| `{arg}` | {f'`{default}`' if default else ''} | {_md(meaning)} |")
    lines += ["", "## Version history", ""] + [f"* {_md(v)}" for v in doc.version_history] + [""]
    env.close()
    return "\n".join(lines)


def _space(space: Any) -> str:
    text = repr(space)
    return text if len(text) < 200 else f"{type(space).__name__}{tuple(space.shape)}, {space.dtype}"


def write_pages(folder: Path) -> list[Path]:
    """Write every registered environment's page into ``folder``; returns the paths."""
    from msjgym.envs import registrations

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for reg in registrations():
        path = folder / page_name(reg.id)
        path.write_text(env_page(reg.id))
        out.append(path)
    return out


if __name__ == "__main__":  # python -m msjgym.envs.docs [FOLDER]
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/environments")
    for written in write_pages(target):
        print(written)
