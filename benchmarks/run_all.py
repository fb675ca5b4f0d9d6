"""Run every benchmark with its default settings, one after the other, in this Python interpreter.

    python benchmarks/run_all.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("bench_mmc.py", "bench_events.py", "bench_loss.py", "bench_replay.py")


def main() -> int:
    failed = 0
    for name in SCRIPTS:
        print(f"=== {name} ===", flush=True)
        failed += subprocess.run([sys.executable, str(HERE / name)]).returncode != 0
        print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
