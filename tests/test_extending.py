"""docs/extending.md, followed literally: in a temporary copy of the tree, write exactly the files the page shows
(each code block whose first line is ``# PATH``), then run msjgym there in a subprocess and check its numbers. The
page's policy is one new file; its family is one new folder under ``msjgym/systems/`` (with the skeleton's files)
and one under ``policies/``; nothing else of the copy is edited. The slow test runs the whole default test suite in
such a copy of the whole repository: it must pass with nothing else edited."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_skeleton import SKELETON

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "extending.md"
BLOCK = re.compile(r"```python\n# ((?:msjgym|policies)/[\w/]+\.py)\n(.*?)```", re.S)


def page_files() -> dict[str, str]:
    """The files the page tells the reader to write: path -> content."""
    files = {path: code for path, code in BLOCK.findall(PAGE.read_text())}
    assert files, "no '# PATH' code block in docs/extending.md"
    return files


def _left_out(folder: str, names: list[str]) -> list[str]:
    """What the copy leaves out: bytecode and numba's half-written files. numba's cached kernels (``*.nbi``,
    ``*.nbc`` in ``__pycache__``) come along, as they stay in a reader's checkout: keyed on file contents, not paths
    (:mod:`msjgym.core.jit`), the kernels of unchanged files load, and only the page's files compile."""
    return [n for n in names if n.endswith((".pyc", ".pyo")) or ".tmp." in n]


def write_page_files(root: Path) -> None:
    """Write the page's files into the copy ``root``, refusing to overwrite one of the tree's. A tree that already
    holds exactly the page's file (the copy the whole-suite test makes, where the page was followed) is left as is."""
    for path, code in page_files().items():
        target = root / path
        if target.exists() and target.read_text() == code:
            continue
        assert not target.exists(), f"{path}: the page would overwrite a file of the tree"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of msjgym/ and policies/ (with their compiled kernels) with the page's files written into it (and
    nothing else changed)."""
    root = tmp_path_factory.mktemp("tree")
    for top in ("msjgym", "policies"):
        shutil.copytree(ROOT / top, root / top, ignore=_left_out)
    write_page_files(root)
    return root


def _tracked_files() -> list[str]:
    """The repository's files as a fresh clone has them (git's index), or, outside a git checkout, every file but
    the ignored kinds."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        return [f for f in out.stdout.split("\0") if f and (ROOT / f).is_file()]
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not _left_out("", [p.name])
            and not any(part in (".git", ".venv", "site", "build", "dist") for part in p.relative_to(ROOT).parts)]


def whole_tree(root: Path) -> Path:
    """A copy of the repository's files (and numba's cached kernels beside them, which a reader's checkout keeps:
    keyed on file contents, they load in the copy) with the page's files written into it."""
    for name in _tracked_files():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, root / name)
    for top in ("msjgym", "policies"):
        for cached in (ROOT / top).rglob("__pycache__/*.nb[ic]"):
            target = root / cached.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(cached, target)
    write_page_files(root)
    return root


# Several commands in one process of the copy (each process costs ~2 CPU-s of imports): each through the command
# line's entry point, its stdout and stderr kept apart, as ``msjgym ARGS`` would print them.
RUNNER = """
import contextlib, io, json, sys
from msjgym import cli
assert cli.__file__.startswith(sys.argv[1]), cli.__file__  # the copy's msjgym, not the checkout's
runs = []
for args in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args)
    runs.append((status, out.getvalue(), err.getvalue()))
print(json.dumps(runs))
"""


def msjgym(tree: Path, *commands: list[str]) -> list[str]:
    """The stdout of ``msjgym COMMAND`` for each command, run in one process of the copy ``tree``; each must exit 0."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", RUNNER, str(tree), json.dumps(commands)], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    runs = json.loads(out.stdout)
    for command, (status, _, err) in zip(commands, runs):
        assert status == 0, (command, err)
    return [stdout for _, stdout, _ in runs]


def evaluate(*args: str) -> list[str]:
    return ["evaluate", *args, "--json", "--no-progress"]


def test_the_page_adds_one_policy_file_and_one_family_folder():
    """What the page writes: one file in an existing family's policies folder, and the new family's two folders."""
    pages = page_files()
    files = set(pages)
    policy = {f for f in files if f.startswith("policies/msj/")}
    family = files - policy
    # new files: none is a file of the tree (unless it is the page's own, in a tree where the page was followed)
    assert len(policy) == 1 and all(not (ROOT / f).exists() or (ROOT / f).read_text() == pages[f] for f in files)
    folders = {str(Path(f).parent) for f in family}
    assert folders == {"msjgym/systems/single_server", "policies/single_server"}
    system = {Path(f).name for f in family if f.startswith("msjgym/systems/")}
    assert system == {"__init__.py", *SKELETON}, "the page's family must follow the skeleton (docs/layout.md)"


def test_the_pages_policy_runs_as_the_built_in_it_rewrites(tree):
    """The page's policy (first fit in arrival order, written again) gives first-fit's numbers bit for bit."""
    run = ["one-and-n", "--reps", "2", "--jobs", "5000", "--seed", "3"]
    ours, theirs = map(json.loads, msjgym(tree, evaluate(*run, "--policy", "oldest-that-fits"),
                                          evaluate(*run, "--policy", "first-fit")))
    assert ours["policy"] == "oldest-that-fits"
    assert ours["metrics"] == theirs["metrics"] and ours["events"] == theirs["events"]


def test_the_pages_family_is_listed_and_evaluated(tree):
    """The page's family: listed, and its M/M/1 run agrees with 1/(mu - lam) (the reference's verdict)."""
    listing, run = msjgym(tree, ["list"], evaluate("mm1-half", "--policy", "oldest-first", "--reps", "4", "--jobs",
                                                   "20000", "--seed", "1"))
    assert "single-server" in listing and "mm1-half" in listing and "oldest-first" in listing
    result = json.loads(run)
    t = result["metrics"]["response_time"]
    assert result["family"] == "single-server" and abs(t["mean"] - 2.0) <= 4 * t["ci95"]
    (reference,) = result["references"]
    assert reference["value"] == 2.0 and reference["agrees"] is True


@pytest.mark.slow
def test_the_whole_default_suite_passes_with_the_pages_files(tmp_path):
    """The page's promise as CI sees it: in a copy of the whole repository with exactly the page's files added (a
    policy file, a family's two folders) and nothing else edited, the whole default test suite passes (the shared
    tests cover the new family through the registry and its smoke case; its reference pages are generated)."""
    root = whole_tree(tmp_path / "tree")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_XDIST_WORKER",
                                                             "PYTEST_CURRENT_TEST")} | {"PYTHONPATH": str(root)}
    log = tmp_path / "suite.log"
    with log.open("w") as sink:  # a file, not a pipe: a process the suite leaves behind cannot hold the run open
        run = subprocess.Popen([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider"], cwd=root,
                               env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = run.wait(timeout=5400)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)  # the suite's session: its workers and what they left running
    tail = "\n".join(log.read_text().splitlines()[-40:])
    assert status == 0, f"the default suite fails (status {status}) in the copy with the page's files:\n{tail}"
    assert " passed" in tail
