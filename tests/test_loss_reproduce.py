"""``msjgym reproduce loss-scaling`` writes its files, and its numbers show what the theory says (small run)."""
from __future__ import annotations

import csv
import math


from msjgym.reproduce import REPRODUCTIONS
from msjgym.reproduce.common import Settings
from msjgym.reproduce.loss_scaling import REGIMES, reproduce


def test_loss_scaling_files_and_numbers(tmp_path):
    assert "loss-scaling" in REPRODUCTIONS
    files = reproduce(Settings(out=tmp_path, reps=3, jobs=20_000, progress=False, options={"max_servers": 101}))
    assert sorted(f.name for f in files) == ["loss-scaling.csv", "loss-scaling.png"]
    assert files[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with files[0].open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(REGIMES) * 3 * 2  # n = 11, 31, 101; full and sampled
    for r in rows:
        assert float(r["blocking"]) >= 0 and float(r["response_time"]) >= 0.5
        if r["access"] == "full":
            assert int(r["k"]) == int(r["servers"])
            # smoke check of the pipeline (the CI-level comparisons are in test_loss_system.py): 4 × the 95 %
            # half-width of 3 replications, plus 1e-4 for P_b ≈ 0 where the CI collapses to 0
            tol = 4 * float(r["blocking_ci95"]) + 1e-4
            assert abs(float(r["blocking"]) - float(r["full_access_exact_blocking"])) <= tol
            assert float(r["full_access_exact_blocking"]) <= float(r["thm4_blocking_upper"])
        else:
            assert int(r["k"]) == min(int(r["servers"]),
                                      math.ceil(int(r["servers"]) ** float(r["alpha"]) * math.log(int(r["servers"]))))
