"""Policies own their state: the MSJ state record names no policy, a policy's declared areas are sized from the model
and kept when the job storage grows, and the record's type (the event loop's signature) does not depend on them."""
from __future__ import annotations

import re
from pathlib import Path

import numba
import numpy as np

from msjgym.core import rng
from msjgym.core.policy_registry import registered
from msjgym.systems.msj import backfilling
from msjgym.systems.msj import state as msj
from msjgym.systems.msj.contract import NO_STATE, OwnState, Policy, Sizes, record_types, sizes_of
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig

STATE_PY = Path(msj.__file__)


def test_the_state_module_names_no_policy():
    """No built-in policy's name (``server-filling`` or ``server_filling``, ...) nor a word that names a kind of them
    (backfilling, filling, splitting) in state.py's code or comments, links to the docs aside: what a policy keeps
    is declared in its own file."""
    text = STATE_PY.read_text().lower()
    words = {"backfilling", "filling", "splitting"}
    for name in registered("msj"):
        words |= {name, name.replace("-", "_")}
    found = sorted(w for w in words if re.search(rf"(?<![#\w-]){re.escape(w)}(?![\w-])", text))
    assert found == [], f"state.py names policies: {found}"


def _simulation(policy_name: str, scenario: str = "one-and-n", capacity: int = 4) -> MSJSimulation:
    from msjgym.api import load_scenario as load

    model = load(scenario).model
    return MSJSimulation(model, registered("msj")[policy_name], RunConfig(jobs=100, warmup=0, batches=1),
                         rng.spawn_states(3, 2)[0], capacity=capacity)


def test_areas_are_sized_from_the_declaration_and_the_record_type_does_not_change():
    """Each built-in gets the areas its ``state`` declares for the model (nothing for a policy without one), and
    the record's numba type is the same for all of them: the loop is compiled once whatever a policy keeps."""
    record = record_types()[0]
    for name, policy in registered("msj").items():
        try:
            sim = _simulation(name)
        except Exception:  # noqa: BLE001 (a policy that does not run on this scenario)
            continue
        area = policy.state.area(sizes_of(sim.model, 4))
        st = sim.state
        assert st.own_i.shape == (2, area.ints) and st.own_f.shape == (2, area.floats), name
        assert st.job_i.shape[2] == msj.NJI + area.job_ints and st.job_f.shape[2] == msj.NJF + area.job_floats, name
        assert numba.typeof(st) == record, name


def test_growing_keeps_the_policy_entries_and_resizes_its_areas():
    """Doubling the job storage sizes the areas again for the new capacity (backfilling's profile grows with it),
    keeps their first entries and every job's own entries."""
    sim = _simulation("priority", capacity=4)
    st = sim.state
    st.own_i[:, :6] = np.arange(6)
    st.own_f[:, :4] = 1.5
    st.job_i[:, :, msj.NJI] = 7
    st.job_f[:, :, msj.NJF:] = 2.5
    sim.grow()
    grown = sim.state
    want = backfilling.STATE.area(sizes_of(sim.model, 8))
    assert grown.own_i.shape[1] == want.ints > st.own_i.shape[1]
    assert grown.own_f.shape[1] == want.floats > st.own_f.shape[1]
    assert (grown.own_i[:, :6] == np.arange(6)).all() and (grown.own_f[:, :4] == 1.5).all()
    assert (grown.job_i[:, :4, msj.NJI] == 7).all() and (grown.job_f[:, :4, msj.NJF:] == 2.5).all()


def test_a_new_job_starts_with_minus_one_and_infinity_in_the_policy_entries():
    """The loop sets a new job's own entries (whatever its slot held before) to -1 and +inf, before any hook: here
    a declaration with per-job state and no kernel."""
    from msjgym.api import load_scenario as load

    keeper = Policy(name="keeper", summary="", preemptive=False, source="", state=OwnState(job_ints=2, job_floats=1))
    sim = MSJSimulation(load("one-and-n").model, keeper, RunConfig(jobs=100, warmup=0, batches=1),
                        rng.spawn_states(3, 1)[0], capacity=4)
    sim.state.job_i[:, :, msj.NJI:] = 5
    sim.state.job_f[:, :, msj.NJF:] = 5.0
    j = sim.arrive(0, 1.0)
    assert list(sim.state.job_i[0, j, msj.NJI:]) == [-1, -1]
    assert list(sim.state.job_f[0, j, msj.NJF:]) == [np.inf]
    assert sim.state.job_i[0, j, msj.J_CLS] == 0  # the system's own fields are before them, untouched


def test_a_declaration_without_state_has_no_areas():
    assert NO_STATE.area(Sizes(2, 2, 8, 16)) == msj.OwnArea(0, 0, 0, 0)
    assert OwnState(job_ints=2).area(Sizes(2, 2, 8, 16)) == msj.OwnArea(0, 0, 2, 0)
