"""Debug mode's invariant checks: compiled only for a debug run (a plain run's loop does not contain them), and, in a
debug run, called by the event loop after every event, so a corrupted state stops the run with one error naming the
invariant (MSJ's record, and the multi-resource record whose resource vectors are checked too)."""
from __future__ import annotations

from pathlib import Path

import pytest

import msjgym
from msjgym import api
from msjgym.core import rng
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import P_DEBUG, S_BUSY
from msjgym.systems.multi_resource.simulation import MultiResourceSimulation
from conftest import exp_class, model


def _msj(debug: bool) -> MSJSimulation:
    m = model(4, 1.0, exp_class("1", 1, 0.5), exp_class("2", 2, 0.5))
    return MSJSimulation(m, POLICIES["fcfs"], RunConfig(jobs=200, warmup=0, batches=1, debug=debug),
                         rng.spawn_states(3, 1)[0])


def test_a_plain_run_compiles_no_checks_and_its_loop_calls_none():
    sim = _msj(debug=False)
    assert [u.label for u in sim.units if "checks" in u.kind] == []
    sim.prepare()
    assert sim.params.ints[P_DEBUG] == 0


def test_a_debug_run_checks_after_every_event_and_names_the_broken_invariant():
    sim = _msj(debug=True)
    assert [u.label for u in sim.units if "checks" in u.kind] == ["the invariant checks"]
    sim.prepare()
    assert sim.params.ints[P_DEBUG] != 0
    sim.advance(0, 20)  # a consistent run passes the checks
    sim.state.sys_i[0, S_BUSY] = 99  # more busy servers than the system has
    with pytest.raises(AssertionError, match="invariant violated after event 21: a server is over-allocated"):
        sim.advance(0, 1)


def test_a_debug_run_of_the_multi_resource_record_checks_its_resource_vectors(tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text('system = "multi-resource"\nresources = { cores = 4, gpus = 2 }\narrival_rate = 1.0\n'
                    '[[classes]]\nname = "a"\ndemand = { cores = 1 }\nprobability = 1.0\n'
                    'service = { dist = "exp", rate = 1.0 }\n')
    scenario = msjgym.load_scenario(str(path))
    spec = api.family("multi-resource").policies()["fcfs"]
    sim = MultiResourceSimulation(scenario.model, spec, RunConfig(jobs=200, warmup=0, batches=1, debug=True),
                                  rng.spawn_states(1, 1)[0])
    sim.advance(0, 20)
    sim.state.res_used[0, 0, 1] = 3  # a node holding 3 of its 2 gpus
    with pytest.raises(AssertionError, match="invariant violated after event 21: a node holds more than its capacity"):
        sim.advance(0, 1)
