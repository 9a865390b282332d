"""The OpDef reader on constructs of real op_host files that cost false findings: preprocessor lines between
statements, UnknownShapeFormat columns, schema/OpDef pairs whose tensor names differ but whose positions
agree (aclnn passes by position), and CANN's ``AttrType(REQUIRED).Int(VALUE)`` idiom."""

from __future__ import annotations

from opkit.formats.opdef_cpp import read_opdefs
from tests.lint.test_opdef_rules import OUT, X, desc, found, opdef


def test_directive_lines_do_not_swallow_the_statement_after_them(tmp_path):
    text = opdef(
        "MyOp", X, OUT,
        "#ifdef __MY_ARCH__",
        'this->AICore().AddConfig("ascend950");',
        "#endif",
        'this->AICore().AddConfig("ascend910_93");',
        config=None,
    )  # fmt: skip
    (op,) = read_opdefs("my_op_def.cpp", text)
    assert op.socs == ("ascend950", "ascend910_93") and op.skipped == ()
    assert found(tmp_path, "O004", text) == [] and found(tmp_path, "O001", text) == []


def test_a_directive_right_after_a_chain_ends_the_chain(tmp_path):
    # no ';' between `#if` and the next chain is needed for the reader: the directive is a statement of its own
    text = opdef("MyOp", X.removesuffix(";"), "#if 1", ";", OUT, "#else", desc("Output", "other"), "#endif")
    (op,) = read_opdefs("my_op_def.cpp", text)
    assert [t.name for t in op.inputs] == ["x"] and [t.name for t in op.outputs] == ["out", "other"]


def test_a_directive_inside_a_list_stays_in_its_statement():
    line = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT,\n#if 1\n ge::DT_FLOAT16,\n#endif\n ge::DT_BF16}).Format({ge::FORMAT_ND});'
    (op,) = read_opdefs("my_op_def.cpp", opdef("MyOp", line, OUT))
    assert [t.name for t in op.inputs] == ["x"]


def test_unknown_shape_format_columns_are_checked(tmp_path):
    two = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND})'
    out = 'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});'
    bad = opdef("MyOp", two + ".UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});", out)
    ((line, _, message),) = found(tmp_path, "O003", bad)
    assert line == 5 and "2 DataType but 3 UnknownShapeFormat" in message
    good = opdef("MyOp", two + ".UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});", out)
    assert found(tmp_path, "O003", good) == []
    broadcast = opdef("MyOp", two + ".UnknownShapeFormat({ge::FORMAT_ND});", out)
    assert found(tmp_path, "O003", broadcast) == []


def test_unknown_shape_format_list_is_read_not_skipped(tmp_path):
    text = opdef("MyOp", X.removesuffix(";") + ".UnknownShapeFormatList({ge::FORMAT_ND});", OUT)
    assert found(tmp_path, "O001", text) == []


def test_names_that_differ_at_the_same_position_are_a_note_not_an_error(tmp_path):
    text = opdef("MyOp", X, desc("Input", "bias"), OUT)
    schema = ("my_op(Tensor x, Tensor? bias_opt) -> Tensor",)
    assert found(tmp_path, "O101", text, schemas=schema) == []
    ((line, _, message),) = found(tmp_path, "O106", text, schemas=schema)
    assert line == 6 and "'bias_opt' is OpDef input 'bias'" in message
    # the pair is still checked, by position: Tensor? against a REQUIRED input
    ((line, _, message),) = found(tmp_path, "O102", text, schemas=schema)
    assert line == 6 and "REQUIRED" in message and "bias_opt" in message


def test_a_case_only_difference_is_a_note(tmp_path):
    text = opdef("MyOp", desc("Input", "KCache"), OUT)
    assert found(tmp_path, "O101", text, schemas=("my_op(Tensor kCache) -> Tensor",)) == []
    assert len(found(tmp_path, "O106", text, schemas=("my_op(Tensor kCache) -> Tensor",))) == 1


def test_another_number_of_tensors_is_an_error(tmp_path):
    text = opdef("MyOp", X, OUT)
    ((_, _, message),) = found(tmp_path, "O101", text, schemas=("my_op(Tensor x, Tensor w) -> Tensor",))
    assert "passes 2 tensor(s) (x, w), the OpDef declares 1 input(s) (x): w has no OpDef input" in message
    text = opdef("MyOp", X, desc("Input", "w"), desc("Input", "b"), OUT)
    ((line, _, message),) = found(tmp_path, "O101", text, schemas=("my_op(Tensor x, Tensor w) -> Tensor",))
    assert line == 7 and "b is no tensor argument" in message
    # swapped names are O103's (the call swaps them), not a note
    swapped = opdef("MyOp", desc("Input", "w"), X, OUT)
    assert found(tmp_path, "O106", swapped, schemas=("my_op(Tensor x, Tensor w) -> Tensor",)) == []
    assert len(found(tmp_path, "O103", swapped, schemas=("my_op(Tensor x, Tensor w) -> Tensor",))) == 1


def test_a_required_attr_with_a_value_is_no_finding(tmp_path):
    text = opdef("MyOp", X, OUT, 'this->Attr("axis").AttrType(REQUIRED).Int(0);', 'this->Attr("n").Int(2);')
    (op,) = read_opdefs("my_op_def.cpp", text)
    assert [(a.name, a.optional, a.default) for a in op.attrs] == [("axis", False, None), ("n", False, None)]
    assert found(tmp_path, "O001", text) == []
