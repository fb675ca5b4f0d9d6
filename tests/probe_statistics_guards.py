"""Reruns the hostile probe's examples, second part (replay clock, scorecard resolution, relaxation, load 1,
one measurement unit, user code, messages, Gymnasium conventions); each prints one line: a correct or flagged result, or a clear one-line error.

    PYTHONPATH=$PWD python tests/probe_statistics_guards.py
"""
from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np

from msjgym.api import load_scenario
from msjgym.cli import main
from msjgym.core.estimates import Estimate
from msjgym.core.references import Reference, judge
from msjgym.evaluate.evaluator import evaluate

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def replay_clock() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(34)
        arrival = np.cumsum(rng.uniform(0.001, 1000.0, 50))
        rows = ["arrival_time,need,duration"] + [f"{a!r},1,{d!r}" for a, d in
                                                 zip(arrival.tolist(), rng.uniform(0.1, 5000.0, 50).tolist())]
        (Path(tmp) / "t.csv").write_text("\n".join(rows) + "\n")
        (Path(tmp) / "t.toml").write_text('servers = 100\narrivals = { trace = "t.csv" }\n')
        r = evaluate(load_scenario(str(Path(tmp) / "t.toml")), "fcfs", seed=1)
    waits = r.per_job["waiting_time"]
    return (f"50 jobs on 100 servers (none waits): max |wait| = {np.abs(waits).max()!r}, queueing_probability = "
            f"{r.metrics['queueing_probability'].mean}, number_in_queue = {r.metrics['number_in_queue'].mean}")


def tiny_exact() -> str:
    class Run:
        stable, jobs, reps = True, 100_000, 10
        metrics = {"blocking_probability": Estimate(0.0, 0.0)}
    ref = judge([Reference("blocking_probability", "exact", "Erlang B", "standard", value=1e-91)], Run())[0]
    return f"exact 1e-91, estimate 0 ± 0: {ref.verdict}"


def pasta() -> str:
    scenario = load_scenario("one-and-n", {"servers": 1})
    alarms = bound_alarms = 0
    for seed in range(40):
        r = evaluate(scenario, "fcfs", reps=5, jobs=20_000, seed=seed)
        alarms += any("OUTSIDE" in x.verdict or "INCONSISTENT" in x.verdict for x in r.references)
        bound = [x for x in r.references if x.upper_metric][0]
        bound_alarms += "OUTSIDE" in bound.verdict
    return (f"M/M/1 (5 x 20,000 jobs), 40 seeds: P_Q <= P(busy) OUTSIDE in {bound_alarms}, any alarm of the "
            f"scorecard in {alarms}; seed 39: {bound.verdict}")


def relaxation() -> str:
    scenario = load_scenario("one-and-n", {"servers": 1, "arrival_rate": 0.95})
    short = evaluate(scenario, "fcfs", reps=5, jobs=2_000, seed=1)
    long = evaluate(scenario, "fcfs", reps=5, jobs=200_000, seed=1)
    flag = [n for n in short.check_notes if n.startswith("NOT CONVERGED")]
    return (f"M/M/1 ρ=0.95, 2,000 jobs: {flag[0][:150] if flag else 'NOT FLAGGED'}...; 200,000 jobs: "
            f"{'flagged' if any(n.startswith('NOT CONVERGED') for n in long.check_notes) else 'not flagged'}")


def load_one() -> str:
    status, out, err = cli("evaluate", str(ROOT / "examples/one_server_mg1.toml"), "--policy", "fcfs", "--reps", "2",
                           "--jobs", "2000", "--seed", "3", "--param", "load=1")
    finite = [ln for ln in out.splitlines() if "e+1" in ln]
    cap = [ln for ln in out.splitlines() if "capacity" in ln and "ρ" in ln][0].strip()
    return f"load=1 (M/G/1): {len(finite)} finite huge values printed; {cap[:110]}"


def one_unit() -> str:
    status, out, err = cli("evaluate", "one-and-n", "--policy", "fcfs", "--reps", "1", "--batches", "1", "--jobs",
                           "2000", "--seed", "3")
    row = [ln for ln in out.splitlines() if ln.startswith("response_time ")][0]
    _, js, _ = cli("evaluate", "one-and-n", "--policy", "fcfs", "--reps", "1", "--batches", "1", "--jobs", "2000",
                   "--seed", "3", "--json")
    return f"--reps 1 --batches 1: '{' '.join(row.split())}'; JSON {json.loads(js)['metrics']['response_time']}"


def last_line(*args: str) -> str:
    status, out, err = cli(*args)
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("msjgym: compiling")]
    return f"exit {status}, {len(lines)} line(s): {lines[-1][:230] if lines else out.splitlines()[1]}"


def user_code() -> str:
    shown = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, body in (("GeneratorExit in act", "class P:\n    def act(self, obs, mask):\n        raise GeneratorExit()\n"),
                           ("CancelledError in constructor", "import asyncio\nclass P:\n    def __init__(self):\n"
                                                             "        raise asyncio.CancelledError()\n"),
                           ("act property raising", "class P:\n    @property\n    def act(self):\n        raise KeyError('k')\n")):
            (Path(tmp) / "pol.py").write_text(body)
            shown.append(f"{what}: " + last_line("evaluate", "one-and-n", "--policy", f"{tmp}/pol.py:P", "--reps",
                                                 "1", "--jobs", "50", "--no-progress"))
        (Path(tmp) / "div.py").write_text(
            "import msjgym.systems.msj.compiled as msj\n\n\n@msj.policy\ndef div(s):\n    free = msj.free_servers(s)\n"
            "    if free < msj.servers(s):\n        free = 7 // (free - free)\n    for c in range(msj.num_classes(s)):\n"
            "        while msj.first_waiting(s, c) >= 0 and msj.need(s, c) <= msj.free_servers(s):\n"
            "            msj.start(s, c)\n")
        shown.append("compiled 7 // 0: " + last_line("evaluate", "one-and-n", "--policy", f"{tmp}/div.py:div",
                                                      "--reps", "1", "--jobs", "100"))
    return "\n    ".join(shown)


def messages() -> str:
    return "\n    ".join([
        "jsq servers=1: " + last_line("evaluate", "lb-dispatch", "--policy", "jsq", "--param", "servers=1", "--reps",
                                      "2", "--jobs", "2000"),
        "jsq-d servers=1: " + last_line("evaluate", "lb-dispatch", "--policy", "jsq-d", "--param", "servers=1"),
        "--skip-bad-lines on Poisson: " + last_line("evaluate", "one-and-n", "--policy", "fcfs", "--skip-bad-lines"),
        "100 KB policy name: " + last_line("evaluate", "one-and-n", "--policy", "p" * 100_000)])


def gym_conventions() -> str:
    import gymnasium as gym

    import msjgym  # noqa: F401
    out = []
    env = gym.make("msjgym/MSJ-v0", render_mode="ansi").unwrapped
    try:
        env.render()
        out.append("render before reset: drew something")
    except gym.error.ResetNeeded as exc:
        out.append(f"render before reset: ResetNeeded: {exc}")
    try:
        gym.make("msjgym/Dispatch-v0", servers=4, information="bogus")
        out.append("Dispatch information='bogus': accepted")
    except Exception as exc:
        out.append(f"Dispatch information='bogus': {type(exc).__name__}: {exc}")
    venv = gym.make_vec("msjgym/MSJ-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = venv.reset(seed=[11, None, 13])
    single = gym.make("msjgym/MSJ-v0").unwrapped.reset(seed=11)[0]
    out.append(f"vector reset(seed=[11, None, 13]): copy 0 == single reset(seed=11): {np.array_equal(obs[0], single)}")
    try:
        venv.reset(seed=[1, 2])
    except Exception as exc:
        out.append(f"reset(seed=[1, 2]) on 3 copies: {type(exc).__name__}: {exc}")
    return "\n    ".join(out)


for name, case in [("1 replay clock", replay_clock), ("2 tiny exact value", tiny_exact), ("2 PASTA bound", pasta),
                   ("3 relaxation", relaxation), ("4 load exactly 1", load_one), ("5 one unit", one_unit),
                   ("6 user code", user_code), ("7 messages", messages), ("8 Gymnasium", gym_conventions)]:
    try:
        print(f"[{name}] {case()}")
    except Exception as exc:  # a probe reports, it does not stop
        print(f"[{name}] FAILED: {type(exc).__name__}: {exc}")
