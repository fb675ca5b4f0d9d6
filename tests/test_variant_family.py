"""A family derived from another (docs/extending.md, "Derive a family from another"): ``tests/variant_family``,
multi-resource jobs on whole nodes, reuses the multiserver-job family's modules without copying them. It is
registered the way a family shipped in another package is (an ``msjgym.families`` entry point), loaded from its own
scenario files, and run through ``msjgym.evaluate``: its numbers are the parent's, bit for bit, on the multiserver-job
system it reduces to."""
from __future__ import annotations

from pathlib import Path

import pytest

import msjgym
from msjgym import api
from msjgym.errors import ScenarioError
from msjgym.policies.msj import POLICIES

TESTS = Path(__file__).resolve().parent
RUN = dict(reps=2, jobs=4000, warmup=400, seed=11, references=False)

CLASSES = """
[[classes]]
name = "{a}"
{ra}
probability = 0.7
service = {{ dist = "exp", rate = 1.0 }}
[[classes]]
name = "{b}"
{rb}
probability = 0.3
service = {{ dist = "hyperexp", mean = 2.0, scv = 4.0 }}
"""


@pytest.fixture
def variant(tmp_path, monkeypatch):
    """The variant registered as an installed package would register it: an entry point of the group
    ``msjgym.families`` (a distribution's metadata on sys.path), the family registry then read afresh."""
    dist = tmp_path / "site" / "msjgym_variant_family-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: msjgym-variant-family\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[msjgym.families]\nmsj-resources = variant_family.family:FAMILY\n")
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(api, "_FAMILIES", None)
    return api.family("msj-resources")


def _file(tmp_path: Path, name: str, head: str, ra: str, rb: str) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(head + CLASSES.format(a="small", b="wide", ra=ra, rb=rb))
    return str(path)


def _parent(tmp_path: Path, servers: int, needs: tuple[int, int]) -> str:
    return _file(tmp_path, f"parent-{servers}-{needs[0]}-{needs[1]}", f"servers = {servers}\nload = 0.75\n",
                 f"need = {needs[0]}", f"need = {needs[1]}")


def _same(a: msjgym.Result, b: msjgym.Result) -> None:
    assert a.replications == b.replications and a.events == b.events
    assert a.metrics["response_time"].mean == b.metrics["response_time"].mean


def test_the_variant_is_registered_and_owns_only_its_files(variant, tmp_path):
    from variant_family.family import ResourceFamily
    from msjgym.systems.msj.family import MSJFamily

    assert isinstance(variant, ResourceFamily) and isinstance(variant, MSJFamily)
    assert variant.policies() is POLICIES  # the parent's policies, not copies
    mine = _file(tmp_path, "mine", 'system = "msj-resources"\nnodes = 4\nnode = { cores = 8 }\nload = 0.5\n',
                 "resources = { cores = 8 }", "resources = { cores = 32 }")
    assert api.family_of(mine) is variant
    assert api.family_of(_parent(tmp_path, 4, (1, 4))) is api.family("msj")
    assert api.family_of("one-and-n") is api.family("msj")


def test_a_single_resource_instance_is_the_parent_bit_for_bit(variant, tmp_path):
    """One resource, one unit per node: a job's nodes are its request, so the variant's scenario is the parent's
    system (10 servers, needs 1 and 4) and every policy, built-in, bound or the user's, gives the same numbers."""
    head = 'system = "msj-resources"\nnodes = 10\nnode = { cores = 1 }\nload = 0.75\n'
    mine = msjgym.load_scenario(_file(tmp_path, "one", head, "resources = { cores = 1 }", "resources = { cores = 4 }"))
    parent = msjgym.load_scenario(_parent(tmp_path, 10, (1, 4)))
    assert mine.family == "msj-resources" and mine.model == parent.model

    def first_that_fits(observation, action_mask):
        return int(action_mask.nonzero()[0][0])

    for policy in ("fcfs", "first-fit", POLICIES["smash"].bind(w=2), first_that_fits):
        got, want = msjgym.evaluate(mine, policy, **RUN), msjgym.evaluate(parent, policy, **RUN)
        assert got.family == "msj-resources" and want.family == "msj"
        _same(got, want)
    assert got.policy == "first_that_fits"


def test_the_binding_resource_sets_the_nodes(variant, tmp_path):
    """Two resources: memory binds for the wide class (⌈300/64⌉ = 5 nodes, cores only 2), cores for the small one
    (⌈20/16⌉ = 2 nodes): the variant runs the parent's system with needs (2, 5), not the cores-only needs (2, 2)."""
    head = 'system = "msj-resources"\nnodes = 10\nnode = { cores = 16, memory = 64 }\nload = 0.75\n'
    path = _file(tmp_path, "two", head, "resources = { cores = 20, memory = 8 }",
                 "resources = { cores = 32, memory = 300 }")
    mine = msjgym.load_scenario(path)
    assert list(mine.model.needs) == [2, 5]
    got = msjgym.evaluate(mine, "msf", **RUN)
    _same(got, msjgym.evaluate(_parent(tmp_path, 10, (2, 5)), "msf", **RUN))
    cores_only = msjgym.evaluate(_parent(tmp_path, 10, (2, 2)), "msf", **RUN)
    assert got.metrics["response_time"].mean != cores_only.metrics["response_time"].mean
    # an override is a key path of the variant's own file: a node with more memory halves the wide class's nodes
    roomier = msjgym.load_scenario(path, {"node.memory": 128})
    assert list(roomier.model.needs) == [2, 3]


@pytest.mark.parametrize("head, ra, message", [
    ("nodes = 4\nnode = { cores = 8 }\n", "resources = { cores = 40 }", "classes[0].resources: needs 5 nodes; the "
     "machine has nodes = 4"),
    ("nodes = 4\nnode = { cores = 8 }\n", "resources = { gpus = 1 }", "classes[0].resources.gpus: not a resource of "
     "the node; valid: cores"),
    ("nodes = 4\nnode = { cores = 0 }\n", "resources = { cores = 1 }", "node.cores = 0: must be a finite number > 0"),
    ("nodes = 4\nnode = { cores = 8 }\n", "need = 1", "classes[0].need: not a key of an msj-resources class"),
    ("servers = 4\nnodes = 4\nnode = { cores = 8 }\n", "resources = { cores = 1 }", "servers: not a key"),
])
def test_bad_input_is_one_line_naming_the_key(variant, tmp_path, head, ra, message):
    path = _file(tmp_path, "bad", 'system = "msj-resources"\n' + head + "load = 0.5\n", ra, "resources = { cores = 1 }")
    with pytest.raises(ScenarioError) as info:
        msjgym.load_scenario(path)
    text = str(info.value)
    assert "\n" not in text and message in text, text
