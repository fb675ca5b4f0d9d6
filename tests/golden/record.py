"""The golden outputs: every built-in scenario × policy, recorded before the one-architecture refactor.

``golden.json`` maps a command (``evaluate SCENARIO --policy P`` or ``finite-skip SCENARIO --policy P``, each run with
``--reps 2 --jobs 20000 --json --seed 1``) to what it printed: the JSON object, or the one-line error of exit status
2. A refactor must leave every number unchanged (``tests/test_golden.py``): integers, strings, verdicts and errors
exactly, floating-point values to :data:`REL` (see :func:`floats_differ`).

    python tests/golden/record.py --check    # compares every entry, prints the differences
    python tests/golden/record.py --add-metrics bounded_slowdown   # records a metric added since (nothing else)
    python tests/golden/record.py --add-entries "evaluate lublin-feitelson --policy fcfs"   # a new scenario's run

A metric added after the recording (``bounded_slowdown`` of the multiserver-job family) is recorded with
``--add-metrics NAME``: the entries gain the new keys ``NAME`` and ``NAME[CLASS]`` of a new run, and only if
everything already recorded is unchanged; no recorded value is ever rewritten.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden.json"
SEED = 1
RUN = ["--reps", "2", "--jobs", "20000", "--json"]
DISPATCH_RUN = ["--reps", "2", "--jobs", "18000", "--warmup", "2000", "--json"]
"""The same simulations for the dispatch family, whose ``--jobs`` counted every arrival of a replication, warm-up
included, when the recording was made (``--jobs 20000``: 2,000 arrivals of warm-up, then 18,000 measured). ``--jobs``
now counts measured arrivals in every family, the warm-up on top (one meaning of --jobs), so the recorded runs are
``--jobs 18000 --warmup 2000``: the same arrivals, the same warm-up, the same numbers (nothing re-recorded)."""
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


def run(command: str, seed: int = SEED) -> dict[str, Any]:
    """Run one golden command in this process (with the recorded seed unless told otherwise); its status and JSON (or
    its error line)."""
    from msjgym.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(command.split() + run_options(command) + ["--seed", str(seed)])
    if status:
        return {"status": status, "error": err.getvalue().strip().splitlines()[-1]}
    return {"status": 0, "json": json.loads(out.getvalue())}


def run_options(command: str) -> list[str]:
    """The run's options of a golden command: :data:`RUN`, or :data:`DISPATCH_RUN` for a dispatch scenario."""
    from msjgym import api

    return DISPATCH_RUN if api.family_of(command.split()[1]).name == "dispatch" else RUN


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


REL = 1e-12
"""Relative tolerance of a floating-point value recorded on another machine.

Exactness of the *sample path* is a property of the code: the same seed gives the same events, job counts, verdicts
and errors on every machine, and those are compared exactly (every ``int``, ``bool``, string and ``None``). The last
bits of a float are a property of the CPU: numpy's SIMD reductions and libm round differently on different processors
(recorded on Intel Xeon; an AMD EPYC gave, for example, ``mean 4.557676573275142 -> 4.557676573275141`` (1 ulp) and
``ci95 2.3014547707031303 -> 2.301454770703125`` (12 ulps, 2.3e-15 relative)). 1e-12 relative is about 4,500 ulps:
room for rounding that compounds through a few thousand operations, and more than 1e5 times smaller than the change a
different sample path makes to any mean (seed 2 instead of 1 moved every mean of ``one-and-n --policy fcfs`` by at
least 3.5e-4 relative, and of ``lb-dispatch --policy jsq-d`` by at least 8e-3; ``tests/test_golden.py`` checks both
sides)."""

ABS = 1e-13
"""Absolute floor, for values near 0 that are differences of O(1) numbers (rounding there is absolute, not
relative)."""


def floats_differ(a: float, b: float, scale: float = 0.0) -> bool:
    """Whether two floats recorded on different machines differ by more than rounding: ``|a - b| > REL * max(|a|,
    |b|, scale) + ABS``. ``scale`` is the magnitude the value was computed from (a CI's half-width is computed from
    values of the size of its mean, so its rounding is relative to the mean). NaN equals NaN; infinities must match."""
    if math.isnan(a) or math.isnan(b):
        return not (math.isnan(a) and math.isnan(b))
    if math.isinf(a) or math.isinf(b):
        return a != b
    return abs(a - b) > REL * max(abs(a), abs(b), abs(scale)) + ABS


def arrays_match(got, want) -> bool:
    """Whether two float arrays recorded on different machines hold the same numbers: the same shape, and every
    element within :func:`floats_differ`'s tolerance (NaN matching NaN, infinities exactly)."""
    import numpy as np

    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False
    both_nan = np.isnan(got) & np.isnan(want)
    finite = np.isfinite(got) & np.isfinite(want)
    with np.errstate(invalid="ignore"):
        close = np.abs(got - want) <= REL * np.maximum(np.abs(got), np.abs(want)) + ABS
    return bool(np.all(both_nan | np.where(finite, close, got == want)))


def value_differences(a: Any, b: Any, path: str = "", scale: float = 0.0) -> list[str]:
    """Where two JSON values differ beyond :func:`floats_differ` (floats) or at all (everything else), as
    ``"path: a -> b"`` lines. A metric's ``ci95`` is compared at the scale of its ``mean``."""
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, dict) and isinstance(b, dict):
            if set(a) != set(b):
                return [f"{path}: keys {sorted(a)} -> {sorted(b)}"]
            inner = abs(a["mean"]) if isinstance(a.get("mean"), float) else scale
            return [d for k in a for d in value_differences(a[k], b[k], f"{path}.{k}" if path else str(k), inner)]
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return [f"{path}: {len(a)} items -> {len(b)}"]
            return [d for i, (x, y) in enumerate(zip(a, b)) for d in value_differences(x, y, f"{path}[{i}]", scale)]
        return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} -> {b!r}"]
    if isinstance(a, int) and isinstance(b, int):  # counts, seeds: exact
        return [] if a == b else [f"{path}: {a} -> {b}"]
    return [f"{path}: {a!r} -> {b!r}"] if floats_differ(float(a), float(b), scale) else []


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a golden entry and a new run (empty: the same numbers)."""
    old = _renamed(old)
    if old["status"] != new["status"]:
        return [f"status {old['status']} -> {new['status']}: {new.get('error', '')}"]
    if old["status"]:
        return [] if old["error"] == new["error"] else [f"error {old['error']!r} -> {new['error']!r}"]
    a, b = old["json"], new["json"]
    out = value_differences(a["stable"], b["stable"], "stable")
    keys = sorted(set(a["metrics"]) | set(b["metrics"]))
    out += [f"metric {d}" for k in keys for d in value_differences(a["metrics"].get(k), b["metrics"].get(k), k)]
    if "events" in a:
        out += value_differences(a["events"], b["events"], "events")
    out += value_differences(a.get("invariants", b.get("diagnostics")), b.get("diagnostics", a.get("invariants")),
                             "invariants")
    ra = [{f: r.get(f) for f in REFERENCE_FIELDS} for r in a["references"]]
    rb = [{f: r.get(f) for f in REFERENCE_FIELDS} for r in b["references"]]
    out += [f"reference {d}" for d in value_differences(ra, rb, "references")]
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


def add_metrics(names: list[str]) -> int:
    """Record the metrics ``names`` (and their per-class ``NAME[CLASS]``) that a new run reports and the recording
    lacks, in every entry whose recorded values are otherwise unchanged; the file is rewritten in its own format."""
    golden = load()
    added = refused = 0
    for command, entry in golden.items():
        if entry["status"] or command in RENAMED:  # a renamed command is compared with its new name's entry
            continue
        new = run(command)
        if new["status"]:
            refused += 1
            continue
        recorded = entry["json"]["metrics"]
        extra = {k: v for k, v in new["json"]["metrics"].items()
                 if k not in recorded and k.split("[", 1)[0] in names}
        if not extra:
            continue
        trial = {"status": 0, "json": dict(entry["json"], metrics=recorded | extra)}
        if differences(trial, new):
            print(command, "differs: not recorded", *differences(trial, new), sep="\n  ")
            refused += 1
            continue
        recorded.update(extra)
        added += 1
        print(command, f"+{len(extra)} metric(s)", file=sys.stderr, flush=True)
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"{added} entries gained metrics; {refused} refused")
    return 1 if refused else 0


def add_entries(commands: list[str]) -> int:
    """Record the runs of new ``commands`` (a scenario added since: every built-in scenario must have an entry);
    an existing entry is never replaced."""
    golden = load()
    for command in commands:
        if command in golden:
            print(f"{command}: already recorded; not replaced")
            return 1
        golden[command] = run(command)
        print(command, "status", golden[command]["status"], file=sys.stderr)
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--add-metrics":
        sys.exit(add_metrics(sys.argv[2:]))
    if len(sys.argv) > 2 and sys.argv[1] == "--add-entries":
        sys.exit(add_entries(sys.argv[2:]))
    sys.exit(main())
