"""M016 on projects `opkit new` wrote: a hand edit of one of Meta, yaml entry and OpDef InferShape/InferDataType is
reported; the same edit in all of them, an edit of opkit.json itself, or an untouched project is not."""

from __future__ import annotations

import pytest

from opkit.generate import make_spec
from opkit.generate.project import generate_project
from opkit.lint import Selection, lint

SCHEMA = "npu_pair(Tensor q, Tensor k) -> (Tensor, Tensor)"
META_OLD = "return (torch.empty_like(q), torch.empty_like(q))"
META_NEW = "return (torch.empty_like(q), torch.empty_like(k))"
YAML_OLD = "      out1:\n        size: q\n        dtype: q\n"
YAML_NEW = "      out1:\n        size: k\n        dtype: k\n"
SHAPE_OLD = "*context->GetOutputShape(1) = *context->GetInputShape(0);"
SHAPE_NEW = "*context->GetOutputShape(1) = *context->GetInputShape(1);"


@pytest.fixture
def project(tmp_path):
    return generate_project(make_spec("npu_pair", schema=SCHEMA), tmp_path / "npu_pair", msopgen_mode="builtin").path


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new))


def _m015(project) -> list:
    return list(lint([str(project)], selection=Selection(("M016",)), use_cache=False).findings)


def _files(project):
    return project / "meta" / "npu_pair_meta.py", project / "op_plugin" / "op_plugin_functions.yaml", next(project.glob("*/op_host/*.cpp"))


def test_an_untouched_project_is_silent(project):
    assert _m015(project) == []


def test_a_meta_fixed_alone_is_reported_at_its_line(project):
    meta, _, _ = _files(project)
    _edit(meta, META_OLD, META_NEW)
    (finding,) = _m015(project)
    assert finding.path == str(meta) and meta.read_text().splitlines()[finding.line - 1].strip() == META_NEW
    assert "but the yaml entry's gen_opapi and the OpDef's InferShape/InferDataType are still as generated" in finding.message
    assert "opkit new npu_pair --force --output OUT=RULE" in finding.hint


def test_an_infer_shape_edited_alone_is_reported(project):
    _, _, host = _files(project)
    _edit(host, SHAPE_OLD, SHAPE_NEW)
    (finding,) = _m015(project)
    assert finding.path == str(host) and "the OpDef's InferShape/InferDataType no longer follows" in finding.message


def test_a_comment_or_the_exec_is_no_output_rule(project):
    meta, yaml_file, host = _files(project)
    _edit(meta, META_OLD, META_OLD + "  # checked by hand")
    _edit(yaml_file, "exec: aclnnPair", "exec: aclnnPairV2")
    assert _m015(project) == []


def test_the_same_edit_everywhere_is_silent(project):
    meta, yaml_file, host = _files(project)
    _edit(meta, META_OLD, META_NEW)
    _edit(yaml_file, YAML_OLD, YAML_NEW)
    _edit(host, SHAPE_OLD, SHAPE_NEW)
    assert _m015(project) == []


def test_two_of_three_edited_reports_both_and_names_the_third(project):
    meta, yaml_file, _ = _files(project)
    _edit(meta, META_OLD, META_NEW)
    _edit(yaml_file, YAML_OLD, YAML_NEW)
    findings = _m015(project)
    assert sorted(f.path for f in findings) == sorted([str(meta), str(yaml_file)])
    assert all("but the OpDef's InferShape/InferDataType is still as generated" in f.message for f in findings)


def test_an_edited_opkit_json_is_left_to_the_next_force(project):
    meta, _, _ = _files(project)
    _edit(meta, META_OLD, META_NEW)
    _edit(project / "opkit.json", '"out_like": "q"', '"out_like": "q",\n  "outputs": {"out1": {"like": "k"}}')
    assert _m015(project) == []
