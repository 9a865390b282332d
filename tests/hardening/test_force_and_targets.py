"""Hardening III, part 4: `opkit new --force` under concurrent edits, runs and mounts; `-o` into an empty
directory wherever the user may write; `lint -o` never over an input; `yaml add` never removes a user's file."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from opkit.generate import project as project_module

from tests.generate.test_update_safety import META, NEW, OLD, _new, project  # noqa: F401 (project: a fixture)


@contextlib.contextmanager
def _mounted(point: Path, *options: str):
    """A real tmpfs at ``point`` (root only; the test is skipped elsewhere), unmounted afterwards."""
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", *options, "opkit-test", str(point)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_an_edit_made_while_force_runs_is_kept_and_reported(project, run_opkit, monkeypatch):
    meta = project / META
    real_update = project_module.update_tree

    def update_then_the_user_saves(old, rendered, render_base):
        result = real_update(old, rendered, render_base)
        meta.write_text(meta.read_text() + "# saved by an editor meanwhile\n")
        return result

    monkeypatch.setattr(project_module, "update_tree", update_then_the_user_saves)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 1, output
    assert "meta/my_op_meta.py changed while --force was updating the project; nothing was updated and your change is kept" in output
    assert meta.read_text().endswith("# saved by an editor meanwhile\n")
    assert OLD in (project / "opkit.json").read_text()  # not updated


def test_an_edit_between_the_last_check_and_the_swap_is_swapped_back(project, run_opkit, monkeypatch):
    meta = project / META
    real_swap = project_module._swap_into_place
    calls = []

    def save_then_swap(rendered, target, staging):
        if not calls:
            meta.write_text(meta.read_text() + "# saved at the last moment\n")
        calls.append(1)
        return real_swap(rendered, target, staging)

    monkeypatch.setattr(project_module, "_swap_into_place", save_then_swap)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 1, output
    assert meta.read_text().endswith("# saved at the last moment\n")
    assert OLD in (project / "opkit.json").read_text()


def test_a_second_force_waits_for_the_first_and_keeps_its_changes(project, run_opkit):
    from opkit.generate import make_spec

    readme = project / "README.md"
    result: dict = {}

    def second_run():
        try:
            result["project"] = project_module.generate_project(make_spec("my_op", schema=NEW), project, force=True, msopgen_mode="builtin")
        except Exception as exc:  # reported by the assertion below
            result["error"] = exc

    with project_module._project_lock(project):  # the first run holds the project
        thread = threading.Thread(target=second_run)
        thread.start()
        time.sleep(0.3)  # let the second run reach the lock (no assertion on time: it only must not lose the change)
        readme.write_text(readme.read_text() + "\nA change the first run made.\n")
    thread.join()
    assert "error" not in result, result.get("error")
    assert "A change the first run made." in readme.read_text()
    assert NEW in (project / "opkit.json").read_text()


def test_a_force_run_gives_up_when_another_holds_the_project(project, monkeypatch):
    from opkit.generate import make_spec

    monkeypatch.setattr(project_module, "PROJECT_LOCK_TIMEOUT_S", 0.2)
    with project_module._project_lock(project):
        with pytest.raises(project_module.TargetError, match="is being updated by another opkit run"):
            project_module.generate_project(make_spec("my_op", schema=NEW), project, force=True, msopgen_mode="builtin")
    assert OLD in (project / "opkit.json").read_text()


def test_force_never_crosses_a_mount_point_inside_the_project(project, run_opkit):
    with _mounted(project / "data") as mounted:
        (mounted / "dataset.bin").write_bytes(b"not opkit's")
        code, output = _new(run_opkit, project, "--force", schema=NEW)
        assert code == 2, output
        assert f"{mounted} is a mount point inside {project}: --force never updates across a mount point" in output
        assert (mounted / "dataset.bin").read_bytes() == b"not opkit's"
        assert OLD in (project / "opkit.json").read_text()


def test_a_mount_point_is_found_by_its_device_too(tmp_path):
    with _mounted(tmp_path / "root" / "inner") as mounted:
        assert project_module.mount_points_inside(tmp_path / "root") == [mounted]
    assert project_module.mount_points_inside(tmp_path / "root") == []


def test_o_accepts_an_empty_mount_point(tmp_path, run_opkit):
    with _mounted(tmp_path / "mnt") as mounted:
        code, output = _new(run_opkit, mounted)
        assert code == 0, output
        assert (mounted / META).is_file() and (mounted / "opkit.json").is_file()
        assert os.path.ismount(mounted)
        assert not [p for p in os.listdir(mounted) if p.startswith(".opkit-staging")]


def test_o_accepts_a_writable_directory_in_a_read_only_parent(tmp_path, run_opkit):
    parent = tmp_path / "parent"
    with _mounted(parent, "-o", "size=1m"):
        (parent / "mine").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(parent)], check=True)
        with _mounted(parent / "mine") as mine:  # a writable filesystem inside the read-only one
            with pytest.raises(OSError):
                (parent / "probe").write_text("x")  # the parent really is read-only
            code, output = _new(run_opkit, mine)
            assert code == 0, output
            assert (mine / META).is_file()


YAML = "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"


@pytest.mark.parametrize("how", ["same-path", "through-a-link", "inside-a-linted-directory"])
def test_lint_o_refuses_one_of_its_inputs(tmp_path, run_opkit, how):
    target = tmp_path / "x.yaml"
    target.write_text(YAML)
    given, output = {
        "same-path": (target, target),
        "through-a-link": (target, tmp_path / "link.yaml"),
        "inside-a-linted-directory": (tmp_path, target),
    }[how]
    if how == "through-a-link":
        output.symlink_to(target)
    code, text = run_opkit("lint", str(given), "-o", str(output))
    assert code == 2, text
    assert f"-o {output}: it is one of the inputs ({given})" in text
    assert target.read_text() == YAML


def test_lint_o_writes_a_report_file_even_inside_a_linted_directory(tmp_path, run_opkit):
    target = tmp_path / "x.yaml"
    target.write_text(YAML)
    for _ in range(2):  # the second run finds the first one's report there: not an input, written again
        code, text = run_opkit("lint", str(tmp_path), "-o", str(tmp_path / "report.txt"), "--format", "json")
        assert code in (0, 1) and text == ""
    import json

    assert isinstance(json.loads((tmp_path / "report.txt").read_text()), (list, dict))
