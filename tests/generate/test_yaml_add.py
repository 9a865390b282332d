"""`opkit yaml add` on a copy of the real op_plugin_functions.yaml: only the new lines change."""

from __future__ import annotations

import difflib
import shutil

import pytest

import yaml


def _added_lines(before: str, after: str) -> list[str]:
    """The diff must be pure insertions; return the inserted lines."""
    added = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before.splitlines(keepends=True), after.splitlines(keepends=True), autojunk=False).get_opcodes():
        assert tag in ("equal", "insert"), f"{tag} at line {i1 + 1}"
        added += after.splitlines()[j1:j2] if tag == "insert" else []
    return added


def test_add_changes_only_the_added_lines(generate, corpus_yaml, tmp_path, run_opkit):
    project = generate("my_op", schema="my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor")
    target = tmp_path / "op_plugin_functions.yaml"
    shutil.copyfile(corpus_yaml, target)
    before = target.read_text()

    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project), "--check")
    assert code == 1 and "would add" in out
    assert target.read_text() == before

    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0, out
    assert "warning" not in out  # MyOp is no custom entry's OpType
    after = target.read_text()
    added = _added_lines(before, after)
    assert [line for line in added if line.strip()] == [
        "  - func: my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor",
        "    op_api: all_version",
        "    gen_opapi:",
        "      out:",
        "        size: x",
        "        dtype: x",
        "      exec: aclnnMyOp",
    ]
    data = yaml.safe_load(after)
    fragment = yaml.safe_load((project / "op_plugin" / "op_plugin_functions.yaml").read_text())
    assert data["custom"][-1] == fragment["custom"][0]
    assert sum(len(data[s]) for s in ("official", "autograd", "custom", "symint", "quant")) == 1515

    # a second run changes nothing
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0 and "already present" in out
    assert target.read_text() == after
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project), "--check")
    assert code == 0


def test_conflicting_duplicate_func_is_refused(generate, corpus_yaml, tmp_path, run_opkit):
    target = tmp_path / "op_plugin_functions.yaml"
    shutil.copyfile(corpus_yaml, target)
    before = target.read_text()
    # the real file's custom: section already declares this func, with other fields
    project = generate("npu_gather_backward", schema="npu_gather_backward(Tensor grad, SymInt[] self_size, int dim, Tensor index, bool sparse_grad) -> Tensor", out_like="grad")
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 2
    assert "already declared in 'custom:'" in out
    assert target.read_text() == before


def test_bad_fragment_is_refused(tmp_path, corpus_yaml, run_opkit):
    target = tmp_path / "op_plugin_functions.yaml"
    shutil.copyfile(corpus_yaml, target)
    fragment = tmp_path / "fragment.yaml"
    fragment.write_text("custom:\n  - func: my_op(Tensor x\n")
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(fragment))
    assert code == 2 and "func does not parse" in out


@pytest.mark.parametrize(
    "content, message",
    [
        (b"custom: " + b"[" * 100000 + b"]" * 100000 + b"\n", "nested more than 500 levels deep"),
        (b"\x00\x01", "binary file"),
        (b"custom: []\n# caf\xe9\n", "not UTF-8"),
        (b"custom: [\n", ":2:1: not valid YAML"),
    ],
    ids=["deep", "binary", "latin-1", "syntax"],
)
def test_yaml_add_refuses_unreadable_files_with_one_message(tmp_path, run_opkit, content, message):
    target = tmp_path / "op_plugin_functions.yaml"
    target.write_bytes(content)
    project = tmp_path / "proj"
    assert run_opkit("new", "my_op", "-o", str(project), "--no-verify", "--msopgen", "builtin")[0] == 0
    code, output = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 2
    assert message in output and len(output.strip().splitlines()) == 1
    assert target.read_bytes() == content


def test_yaml_add_keeps_windows_line_endings(tmp_path, run_opkit):
    target = tmp_path / "op_plugin_functions.yaml"
    original = b"official:\r\n  - func: a(Tensor x) -> Tensor\r\n    op_api: all_version\r\ncustom:\r\n  - func: b(Tensor x) -> Tensor\r\n    op_api: all_version\r\n"
    target.write_bytes(original)
    project = tmp_path / "proj"
    assert run_opkit("new", "my_op", "-o", str(project), "--no-verify", "--msopgen", "builtin")[0] == 0
    code, output = run_opkit("yaml", "add", str(target), "--entry", str(project))
    assert code == 0, output
    data = target.read_bytes()
    assert data.startswith(original)
    assert b"\n" not in data.replace(b"\r\n", b"")  # every line ends in CRLF
    assert yaml.safe_load(data)["custom"][1]["func"].startswith("my_op(")


def test_an_entry_whose_optype_another_custom_op_takes_is_added_with_a_warning(generate, tmp_path, run_opkit):
    """my_scale and npu_my_scale both call aclnnMyScale: two kernels of OpType MyScale cannot be installed together."""
    target = tmp_path / "op_plugin_functions.yaml"
    target.write_text("official:\ncustom:\n")
    assert run_opkit("yaml", "add", str(target), "--entry", str(generate("my_scale")))[0] == 0
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(generate("npu_my_scale")))
    assert code == 0
    assert f"warning: OpType MyScale is also the OpType of my_scale ({target}:3)" in out
    code, out = run_opkit("yaml", "add", str(target), "--entry", str(generate("npu_my_scale2", schema="npu_my_scale2(Tensor x) -> Tensor", op_type="MyScale2")))
    assert code == 0 and "warning" not in out
