"""Python run from the repository root imports the checkout's ``msjgym/`` (not the installed copy): its
``msjgym.policies`` is then the top-level ``policies/`` folder (``msjgym._source_tree``), so ``import msjgym`` and
``gym.make`` work there after a plain ``pip install .`` too."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The editable install's finder would map msjgym.policies itself; drop it to see what a plain install sees from here.
SCRIPT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") + repr(f))]
sys.path.insert(0, {root!r})
import gymnasium as gym
import msjgym, msjgym.policies
from msjgym._source_tree import SourcePolicies
assert msjgym.__file__.startswith({root!r}), msjgym.__file__
assert any(isinstance(f, SourcePolicies) for f in sys.meta_path)
print(msjgym.policies.__file__)
print(gym.make("msjgym/MSJ-v0").reset(seed=0)[0].shape)
"""


def test_a_source_checkout_finds_its_policies_folder():
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT))], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    policies, shape = out.stdout.split("\n")[:2]
    assert Path(policies) == ROOT / "policies" / "__init__.py"
    assert shape == "(47,)"


def test_the_finder_maps_only_msjgym_policies():
    from msjgym._source_tree import SourcePolicies

    finder = SourcePolicies()
    assert finder.find_spec("msjgym.api") is None and finder.find_spec("policies") is None
    spec = finder.find_spec("msjgym.policies")
    assert spec is not None and spec.submodule_search_locations == [str(ROOT / "policies")]
