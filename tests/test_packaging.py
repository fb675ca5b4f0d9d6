"""Packaging: setup.py finds every package by discovery (msjgym's, and the top-level ``policies/`` installed as
``msjgym.policies``), so a new family's two folders ship without editing a list; and (slow) a real ``pip install``
into a throwaway virtualenv imports the installed copy, policies included."""
from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[1]


def setup_arguments(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The keyword arguments setup.py in ``root`` passes to ``setuptools.setup`` (run there, nothing built)."""
    seen: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: seen.update(kwargs))
    monkeypatch.chdir(root)
    runpy.run_path(str(root / "setup.py"), run_name="__main__")
    return seen


def package_folders(root: Path) -> set[str]:
    """Every folder with an ``__init__.py`` under msjgym/ and policies/, as the installed package's name."""
    names = set()
    for top, installed in (("msjgym", "msjgym"), ("policies", "msjgym.policies")):
        for init in (root / top).rglob("__init__.py"):
            parts = init.parent.relative_to(root / top).parts
            names.add(".".join((installed, *parts)))
    return names


def test_every_package_folder_is_found(monkeypatch):
    found = setup_arguments(ROOT, monkeypatch)
    assert set(found["packages"]) == package_folders(ROOT)
    assert found["package_dir"] == {"msjgym.policies": "policies"}
    assert "msjgym.policies.msj" in found["packages"] and "msjgym.systems.msj" in found["packages"]


def test_a_new_familys_folders_are_found_without_editing_anything(tmp_path, monkeypatch):
    """The control: a copy of the tree with one more family (its system folder and its policies folder) ships it."""
    shutil.copy(ROOT / "setup.py", tmp_path)
    for top in ("msjgym", "policies"):
        shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
    for folder in (tmp_path / "msjgym" / "systems" / "toy", tmp_path / "policies" / "toy"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    found = set(setup_arguments(tmp_path, monkeypatch)["packages"])
    assert {"msjgym.systems.toy", "msjgym.policies.toy"} <= found


@pytest.mark.slow
def test_pip_install_ships_the_policies(tmp_path):
    """``pip install --no-deps .`` into a fresh virtualenv (dependencies from this interpreter's site-packages),
    then, from another folder, import msjgym and a policy package from the installed copy and run one evaluation."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "zz_dependencies.pth").write_text("\n".join(deps) + "\n")
    source = tmp_path / "source"  # a copy: building in place would leave build/ and *.egg-info in the checkout
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for top in ("msjgym", "policies"):
        shutil.copytree(ROOT / top, source / top, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(source)], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, timeout=600)
    code = ("import msjgym, msjgym.policies.msj as p; assert p.__file__.startswith(%r), p.__file__; "
            "import pathlib; assert (pathlib.Path(msjgym.__file__).parent / 'py.typed').is_file(); "
            "r = msjgym.evaluate('one-and-n', 'fcfs', reps=2, jobs=2000, seed=1); print(r.policy)" % site)
    out = subprocess.run([str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.returncode == 0 and out.stdout.strip() == "fcfs", out.stderr


def test_version_and_type_marker_ship():
    """``msjgym.__version__`` is pyproject.toml's version (what ``msjgym --version`` prints), and the PEP 561 marker
    ``msjgym/py.typed`` exists and is package data (the slow install test checks it is installed)."""
    import tomllib

    import msjgym
    from cli_run import msjgym as run

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert msjgym.__version__ == project["project"]["version"]
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"msjgym {msjgym.__version__}"
    assert (ROOT / "msjgym" / "py.typed").is_file()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["msjgym"]


def test_evaluate_is_callable_and_a_package():
    """``msjgym.evaluate(...)`` is the evaluator and ``import msjgym.evaluate.sweep`` works (the package's module
    object is callable); the control: the call returns what ``msjgym.evaluate.evaluator.evaluate`` returns."""
    import importlib
    import inspect

    import msjgym
    import msjgym.evaluate.sweep
    from msjgym.evaluate.evaluator import evaluate

    assert msjgym.evaluate.sweep is importlib.import_module("msjgym.evaluate.sweep")
    assert inspect.signature(msjgym.evaluate) == inspect.signature(evaluate)
    called = msjgym.evaluate("one-and-n", "fcfs", reps=2, jobs=500, seed=3, references=False)
    direct = evaluate("one-and-n", "fcfs", reps=2, jobs=500, seed=3, references=False)
    assert called.replications == direct.replications and called.policy == "fcfs"
