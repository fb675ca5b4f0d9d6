"""The golden outputs: every built-in scenario × policy, recorded before the one-architecture refactor.

``golden.json`` maps a command (``evaluate SCENARIO --policy P`` or ``finite-skip SCENARIO --policy P``, each run with
``--reps 2 --jobs 20000 --seed 1 --json``) to what it printed: the JSON object, or the one-line error of exit status
2. A refactor must leave every metric bit-identical (``tests/test_golden.py``).

    python tests/golden/record.py --check    # compares every entry, prints the differences
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden.json"
RUN = ["--reps", "2", "--jobs", "20000", "--seed", "1", "--json"]
REFERENCE_FIELDS = ("quantity", "kind", "value", "lower", "upper", "upper_metric", "predicts_stable", "agrees")
"""What must stay equal in a reference (its description and source texts now cite papers and docs pages)."""

RENAMED = {f"finite-skip finite-skip-fig{f} --policy {p}": f"evaluate finite-skip-fig{f} --policy {p}"
           for f in (6, 7) for p in ("server-filling", "server-filling-divisible", "fcfs", "preemptive-first-fit",
                                     "msf", "lsf")}
"""Deliberate changes: ``msjgym finite-skip`` is now an alias of ``msjgym evaluate``, so Figs. 6–7 (the paper's
multiserver-job setting) run on the multiserver-job engine, exactly as ``msjgym evaluate finite-skip-fig6`` did; they
are compared with those entries. The rate-model engine's runs of Figs. 6–7 remain for ``msjgym reproduce``."""


def load() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def run(command: str) -> dict[str, Any]:
    """Run one golden command in this process; its status and JSON (or its error line)."""
    from msjgym.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(command.split() + RUN)
    if status:
        return {"status": status, "error": err.getvalue().strip().splitlines()[-1]}
    return {"status": 0, "json": json.loads(out.getvalue())}


def expected_key(command: str) -> str:
    """The golden entry a command is compared with (itself, unless it was deliberately renamed)."""
    return RENAMED.get(command, command)


def expected(golden: dict[str, Any], command: str) -> dict[str, Any]:
    return golden[expected_key(command)]


RENAMED_METRICS = {"busy_fraction": "utilization"}
"""Deliberate renames: the dispatch family's fraction of busy servers is ``utilization``, as in every family."""


def _moved_to_checks(ref: dict[str, Any]) -> bool:
    """Deliberate move: the dispatch family's reference "busy fraction = λ·E[size]" (exact, on the busy fraction) is
    now the run-time check ``utilization`` of every family (``checks`` in the JSON, ``msjgym.evaluate.checks``), no
    longer a reference."""
    return (ref["quantity"] in ("busy_fraction", "utilization") and ref["kind"] == "exact"
            and ref.get("description", "").startswith("busy fraction"))


def _renamed(entry: dict[str, Any]) -> dict[str, Any]:
    """A golden entry with the renamed metrics (and the references' quantities) under their new names."""
    if entry["status"]:
        return entry
    data = dict(entry["json"])
    data["metrics"] = {RENAMED_METRICS.get(k, k): v for k, v in data["metrics"].items()}
    data["references"] = [dict(r, quantity=RENAMED_METRICS.get(r["quantity"], r["quantity"]))
                          for r in data["references"] if not _moved_to_checks(r)]
    return {"status": 0, "json": data}


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a golden entry and a new run (empty: the same numbers)."""
    old = _renamed(old)
    if old["status"] != new["status"]:
        return [f"status {old['status']} -> {new['status']}: {new.get('error', '')}"]
    if old["status"]:
        return [] if old["error"] == new["error"] else [f"error {old['error']!r} -> {new['error']!r}"]
    a, b = old["json"], new["json"]
    out = []
    if a["stable"] != b["stable"]:
        out.append(f"stable {a['stable']} -> {b['stable']}")
    if a["metrics"] != b["metrics"]:
        keys = sorted(set(a["metrics"]) | set(b["metrics"]))
        out += [f"metric {k}: {a['metrics'].get(k)} -> {b['metrics'].get(k)}" for k in keys
                if a["metrics"].get(k) != b["metrics"].get(k)]
    if "events" in a and a["events"] != b["events"]:
        out.append(f"events {a['events']} -> {b['events']}")
    if a.get("invariants", b.get("diagnostics")) != b.get("diagnostics", a.get("invariants")):
        out.append(f"invariants {a.get('invariants')} -> {b.get('diagnostics')}")
    ra = [{f: r.get(f) for f in REFERENCE_FIELDS} for r in a["references"]]
    rb = [{f: r.get(f) for f in REFERENCE_FIELDS} for r in b["references"]]
    if ra != rb:
        out.append(f"references {ra} -> {rb}")
    return out


def main() -> int:
    golden = load()
    bad = {}
    for command in golden:
        diff = differences(expected(golden, command), run(command))
        print(command, "identical" if not diff else "DIFFERS", file=sys.stderr, flush=True)
        if diff:
            bad[command] = diff
    for command, diff in bad.items():
        print(command, *diff, sep="\n  ")
    print(f"{len(golden) - len(bad)} of {len(golden)} entries identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
