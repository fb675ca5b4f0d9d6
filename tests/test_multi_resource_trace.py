"""Multi-resource traces: an SWF log's requested memory and nodes as a (cores, memory) machine; CSV traces with a
column per resource; demand rows, classes, windows; every bad input a one-line error naming where."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msjgym.errors import MsjgymError
from msjgym.systems.msj.trace.files import TraceError, read_trace
from msjgym.systems.multi_resource.trace import ResourceTrace, demand_of, read_resource_trace

# 18 fields: id submit wait run alloc cpu used_mem req_procs req_time req_mem status user group exe queue part prec think
HEADER = "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 32\n; MaxMemory: 4194304\n"
JOBS = [
    "1 0 0 100 8 -1 1000 8 200 524288 1 1 1 1 1 1 -1 -1",      # 8 procs × 0.5 GB = 4 GB
    "2 10 0 50 16 -1 -1 16 60 1048576 1 1 1 1 1 1 -1 -1",      # 16 × 1 GB = 16 GB
    "3 20 0 30 1 -1 300000 1 -1 -1 1 1 1 1 1 1 -1 -1",         # field 10 unknown, used 300000 KB -> 1 GB (ceil)
    "4 30 0 40 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1",            # no memory at all
    "5 5 0 20 8 -1 -1 8 30 524288 1 1 1 1 1 1 -1 -1",          # out of order: arrives before job 2; same as job 1
    "6 40 0 -1 8 -1 -1 8 30 524288 0 1 1 1 1 1 -1 -1",         # unknown run time: skipped by the MSJ reader
]


def _swf(tmp_path: Path, jobs=JOBS, header=HEADER, name="m.swf") -> Path:
    path = tmp_path / name
    path.write_text(header + "\n".join(jobs) + "\n")
    return path


def test_swf_memory_and_nodes_make_a_two_resource_machine(tmp_path):
    trace = read_resource_trace(_swf(tmp_path), memory_per_node=64)
    assert isinstance(trace, ResourceTrace) and trace.resources == ("cores", "memory")
    assert trace.capacity == (32, 4 * 64)  # MaxProcs; MaxNodes × memory_per_node (8 cores per node)
    assert list(trace.ident) == [1, 5, 2, 3]  # arrival order; job 4 (no memory) and job 6 (run time -1) skipped
    assert trace.demand.dtype == np.int64 and trace.demand.tolist() == [[8, 4], [8, 4], [16, 16], [1, 1]]
    assert list(trace.arrival) == [0, 5, 10, 20] and list(trace.duration) == [100, 20, 50, 30]
    assert list(trace.estimate) == [200, 30, 60, 30]  # requested times (field 9), else the run time
    assert list(demand_of(trace, "memory")) == [4, 4, 16, 1]
    notes = "\n".join(trace.notes)
    assert "1 job(s) with unknown requested memory (field 10 = -1): their used memory (field 7)" in notes
    assert "skipped 1 job(s) with unknown requested and used memory" in notes
    assert "3 distinct demand vector(s) (job classes) among 4 jobs" in notes
    classes = trace.classes()
    assert classes.demand.tolist() == [[1, 1], [8, 4], [16, 16]] and classes.counts.tolist() == [1, 2, 1]
    assert classes.index.tolist() == [1, 1, 2, 0]
    demand, rates, sizes = trace.class_arrays()
    assert np.allclose(rates, np.array([1, 2, 1]) * (3 / 20) / 4) and np.allclose(sizes, [30, 60, 50])


def test_swf_memory_unit_mb_rounds_finer(tmp_path):
    trace = read_resource_trace(_swf(tmp_path), memory_per_node=64, memory_unit="MB")
    assert trace.capacity == (32, 4 * 64 * 1024)
    assert demand_of(trace, "memory").tolist() == [4096, 4096, 16384, 293]  # 300000 KB = 292.97 MB -> 293


@pytest.mark.parametrize("missing, ids, memory", [("skip", [1, 5, 2], [4, 4, 16]),
                                                  ("zero", [1, 5, 2, 3, 4], [4, 4, 16, 0, 0])])
def test_missing_memory_choices_are_counted(tmp_path, missing, ids, memory):
    trace = read_resource_trace(_swf(tmp_path), memory_per_node=64, missing_memory=missing)
    assert list(trace.ident) == ids and demand_of(trace, "memory").tolist() == memory
    notes = "\n".join(trace.notes)
    if missing == "skip":
        assert 'skipped 2 job(s) with unknown requested memory (field 10 = -1; missing_memory = "skip")' in notes
    else:
        assert 'memory demand 0 (missing_memory = "zero")' in notes and "2 job(s)" in notes


def test_missing_memory_error_names_the_line(tmp_path):
    with pytest.raises(TraceError, match=r'm\.swf line 7: requested memory \(field 10\) = -1 \(unknown\) and '
                                         r'missing_memory = "error"'):
        read_resource_trace(_swf(tmp_path), memory_per_node=64, missing_memory="error")


def test_a_log_without_memory_is_an_error_naming_the_fix(tmp_path):
    jobs = [" ".join(j.split()[:6] + ["-1"] + j.split()[7:9] + ["-1"] + j.split()[10:]) for j in JOBS[:4]]
    with pytest.raises(TraceError, match=r"no job has a known memory .*\(system = \"msj\"\), or give "
                                         r"missing_memory = \"zero\""):
        read_resource_trace(_swf(tmp_path, jobs), memory_per_node=64)
    assert read_resource_trace(_swf(tmp_path, jobs), memory_per_node=64, missing_memory="zero").demand[:, 1].max() == 0


def test_swf_reading_is_the_msj_readers(tmp_path):
    """The cores, times, ids and notes are those of the multiserver-job reader of the same file (one reader)."""
    path = _swf(tmp_path)
    trace = read_resource_trace(path, memory_per_node=64, missing_memory="zero")
    msj = read_trace(path)
    assert np.array_equal(trace.need, msj.need) and np.array_equal(trace.arrival, msj.arrival)
    assert np.array_equal(trace.ident, msj.ident) and np.array_equal(trace.estimate, msj.estimate)
    assert set(msj.notes) <= set(trace.notes) and msj.columns is None and msj.nodes == 4


def test_cores_per_node(tmp_path):
    no_nodes = "; MaxProcs: 32\n"
    with pytest.raises(TraceError, match=r"cores_per_node: the header has no MaxNodes"):
        read_resource_trace(_swf(tmp_path, header=no_nodes), memory_per_node=64)
    trace = read_resource_trace(_swf(tmp_path, header=no_nodes), memory_per_node=64, cores_per_node=16)
    assert trace.capacity == (32, 2 * 64)
    with pytest.raises(TraceError, match=r"cores_per_node = 16: the header's MaxNodes 4 × 16 ≠ the machine's 32"):
        read_resource_trace(_swf(tmp_path), memory_per_node=64, cores_per_node=16)
    with pytest.raises(TraceError, match=r"cores_per_node = 5: the machine's 32 processors are not a whole number"):
        read_resource_trace(_swf(tmp_path, header=no_nodes), memory_per_node=64, cores_per_node=5)
    nodes_only = "; MaxNodes: 4\n"  # MaxProcs = MaxNodes × cores_per_node (the MSJ reader's rule)
    trace = read_resource_trace(_swf(tmp_path, header=nodes_only), memory_per_node=64, cores_per_node=8)
    assert trace.capacity == (32, 256)
    with pytest.raises(TraceError, match=r"not a whole number of the header's MaxNodes 3"):
        read_resource_trace(_swf(tmp_path, header="; MaxNodes: 3\n; MaxProcs: 32\n"), memory_per_node=64)


def test_swf_needs_memory_per_node_and_a_fitting_machine(tmp_path):
    with pytest.raises(TraceError, match=r"memory_per_node: give the memory of one node, in GB .* MaxMemory header"):
        read_resource_trace(_swf(tmp_path))
    with pytest.raises(TraceError, match=r"job 2 \(field 1\) requests 16 GB of memory \(16 processors × 1,048,576 "
                                         r"KB\), more than the machine's 12 GB \(4 nodes × memory_per_node 3 GB\)"):
        read_resource_trace(_swf(tmp_path), memory_per_node=3)
    with pytest.raises(TraceError, match=r"memory_per_node = 0: must be an integer in \[1, "):
        read_resource_trace(_swf(tmp_path), memory_per_node=0)
    with pytest.raises(TraceError, match=r"memory_unit = 'KB': must be one of 'GB', 'MB'"):
        read_resource_trace(_swf(tmp_path), memory_per_node=8, memory_unit="KB")
    with pytest.raises(TraceError, match=r"missing_memory = 'guess': must be one of"):
        read_resource_trace(_swf(tmp_path), memory_per_node=8, missing_memory="guess")
    with pytest.raises(TraceError, match=r"capacity: not with an SWF trace"):
        read_resource_trace(_swf(tmp_path), memory_per_node=8, capacity={"cores": 4})


def test_malformed_memory_field_names_the_line_or_is_skipped(tmp_path):
    jobs = JOBS[:2] + ["7 50 0 10 2 -1 -1 2 20 lots 1 1 1 1 1 1 -1 -1"]
    with pytest.raises(TraceError, match=r"m\.swf line 7: requested memory \(field 10\) = 'lots'"):
        read_resource_trace(_swf(tmp_path, jobs), memory_per_node=64)
    trace = read_resource_trace(_swf(tmp_path, jobs), memory_per_node=64, skip_bad_lines=True)
    assert trace.skipped_malformed == 1 and list(trace.ident) == [1, 2]


def test_window_slices_every_per_job_column(tmp_path):
    trace = read_resource_trace(_swf(tmp_path), memory_per_node=64)
    part = trace.window(1, 2)
    assert isinstance(part, ResourceTrace) and part.capacity == trace.capacity
    assert part.demand.tolist() == [[8, 4], [16, 16]] and list(part.arrival) == [0, 5]
    assert list(part.ident) == [5, 2] and part.columns.shape == (2, 2)
    two = read_resource_trace(_swf(tmp_path), memory_per_node=64).window(0, 2)  # n == R: capacity kept whole
    assert two.capacity == (32, 256)


CSV_HEADER = "submit,runtime,requested_time,cores,gpus,memory\n"
CAPACITY = {"cores": 64, "gpus": 8, "memory": 512}


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.csv"
    path.write_text(text)
    return path


def test_csv_with_a_column_per_resource(tmp_path):
    path = _csv(tmp_path, CSV_HEADER + "0,10,20,8,4,128\n1,5,,16,0,64\n\n2.5,3,-1,8,4,128\n")
    trace = read_resource_trace(path, capacity=CAPACITY)
    assert trace.resources == ("cores", "gpus", "memory") and trace.capacity == (64, 8, 512)
    assert trace.demand.tolist() == [[8, 4, 128], [16, 0, 64], [8, 4, 128]]
    assert list(trace.estimate) == [20, 5, 3] and list(trace.ident) == [1, 2, 3]
    assert trace.classes().counts.tolist() == [2, 1]  # (8, 4, 128) sorts before (16, 0, 64)
    # the capacity's order is the resources' order; a resource without a column is demanded by no job
    trace = read_resource_trace(path, capacity={"memory": 1024, "gpus": 8, "cores": 64, "ssd": 10})
    assert trace.resources == ("memory", "gpus", "cores", "ssd") and trace.demand[0].tolist() == [128, 4, 8, 0]
    assert any("no column for ssd: every job demands 0 of it" in n for n in trace.notes)
    # columns in any order, with ids
    path = _csv(tmp_path, "memory,id,cores,runtime,submit\n4,17,1,2,0\n8,9,2,1,3\n")
    trace = read_resource_trace(path, capacity={"cores": 4, "memory": 16})
    assert list(trace.ident) == [17, 9] and trace.demand.tolist() == [[1, 4], [2, 8]]


@pytest.mark.parametrize("text, message", [
    ("submit,runtime\n0,1\n", r"line 1: the header has no resource column \(the machine's resources: cores, gpus, "
                              r"memory\)"),
    ("submit,cores\n0,1\n", r"line 1: the header has no 'runtime' column"),
    ("submit,runtime,cores,user\n0,1,2,7\n", r"line 1: column 4 'user' is neither submit, runtime, requested_time, id "
                                             r"nor a resource of the machine \(cores, gpus, memory\)"),
    ("submit,runtime,cores,cores\n0,1,2,2\n", r"line 1: column 4 'cores' is given twice"),
    ("submit,runtime,2cores\n", r"line 1: column 3 '2cores': a column name must be a word"),
    ("", r"line 1: the header is empty"),
    (CSV_HEADER + "0,10,20,8,4,128\n1,5,,16,9,64\n", r"r\.csv line 3: gpus = 9: more than the machine's capacity 8"),
    (CSV_HEADER + "0,10,20,8,1.5,128\n", r"r\.csv line 2: gpus = 1\.5: must be an integer"),
    (CSV_HEADER + "0,10,20,8,-1,128\n", r"r\.csv line 2: gpus = -1: must be an integer in \[0, "),
    (CSV_HEADER + "0,10,20,8,x,128\n", r"r\.csv line 2: gpus = 'x'"),
    (CSV_HEADER + "0,10,20,8,4\n", r"r\.csv line 2: expected 6 fields \(submit,runtime,requested_time,cores,gpus,"
                                   r"memory\), got 5"),
    (CSV_HEADER + "0,0,20,8,4,1\n", r"r\.csv line 2: runtime = 0: must be"),
    (CSV_HEADER + "-1,1,20,8,4,1\n", r"r\.csv line 2: submit = -1: must be"),
    (CSV_HEADER + "0,1,20,0,0,0\n", r"r\.csv line 2: the job demands nothing \(cores, gpus, memory all 0\)"),
])
def test_bad_csv_is_an_error_naming_the_line_and_column(tmp_path, text, message):
    with pytest.raises(TraceError, match=message):
        read_resource_trace(_csv(tmp_path, text), capacity=CAPACITY)


def test_bad_csv_lines_can_be_skipped_and_counted(tmp_path):
    path = _csv(tmp_path, CSV_HEADER + "0,10,20,8,4,128\n1,5,,16,9,64\n2,5,,x,1,1\n3,1,1,1,1,1\n")
    trace = read_resource_trace(path, capacity=CAPACITY, skip_bad_lines=True)
    assert trace.skipped_malformed == 2 and list(trace.ident) == [1, 2]


def test_csv_capacity_is_checked(tmp_path):
    path = _csv(tmp_path, CSV_HEADER + "0,10,20,8,4,128\n")
    with pytest.raises(TraceError, match=r"a CSV trace does not say the machine's capacity; give it per resource"):
        read_resource_trace(path)
    with pytest.raises(TraceError, match=r"capacity\.gpus = 0: must be an integer in \[1, "):
        read_resource_trace(path, capacity={"cores": 64, "gpus": 0, "memory": 512})
    with pytest.raises(TraceError, match=r"resource name 'submit': must be a word .* other than submit"):
        read_resource_trace(path, capacity={"submit": 3})
    with pytest.raises(TraceError, match=r"memory_per_node: only for an SWF trace"):
        read_resource_trace(path, capacity=CAPACITY, memory_per_node=4)
    with pytest.raises(TraceError, match=r"unknown format '\.txt'"):
        read_resource_trace(_csv(tmp_path, "").rename(tmp_path / "r.txt"), capacity=CAPACITY)


def test_a_multi_resource_trace_is_not_rescaled(tmp_path):
    from msjgym.errors import MsjgymError
    trace = read_resource_trace(_csv(tmp_path, CSV_HEADER + "0,10,20,8,4,128\n"), capacity=CAPACITY)
    with pytest.raises(MsjgymError, match="not rescaled"):
        trace.scaled(16)


def test_an_swf_scenario_file_is_a_two_resource_replay(tmp_path):
    import msjgym

    _swf(tmp_path)
    scenario = tmp_path / "s.toml"
    scenario.write_text('system = "multi-resource"\narrivals = { trace = "m.swf", memory_per_node = 64 }\n')
    model = msjgym.load_scenario(str(scenario)).model
    assert model.resources == ("cores", "memory") and model.capacity == (32, 256) and model.nodes == 1
    assert [c.name for c in model.classes] == ["cores1-memory1", "cores8-memory4", "cores16-memory16"]
    assert model.trace_classes().tolist() == [1, 1, 2, 0]  # each job's class is its demand vector's
    assert model.probabilities.tolist() == [0.25, 0.5, 0.25]
    result = msjgym.evaluate(str(scenario), "first-fit", references=False)
    assert result.metrics["utilization_memory"].mean == pytest.approx(
        (4 * 100 + 4 * 20 + 16 * 50 + 1 * 30) / 256 / result.metrics["makespan"].mean, rel=1e-12)
    scenario.write_text('system = "multi-resource"\narrivals = { trace = "m.swf", memory_per_node = 64, '
                        'time_scale = 2 }\n')
    with pytest.raises(MsjgymError, match=r"arrivals\.time_scale: unknown key; valid: trace, skip_bad_lines"):
        msjgym.load_scenario(str(scenario))
