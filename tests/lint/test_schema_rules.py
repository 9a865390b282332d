"""S rules: the exact finding (message, hint, column) of each branch, for schemas written by hand.

The catalogue pins each rule's example; the branches its example does not take are pinned here
(S002's removed-type and torch.library cases, S203's input kind, S101's several and unnamed aliases).
"""

from __future__ import annotations

import pytest

from opkit.lint import Selection, lint
from opkit.signature import Dialect


def found(schema: str, code: str) -> list[tuple[int, str, str | None]]:
    """(column, message, hint) of each ``code`` finding of ``schema`` given with --schema (a new op)."""
    dialect = Dialect.TORCH_LIBRARY if "::" in schema else Dialect.OP_PLUGIN
    return [(f.column, f.message, f.hint) for f in lint(schemas=[schema], dialect=dialect, selection=Selection((code,)), use_cache=False).findings]


def found_in_yaml(tmp_path, text: str, code: str) -> list[tuple[str, int, int, str, str | None]]:
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(text)
    return [(f.op, f.line, f.column, f.message, f.hint) for f in lint([str(path)], selection=Selection((code,)), use_cache=False).findings]


# S002 unknown-type
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ("my_op(Tensr x) -> Tensor", [(7, "unknown type 'Tensr' (op-plugin dialect)", "did you mean 'Tensor'?")]),
        ("mylib::my_op(Tensor x, Flaot y) -> Tensor", [(24, "unknown type 'Flaot' (torch.library dialect)", "did you mean 'float'?")]),
        ("my_op(Qwzxv x) -> Tensor", [(7, "unknown type 'Qwzxv' (op-plugin dialect)", None)]),
        ("my_op(Tensor x) -> Tensor", []),
        ("my_op(Tensor x, int y=) -> Tensor", []),  # a syntax error is S001's
    ],
)
def test_s002_unknown_type_names_it_and_the_nearest_known_type(schema, expected):
    assert found(schema, "S002") == expected


def test_s002_a_removed_type_in_a_schema_without_versions_names_the_last_version_and_the_installed_torch():
    from importlib import metadata

    major, minor = metadata.version("torch").split(".")[:2]
    assert found("my_op(Tensor x, Dimname d) -> Tensor", "S002") == [
        (
            17,
            "type 'Dimname' is not parsed by torchgen after v2.12 (named-tensor overloads were dropped from torchgen's type grammar"
            f" in torch 2.13); installed: v{major}.{minor}",
            "drop the overload, or give the entry a version range ending at v2.12",
        )
    ]


def test_s002_a_removed_type_in_an_entry_names_every_version_that_builds_it(tmp_path):
    text = (
        "all_version: [v2.1, v2.12, v2.13, v2.14]\ncustom:\n"
        "  - func: my_op(Tensor x, Dimname d) -> Tensor\n    op_api: [v2.12, newest]\n"
        "  - func: my_old(Tensor x, Dimname d) -> Tensor\n    op_api: [v2.1, v2.12]\n"
    )
    assert found_in_yaml(tmp_path, text, "S002") == [
        (
            "my_op", 3, 27,
            "type 'Dimname' is not parsed by torchgen after v2.12, but the entry is active in v2.13, v2.14",
            "end its op_api/acl_op range at v2.12 (named-tensor overloads were dropped from torchgen's type grammar in torch 2.13)",
        )
    ]  # fmt: skip


# S203 attr-type-unsupported
def test_s203_an_input_kind_and_attr_types_msopgen_cannot_declare():
    hint = "use int, float, bool, str, ScalarType, Scalar or a list of int/float/bool"
    assert found("my_op(Tensor x, Tensor?[] xs, Layout l, Generator? g=None, Device? d=None, int[]? k=None) -> Tensor", "S203") == [
        (17, "'xs: Tensor?[]' has no msOpGen input kind (required, optional, dynamic)", None),
        (31, "'l: Layout' has no msOpGen attr type", hint),
        (60, "'d: Device?' has no msOpGen attr type", hint),
    ]


def test_s203_new_ops_only(tmp_path):
    text = "official:\n  - func: my_op(Tensor x, Layout l) -> Tensor\n    op_api: all_version\ncustom:\n  - func: my_new(Tensor x, Layout l) -> Tensor\n    op_api: all_version\n"
    assert [f[:3] for f in found_in_yaml(tmp_path, text, "S203")] == [("my_new", 5, 28)]


# S101 returns-mutated-input
def test_s101_names_every_returned_mutated_argument():
    assert found("mylib::my_op_(Tensor(a!) x, Tensor(b!) y) -> (Tensor(a!), Tensor(b!))", "S101") == [
        (
            1,
            "custom op returns x, y through an alias annotation; automatic functionalization rejects it, so it cannot enter an npugraph_ex graph",
            "return () (or fresh tensors) and keep Tensor(a!) on the mutated argument; or tag it torch.Tag.inplace / "
            "torch.Tag.out (torch 2.13 accepts their aliased returns), or register a Functionalize kernel for it",
        )
    ]


def test_s101_a_returned_view_is_an_input_returned_too():
    (finding,) = found("mylib::my_view(Tensor(a) x) -> Tensor(a)", "S101")
    assert finding[1].startswith("custom op returns an input through an alias annotation;")


@pytest.mark.parametrize(
    "schema",
    [
        "mylib::my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",  # ATen's out= convention: S108's
        "mylib::my_op.values_out(Tensor x, *, Tensor(a!) values) -> Tensor(a!)",  # an overload named *_out too
        "mylib::my_op(Tensor(a!) x) -> Tensor(b!)",  # the alias names no argument: S103's
        "mylib::my_op(Tensor(a!) x) -> ()",
        "mylib::my_op(Tensor x) -> Tensor",
    ],
)
def test_s101_silent(schema):
    assert found(schema, "S101") == []


def test_s101_new_ops_only(tmp_path):
    text = "official:\n  - func: abs_(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n"  # ATen's in-place convention
    assert found_in_yaml(tmp_path, text, "S101") == []


def test_s108_an_out_overload_named_like_values_out():
    assert found("mylib::my_op.values_out(Tensor x, *, Tensor(a!) values) -> Tensor(a!)", "S108") == [
        (1, "out= overload returns values through an alias annotation: it cannot enter a graph itself", "call the functional overload my_op(...) in graphs")
    ]


def test_s002_without_torch_metadata_names_the_installed_torch_in_words(monkeypatch):
    from opkit.lint.rules.schema import unknown_type

    monkeypatch.setattr(unknown_type, "installed_torch_version", lambda: None)  # a torch built from source has no dist-info
    ((_, message, _),) = found("my_op(Tensor x, Dimname d) -> Tensor", "S002")
    assert message.endswith("(named-tensor overloads were dropped from torchgen's type grammar in torch 2.13); installed: the installed torch")


# S001 schema-syntax, S003 not-canonical, S004 rejected-by-torch-library: column and hint
@pytest.mark.parametrize(
    ("schema", "code", "expected"),
    [
        ("my_op(Tensor x, int  k) -> Tensor", "S003",
         (17, "not in torchgen's canonical spelling; write: my_op(Tensor x, int k) -> Tensor", "the codegen asserts str(parse(func)) == func")),
        ("my_op(Tensor x, int[2] pads=[1, 1]) -> Tensor", "S001",
         (17, "default of 'int[2] pads=[1, 1]' contains spaces (op-plugin dialect: torchgen.model.FunctionSchema, as op-plugin's codegen)",
          "op-plugin's codegen splits arguments at ', ': write defaults without spaces, e.g. int[2] pads=[1,1]")),
        ("my_op(Tensor x, int k=1, Tensor y) -> Tensor", "S004",
         (26, "torch_npu's m.def() would reject it: argument 'y' without a default follows one with a default",
          "give it a default, move it before the defaulted arguments, or make it keyword-only after '*'")),
    ],
)  # fmt: skip
def test_column_and_hint_of_schema_errors(schema, code, expected):
    assert found(schema, code) == [expected]


def test_s004_new_ops_only(tmp_path):
    text = "official:\n  - func: my_op(Tensor x, int k=1, Tensor y) -> Tensor\n    op_api: all_version\ncustom:\n  - func: my_new(Tensor x, int k=1, Tensor y) -> Tensor\n    op_api: all_version\n"
    assert [f[:3] for f in found_in_yaml(tmp_path, text, "S004")] == [("my_new", 5, 37)]


def test_s103_and_s108_name_every_alias_set_and_out_argument():
    assert found("mylib::my_op(Tensor x) -> Tensor(b|c)", "S103") == [(1, "return alias set 'b|c' matches no argument", None)]
    assert found("mylib::my_op.out(Tensor x, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))", "S108") == [
        (1, "out= overload returns out0, out1 through an alias annotation: it cannot enter a graph itself", "call the functional overload my_op(...) in graphs")
    ]
