"""Hardening III, part 1: opkit's subprocesses never run code from the working directory or the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from opkit import torch_npu_wheel
from opkit.subprocess_safety import python_argv, run_killing_group

PLANT = 'open({marker!r}, "w").write("ran")\n'


def _plant(directory: Path, relative: str, marker: Path) -> None:
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLANT.format(marker=str(marker)))


def test_pip_download_never_runs_the_working_directorys_pip(tmp_path, monkeypatch):
    """`opkit check` / `opkit new --style extension` on a runner without a wheel: the `python -m pip` they start."""
    cwd, marker = tmp_path / "cwd", tmp_path / "marker"
    _plant(cwd, "pip/__main__.py", marker)
    _plant(cwd, "pip/__init__.py", marker)
    monkeypatch.chdir(cwd)
    empty = tmp_path / "no-index"
    empty.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    monkeypatch.setenv("PYTHONPATH", ".")  # a relative entry names the working directory too
    with pytest.raises(torch_npu_wheel.WheelUnavailable, match="pip download"):
        torch_npu_wheel._download("2.13.0", tmp_path / "tree")
    assert not marker.exists()


def test_doctor_probe_never_imports_the_working_directorys_json(tmp_path, monkeypatch):
    from opkit.verify import doctor

    cwd, marker = tmp_path / "cwd", tmp_path / "marker"
    _plant(cwd, "json.py", marker)
    monkeypatch.chdir(cwd)
    info, error = doctor._probe(timeout=300)
    assert not marker.exists()
    assert info is not None and "torch" in info, error


def test_python_m_opkit_never_imports_the_working_directorys_modules(tmp_path):
    cwd, marker = tmp_path / "cwd", tmp_path / "marker"
    for name in ("json.py", "hashlib.py", "tomllib.py", "difflib.py"):
        _plant(cwd, name, marker)
    (cwd / "x.yaml").write_text("custom: []\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run([sys.executable, "-m", "opkit", "lint", "x.yaml", "--format", "json", "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True)
    assert not marker.exists(), done.stderr
    assert done.returncode == 0, done.stderr


def test_python_children_are_started_with_safe_path():
    argv = python_argv("-c", "import sys; print(sys.flags.safe_path)")
    assert os.path.isabs(argv[0])
    assert subprocess.run(argv, capture_output=True, text=True).stdout.strip() == "True"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_lint_diff_never_runs_the_repositorys_fsmonitor_or_external_diff(tmp_path, run_opkit, monkeypatch):
    repo, marker = tmp_path / "repo", tmp_path / "marker"
    repo.mkdir()
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True, env=env)

    git("init", "-q")
    (repo / "x.yaml").write_text("custom: []\n")
    git("add", "x.yaml")
    git("commit", "-qm", "one")
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    for setting in ("core.fsmonitor", "diff.external", "core.pager"):
        git("config", setting, str(hook))
    (repo / ".gitattributes").write_text("*.yaml diff=evil\n")
    git("config", "diff.evil.textconv", str(hook))
    (repo / "x.yaml").write_text("custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n")
    code, output = run_opkit("lint", str(repo / "x.yaml"), "--diff", "HEAD", "--no-cache")
    assert code in (0, 1), output
    assert not marker.exists()


def test_a_timed_out_command_loses_its_whole_process_group(tmp_path):
    pidfile = tmp_path / "pid"
    script = f"sleep 300 & echo $! > {pidfile}; wait"
    with pytest.raises(subprocess.TimeoutExpired):
        run_killing_group(["/bin/sh", "-c", script], timeout=2, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = int(pidfile.read_text())

    def state() -> str:
        try:
            return Path(f"/proc/{pid}/stat").read_text().split()[2]
        except FileNotFoundError:
            return "gone"

    # killed with the group: reaped by init, or a zombie at most. SIGKILL is delivered at once, but a task
    # still runs its exit (files closed, so the pipes are, before it turns zombie): wait that out, not the sleep
    deadline = time.monotonic() + 10
    while state() not in ("gone", "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state() in ("gone", "Z")
