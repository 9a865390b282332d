"""`opkit new --force` touches only what opkit generated: each case the adversarial audit found, exactly.

Empty directories, files named like opkit's temporary ones, symlinked folders, modes, owners and binary
files of the user's all come through an update as they were (or the update is refused, nothing written).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from opkit.generate.project import clean_stale_staging

OLD = "my_op(Tensor x) -> Tensor"
NEW = "my_op(Tensor x, Tensor y) -> Tensor"
META = Path("meta", "my_op_meta.py")
BUILTIN = ("--no-verify", "--msopgen", "builtin")


def _new(run_opkit, target, *extra, schema=OLD):
    return run_opkit("new", "my_op", "--schema", schema, "-o", str(target), *BUILTIN, *extra)


@pytest.fixture
def project(tmp_path, run_opkit):
    target = tmp_path / "proj"
    code, output = _new(run_opkit, target)
    assert code == 0, output
    return target


def _snapshot(root: Path) -> dict[str, object]:
    """Every entry under ``root``, links not followed: a link's target, a file's bytes, a folder as such."""
    found: dict[str, object] = {}
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(directory, name)
            rel = path.relative_to(root).as_posix()
            found[rel] = ("link", os.readlink(path)) if path.is_symlink() else ("dir",) if path.is_dir() else path.read_bytes()
    return found


def test_the_users_empty_directories_are_kept(project, run_opkit):
    (project / "build" / "out").mkdir(parents=True)
    (project / "MyOp" / "notes").mkdir()
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 0, output
    assert (project / "build" / "out").is_dir() and (project / "MyOp" / "notes").is_dir()
    assert list((project / "build" / "out").iterdir()) == []


def test_files_and_folders_named_like_its_temporary_ones_are_never_removed(project, run_opkit):
    parent = project.parent
    (parent / ".proj.opkit-notes").write_text("mine")
    (parent / ".proj.opkit-backup").mkdir()
    (parent / ".proj.opkit-backup" / "old.py").write_text("kept")
    (parent / ".proj.opkit-empty").mkdir()
    for schema in (NEW, OLD):
        code, output = _new(run_opkit, project, "--force", schema=schema)
        assert code == 0, output
    assert clean_stale_staging(project) == []
    assert (parent / ".proj.opkit-notes").read_text() == "mine"
    assert (parent / ".proj.opkit-backup" / "old.py").read_text() == "kept"
    assert (parent / ".proj.opkit-empty").is_dir()
    assert sorted(p.name for p in parent.iterdir()) == [".proj.opkit-backup", ".proj.opkit-empty", ".proj.opkit-notes", "proj"]


def test_a_symlinked_generated_folder_is_refused_and_nothing_is_written(project, run_opkit, tmp_path):
    shared = tmp_path / "shared-meta"
    (project / "meta").rename(shared)
    (project / "meta").symlink_to(shared)
    edited = (shared / "my_op_meta.py").read_text().replace("return torch.empty_like(x)", "return x.new_empty(x.shape)  # mine")
    (shared / "my_op_meta.py").write_text(edited)
    before, linked = _snapshot(project), _snapshot(shared)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 2
    assert output == (
        f"opkit new: {project}/meta is a symlink (to {shared}), and opkit generates files in it: --force does not write through "
        "a linked folder, nor replace it; make it a plain folder (e.g. copy what it links to in its place), then run --force again\n"
    )
    assert _snapshot(project) == before and _snapshot(shared) == linked
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj", "shared-meta"]


def test_a_symlinked_folder_of_the_users_stays_a_link_and_is_not_entered(project, run_opkit, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "weights.bin").write_bytes(b"\0\1")
    (project / "data").symlink_to(data)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 0, output
    assert (project / "data").is_symlink() and os.readlink(project / "data") == str(data)
    assert _snapshot(data) == {"weights.bin": b"\0\1"}


def test_directory_and_file_modes_are_kept(project, run_opkit):
    project.chmod(0o700)
    (project / "MyOp").chmod(0o750)
    (project / META).chmod(0o600)  # the user's choice
    build = project / "MyOp" / "build.sh"
    generated_mode = stat.S_IMODE(build.stat().st_mode)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 0, output
    assert stat.S_IMODE(project.stat().st_mode) == 0o700
    assert stat.S_IMODE((project / "MyOp").stat().st_mode) == 0o750
    assert stat.S_IMODE((project / META).stat().st_mode) == 0o600
    assert stat.S_IMODE(build.stat().st_mode) == generated_mode  # untouched by the user: as generated


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")
def test_owners_are_kept_and_new_files_take_their_folders_owner(project, run_opkit):
    other = (4242, 4343)
    for path in (project, project / "meta", project / META, project / "MyOp" / "op_kernel" / "my_op.cpp"):
        os.chown(path, *other)
    (project / "notes.txt").write_text("mine")
    os.chown(project / "notes.txt", 4545, 4646)
    code, output = _new(run_opkit, project, "--force", "--style", "custom-op", schema=NEW)
    assert code == 0, output
    for path in (project, project / "meta", project / META, project / "MyOp" / "op_kernel" / "my_op.cpp"):
        assert (path.stat().st_uid, path.stat().st_gid) == other, path
    assert ((project / "notes.txt").stat().st_uid, (project / "notes.txt").stat().st_gid) == (4545, 4646)
    assert not (project / "op_plugin").exists()
    code, output = _new(run_opkit, project, "--force", "--style", "op-plugin", schema=NEW)
    assert code == 0, output
    for fresh in (project / "op_plugin", project / "op_plugin" / "op_plugin_functions.yaml"):  # new: the owner of the folder it lands in
        assert (fresh.stat().st_uid, fresh.stat().st_gid) == other, fresh


def test_a_binary_file_is_left_alone_and_reported(project, run_opkit):
    binary = b"\x7fELF\0\0\0 my compiled meta\n"
    (project / META).write_bytes(binary)
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 1
    assert (
        "left alone: meta/my_op_meta.py: binary, so not merged; yours is kept as it is, and what opkit generates now is "
        "under the same path in .opkit/generated/: bring its changes in by hand, then run `opkit verify`\n"
    ) in output
    assert (project / META).read_bytes() == binary
    assert "def my_op_meta(x, y)" in (project / ".opkit" / "generated" / META).read_text()
    # nothing new to bring in: the binary file simply stays, and the update is clean
    code, output = _new(run_opkit, project, "--force", schema=NEW)
    assert code == 0 and "left alone" not in output and (project / META).read_bytes() == binary
