"""Record (or check) the golden outputs of every built-in scenario × policy: small runs whose metric values a refactor
must leave bit-identical.

    python tests/golden/record.py            # writes tests/golden/golden.json
    python tests/golden/record.py --check    # compares, prints the differences

Each entry is ``msjgym evaluate SCENARIO --policy P --reps 2 --jobs 20000 --seed 1 --json`` (and, for the finite-skip
figures, the same run of every finite-skip policy). Exit status 2 (a policy not valid on a scenario) is recorded as
the error line, which must also stay the same.
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden.json"
RUN = ["--reps", "2", "--jobs", "20000", "--seed", "1", "--json"]


def cases() -> list[list[str]]:
    """The command lines to record: argv lists for ``msjgym``."""
    from msjgym.systems.finite_skip import scenarios as F
    from msjgym.api import list_scenarios
    from msjgym.policies import BUILTIN_POLICIES
    from msjgym.policies.load_balancing import POLICY_IDS
    from msjgym.policies.loss import LOSS_POLICIES

    out = []
    for name, _ in list_scenarios():
        if name.startswith("lb-"):
            policies = list(POLICY_IDS)
        elif name.startswith("loss-"):
            policies = list(LOSS_POLICIES)
        else:
            policies = list(BUILTIN_POLICIES)
        out += [["evaluate", name, "--policy", p, *RUN] for p in policies]
    for name, fig in F.FIGURES.items():
        out += [["finite-skip", name, "--policy", p, *RUN] for p in fig.policies]
    return out


def run(argv: list[str]) -> dict:
    from msjgym.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    if status:
        return {"status": status, "error": err.getvalue().strip().splitlines()[-1]}
    data = json.loads(out.getvalue())
    for key in ("wall_seconds", "compile_seconds"):
        data.pop(key, None)
    return {"status": 0, "json": data}


def main() -> int:
    check = "--check" in sys.argv
    if check:
        golden = json.loads(GOLDEN.read_text())
    results = {}
    for argv in cases():
        key = " ".join(argv[:4])
        results[key] = run(argv)
        print(key, results[key]["status"], file=sys.stderr, flush=True)
    if not check:
        GOLDEN.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(results)} entries to {GOLDEN}")
        return 0
    bad = [k for k in golden if results.get(k) != golden[k]]
    print(f"{len(golden) - len(bad)} of {len(golden)} entries identical; differing: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
