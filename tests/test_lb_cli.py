"""Dispatch scenarios from the outside: lb-* built-ins, msjgym list / evaluate / theory, clear errors, lb-tables."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from msjgym import cli
from msjgym.api import list_scenarios, load_scenario
from msjgym.core.overrides import parse_override
from msjgym.reproduce.common import Settings
from msjgym.reproduce.lb_tables import plan
from msjgym.systems.dispatch import cavity as cv
from msjgym.systems.dispatch.paper_tables import rows_for, settings


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


BAD = [  # (command line, words the one error line must contain)
    (["evaluate", "lb-push-table1", "--policy", "push", "--param", "lam=1.0"], ["lam = 1.0", "(0, 1)", "unstable"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--param", "lam=1.5"], ["lam = 1.5", "(0, 1)"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--param", "delta=0"], ["delta = 0", "> 0"]),
    (["evaluate", "lb-pull-table3", "--policy", "pull", "--param", "delta=-0.2"], ["delta = -0.2", "> 0"]),
    (["evaluate", "lb-water-filling-table2", "--policy", "water-filling", "--param", "batch_size=41"],
     ["K = (delta/lam)·batch_size", "41", "must be an integer"]),
    (["evaluate", "lb-water-filling-table2", "--policy", "water-filling", "--param", "servers=50"],
     ["M = C·log10(N)", "must be an integer"]),
    (["evaluate", "lb-push-table1", "--policy", "water-filling", "--param", "C=20"], ["K = (delta/lam)",
                                                                                    "must be an integer"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--param", "dist=weibull(2)"],
     ["dist = 'weibull(2)'", "unknown distribution", "erlang(k)"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--param", "dist=erlang(k=0)"], ["dist.k = 0", "must be an integer in [1, 1,000]"]),
    (["evaluate", "lb-pooling-table4", "--policy", "resource-pooling", "--param", "p=1"], ["p = 1", "[0, 1)"]),
    (["evaluate", "lb-dispatch", "--policy", "push"], ["delta: missing", "--param delta="]),
    (["evaluate", "lb-dispatch", "--policy", "jsq-d", "--param", "d=101"], ["d = 101", "[1, 100]"]),
    (["evaluate", "lb-push-table1", "--policy", "fcfs"], ["not a dispatch policy", "jsq-d"]),
    (["evaluate", "lb-push-table1", "--policy", "no/such/file.py:Agent"], ["no/such/file.py"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--jobs", "0", "--warmup", "100"], ["--jobs", ">= 1"]),
    (["evaluate", "lb-push-table1", "--policy", "push", "--saturated"], ["--saturated", "not for dispatch"]),
    (["sweep", "lb-push-table1", "--grid", "lam=0.5,0.6", "--policy", "fcfs", "--out", "unused"],
     ["not a policy of the dispatch family", "jsq-d"]),
    (["theory", "lb-pull-table3", "--param", "lam=1"], ["lam = 1", "(0, 1)"]),
    (["theory", "lb-dispatch"], ["give --policy"]),
    (["reproduce", "lb-tables", "--servers", "50"], ["--servers 50", "M = C·log10(N)"]),
    (["reproduce", "zero-queueing", "--servers", "100"], ["--servers", "only for"]),
]


@pytest.mark.parametrize("args,words", BAD)
def test_bad_input_is_one_error_line_and_status_2(capsys, args, words):
    status, out, err = run(capsys, *args)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith("msjgym: error: ")
    for word in words:
        assert word in lines[0], lines[0]


def test_ray_backend_without_ray_is_a_clear_error(capsys):
    try:
        import ray  # noqa: F401
        pytest.skip("Ray is installed")
    except ImportError:
        pass
    status, _, err = run(capsys, "reproduce", "lb-tables", "--backend", "ray", "--reps", "1", "--arrivals", "100")
    assert status == 2 and "Ray is not installed" in err and len(err.strip().splitlines()) == 1


def test_list_shows_the_dispatch_scenarios_and_policies(capsys):
    status, out, _ = run(capsys, "list")
    assert status == 0
    for name in ("lb-push-table1", "lb-water-filling-table2", "lb-pull-table3", "lb-pooling-table4", "lb-dispatch"):
        assert f"  {name} " in out
    assert "dispatch:" in out and "resource-pooling" in out
    assert {n for n, _ in list_scenarios()} >= {"lb-push-table1", "lb-dispatch"}


def test_law_calls_are_bare_words():
    assert parse_override("dist=hyperexp(f=1/2, scv=15)") == ("dist", "hyperexp(f=1/2, scv=15)")
    assert parse_override("dist=erlang(k=6)") == ("dist", "erlang(k=6)")


@pytest.mark.parametrize("name,table", [("lb-push-table1", 1), ("lb-water-filling-table2", 2),
                                        ("lb-pull-table3", 3), ("lb-pooling-table4", 4)])
def test_defaults_come_from_the_row_of_the_given_law(name, table):
    first = settings(table)[0]
    default = load_scenario(name).params
    assert default["servers"] == 100 and default["dist"] == first.dist and default["lam"] == first.lam
    for row in settings(table):
        # the law written differently from the table's spelling still finds its row
        spelled = row.dist.replace("k=", "").replace("f=1/2, ", "")
        params = load_scenario(name, {"dist": spelled, "servers": 1000}).params
        key = "p" if table == 4 else "delta"
        assert params["lam"] == row.lam and params[key] == row.param
        if table == 2:
            assert params["batch_size"] == row.batch_scale * 3      # M = C·log10(1000)
        setting = load_scenario(name, {"dist": spelled, "servers": 1000}).model
        assert setting.paper_row(row.policy) == rows_for(table, row.dist, 1000)[0]
    # an explicit parameter wins over the row, and the run then matches no printed row
    other = load_scenario(name, {"dist": first.dist, "lam": 0.5})
    assert other.params["lam"] == 0.5 and other.model.paper_row(first.policy) is None


def test_evaluate_push_table1_json(capsys):
    status, out, _ = run(capsys, "evaluate", "lb-push-table1", "--policy", "push", "--reps", "3", "--jobs", "50000",
                         "--seed", "3", "--json")
    assert status == 0
    result = json.loads(out)
    metrics = result["metrics"]
    for name in ("response_time", "mean_queue_length", "utilization", "message_rate", "little_response_time"):
        assert name in metrics
    levels = [v["mean"] for k, v in metrics.items() if k.startswith("P(Q=")]
    assert abs(sum(levels) - 1.0) < 1e-3
    assert result["reps"] == 3 and result["jobs"] == 50_000 and result["warmup"] == 5_556  # measured, then 1/9 on top
    refs = {(r["kind"], r["quantity"], r["description"][:6]): r for r in result["references"]}
    cavity = cv.cavity("push", 0.9, "exp", delta=0.3)
    assert refs[("exact", "response_time", "cavity")]["value"] == pytest.approx(cavity.mean_response_time, 1e-12)
    assert refs[("exact", "max_queue_length", "cavity")]["value"] == cavity.max_queue_length
    paper = rows_for(1, "exp", 100)[0]
    assert refs[("paper-sim", "response_time", "the pa")]["value"] == paper.sim
    # the invariants hold in the simulation: busy fraction = λ, message rate = δ
    checks = {c["name"]: c for c in result["checks"]["invariants"]}  # busy fraction = λ: a run-time check
    assert checks["utilization"]["agrees"] is True and checks["utilization"]["expected"] == pytest.approx(0.9)
    assert refs[("exact", "message_rate", "messag")]["agrees"] is True


def test_evaluate_any_policy_on_a_table_scenario_and_det_sizes(capsys):
    status, out, _ = run(capsys, "evaluate", "lb-pull-table3", "--policy", "jsq-d", "--param", "d=3", "--param",
                         "dist=det", "--reps", "2", "--jobs", "20000", "--seed", "1")
    assert status == 0
    assert "policy    jsq-d" in out and "utilization" in out and "P(Q=0)" in out


def test_random_routing_is_mg1_at_any_n(capsys):
    status, out, _ = run(capsys, "evaluate", "lb-dispatch", "--policy", "random", "--param", "lam=0.5", "--param",
                         "dist=hyperexp(scv=4)", "--param", "servers=20", "--reps", "6", "--jobs", "300000",
                         "--seed", "2", "--json")
    assert status == 0
    ref = next(r for r in json.loads(out)["references"] if r["quantity"] == "response_time")
    assert ref["value"] == pytest.approx(1.0 + 0.5 * (4 + 1) / 2 / (1 - 0.5))   # E[S] + λE[S²]/(2(1 − ρ))
    assert ref["agrees"] is True, ref


def test_theory_deterministic_push_attains_thm47_lower_bound(capsys):
    status, out, _ = run(capsys, "theory", "lb-push-table1", "--param", "dist=det", "--json")
    assert status == 0
    refs = json.loads(out)["references"]
    assert not any(r["description"].startswith("cavity") for r in refs)      # not phase-type: closed forms only
    exact = next(r for r in refs if r["quantity"] == "max_queue_length" and r["kind"] == "exact")
    bound = next(r for r in refs if r["quantity"] == "max_queue_length" and r["kind"] == "bound")
    assert exact["value"] == bound["lower"] and bound["lower"] <= bound["upper"]   # HKV Thm 4.7: det is extremal


def test_theory_pooling_closed_forms_agree_with_the_cavity(capsys):
    status, out, _ = run(capsys, "theory", "lb-pooling-table4", "--json")
    assert status == 0
    refs = json.loads(out)["references"]
    maxima = [r for r in refs if r["quantity"] == "max_queue_length"]
    cavity_max = next(r["value"] for r in maxima if r["description"].startswith("cavity"))
    closed = next(r["value"] for r in maxima if r["description"].startswith("exponential"))
    lower = next(r["lower"] for r in maxima if r["kind"] == "bound")
    assert cavity_max == closed and lower <= cavity_max
    paper = next(r for r in refs if r["kind"] == "paper-cavity")
    assert "same to 4 dp" in paper["verdict"]


def test_theory_text_lists_labelled_references(capsys):
    status, out, _ = run(capsys, "theory", "lb-water-filling-table2", "--param", "dist=erlang(k=3)")
    assert status == 0
    for word in ("Thm 4.7", "Thm 4.9", "HKV Table 2", "paper-cavity", "condition", "bound", "exact"):
        assert word in out


def test_reproduce_lb_tables_quick(capsys, tmp_path: Path):
    status, out, err = run(capsys, "reproduce", "lb-tables", "--servers", "100", "--reps", "2", "--arrivals", "5000",
                           "--workers", "1", "--out", str(tmp_path), "--no-progress")
    assert status == 0 and "estimated compiled-loop time" in err
    rows = list(csv.DictReader((tmp_path / "lb-tables.csv").open()))
    assert len(rows) == 16
    for row, paper in zip(rows, settings()):
        assert (int(row["table"]), row["distribution"], int(row["servers"])) == (paper.table, paper.label, 100)
        assert float(row["paper_sim"]) == paper.sim and float(row["paper_ci95"]) == paper.ci
        assert f"{float(row['cavity']):.4f}" == f"{paper.cavity:.4f}"
        assert int(row["reps"]) == 2 and int(row["arrivals"]) == 5000 and math.isfinite(float(row["sim"]))
        assert "protocol differs" in row["verdict"]
    md = (tmp_path / "lb-tables.md").read_text().splitlines()
    assert len(md) == 2 + 16 and md[0].startswith("| table |")


def test_lb_tables_task_seeds_depend_on_the_task_only(tmp_path: Path):
    small = plan(Settings(out=tmp_path, reps=2, options={"servers": (100,)}))
    large = plan(Settings(out=tmp_path, reps=3, options={"servers": (1000, 100)}))
    seeds = {(t.point["table"], t.point["dist"], t.point["servers"], t.rep): t.task_seed for t in large}
    assert all(seeds[(t.point["table"], t.point["dist"], t.point["servers"], t.rep)] == t.task_seed for t in small)
    assert len(set(seeds.values())) == len(seeds)


def test_lb_tables_pool_and_in_process_give_identical_numbers(capsys, tmp_path: Path):
    def sims(workers: str) -> list[str]:
        out = tmp_path / workers
        status, _, _ = run(capsys, "reproduce", "lb-tables", "--servers", "100", "--reps", "2", "--arrivals", "3000",
                           "--workers", workers, "--out", str(out), "--no-progress", "--seed", "7")
        assert status == 0
        return [(r["sim"], r["ci95"]) for r in csv.DictReader((out / "lb-tables.csv").open())]

    assert sims("1") == sims("2")


def test_a_dispatcher_of_your_own_through_the_cli_is_the_builtin_bit_for_bit(capsys, tmp_path: Path):
    """--policy FILE.py:NAME on a dispatch scenario decides through msjgym/Dispatch-v0's observation: jsq-d's agent
    form (observation "sampled") gives the built-in jsq-d's numbers exactly, on the same seed and run length, and
    the scorecard keeps only what holds for any dispatcher (no cavity values)."""
    agent = tmp_path / "agent.py"
    agent.write_text("from msjgym.policies.dispatch.jsq_d import ShortestSampled\n")
    common = ["lb-push-table1", "--param", "servers=20", "--param", "d=3", "--reps", "3", "--jobs", "4000",
              "--seed", "5", "--json"]
    status, out, err = run(capsys, "evaluate", *common, "--policy", f"{agent}:ShortestSampled",
                           "--observation", "sampled")
    assert status == 0, err
    mine = json.loads(out)
    status, out, err = run(capsys, "evaluate", *common, "--policy", "jsq-d")
    assert status == 0, err
    builtin = json.loads(out)
    assert mine["metrics"] == builtin["metrics"] and mine["events"] == builtin["events"]
    assert mine["policy"].endswith(":ShortestSampled")
    assert {r["quantity"] for r in mine["references"]} == {"stability", "message_rate"}
    assert {c["name"] for c in mine["checks"]["invariants"]} == {"utilization", "response>=service", "little"}
    rate = next(r for r in mine["references"] if r["quantity"] == "message_rate")
    assert rate["value"] == pytest.approx(3 * 0.9) and rate["agrees"]


def test_a_bound_declaration_is_the_run_of_the_same_param():
    """``policy_spec("dispatch", "jsq-d").bind(d=3)`` through ``msjgym.evaluate`` is the run of ``--param d=3``: the
    same replications; the default d = 2 gives others (the control); a value out of range is refused by ``bind``."""
    import msjgym
    from msjgym.api import family, policy_spec
    from msjgym.errors import PolicyError

    jsq_d = policy_spec(family("dispatch"), "jsq-d")
    run = {"reps": 2, "jobs": 4000, "seed": 3, "references": False}
    bound = msjgym.evaluate("lb-dispatch", jsq_d.bind(d=3), **run)
    param = msjgym.evaluate(load_scenario("lb-dispatch", {"d": 3}), "jsq-d", **run)
    default = msjgym.evaluate("lb-dispatch", jsq_d, **run)
    assert bound.replications == param.replications and bound.policy == "jsq-d(d=3)"
    assert bound.metrics["message_rate"].mean == pytest.approx(3 * 0.9, rel=0.05)
    assert default.replications != bound.replications and default.policy == "jsq-d"
    with pytest.raises(PolicyError, match="d = 0"):
        jsq_d.bind(d=0)


def test_pull_bound_to_its_idle_rate_is_the_scenario_with_delta0():
    """pull's idle-server rate delta0 (instead of the overall rate delta) as a bound value, as a scenario key, and
    the scorecard's theory (cavity queue, Thm 6.4) computed from it rather than from the table's delta."""
    import msjgym
    from msjgym.api import family, policy_spec

    pull = policy_spec(family("dispatch"), "pull").bind(delta0=3.0, delta1=0.0)
    run = {"reps": 2, "jobs": 4000, "seed": 4}
    table = load_scenario("lb-pull-table3", {})
    lam = table.model.lam
    bound = msjgym.evaluate(table, pull, **run)
    param = msjgym.evaluate(load_scenario("lb-pull-table3", {"delta0": 3.0}), "pull", **run)
    assert bound.replications == param.replications
    assert bound.metrics["message_rate"].mean == pytest.approx((1 - lam) * 3.0, rel=0.1)  # idle servers' updates
    cavity = next(r for r in param.references if r.kind == "exact" and r.quantity == "response_time")
    assert cavity.value == pytest.approx(cv.cavity("pull", lam, "exp", delta0=3.0, delta1=0.0).mean_response_time)
    assert not any(r.kind == "paper-sim" for r in param.references)  # the table row has delta, not this delta0


def test_warmup_counts_the_arrivals_not_measured():
    """``jobs`` counts the measured arrivals, the warm-up on top (as in every family); the default warm-up is one
    ninth of them, 10 % of the replication's arrivals: ``jobs=2700`` is the protocol's 3,000 arrivals, 300 of them
    warm-up, the same run as ``jobs=2700, warmup=300``."""
    import msjgym

    short = msjgym.evaluate("lb-dispatch", "jsq", reps=1, jobs=3000, warmup=1000, seed=2, references=False)
    default = msjgym.evaluate("lb-dispatch", "jsq", reps=1, jobs=2700, seed=2, references=False)
    given = msjgym.evaluate("lb-dispatch", "jsq", reps=1, jobs=2700, warmup=300, seed=2, references=False)
    assert (short.warmup, short.jobs) == (1000, 3000) and (default.warmup, default.jobs) == (300, 2700)
    assert default.replications == given.replications and default.events == given.events
