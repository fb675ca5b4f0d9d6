"""Nothing is written into an installed package: the kernels of a file under ``site-packages`` / ``dist-packages``
(or the interpreter's library folders) are cached in msjgym's per-user cache, in a folder of their install's own;
a source checkout keeps numba's ``__pycache__`` beside the source. And (slow) the README's two commands, run in order
in one fresh clone, leave a working editable install."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import msjgym.core.jit as jit

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """\
from msjgym.core.jit import njit


@njit
def twice(x):
    return 2 * x
"""

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-", min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..", "site-packages", "dist-packages"))


@settings(max_examples=60, deadline=None)
@given(before=st.lists(_names, max_size=4), after=st.lists(_names, max_size=4),
       folder=st.sampled_from(["site-packages", "dist-packages"]))
def test_a_file_under_a_site_or_dist_packages_folder_is_installed(before, after, folder):
    path = Path("/nonexistent-root", *before, folder, *after, "kernel.py")
    assert jit.installed(path)


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(_names, max_size=6))
def test_a_file_elsewhere_is_not_installed(parts):
    assert not jit.installed(Path("/nonexistent-root", *parts, "kernel.py"))


def test_the_interpreters_library_folders_are_installed_whatever_their_name():
    for key in ("purelib", "platlib"):
        assert jit.installed(Path(sysconfig.get_paths()[key], "msjgym", "core", "jit.py"))


def test_this_checkout_is_not_installed():
    """Run from a source checkout (this test suite's usual case): kernels stay in ``__pycache__`` beside the source."""
    if jit.installed(jit.__file__):
        pytest.skip("msjgym is imported from an installed copy here")
    assert not jit.installed(ROOT / "policies" / "msj" / "fcfs.py")


def _compile_in(folder: Path, name: str):
    """Load ``folder/name.py`` (a one-kernel module keyed by msjgym's cache) and compile its kernel once."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(KERNEL)
    jit.register_source(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.twice(21) == 42
    return path


def _cache_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


def test_a_kernel_of_an_installed_file_is_cached_in_the_user_cache_not_beside_it(tmp_path, monkeypatch):
    """Two fake installs (two virtualenvs' site-packages) of the same module: each is cached in its own folder of
    ``$MSJGYM_CACHE_DIR/numba``; nothing is written under either site-packages."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("MSJGYM_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setattr(jit.config, "CACHE_DIR", "")
    first = tmp_path / "venv1" / "lib" / "python3" / "site-packages" / "fakepkg"
    second = tmp_path / "venv2" / "lib" / "python3" / "dist-packages" / "fakepkg"
    _compile_in(first, "msjgym_fake_installed_a")
    _compile_in(second, "msjgym_fake_installed_b")
    assert _cache_files(tmp_path / "venv1") == [] and _cache_files(tmp_path / "venv2") == []
    cached = _cache_files(tmp_path / "user-cache" / "numba")
    folders = {p.parent for p in cached}
    assert len(folders) == 2 and all(f.name.startswith("fakepkg_") for f in folders), cached


def test_a_kernel_of_a_source_file_is_cached_beside_it(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("MSJGYM_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setattr(jit.config, "CACHE_DIR", "")
    _compile_in(tmp_path / "checkout" / "policies", "msjgym_fake_checkout")
    assert [p.parent.name for p in _cache_files(tmp_path / "checkout")] == ["__pycache__", "__pycache__"]
    assert _cache_files(tmp_path / "user-cache") == []


# ---------------------------------------------------------------- the README's two commands in one fresh clone
def _fresh_clone(tmp_path: Path) -> Path:
    """``git clone`` of this checkout, with its uncommitted edits of tracked files laid over (the tree under test)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    changed = subprocess.run(["git", "-C", str(ROOT), "diff", "--name-only", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.split()
    untracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--others", "--exclude-standard"], check=True,
                               capture_output=True, text=True).stdout.split()
    for name in changed + untracked:
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
        elif not source.exists() and (clone / name).exists():
            (clone / name).unlink()
    return clone


@pytest.mark.slow
def test_the_readmes_two_commands_in_one_clone(tmp_path):
    """Command 1 (``pip install .`` and the main run), then command 2's install (torch, ``pip install -e
    ".[dev,rl]"``) in the same clone and virtualenv: ``msjgym list``, ``gym.make`` and a few test files work from
    the editable install, and no folder of the first install is left in site-packages. About 5-10 minutes."""
    readme = (ROOT / "README.md").read_text()
    assert "pip install -q . && .venv/bin/msjgym evaluate one-and-n --policy server-filling" in readme
    assert 'pip install -q torch==2.13.0 && .venv/bin/pip install -q -e ".[dev,rl]"' in readme
    clone = _fresh_clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "VIRTUAL_ENV")}
    env["MSJGYM_CACHE_DIR"] = str(tmp_path / "user-cache")  # the user's cache, kept out of the real one

    def run(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
        done = subprocess.run(list(args), cwd=clone, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    run("python3", "-m", "venv", ".venv")
    bin_ = clone / ".venv" / "bin"
    run(str(bin_ / "pip"), "install", "-q", ".")
    main = run(str(bin_ / "msjgym"), "evaluate", "one-and-n", "--policy", "server-filling")
    assert "server-filling" in main.stdout
    site = Path(run(str(bin_ / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                    ).stdout.strip())
    assert _cache_files(site / "msjgym") == [], "numba's cache files were written into the installed package"
    assert _cache_files(tmp_path / "user-cache" / "numba"), "the kernels were not cached in the user cache"

    run(str(bin_ / "pip"), "install", "-q", "torch==2.13.0")
    run(str(bin_ / "pip"), "install", "-q", "-e", ".[dev,rl]")
    assert not (site / "msjgym").exists(), sorted(map(str, (site / "msjgym").rglob("*")))[:20]
    listing = run(str(bin_ / "msjgym"), "list")
    assert "one-and-n" in listing.stdout
    located = run(str(bin_ / "python"), "-c", "import gymnasium as gym, msjgym; gym.make('msjgym/MSJ-v0'); "
                  "print(msjgym.__file__)", timeout=600)
    assert Path(located.stdout.strip().splitlines()[-1]).resolve() == (clone / "msjgym" / "__init__.py").resolve()
    run(str(bin_ / "python"), "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
        "tests/test_validation.py", "tests/test_source_checkout.py", "tests/test_packaging.py", "tests/test_envs.py")
