"""`opkit yaml add` updating an entry an earlier generation of the project wrote, and `opkit yaml remove`:
exactly the changed lines change (and are printed), every other byte is kept, anything else is refused."""

from __future__ import annotations

import json
import shutil

import pytest

from opkit.generate.yaml_edit import EARLIER_ENTRIES, YamlEditError, earlier_entries, plan_add, plan_remove

OLD = {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "gen_opapi": {"out": {"size": "x", "dtype": "x"}, "exec": "aclnnMyOp"}}
NEW = {"func": "my_op(Tensor x, Tensor y) -> Tensor", "op_api": "all_version", "gen_opapi": {"out": {"size": "y", "dtype": "x"}, "exec": "aclnnMyOp"}}
FILE = (
    "official:\n  - func: abs(Tensor self) -> Tensor\n    op_api: all_version\n"
    "custom:\n"
    "  - func: other(Tensor x) -> Tensor   # a comment kept\n    op_api: [v2.1, newest]\n"
    "\n"
    "  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnMyOp\n"
    "\n"
    "  - func: last(Tensor x) -> Tensor\n    op_api: all_version\n"
    "symint:\nautograd:\nquant:\n"
)


def _write(tmp_path, text: str, newline: str = "\n"):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_bytes(text.replace("\n", newline).encode())
    return path


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_earlier_generations_entry_is_updated_in_place(tmp_path, newline):
    path = _write(tmp_path, FILE, newline)
    edit = plan_add(path, NEW, earlier=(OLD,))
    assert edit.status == "updated" and edit.line == 8
    expected = FILE.replace(
        "  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n",
        "  - func: my_op(Tensor x, Tensor y) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: y\n",
    )
    assert edit.new_bytes == expected.replace("\n", newline).encode()
    # exactly the changed lines, without context
    assert [line for line in edit.diff if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        "-  - func: my_op(Tensor x) -> Tensor", "-        size: x",
        "+  - func: my_op(Tensor x, Tensor y) -> Tensor", "+        size: y",
    ] or [line for line in edit.diff if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        "-  - func: my_op(Tensor x) -> Tensor", "+  - func: my_op(Tensor x, Tensor y) -> Tensor", "-        size: x", "+        size: y",
    ]  # fmt: skip


def test_an_entry_no_generation_wrote_is_refused_with_the_remove_command(tmp_path):
    path = _write(tmp_path, FILE)
    hand_written = dict(OLD, op_api="v2.1")
    with pytest.raises(YamlEditError, match=rf"{path}:8: op 'my_op' is already declared in 'custom:' as 'my_op\(Tensor x\) -> Tensor', and no generation of this project wrote that entry; .* opkit yaml remove {path} my_op"):
        plan_add(path, NEW, earlier=(hand_written,))
    with pytest.raises(YamlEditError, match="already declared"):
        plan_add(path, NEW)


def test_an_official_entry_is_never_updated(tmp_path):
    path = _write(tmp_path, FILE)
    old_abs = {"func": "abs(Tensor self) -> Tensor", "op_api": "all_version"}
    with pytest.raises(YamlEditError, match="already declared in 'official:'"):
        plan_add(path, {"func": "abs(Tensor self, int k) -> Tensor", "op_api": "all_version"}, earlier=(old_abs,))


@pytest.mark.parametrize(
    "op, removed",
    [
        ("my_op", "\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnMyOp\n"),
        ("last", "\n  - func: last(Tensor x) -> Tensor\n    op_api: all_version\n"),
        ("other", "  - func: other(Tensor x) -> Tensor   # a comment kept\n    op_api: [v2.1, newest]\n\n"),
    ],
)
def test_remove_takes_out_the_entry_and_its_separator(tmp_path, op, removed):
    path = _write(tmp_path, FILE)
    edit = plan_remove(path, op)
    assert edit.status == "removed"
    assert edit.new_bytes.decode() == FILE.replace(removed, "", 1)
    assert all(line[1:] in removed.splitlines() for line in edit.diff if line.startswith("-") and not line.startswith("---"))


@pytest.mark.parametrize(
    "op, message",
    [("abs", "op_plugin_functions.yaml:2: abs is declared in 'official:'; opkit yaml remove takes out 'custom:' entries only"), ("nope", "no entry declares op 'nope'")],
)
def test_remove_refusals(tmp_path, op, message):
    path = _write(tmp_path, FILE)
    with pytest.raises(YamlEditError, match=message):
        plan_remove(path, op)


def test_the_last_custom_entry_removed_leaves_an_empty_section(tmp_path):
    path = _write(tmp_path, "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\nofficial:\n")
    assert plan_remove(path, "my_op").new_bytes == b"custom:\nofficial:\n"


def test_force_remembers_the_earlier_entry_and_yaml_add_updates_it(generate, tmp_path, run_opkit):
    project = generate("my_op", schema="my_op(Tensor x) -> Tensor")
    target = _write(tmp_path, "custom:\n  - func: keep(Tensor x) -> Tensor\n    op_api: all_version\nofficial:\n")
    assert run_opkit("yaml", "add", str(target), "--entry", str(project))[0] == 0
    added = target.read_text()
    code, out = run_opkit("new", "my_op", "-o", str(project), "--force", "--schema", "my_op(Tensor x, Tensor y) -> Tensor", "--output", "out=like:y", "--no-verify", "--msopgen", "builtin")
    assert code == 0, out
    assert earlier_entries(project) and earlier_entries(project)[0]["func"] == "my_op(Tensor x) -> Tensor"
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project), "--check")
    assert code == 1 and "would update" in out and "-  - func: my_op(Tensor x) -> Tensor" in out
    assert target.read_text() == added
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0 and "updated the entry an earlier generation wrote" in out
    assert "+        size: y" in out and "+  - func: my_op(Tensor x, Tensor y) -> Tensor" in out
    assert run_opkit("yaml", "add", str(target), "--entry", str(project))[1].endswith("already present; nothing to do\n")
    code, out = run_opkit("yaml", "remove", str(target), "my_op")
    assert code == 0 and "removed my_op(Tensor x, Tensor y) -> Tensor" in out
    assert target.read_text() == "custom:\n  - func: keep(Tensor x) -> Tensor\n    op_api: all_version\nofficial:\n"
    assert json.loads((project / EARLIER_ENTRIES).read_text())[0]["func"] == "my_op(Tensor x) -> Tensor"


def test_update_and_remove_on_a_copy_of_the_real_yaml(corpus_yaml, tmp_path, run_opkit):
    """The user's loop on the real file: add, change the op (--force), update (only the changed lines), remove
    (the file is byte for byte the original again)."""
    target = tmp_path / "op_plugin_functions.yaml"
    shutil.copyfile(corpus_yaml, target)
    original = target.read_bytes()
    project = tmp_path / "npu_my_rope"
    options = ("--no-verify", "--msopgen", "builtin", "-o", str(project))
    assert run_opkit("new", "npu_my_rope", "--schema", "npu_my_rope(Tensor q, Tensor k) -> (Tensor, Tensor)", *options)[0] == 0
    assert run_opkit("yaml", "add", str(target), "--entry", str(project))[0] == 0
    added = target.read_bytes()
    code, out = run_opkit("new", "npu_my_rope", "--force", "--output", "out1=like:k", *options)
    assert code == 0, out
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0, out
    changed = [line for line in out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-        size: q", "-        dtype: q", "+        size: k", "+        dtype: k"]
    before, after = added.decode().splitlines(), target.read_text().splitlines()
    assert len(before) == len(after) and sum(a != b for a, b in zip(before, after)) == 2
    code, out = run_opkit("new", "npu_my_rope", "--force", "--schema", "npu_my_rope(Tensor q, Tensor k, Tensor cos) -> (Tensor, Tensor)", *options)
    assert code == 0, out
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0 and "+  - func: npu_my_rope(Tensor q, Tensor k, Tensor cos) -> (Tensor, Tensor)" in out, out
    assert run_opkit("yaml", "remove", str(target), "npu_my_rope")[0] == 0
    assert target.read_bytes() == original
