"""What a user waits for before the first number: compile time of each family's first run, of each further built-in
policy, of a warm run, and of the run after a one-line edit of a compiled policy of the user's.

Every command is ``python -m msjgym evaluate SCENARIO --policy P --reps 2 --jobs 20000 --seed 1 --json`` in a fresh
process, with numba's and msjgym's caches in a fresh temporary folder (``NUMBA_CACHE_DIR``, ``MSJGYM_CACHE_DIR``), so
the benchmark is repeatable on a machine that has run msjgym before. In order, per family:

1. the family's first run (its loop compiles, and its first policy);
2. each further built-in policy's first run (only that policy should compile);
3. then, for each command of 1-2, its warm run (everything cached): the reference of its ratio.

And for the MSJ family: the shipped compiled policy of the user's (``examples/compiled_first_fit.py``, copied to the
temporary folder) first, after a one-line edit of its file, and warm.

Printed: wall seconds, the ``compile_seconds`` the run reported, and wall / warm wall of the same command (the
targets: a family's first run <= 10x, a further built-in <= 3x, the edited user policy <= 3x). ``--compare``
additionally times ``examples/compare_policies.py`` (every built-in MSJ policy on one scenario) on a fresh cache
(target <= 2 minutes). Prints only; it asserts nothing.

    python benchmarks/bench_compile.py [--families msj,dispatch,loss,finite-skip] [--compare]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ["--reps", "2", "--jobs", "20000", "--seed", "1", "--json"]
FAMILIES = {
    "msj": [("one-and-n", p) for p in ("fcfs", "msf", "first-fit", "server-filling")],
    "dispatch": [("lb-dispatch", p) for p in ("jsq-d --param d=2", "jiq", "random")],
    "loss": [("loss-full-access", "greedy"), ("loss-full-access", "random-width"), ("loss-sampled", "fixed-width")],
    "finite-skip": [("finite-skip-fig3", "lps"), ("finite-skip-fig2", "fsf"), ("finite-skip-fig4a", "tp-fcfs")],
}
"""Per family: (scenario, policy) in the order they are first run; each policy runs on its scenario's setting
(finite-skip's LPS, heterogeneous M/G/k and threshold-parallelism settings each have their own policies)."""


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float | None, str]:
    """(wall seconds, the run's compile_seconds, the last line of stderr) of ``python ARGS``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    compile_seconds = None
    if done.returncode == 0 and "--json" in args:
        try:
            compile_seconds = json.loads(done.stdout).get("compile_seconds")
        except ValueError:
            pass
    err = done.stderr.strip().splitlines()
    note = next((line for line in err if "compiling" in line), err[-1] if done.returncode and err else "")
    if done.returncode:
        note = f"FAILED ({done.returncode}): {err[-1] if err else ''}"
    return wall, compile_seconds, note


def evaluate_args(scenario: str, policy: str) -> list[str]:
    return ["-m", "msjgym", "evaluate", scenario, "--policy", *policy.split(), *RUN]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families to measure")
    parser.add_argument("--compare", action="store_true", help="also time examples/compare_policies.py")
    parser.add_argument("--keep", action="store_true", help="keep the temporary cache folder")
    args = parser.parse_args()
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise SystemExit(f"--families: unknown {unknown}; valid: {', '.join(FAMILIES)}")

    work = Path(tempfile.mkdtemp(prefix="msjgym-bench-compile-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba"), MSJGYM_CACHE_DIR=str(work / "msjgym"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    print(f"fresh caches in {work}; python {sys.version.split()[0]}; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "")
    rows: list[tuple[str, str, float, float | None, str]] = []  # (family, what, wall, compile_seconds, note)
    firsts: list[tuple[str, str, list[str]]] = []
    for family in families:
        for i, (scenario, policy) in enumerate(FAMILIES[family]):
            what = f"{'first run' if i == 0 else 'further built-in'}: {scenario} --policy {policy}"
            cmd = evaluate_args(scenario, policy)
            wall, comp, note = timed(cmd, env, work)
            rows.append((family, what, wall, comp, note))
            firsts.append((family, what, cmd))
            print(f"  {family:12s} {what:58s} {wall:7.1f} s", flush=True)
        if family == "msj":
            user = work / "compiled_first_fit.py"
            shutil.copy(ROOT / "examples" / "compiled_first_fit.py", user)
            cmd = evaluate_args("one-and-n", f"{user}:first_fit")
            wall, comp, note = timed(cmd, env, work)
            rows.append((family, "user policy (compiled_first_fit.py): first run", wall, comp, note))
            firsts.append((family, "user policy (compiled_first_fit.py): first run", cmd))
            text = user.read_text().replace("        free = msj.free_servers(s)\n",
                                            "        free = msj.free_servers(s)  # edited\n", 1)
            user.write_text(text)
            wall, comp, note = timed(cmd, env, work)
            rows.append((family, "user policy after a one-line edit", wall, comp, note))
            firsts.append((family, "user policy after a one-line edit", cmd))
            print(f"  {family:12s} {'user policy: first, then after an edit':58s} done", flush=True)
    warm = {}
    for family, what, cmd in firsts:
        key = " ".join(cmd)
        if key not in warm:
            warm[key] = timed(cmd, env, work)[0]
    print(f"\n{'family':12s} {'run':62s} {'wall s':>8s} {'compile s':>10s} {'warm s':>8s} {'ratio':>7s}")
    for (family, what, wall, comp, note), (_, _, cmd) in zip(rows, firsts):
        w = warm[" ".join(cmd)]
        comp_text = f"{comp:10.1f}" if isinstance(comp, (int, float)) else f"{'-':>10s}"
        print(f"{family:12s} {what:62s} {wall:8.1f} {comp_text} {w:8.1f} {wall / w:6.1f}x")
        if note:
            print(f"{'':12s}   {note[:150]}")
    if args.compare:
        fresh = Path(tempfile.mkdtemp(prefix="msjgym-bench-compare-"))
        cenv = dict(env, NUMBA_CACHE_DIR=str(fresh / "numba"), MSJGYM_CACHE_DIR=str(fresh / "msjgym"))
        wall, _, note = timed([str(ROOT / "examples" / "compare_policies.py")], cenv, ROOT)
        print(f"\nexamples/compare_policies.py on a fresh cache: {wall:.0f} s ({wall / 60:.1f} min; target <= 2 min)"
              + (f"  {note}" if note.startswith("FAILED") else ""))
        shutil.rmtree(fresh, ignore_errors=True)
    if args.keep:
        print(f"\ncaches kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
