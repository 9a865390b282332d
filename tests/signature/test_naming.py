"""opkit.naming against the names the specs give (msopgen.md §2, §4, §5; op-plugin-yaml.md's real-file conventions)."""

from __future__ import annotations

import pytest

from opkit import naming


@pytest.mark.parametrize(
    ("op_name", "op_type", "aclnn"),
    [
        ("my_op", "MyOp", "aclnnMyOp"),  # op-plugin-yaml.md, gen_opapi
        ("my_inplace", "MyInplace", "aclnnMyInplace"),  # msopgen.md §2
        ("npu_add_rms_norm", "AddRmsNorm", "aclnnAddRmsNorm"),  # real file: the OpType drops npu_
        ("npu_conv2d", "Conv2d", "aclnnConv2d"),
        ("npu_", "Npu", "aclnnNpu"),  # nothing left after the prefix: the name stays whole
        ("npu_2d", "Npu2d", "aclnnNpu2d"),  # "2d" is no identifier: the name stays whole
        ("a__b", "AB", "aclnnAB"),  # empty parts vanish
    ],
)
def test_op_type_and_aclnn_name(op_name, op_type, aclnn):
    assert naming.op_type(op_name) == op_type
    assert naming.aclnn_name(op_name) == aclnn
    assert naming.aclnn_for_op_type(op_type) == aclnn


def test_kernel_base_drops_only_a_leading_npu_prefix():
    assert naming.kernel_base("npu_swiglu") == "swiglu"
    assert naming.kernel_base("my_npu_op") == "my_npu_op"
    assert naming.kernel_base("npu_") == "npu_"


@pytest.mark.parametrize(("name", "camel"), [("attr_1", "attr1"), ("x", "x"), ("seq_len_q", "seqLenQ"), ("", "")])
def test_lower_camel_is_the_aclnn_parameter_spelling(name, camel):
    assert naming.lower_camel(name) == camel  # msopgen.md §5: names in lowerCamelCase


def test_identifiers_get_a_trailing_underscore_only_when_reserved():
    assert [naming.python_identifier(n) for n in ("self", "lambda", "x", "int")] == ["self_", "lambda_", "x", "int"]
    assert [naming.cpp_identifier(n) for n in ("int", "class", "lambda", "x", "self")] == ["int_", "class_", "lambda_", "x", "self"]
    assert naming.meta_function_name("my_op") == "my_op_meta"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "op name is empty"),
        ("a/b", "op name 'a/b' contains a path separator or '..'"),
        ("a\\b", "op name 'a\\\\b' contains a path separator or '..'"),
        ("a..b", "op name 'a..b' contains a path separator or '..'"),
        ("2d", "op name '2d' is not an identifier (letters, digits and '_', not starting with a digit)"),
        ("my-op", "op name 'my-op' is not an identifier (letters, digits and '_', not starting with a digit)"),
        ("lambda", "op name 'lambda' is a Python keyword"),
        ("template", "op name 'template' is a C++ keyword"),
        ("_op2", None),
    ],
)
def test_name_problem_says_why(name, message):
    assert naming.name_problem(name, what="op name") == message


def test_name_problem_default_subject():
    assert naming.name_problem("") == "name is empty"


@pytest.mark.parametrize(("camel", "snake"), [("A", "a"), ("AB", "ab"), ("ABc", "a_bc"), ("A1B", "a1_b"), ("aB", "a_b")])
def test_msopgen_snake_edges(camel, snake):
    """msopgen.md §4's rule at the edges: first character, uppercase runs, digits, the last character."""
    assert naming.msopgen_snake(camel) == snake


@pytest.mark.parametrize(
    ("exec_text", "op_type"),
    [
        ("aclnnScale, x, out", "Scale"),  # the callee is the text before the first comma
        ("  aclnnSwiGlu  ,x", "SwiGlu"),  # spaces around it do not count
        ("aclnnAddRmsNorm", "AddRmsNorm"),  # no arguments at all
        ("aclnn, x", None),  # 'aclnn' alone names no OpType
        ("npu_scale, x", None),  # another callee
        ("Scale, aclnnX", None),  # 'aclnn' after the first comma is an argument, not the callee
    ],
)
def test_op_type_of_exec(exec_text, op_type):
    assert naming.op_type_of_exec(exec_text) == op_type
