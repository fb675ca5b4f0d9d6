"""Rerun every hostile-input case of the input-layer probe (content keys, outputs, input validation), and print one line per case: its outcome.

    python tests/probe_cases.py            # from the repository root; about 2-4 minutes (a few short simulations)

Each case runs the ``msjgym`` command line (in a subprocess, as a user would) or the Python API on a hostile input
built in a temporary folder, and is reported as ``ok`` (a clear one-line error, or a correct result, as the issue
asks) or ``FAIL`` with what happened. The exit status is the number of failed cases. ``tests/test_inputs_outputs.py``
tests each case in-process in the default suite.
"""
from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's msjgym, for the cases that use the Python API
SAMPLE = ROOT / "examples" / "traces" / "sample.swf"
SCENARIO = """servers = 10
arrival_rate = 2.33
[[classes]]
name = "triple"
need = 3
service = { dist = "exp", rate = 1.0 }
"""


@dataclass
class Outcome:
    ok: bool
    text: str


def msjgym(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m msjgym ARGS`` from ``cwd`` with this checkout's sources first on the path."""
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "msjgym", *args], cwd=cwd, env=environ, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=timeout)


def one_line_error(out: subprocess.CompletedProcess, *fragments: str) -> Outcome:
    """ok when the command exited 2 with exactly one ``msjgym: error:`` line holding every fragment."""
    lines = out.stderr.strip().splitlines()
    good = (out.returncode == 2 and len(lines) == 1 and lines[0].startswith("msjgym: error: ")
            and all(f in lines[0] for f in fragments))
    shown = lines[-1] if lines else f"(no stderr; status {out.returncode})"
    return Outcome(good, f"exit {out.returncode}: {shown[:230]}")


def swf(folder: Path, name: str, edit: Callable[[int, list[str]], list[str]], jobs: int = 60) -> Path:
    """A copy of the sample SWF trace's first ``jobs`` jobs with ``edit(i, fields)`` applied, and a scenario."""
    lines = SAMPLE.read_text().splitlines()
    header = [x for x in lines if x.startswith(";")]
    body = [x for x in lines if x.strip() and not x.startswith(";")][:jobs]
    body = [" ".join(edit(i, x.split())) for i, x in enumerate(body)]
    (folder / f"{name}.swf").write_text("\n".join(header + body) + "\n")
    toml = folder / f"{name}.toml"
    toml.write_text(f'arrivals = {{ trace = "{name}.swf", scale_servers = 64 }}\n')
    return toml


def _set(index: int, value: str, only: int | None = None) -> Callable[[int, list[str]], list[str]]:
    def edit(i: int, fields: list[str]) -> list[str]:
        if only is None or i == only:
            fields[index] = value
        return fields
    return edit


# ==================================================================================================================
# Section 2: results keyed by content, outputs that never destroy inputs


def case_edited_scenario(d: Path) -> Outcome:
    (d / "s.toml").write_text(SCENARIO)
    common = ("sweep", "s.toml", "--policy", "fcfs", "--reps", "2", "--jobs", "3000", "--workers", "1",
              "--no-progress")
    args = common + ("--out", "o")
    first = msjgym(*args, cwd=d)
    (d / "s.toml").write_text(SCENARIO.replace("2.33", "0.5"))
    second = msjgym(*args, cwd=d)
    third = msjgym(*args, cwd=d)
    fresh = msjgym(*common, "--out", "fresh", cwd=d)
    row = lambda out: next((x for x in out.stdout.splitlines() if x.startswith("fcfs")), "?")  # noqa: E731
    ok = ("0 of 2 tasks already done" in second.stdout and "recomputed" in second.stdout
          and row(second).split()[3:6] == row(fresh).split()[3:6] and "earlier run" in row(third)
          and first.returncode == second.returncode == third.returncode == 0)
    return Outcome(ok, f"after the edit: {row(second).split('  ', 1)[1].strip()!r} (a fresh --out: "
                       f"{row(fresh).split('  ', 1)[1].strip()!r}); rerun: {row(third).split('  ', 1)[1].strip()!r}")


def case_per_job_onto_trace(d: Path) -> Outcome:
    (d / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (d / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    out = msjgym("evaluate", "t.toml", "--policy", "fcfs", "--per-job", "sample.swf", cwd=d)
    result = one_line_error(out, "--per-job", "input of this run")
    result.ok &= (d / "sample.swf").read_bytes() == SAMPLE.read_bytes()
    return result


def case_per_job_onto_toml(d: Path) -> Outcome:
    (d / "s.toml").write_text(SCENARIO)
    out = msjgym("evaluate", "s.toml", "--policy", "fcfs", "--per-job", "./s.toml", cwd=d)
    result = one_line_error(out, "--per-job", "input of this run")
    result.ok &= (d / "s.toml").read_text() == SCENARIO
    return result


def case_plot_onto_store(d: Path) -> Outcome:
    (d / "s.toml").write_text(SCENARIO)
    msjgym("sweep", "s.toml", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--out", "o", "--workers", "1",
           cwd=d)
    (d / "o" / "results.svg").symlink_to(d / "o" / "results.sqlite")
    return one_line_error(msjgym("plot", "o", "--x", "load", "--y", "response_time", "--out", "o/results.svg",
                                 cwd=d), "--out", "input of this run")


def case_sweep_out_onto_input(d: Path) -> Outcome:
    (d / "s.toml").write_text(SCENARIO)
    (d / "o").mkdir()
    (d / "o" / "results.sqlite").symlink_to(d / "s.toml")
    return one_line_error(msjgym("sweep", "s.toml", "--policy", "fcfs", "--reps", "1", "--jobs", "1000", "--out",
                                 "o", cwd=d), "--out", "input of this run")


def _encoding_case(d: Path, encoding: str) -> Outcome:
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--seed", "1", cwd=d,
                 env={"PYTHONIOENCODING": encoding})
    lines = out.stderr.strip().splitlines()
    saved = lines[-1].split("the full output is in ")[-1].split("'")[1] if lines and "full output is in" in lines[-1] \
        else None
    ok = (out.returncode == 1 and len(lines) == 1 and "Traceback" not in out.stderr and saved is not None
          and "±" in Path(saved).read_text(encoding="utf-8"))
    return Outcome(ok, f"exit {out.returncode}: {lines[-1][:200] if lines else '(no stderr)'}")


def case_stdout_ascii(d: Path) -> Outcome:
    return _encoding_case(d, "ascii")


def case_stdout_latin1(d: Path) -> Outcome:
    return _encoding_case(d, "latin-1")


def case_read_only_store(d: Path) -> Outcome:
    """A store whose folder cannot be written (SQLite then cannot create its WAL index): read and plotted. As root
    the permission bits do not bind, so the store is opened the way read-only media force (immutable)."""
    (d / "s.toml").write_text(SCENARIO)
    msjgym("sweep", "s.toml", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--out", "o", "--workers", "1",
           cwd=d)
    os.chmod(d / "o" / "results.sqlite", 0o444)
    os.chmod(d / "o", 0o555)
    try:
        out = msjgym("plot", "o", "--x", "load", "--y", "response_time", cwd=d)
    finally:
        os.chmod(d / "o", 0o755)
    ok = out.returncode == 0 and (d / out.stdout.strip().splitlines()[-1]).is_file()
    return Outcome(ok, f"exit {out.returncode}: {out.stdout.strip()[-120:]} {out.stderr.strip()[-150:]}")


def case_big_seed(d: Path) -> Outcome:
    out = msjgym("sweep", "one-and-n", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--out", "o", "--workers",
                 "1", "--seed", str(2**128 - 1), cwd=d)
    again = msjgym("sweep", "one-and-n", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--out", "o",
                   "--workers", "1", "--seed", str(2**128 - 1), cwd=d)
    ok = out.returncode == 0 and "2 of 2 tasks already done" in again.stdout
    return Outcome(ok, f"exit {out.returncode}, rerun: "
                       f"{next((x for x in again.stdout.splitlines() if 'already done' in x), out.stderr[-150:])[:90]}")


# ==================================================================================================================
# Section 3: one input layer


def case_trace_procs_1e20(d: Path) -> Outcome:
    return one_line_error(msjgym("theory", str(swf(d, "p", _set(4, "1e20", 3))), cwd=d), "allocated processors",
                          "1e+20")


def case_csv_need_inf(d: Path) -> Outcome:
    (d / "n.csv").write_text("arrival_time,need,duration\n0,1,1\n1,inf,1\n2,1e400,1\n3,2,1\n4,1,2\n")
    (d / "n.toml").write_text('arrivals = { trace = "n.csv", scale_servers = 4 }\n')
    return one_line_error(msjgym("theory", "n.toml", cwd=d), "need = inf")


def case_csv_need_skipped(d: Path) -> Outcome:
    (d / "n.csv").write_text("arrival_time,need,duration\n0,1,1\n1,inf,1\n2,1e400,1\n3,2,1\n4,1,2\n5,1,"
                             + "9" * 140_000 + "\n6,1,1\n")
    (d / "n.toml").write_text('arrivals = { trace = "n.csv", scale_servers = 4 }\n')
    out = msjgym("evaluate", "n.toml", "--policy", "fcfs", "--skip-bad-lines", "--batches", "1", cwd=d)
    ok = out.returncode == 0 and "3 malformed" in out.stdout
    note = next((x for x in out.stdout.splitlines() if "malformed" in x), out.stderr.strip()[-200:])
    return Outcome(ok, f"exit {out.returncode}: {note.strip()[:200]}")


def case_csv_long_field(d: Path) -> Outcome:
    (d / "n.csv").write_text("arrival_time,need,duration\n0,1,1\n1,1," + "9" * 140_000 + "\n2,1,1\n")
    (d / "n.toml").write_text('arrivals = { trace = "n.csv", scale_servers = 4 }\n')
    return one_line_error(msjgym("theory", "n.toml", cwd=d), "line 3", "field larger than field limit")


def case_swf_duration_1e300(d: Path) -> Outcome:
    return one_line_error(msjgym("theory", str(swf(d, "big", _set(3, "1e300", 3))), cwd=d), "run time (field 4)")


def case_swf_duration_1em300(d: Path) -> Outcome:
    return one_line_error(msjgym("theory", str(swf(d, "tiny", _set(3, "1e-300", 3))), cwd=d), "run time (field 4)")


def case_easy_requested_1e300(d: Path) -> Outcome:
    return one_line_error(msjgym("evaluate", str(swf(d, "req", _set(8, "1e300"))), "--policy", "easy-backfilling",
                                 cwd=d),
                          "requested time (field 9)")


def case_time_scale_1e16(d: Path) -> Outcome:
    (d / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (d / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64, time_scale = 1e16 }\n')
    return one_line_error(msjgym("theory", "t.toml", cwd=d), "arrivals.time_scale", "float64 cannot resolve")


def case_num_envs(d: Path) -> Outcome:
    code = ("import gymnasium as gym, msjgym, time\nt = time.perf_counter()\n"
            "try:\n    gym.make_vec('msjgym/MSJ-v0', num_envs=10**7, vectorization_mode='vector_entry_point')\n"
            "except ValueError as e:\n    print(f'{time.perf_counter() - t:.1f} s: {e}')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=d, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=600)
    line = out.stdout.strip()
    return Outcome("GiB" in line and "num_envs" in line, line[:220] or out.stderr.strip()[-200:])


def case_backlog_memory(d: Path) -> Outcome:
    return one_line_error(msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--saturated", "--backlog",
                                 "100000000", cwd=d), "backlog=100,000,000", "GiB")


def case_values_dev_zero(d: Path) -> Outcome:
    (d / "z.toml").write_text(SCENARIO.replace('{ dist = "exp", rate = 1.0 }',
                                               '{ dist = "empirical", file = "/dev/zero" }'))
    return one_line_error(msjgym("theory", "z.toml", cwd=d, timeout=60), "not a regular file")


def case_param_superscript(d: Path) -> Outcome:
    (d / "s.toml").write_text(SCENARIO)
    return one_line_error(msjgym("theory", "s.toml", "--param", "classes.².probability=0.5", cwd=d),
                          "classes.²")


def case_dist_400_digits(d: Path) -> Outcome:
    return one_line_error(msjgym("theory", "lb-dispatch", "--param", f"dist=h2(f=1/2, scv={'9' * 400}/3)", cwd=d),
                          "dist.scv")


def case_policy_pickles_itself(d: Path) -> Outcome:
    (d / "pol.py").write_text(textwrap.dedent("""
        import pickle

        class Policy:
            def act(self, observation, mask=None):
                return int(mask.nonzero()[0][0]) if mask is not None else 0

        POLICY = pickle.loads(pickle.dumps(Policy()))  # pickles an object of this module while it loads
        """))
    out = msjgym("evaluate", "one-and-n", "--policy", "pol.py:POLICY", "--reps", "1", "--jobs", "300", "--batches",
                 "1", cwd=d)
    return Outcome(out.returncode == 0, f"exit {out.returncode}: "
                                        f"{(out.stderr.strip().splitlines() or ['(a result)'])[-1][:200]}")


def case_dispatch_deepcopy(d: Path) -> Outcome:
    import gymnasium as gym
    import msjgym  # noqa: F401  registers the environments

    env = gym.make("msjgym/Dispatch-v0").unwrapped
    env.reset(seed=1)
    for _ in range(50):
        env.step(int(env.action_space.sample()))
    twin = copy.deepcopy(env)
    for _ in range(7):
        env.step(int(env.action_space.sample()))
    refused = sum(not twin.action_masks()[int(twin.action_space.sample())] for _ in range(200))
    pickle.dumps(twin.action_space)
    return Outcome(refused == 0, f"{refused} of 200 actions sampled from the copy's space refused by the copy")


def case_system_dispatch_file(d: Path) -> Outcome:
    (d / "disp.toml").write_text('system = "dispatch"\nservers = 10\n')
    return one_line_error(msjgym("theory", "disp.toml", cwd=d), "system = 'dispatch'", "built-in scenarios only")


def case_theory_no_reps(d: Path) -> Outcome:
    """A scenario whose simulation state at the default 10 replications is above 4 GiB: the theory simulates
    nothing, so it answers (it used to be refused with advice to lower --reps, which theory does not have)."""
    classes = "".join(f'[[classes]]\nname = "c{i}"\nneed = 3\nprobability = {1 / 2000!r}\n'
                      f'service = {{ dist = "exp", rate = 1.0 }}\n' for i in range(2000))
    (d / "big.toml").write_text(f"servers = 10\narrival_rate = 2.33\n{classes}")
    out = msjgym("theory", "big.toml", cwd=d)
    ok = out.returncode == 0 and "--reps" not in out.stderr
    return Outcome(ok, f"exit {out.returncode}: {(out.stderr.strip() or out.stdout.strip().splitlines()[0])[:200]}")


def case_trace_warmup(d: Path) -> Outcome:
    (d / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (d / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    return one_line_error(msjgym("evaluate", "t.toml", "--policy", "fcfs", "--warmup", "5000", cwd=d),
                          "--warmup 5,000", "976 jobs")


def case_backlog_without_saturated(d: Path) -> Outcome:
    return one_line_error(msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--backlog", "5", cwd=d),
                          "--backlog", "--saturated")


def case_control_characters(d: Path) -> Outcome:
    (d / "c.toml").write_text(SCENARIO.replace('name = "triple"', 'name = "tri\\u001b[31mple\\u0007"'))
    out = msjgym("theory", "c.toml", cwd=d)
    result = one_line_error(out, "classes[0].name", "control characters")
    result.ok &= "\x1b" not in out.stderr + out.stdout
    return result


def case_million_point_grid(d: Path) -> Outcome:
    """The documented maximum: the cost of checking the grid is measured and said before it starts."""
    proc = subprocess.Popen([sys.executable, "-m", "msjgym", "sweep", "one-and-n", "--grid",
                             "arrival_rate=1:3:1000", "--grid", "servers=8:1007:1000", "--policy", "fcfs",
                             "--reps", "1", "--jobs", "1000", "--out", "o"], cwd=d,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line.strip())
            if "checking the" in line:
                break
    finally:
        proc.kill()
        proc.wait()
    said = next((x for x in lines if "checking the" in x), lines[-1] if lines else "(nothing said)")
    return Outcome("checking the 1,000,000 grid points" in said, said[:230])


CASES: dict[str, Callable[[Path], Outcome]] = {
    "2 sweep: arrival_rate edited 2.33 -> 0.5, same command": case_edited_scenario,
    "2 --per-job sample.swf while replaying it": case_per_job_onto_trace,
    "2 --per-job onto the scenario's own TOML": case_per_job_onto_toml,
    "2 plot --out onto the results store (a link)": case_plot_onto_store,
    "2 sweep --out whose results.sqlite is the scenario (a link)": case_sweep_out_onto_input,
    "2 PYTHONIOENCODING=ascii": case_stdout_ascii,
    "2 PYTHONIOENCODING=latin-1": case_stdout_latin1,
    "2 results store in a read-only folder, plotted": case_read_only_store,
    "2 sweep --seed 2^128-1, then resumed": case_big_seed,
    "3 trace: a job with 1e20 processors": case_trace_procs_1e20,
    "3 trace: CSV need inf / 1e400": case_csv_need_inf,
    "3 trace: CSV inf, 1e400, 140,000-char field with --skip-bad-lines": case_csv_need_skipped,
    "3 trace: CSV field > 131,072 characters": case_csv_long_field,
    "3 trace: SWF duration 1e300": case_swf_duration_1e300,
    "3 trace: SWF duration 1e-300": case_swf_duration_1em300,
    "3 trace: EASY with every requested time 1e300": case_easy_requested_1e300,
    "3 trace: time_scale = 1e16": case_time_scale_1e16,
    "3 memory: num_envs = 10**7": case_num_envs,
    "3 memory: --saturated --backlog 100000000": case_backlog_memory,
    "3 memory: empirical law from /dev/zero": case_values_dev_zero,
    "3 parser: --param classes.².probability=0.5": case_param_superscript,
    "3 parser: 400-digit scv in dist=h2(...)": case_dist_400_digits,
    "3 policy file that pickles itself while it loads": case_policy_pickles_itself,
    "3 env: Dispatch-v0 deep copy samples from its own mask": case_dispatch_deepcopy,
    "3 message: system = \"dispatch\" file": case_system_dispatch_file,
    "3 message: theory on a large file (no --reps advice)": case_theory_no_reps,
    "3 message: trace with --warmup 5000": case_trace_warmup,
    "3 message: --backlog without --saturated": case_backlog_without_saturated,
    "3 message: control characters in a class name": case_control_characters,
    "3 message: a 10^6-point grid says its checking cost": case_million_point_grid,
}


def main(names: list[str] | None = None) -> int:
    failed = 0
    width = max(len(n) for n in CASES)
    for name, case in CASES.items():
        if names and not any(n in name for n in names):
            continue
        with tempfile.TemporaryDirectory(prefix="msjgym-probe-") as folder:
            try:
                outcome = case(Path(folder))
            except Exception as exc:  # a probe that crashes is a failed case, reported like the others
                outcome = Outcome(False, f"probe raised {type(exc).__name__}: {exc}"[:230])
        failed += not outcome.ok
        print(f"{'ok  ' if outcome.ok else 'FAIL'}  {name:<{width}}  {outcome.text}", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
