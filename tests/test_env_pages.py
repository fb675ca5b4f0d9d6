"""The environment pages (docs/environments/) are generated from the environments' own metadata and are current:
one page per registered id, listed in mkdocs.yml's nav, every argument of every environment described."""
from __future__ import annotations

from pathlib import Path

import msjgym  # noqa: F401  registers the environments
from msjgym.envs import registrations
from msjgym.envs.docs import env_page, page_name

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "environments"


def test_one_current_generated_page_per_environment():
    ids = [reg.id for reg in registrations()]
    assert len(ids) == 6 and "msjgym/FiniteSkip-v0" in ids and "msjgym/MultiResourceJobs-v0" in ids
    assert sorted(p.name for p in PAGES.glob("*.md")) == sorted(page_name(i) for i in ids)
    nav = (ROOT / "mkdocs.yml").read_text()
    for env_id in ids:
        path = PAGES / page_name(env_id)
        assert path.read_text() == env_page(env_id), (f"{path} is not current: regenerate with "
                                                      "`python -m msjgym.envs.docs`")
        assert f"environments/{page_name(env_id)}" in nav


def test_pages_have_gymnasiums_sections_and_the_live_spaces():
    import gymnasium as gym

    for reg in registrations():
        text = env_page(reg.id)
        for section in ("## Description", "## Action space", "## Observation space", "| Entries | Name | Meaning |",
                        "## Rewards", "## Starting state", "## Episode end", "## Arguments", "## Version history"):
            assert section in text, (reg.id, section)
        env = gym.make(reg.id)
        assert repr(env.observation_space) in text and f"Discrete({env.action_space.n})" in text
        assert "`invalid_action`" in text and "'ansi'" in text
