"""O rules on hand-written op_host C++ (msopgen.md's OpDef shape): each finding's code, line, column and message.

Fast unit tests (no project generation): one OpDef file, and the schema it is paired with from
``--schema`` or a hand-written op_plugin_functions.yaml entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opkit.lint import Selection, lint
from opkit.signature import Dialect, parse_schema


def desc(kind: str, name: str, param: str = "REQUIRED", types: int = 1, formats: int | None = None) -> str:
    """One fluent descriptor as msOpGen writes it: ``this->Input("x").ParamType(REQUIRED).DataType({...}).Format({...});``."""
    formats = types if formats is None else formats
    chain = f'this->{kind}("{name}").ParamType({param})'
    if types:
        chain += ".DataType({" + ", ".join(["ge::DT_FLOAT"] * types) + "})"
    if formats:
        chain += ".Format({" + ", ".join(["ge::FORMAT_ND"] * formats) + "})"
    return chain + ";"


def opdef(op_type: str, *lines: str, config: str | None = 'this->AICore().AddConfig("ascend910b");') -> str:
    """A class ``op_type`` : public OpDef whose body holds ``lines`` (one statement a line, from line 5), then ``config``."""
    body = [*lines, *([config] if config else [])]
    return (
        f"class {op_type} : public OpDef {{\n"
        "public:\n"
        f"    explicit {op_type}(const char* name) : OpDef(name)\n"
        "    {\n" + "".join(f"        {line}\n" for line in body) + "    }\n"
        "};\n"
        f"OP_ADD({op_type});\n"
    )


def found(tmp_path: Path, code: str, *classes: str, schemas: tuple[str, ...] = (), yaml: str | None = None) -> list[tuple[int, int, str]]:
    """(line, column, message) of each ``code`` finding of the OpDef file made of ``classes``."""
    dialect = Dialect.TORCH_LIBRARY if any("::" in s for s in schemas) else Dialect.OP_PLUGIN
    for schema in schemas:
        parse_schema(schema, dialect)  # a schema that does not parse pairs with nothing: the test would pass vacuously
    cpp = tmp_path / "my_op_def.cpp"
    cpp.write_text("\n".join(classes))
    paths = [str(cpp)]
    if yaml is not None:
        (tmp_path / "op_plugin_functions.yaml").write_text(yaml)
        paths.append(str(tmp_path / "op_plugin_functions.yaml"))
    result = lint(paths, schemas=list(schemas), dialect=dialect, selection=Selection((code,)), use_cache=False)
    assert not [f for f in result.findings if f.code == "E005"], result.findings  # a rule that crashed
    assert all(f.path == str(cpp) and f.op == f.message.partition(":")[0] for f in result.findings if f.code == code)  # each names its OpDef
    return [(f.line, f.column, f.message) for f in result.findings if f.code == code]


X = desc("Input", "x")
OUT = desc("Output", "out")


# O001: every statement or call the reader skips, at its own line, in every OpDef of the file.
def test_o001_lists_each_skipped_call_at_its_line(tmp_path):
    first = opdef("MyOp", X[:-1] + ".Frobnicate(2);", OUT, "this->Wobble();")
    second = opdef("MyOther", X, OUT[:-1] + ".Jiggle();")
    assert found(tmp_path, "O001", first, second) == [
        (5, 1, "MyOp: unknown call .Frobnicate(...) on input 'x' skipped"),
        (7, 1, "MyOp: unknown call this->Wobble(...) skipped"),
        (18, 1, "MyOther: unknown call .Jiggle(...) on output 'out' skipped"),
    ]


def test_o001_silent_on_what_the_reader_knows(tmp_path):
    assert found(tmp_path, "O001", opdef("MyOp", X, OUT, "this->SetInferShape(ge::InferShape);")) == []


# O002: DataType column counts; a list of one is broadcast.
def test_o002_each_descriptor_against_the_longest(tmp_path):
    cls = opdef("MyOp", desc("Input", "x", types=2), desc("Input", "bias", types=1), desc("Input", "w", types=3, formats=1), desc("Output", "out", types=2))
    assert found(tmp_path, "O002", cls) == [
        (5, 1, "MyOp: 'x' lists 2 DataType columns but 'w' lists 3"),
        (8, 1, "MyOp: 'out' lists 2 DataType columns but 'w' lists 3"),
    ]


def test_o002_longest_is_by_datatype_not_format(tmp_path):
    cls = opdef("MyOp", desc("Input", "x", types=3, formats=1), desc("Output", "out", types=2, formats=4))
    assert found(tmp_path, "O002", cls) == [(6, 1, "MyOp: 'out' lists 2 DataType columns but 'x' lists 3")]


def test_o002_checks_every_opdef_of_the_file(tmp_path):
    single = opdef("MySingle", X, OUT)  # no list longer than one: nothing to compare
    wrong = opdef("MyWrong", desc("Input", "x", types=2), desc("Output", "out", types=3))
    assert found(tmp_path, "O002", single, wrong) == [(16, 1, "MyWrong: 'x' lists 2 DataType columns but 'out' lists 3")]
    assert found(tmp_path, "O002", opdef("MyOp", desc("Input", "x", types=2), desc("Output", "out", types=2))) == []


# O003: DataType vs Format length of one descriptor.
@pytest.mark.parametrize(
    ("types", "formats", "fires"),
    [(2, 3, True), (3, 2, True), (2, 2, False), (1, 3, False), (3, 1, False), (2, 0, False), (0, 2, False)],
)
def test_o003_datatype_and_format_lengths(tmp_path, types, formats, fires):
    cls = opdef("MyOp", X, desc("Input", "y", types=types, formats=formats), OUT)
    expected = [(6, 1, f"MyOp: 'y' lists {types} DataType but {formats} Format entries")] if fires else []
    assert found(tmp_path, "O003", cls) == expected


def test_o003_outputs_and_every_opdef(tmp_path):
    first = opdef("MyOp", X, OUT)
    second = opdef("MyOther", X, desc("Output", "y", types=2, formats=3))
    assert found(tmp_path, "O003", first, second) == [(17, 1, "MyOther: 'y' lists 2 DataType but 3 Format entries")]


# O004: no AddConfig, unless an AI CPU op.
def test_o004_each_opdef_without_a_soc_at_its_class_line(tmp_path):
    with_soc = opdef("MyOp", X, OUT)
    without = opdef("MyBare", X, OUT, config="this->AICore().SetTiling(optiling::TilingFunc);")
    aicpu = opdef("MyCpu", X, OUT, config='this->AICPU().ExtendCfgInfo("opInfo.engine", "DNN_VM_AICPU");')
    assert found(tmp_path, "O004", with_soc, without, aicpu) == [(12, 1, "MyBare: no AICore().AddConfig(...): the op is built for no SoC")]


# O101..O105: the OpDef against the schema of its OpType.
def test_o101_missing_and_extra_inputs(tmp_path):
    cls = "// the OpDef of my_op\n" + opdef("MyOp", X, desc("Input", "bias"), desc("Input", "scale"), OUT)
    # three operands and three inputs: aclnn passes them by position, so names alone are O106 notes
    assert found(tmp_path, "O101", cls, schemas=("my_op(Tensor x, Tensor w, Scalar alpha, int k) -> Tensor",)) == []
    assert [line for line, _, _ in found(tmp_path, "O106", cls, schemas=("my_op(Tensor x, Tensor w, Scalar alpha, int k) -> Tensor",))] == [7, 8]
    assert found(tmp_path, "O101", cls, schemas=("my_op(Tensor x, Tensor w, Scalar alpha, Tensor z) -> Tensor",)) == [
        (2, 1, "MyOp: my_op passes 4 tensor(s) (x, w, alpha, z), the OpDef declares 3 input(s) (x, bias, scale): w, alpha, z have no OpDef input"),  # at the class
    ]


def test_o101_extra_only_at_the_first_extra_input(tmp_path):
    cls = opdef("MyOp", X, desc("Input", "w"), desc("Input", "bias"), OUT)
    assert found(tmp_path, "O101", cls, schemas=("my_op(Tensor x, Tensor w) -> Tensor",)) == [
        (7, 1, "MyOp: my_op passes 2 tensor(s) (x, w), the OpDef declares 3 input(s) (x, w, bias): bias is no tensor argument"),
    ]
    assert found(tmp_path, "O101", cls, schemas=("my_op(Tensor x, Tensor w, Tensor bias) -> Tensor",)) == []


def test_o101_no_schema_of_the_op_type_no_finding(tmp_path):
    assert found(tmp_path, "O101", opdef("MyOp", X, OUT), schemas=("other_op(Tensor x, Tensor w) -> Tensor",)) == []


def test_o102_input_and_output_param_types(tmp_path):
    cls = opdef(
        "MyOp",
        desc("Input", "x", "OPTIONAL"),
        desc("Input", "y", "REQUIRED"),
        desc("Input", "z", "REQUIRED"),
        desc("Input", "s", "OPTIONAL"),
        desc("Output", "out", "DYNAMIC"),
        desc("Output", "rest", "REQUIRED"),
    )
    schema = "my_op(Tensor x, Tensor? y, Tensor[] z, Scalar s) -> (Tensor out, Tensor[] rest)"
    assert found(tmp_path, "O102", cls, schemas=(schema,)) == [
        (5, 1, "MyOp: input 'x' is OPTIONAL but the schema declares 'Tensor x' (REQUIRED)"),
        (6, 1, "MyOp: input 'y' is REQUIRED but the schema declares 'Tensor? y' (OPTIONAL)"),
        (7, 1, "MyOp: input 'z' is REQUIRED but the schema declares 'Tensor[] z' (DYNAMIC)"),
        (8, 1, "MyOp: input 's' is OPTIONAL but the schema declares 'Scalar s' (REQUIRED)"),
        (9, 1, "MyOp: output 'out' is DYNAMIC but the schema's is one tensor (REQUIRED)"),
        (10, 1, "MyOp: output 'rest' is REQUIRED but the schema's is a list (DYNAMIC)"),
    ]


def test_o102_mutated_arguments_are_outputs_and_aliased_returns_are_not(tmp_path):
    cls = opdef("MyInplace", desc("Input", "x", "DYNAMIC"), desc("Input", "y"), desc("Output", "x", "REQUIRED"))
    assert found(tmp_path, "O102", cls, schemas=("my_inplace(Tensor(a!)[] x, Tensor y) -> ()",)) == [
        (7, 1, "MyInplace: output 'x' is REQUIRED but the schema's is a list (DYNAMIC)"),
    ]
    # `-> Tensor(a!)` of an out overload returns `out` itself: the output is the mutated argument, not a fresh return
    fine = opdef("MyOp", X, desc("Output", "out"))
    assert found(tmp_path, "O102", fine, schemas=("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",)) == []


def test_o102_fresh_returns_are_paired_with_their_output_names(tmp_path):
    cls = opdef("MyOp", X, desc("Output", "out0"), desc("Output", "out1", "DYNAMIC"))
    assert found(tmp_path, "O102", cls, schemas=("my_op(Tensor x) -> (Tensor, Tensor[])",)) == []
    swapped = opdef("MyOp", X, desc("Output", "out0", "DYNAMIC"), desc("Output", "out1"))
    assert found(tmp_path, "O102", swapped, schemas=("my_op(Tensor x) -> (Tensor, Tensor[])",)) == [
        (6, 1, "MyOp: output 'out0' is DYNAMIC but the schema's is one tensor (REQUIRED)"),
        (7, 1, "MyOp: output 'out1' is REQUIRED but the schema's is a list (DYNAMIC)"),
    ]


def test_o103_order_of_the_schema_operands_only(tmp_path):
    cls = opdef("MyOp", desc("Input", "w"), desc("Input", "bias"), X, OUT)
    assert found(tmp_path, "O103", cls, schemas=("my_op(Tensor x, int k, Tensor w) -> Tensor",)) == [
        (5, 1, "MyOp: OpDef inputs are in the order w, x; my_op passes x, w"),
    ]
    # a missing input is O101's, not an order
    assert found(tmp_path, "O103", opdef("MyOp", desc("Input", "w"), OUT), schemas=("my_op(Tensor x, Tensor w) -> Tensor",)) == []
    assert found(tmp_path, "O103", opdef("MyOp", X, desc("Input", "w"), OUT), schemas=("my_op(Tensor x, Tensor w) -> Tensor",)) == []


def test_o104_outputs_against_fresh_returns_and_mutated_arguments(tmp_path):
    schema = "my_op(Tensor(a!) x, Tensor w) -> (Tensor y, Tensor rstd)"
    three = opdef("MyOp", X, desc("Input", "w"), desc("Output", "x"), desc("Output", "y"), desc("Output", "rstd"))
    assert found(tmp_path, "O104", three, schemas=(schema,)) == []
    two = opdef("MyOp", X, desc("Input", "w"), desc("Output", "y"), desc("Output", "rstd"))
    assert found(tmp_path, "O104", two, schemas=(schema,)) == [(7, 1, "MyOp: 2 OpDef output(s), but my_op has 2 return(s) and 1 mutated argument(s)")]
    none = "// the OpDef of my_op\n" + opdef("MyOp", X, desc("Input", "w"))
    assert found(tmp_path, "O104", none, schemas=(schema,)) == [(2, 1, "MyOp: 0 OpDef output(s), but my_op has 2 return(s) and 1 mutated argument(s)")]


def test_o104_an_aliased_return_is_no_extra_output(tmp_path):
    cls = opdef("MyOp", X, desc("Output", "out"))
    assert found(tmp_path, "O104", cls, schemas=("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",)) == []


def test_o105_each_mutated_argument_without_its_output(tmp_path):
    cls = "// the OpDef of my_inplace\n" + opdef("MyInplace", X, desc("Input", "y"), desc("Output", "y"))
    assert found(tmp_path, "O105", cls, schemas=("my_inplace(Tensor(a!) x, Tensor(b!) y) -> ()",)) == [
        (2, 1, "MyInplace: 'Tensor(a!) x' is written by my_inplace but the OpDef has no output 'x'"),
    ]


# The pairing: the default overload of the non-in-place name, or the OpType the yaml entry's exec calls.
def test_the_opdef_is_paired_with_the_default_overload(tmp_path):
    cls = opdef("MyOp", X, desc("Input", "w"), OUT)
    schemas = ("mylib::my_op_(Tensor(a!) self, Tensor w) -> Tensor(a!)", "mylib::my_op.out(Tensor x, Tensor w, *, Tensor(a!) out) -> Tensor(a!)", "mylib::my_op(Tensor x, Tensor w) -> Tensor")
    assert found(tmp_path, "O104", cls, schemas=schemas) == []
    # without the functional overload, the out overload ranks after the in-place name's default overload
    assert found(tmp_path, "O105", cls, schemas=schemas[:2]) == [
        (1, 1, "MyOp: 'Tensor(a!) self' is written by my_op_ but the OpDef has no output 'self'"),
    ]


YAML = """\
backward: []
official:
  - func: swi_glu(Tensor x) -> Tensor
    op_api: all_version
custom:
  - func: npu_swiglu(Tensor x, Tensor w, int dim=-1) -> Tensor
    op_api: all_version
    gen_opapi:
      out:
        size: x
        dtype: x
      exec: {exec}
  - func: npu_plain(Tensor x) -> Tensor
    op_api: all_version
  - func: npu_no_exec(Tensor x) -> Tensor
    op_api: all_version
    gen_opapi:
      out:
        size: x
        dtype: x
  - op_api: all_version
    gen_opapi:
      exec: aclnnSwiGlu
"""


def test_an_opdef_is_paired_through_the_exec_of_a_yaml_entry(tmp_path):
    """Only custom entries pair (the official swi_glu is an ATen op, whatever its OpType); entries without gen_opapi,
    without exec or without func pair by name only."""
    cls = opdef("SwiGlu", X, OUT)
    assert found(tmp_path, "O101", cls, yaml=YAML.format(exec="aclnnSwiGlu")) == [
        (1, 1, "SwiGlu: npu_swiglu passes 2 tensor(s) (x, w), the OpDef declares 1 input(s) (x): w has no OpDef input"),
    ]
    assert found(tmp_path, "O101", cls, yaml=YAML.format(exec="aclnnSwiGlu, x, w, dim, out")) == [
        (1, 1, "SwiGlu: npu_swiglu passes 2 tensor(s) (x, w), the OpDef declares 1 input(s) (x): w has no OpDef input"),
    ]
    assert found(tmp_path, "O101", cls, yaml=YAML.format(exec="aclnnOther")) == []
    assert found(tmp_path, "O101", cls, yaml=YAML.format(exec="'[1]'")) == []


def test_the_rule_examples_opdef_is_the_class_msopgen_writes():
    """``opkit rule O...`` prints examples built by opdef_example: the OpDef class shape of msopgen.md, literally."""
    from opkit.lint.rules.opdef.common import opdef_example

    assert opdef_example("IN;", "OUT;", "EXTRA;") == (
        "class MyOp : public OpDef {\npublic:\n    explicit MyOp(const char* name) : OpDef(name)\n    {\n"
        "        IN;\n        OUT;\n        EXTRA;\n    }\n};\nOP_ADD(MyOp);"
    )
    assert opdef_example("IN;").splitlines()[5:7] == [
        '        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});',
        '        this->AICore().AddConfig("ascend910b");',
    ]
