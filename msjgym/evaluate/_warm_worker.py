"""Imported by the sweep's forkserver (``multiprocessing.set_forkserver_preload``): loads msjgym and its compiled
kernels once, so every worker forked from it starts ready to simulate instead of loading them itself."""
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.evaluate.sweep import run_task

__all__ = ["run_task"]  # the workers' entry point, loaded here once

evaluate(load_scenario("one-and-n"), "fcfs", reps=1, jobs=10, warmup=0, batches=1, seed=0, references=False)
