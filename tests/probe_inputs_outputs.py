"""Rerun the hostile probe's examples, first part ( install cache, sweeps with policy files, standard output
failures, path checks, values outside the input layer, deep nesting, byte-order marks) as a user would, and print
one line per case: ``ok`` (a clear one-line error or a correct result) or ``FAIL``.

    python tests/probe_inputs_outputs.py        # from the repository root; about 2-3 minutes

Not collected by pytest (its name does not start with ``test_``); each mechanism is tested over a family of inputs in
tests/test_install_cache.py, test_sweep_policy_files.py, test_stdout_failures.py, test_path_options.py,
test_validated_values.py and test_nesting_and_bom.py. The exit status is the number of failed cases.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "examples" / "traces" / "sample.swf"
POLICY = "class P:\n    def act(self, observation, action_mask):\n        return int(action_mask.nonzero()[0][0])\n"
LONG = "x" * 300


def run(shell: str, cwd: Path) -> subprocess.CompletedProcess:
    """``shell`` in bash, ``msjgym`` being this checkout's ``python -m msjgym``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    prefix = f"msjgym() {{ {sys.executable} -m msjgym \"$@\"; }}; "
    return subprocess.run(["bash", "-c", prefix + shell], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def one_line_error(out: subprocess.CompletedProcess, status: int, *fragments: str) -> tuple[bool, str]:
    lines = out.stderr.strip().splitlines()
    last = lines[-1] if lines else f"(no stderr; stdout {out.stdout.strip()[-80:]!r})"
    good = (out.returncode == status and len(lines) == 1 and lines[0].startswith("msjgym: error: ")
            and all(f in lines[0] for f in fragments))
    return good, f"exit {out.returncode}: {last[:200]}"


def success(out: subprocess.CompletedProcess, fragment: str) -> tuple[bool, str]:
    good = out.returncode == 0 and fragment in out.stdout and "Traceback" not in out.stderr
    tail = (out.stderr.strip().splitlines() or ["(no stderr)"])[-1]
    return good, f"exit {out.returncode}: {fragment!r} {'found' if fragment in out.stdout else 'missing'}; {tail[:120]}"


def saved_output(out: subprocess.CompletedProcess, reason: str) -> tuple[bool, str]:
    """Exit 1, one line naming the reason and a file holding the whole output."""
    good, text = one_line_error(out, 1, reason, "the full output is in")
    if good:
        path = Path(out.stderr.split("the full output is in ")[1].split("'")[1])
        good = path.is_file() and path.stat().st_size > 0
        path.unlink(missing_ok=True)
    return good, text


def setup(folder: Path) -> None:
    (folder / "pol.py").write_text(POLICY)
    shutil.copy(ROOT / "examples" / "compiled_first_fit.py", folder / "compiled.py")
    shutil.copy(SAMPLE, folder / "sample.swf")
    (folder / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    text = SAMPLE.read_text()
    for name, edited in {"h1e20": text.replace("; MaxProcs: 128", "; MaxProcs: 1e20"),
                         "hrep": text.replace("; MaxProcs: 128", "; MaxProcs: 128\n; MaxProcs: 64")}.items():
        (folder / f"{name}.swf").write_text(edited)
        (folder / f"{name}.toml").write_text(f'arrivals = {{ trace = "{name}.swf", scale_servers = 64 }}\n')
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith(";"))
    for name, value in (("rnan", "nan"), ("rabc", "abc")):
        fields = lines[first].split()
        fields[8] = value
        (folder / f"{name}.swf").write_text("\n".join(lines[:first] + [" ".join(fields)] + lines[first + 1:]) + "\n")
        (folder / f"{name}.toml").write_text(f'arrivals = {{ trace = "{name}.swf", scale_servers = 64 }}\n')
    (folder / "deep.toml").write_text("servers = 4\narrival_rate = 1.0\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    bom = b"\xef\xbb\xbf"
    (folder / "bom.toml").write_bytes(bom + (ROOT / "examples" / "three_class.toml").read_bytes())
    (folder / "bom.swf").write_bytes(bom + SAMPLE.read_bytes())
    (folder / "bomswf.toml").write_text('arrivals = { trace = "bom.swf", scale_servers = 64 }\n')
    (folder / "bom.csv").write_bytes(bom + b"arrival_time,need,duration\n0,1,1\n1,2,2\n2,1,1\n3,1,1\n")
    (folder / "bomcsv.toml").write_text('servers = 4\narrivals = { trace = "bom.csv" }\n')
    os.mkfifo(folder / "fifo.toml")
    os.mkfifo(folder / "fifo.csv")
    (folder / "mover.py").write_text(
        "import os\nclass P:\n    def act(self, observation, action_mask):\n"
        f"        os.chdir({str(folder / 'elsewhere')!r})\n        return int(action_mask.nonzero()[0][0])\n")
    (folder / "elsewhere").mkdir()


def cases(folder: Path) -> list[tuple[str, tuple[bool, str]]]:
    small = "--reps 2 --jobs 500 --workers 1 --no-progress"
    out: list[tuple[str, tuple[bool, str]]] = []

    def case(label: str, result: tuple[bool, str]) -> None:
        out.append((label, result))
        print(f"{'ok  ' if result[0] else 'FAIL'}  {label}: {result[1]}", flush=True)

    # 0. where numba's cache files go
    from msjgym.core import jit
    import sysconfig
    site = Path(sysconfig.get_paths()["purelib"], "msjgym", "core", "jit.py")
    case("0  an installed package's kernels go to the user cache (site-packages -> cache_dir()/numba)",
         (jit.installed(site) and not jit.installed(ROOT / "policies" / "msj" / "fcfs.py"),
          f"installed({site.parent.parent.parent.name}/...) = {jit.installed(site)}; this checkout: "
          f"{jit.installed(ROOT / 'policies' / 'msj' / 'fcfs.py')}; cache {jit.cache_dir() / 'numba'}"))
    # 1. sweeps with a policy file
    case("1  sweep --policy pol.py:P", success(run(f"msjgym sweep one-and-n --grid arrival_rate=1.0,1.5 "
                                                   f"--policy pol.py:P {small} --out s1", folder), "results"))
    case("1  sweep --policy compiled.py:first_fit",
         success(run(f"msjgym sweep one-and-n --policy compiled.py:first_fit {small} --out s2", folder), "results"))
    case("1  sweep --policy pol.py:Nope", one_line_error(
        run(f"msjgym sweep one-and-n --policy pol.py:Nope {small} --out s3", folder), 2, "defines no 'Nope'"))
    case("1  sweep --policy compiled.py:Nope", one_line_error(
        run(f"msjgym sweep one-and-n --grid arrival_rate=1.0,1.5 --policy compiled.py:Nope {small} --out s4",
            folder), 2, "defines no 'Nope'"))
    # 2. standard output failures
    case("2  msjgym list >&-", saved_output(run("msjgym list >&-", folder), "standard output is closed"))
    case("2  msjgym evaluate ... --json >&-", saved_output(
        run("msjgym evaluate one-and-n --policy fcfs --reps 2 --jobs 500 --json >&-", folder),
        "standard output is closed"))
    case("2  msjgym list > /dev/full", saved_output(run("msjgym list > /dev/full", folder), "No space left"))
    case("2  msjgym evaluate ... > /dev/full", saved_output(
        run("msjgym evaluate one-and-n --policy fcfs --reps 2 --jobs 500 > /dev/full", folder), "No space left"))
    case("2  msjgym list | (reader gone)", saved_output(
        run("msjgym list | (exec 0<&-; true); exit ${PIPESTATUS[0]}", folder), "Broken pipe"))
    case("2  msjgym list | head -1 (output fits the pipe: no error)",
         (run("msjgym list | head -1; exit ${PIPESTATUS[0]}", folder).returncode == 0, "exit 0"))
    # 3. path checks
    for label, command, fragment in [
        ("--policy 300-char.py:P", f"msjgym evaluate one-and-n --policy {LONG}.py:P", "file system allows"),
        ("--per-job 300-char", f"msjgym evaluate t.toml --policy fcfs --reps 1 --per-job {LONG}.csv",
         "file system allows"),
        ("sweep --out 300-char", f"msjgym sweep one-and-n --policy fcfs --out {LONG}", "file system allows"),
        ("reproduce --out 300-char", f"msjgym reproduce loss-scaling --out {LONG}", "file system allows"),
        ("plot --out 300-char", f"msjgym plot s1 --x arrival_rate --y response_time --out {LONG}.png",
         "file system allows"),
        ("--per-job jobs/ (trailing slash)", "msjgym evaluate t.toml --policy fcfs --reps 1 --per-job jobs/",
         "ends with '/'"),
        ("plot --out new/sub/p.png (missing folders)",
         "msjgym plot s1 --x arrival_rate --y response_time --out new/sub/p.png", "does not exist"),
        ("scenario is a FIFO", "msjgym evaluate fifo.toml --policy fcfs", "a FIFO"),
        ("--per-job is a FIFO", "msjgym evaluate t.toml --policy fcfs --reps 1 --per-job fifo.csv", "a FIFO"),
    ]:
        case(f"3  {label}", one_line_error(run(command, folder), 2, fragment))
    moved = run("msjgym evaluate t.toml --policy mover.py:P --reps 1 --per-job jobs.csv", folder)
    case("3  a policy's os.chdir does not move --per-job",
         ((folder / "jobs.csv").is_file() and not (folder / "elsewhere" / "jobs.csv").exists()
          and moved.returncode == 0, f"exit {moved.returncode}: jobs.csv in the start folder: "
                                     f"{(folder / 'jobs.csv').is_file()}"))
    # 4. values outside the input layer
    for label, command, fragment in [
        ("SWF ; MaxProcs: 1e20", "msjgym evaluate h1e20.toml --policy fcfs --reps 1", "MaxProcs = 1e+20"),
        ("SWF MaxProcs repeated", "msjgym evaluate hrep.toml --policy fcfs --reps 1", "given again"),
        ("SWF requested time nan", "msjgym evaluate rnan.toml --policy fcfs --reps 1", "requested time (field 9)"),
        ("SWF requested time abc", "msjgym evaluate rabc.toml --policy fcfs --reps 1", "requested time (field 9)"),
        ("dist=erlang(k=2, k=3)", "msjgym evaluate lb-dispatch --policy jsq --param 'dist=erlang(k=2, k=3)'",
         "'k' is given twice"),
        ("--param servers twice", "msjgym evaluate one-and-n --policy fcfs --param servers=8 --param servers=16",
         "given twice"),
    ]:
        case(f"4  {label}", one_line_error(run(command, folder), 2, fragment))
    # 5. deep nesting
    deep = "[" * 5000 + "]" * 5000
    for label, command in [("--param x=[[[...]]]", f"msjgym evaluate one-and-n --policy fcfs --param 'x={deep}'"),
                           ("--grid x=[[[...]]]", f"msjgym sweep one-and-n --policy fcfs --grid 'x={deep}' --out o"),
                           ("TOML x = [[[...]]]", "msjgym evaluate deep.toml --policy fcfs")]:
        case(f"5  {label}", one_line_error(run(command, folder), 2, "levels deep; at most"))
    # 6. byte-order marks
    case("6  BOM in a TOML scenario", success(run("msjgym evaluate bom.toml --policy fcfs --reps 2 --jobs 500",
                                                  folder), "scenario  bom.toml"))
    case("6  BOM in an SWF trace", success(run("msjgym evaluate bomswf.toml --policy fcfs --reps 1", folder),
                                           "scenario  bomswf.toml"))
    case("6  BOM in a CSV trace", success(run("msjgym evaluate bomcsv.toml --policy fcfs --reps 1 --jobs 4",
                                              folder), "scenario  bomcsv.toml"))
    return out


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="probe34a-") as tmp:
        folder = Path(tmp)
        setup(folder)
        results = cases(folder)
    failed = sum(1 for _, (good, _) in results if not good)
    print(json.dumps({"cases": len(results), "failed": failed}))
    return failed


if __name__ == "__main__":
    sys.exit(main())
