"""`opkit new --force` updates a project: three-way merges keep the user's edits, conflicts are marked and reported."""

from __future__ import annotations

import shutil

import pytest

OLD = "my_op(Tensor x) -> Tensor"
NEW = "my_op(Tensor x, Tensor y, float alpha=1.0) -> Tensor"
KERNEL = ("MyOp", "op_kernel", "my_op.cpp")
META = ("meta", "my_op_meta.py")


def _new(run_opkit, target, schema, *extra):
    return run_opkit("new", "my_op", "--schema", schema, "-o", str(target), "--no-verify", "--msopgen", "builtin", *extra)


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new))


@pytest.fixture
def edited(tmp_path, run_opkit):
    """A project whose kernel body and Meta function the user has written."""
    target = tmp_path / "proj"
    assert _new(run_opkit, target, OLD)[0] == 0
    _edit(target.joinpath(*KERNEL), "    // TODO: the kernel. msOpGen leaves this body to the operator developer.\n", "    KernelMyOp op;\n    op.Process();  // my kernel body\n")
    _edit(target.joinpath(*META), "    return torch.empty_like(x)\n", "    return x.new_empty(x.shape)  # my meta\n")
    return target


def test_the_kernel_body_and_meta_edits_survive_a_schema_change(edited, run_opkit):
    code, output = _new(run_opkit, edited, NEW, "--force")
    assert code == 0, output
    kernel = edited.joinpath(*KERNEL).read_text()
    assert "void my_op(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling)" in kernel  # the schema change
    assert "    op.Process();  // my kernel body\n" in kernel and "TODO" not in kernel  # the user's body
    meta = edited.joinpath(*META).read_text()
    assert "def my_op_meta(x, y, alpha=1.0):" in meta and "return x.new_empty(x.shape)  # my meta" in meta
    assert NEW in (edited / "opkit.json").read_text()
    assert "merged with the new generation: MyOp/op_kernel/my_op.cpp, meta/my_op_meta.py\n" in output
    assert "kept" not in output.replace("kept your edits", "")  # the user has no files of their own here
    assert "<<<<<<<" not in kernel + meta


def test_a_conflict_is_marked_reported_and_never_overwritten(edited, run_opkit):
    assert _new(run_opkit, edited, NEW, "--force")[0] == 0
    _edit(edited.joinpath(*META), "def my_op_meta(x, y, alpha=1.0):", "def my_op_meta(x, y, alpha=2.0):  # mine")
    changed = NEW.replace("alpha=1.0", "alpha=1.5")
    code, output = _new(run_opkit, edited, changed, "--force")
    assert code == 1
    assert "conflicts: your edits and the new generation change the same lines in meta/my_op_meta.py" in output
    meta = edited.joinpath(*META).read_text()
    assert (
        "<<<<<<< yours\ndef my_op_meta(x, y, alpha=2.0):  # mine\n"
        "||||||| previous generation\ndef my_op_meta(x, y, alpha=1.0):\n"
        "=======\ndef my_op_meta(x, y, alpha=1.5):\n>>>>>>> new generation\n"
    ) in meta
    assert "return x.new_empty(x.shape)  # my meta" in meta  # the rest of the user's edits merged
    assert "op.Process();  // my kernel body" in edited.joinpath(*KERNEL).read_text()
    # unresolved, it is reported again rather than taken as merged
    code, output = _new(run_opkit, edited, changed, "--force")
    assert code == 1 and "meta/my_op_meta.py" in output.split("conflicts:")[1]
    assert edited.joinpath(*META).read_text() == meta


def test_a_project_without_its_last_generation_merges_against_its_own_spec(edited, run_opkit):
    shutil.rmtree(edited / ".opkit")  # as written by an opkit that kept no copy
    code, output = _new(run_opkit, edited, NEW, "--force")
    assert code == 0, output
    assert "op.Process();  // my kernel body" in edited.joinpath(*KERNEL).read_text()
    assert "GM_ADDR y" in edited.joinpath(*KERNEL).read_text()


def test_files_no_longer_generated_go_unless_edited(tmp_path, run_opkit):
    target = tmp_path / "proj"
    assert _new(run_opkit, target, OLD)[0] == 0
    code, output = run_opkit("new", "my_op", "--style", "custom-op", "-o", str(target), "--no-verify", "--msopgen", "builtin", "--force")
    assert code == 0, output
    assert not (target / "op_plugin").exists()  # the op-plugin entry belongs to the old style only

    assert _new(run_opkit, target, OLD, "--force", "--style", "op-plugin")[0] == 0
    (target / "op_plugin" / "op_plugin_functions.yaml").write_text("custom: []  # mine\n")
    code, output = run_opkit("new", "my_op", "--style", "custom-op", "-o", str(target), "--no-verify", "--msopgen", "builtin", "--force")
    assert code == 0 and "kept 1 of your files: op_plugin/op_plugin_functions.yaml" in output
    assert (target / "op_plugin" / "op_plugin_functions.yaml").read_text() == "custom: []  # mine\n"
