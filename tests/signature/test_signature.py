"""The signature model: derived facts, names, canonical printing and located errors."""

from __future__ import annotations

import pytest

from opkit import naming
from opkit.signature import Dialect, SchemaError, SchemaKind, parse_schema

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_INPLACE = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor"


def test_torchair_my_op_facts():
    sig = parse_schema(MY_OP)
    assert sig.kind is SchemaKind.FUNCTIONAL
    assert [a.name for a in sig.tensor_arguments] == ["x", "y", "z"]
    assert [a.name for a in sig.attr_arguments] == ["attr1", "attr2"]
    assert [a.type.msopgen_param_type for a in sig.tensor_arguments] == ["required", "optional", "dynamic"]
    assert [a.type.msopgen_attr_type for a in sig.attr_arguments] == ["float", "int"]
    assert (sig.op_type, sig.kernel_name, sig.aclnn_name, sig.meta_function_name) == ("MyOp", "my_op", "aclnnMyOp", "my_op_meta")
    assert sig.output_names == ("out",)
    assert str(sig) == MY_OP


def test_torchair_my_inplace_is_mutable_and_returns_fresh_tensor():
    sig = parse_schema(MY_INPLACE)
    assert sig.kind is SchemaKind.MUTABLE
    assert [a.name for a in sig.mutated_arguments] == ["x"]
    assert not sig.returns_alias
    assert sig.returned_mutated_arguments == ()
    assert sig.op_type == "MyInplace"


def test_out_variant_and_returned_alias():
    sig = parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert sig.kind is SchemaKind.OUT
    assert sig.full_name == "add.out"
    assert [a.name for a in sig.kwarg_only_arguments] == ["alpha", "out"]
    assert [a.name for a in sig.returned_mutated_arguments] == ["out"]
    assert sig.argument("alpha").default == "1"


def test_custom_op_dialect_inplace_with_namespace_and_numbered_alias():
    sig = parse_schema("mylib::my_op_(Tensor(a0!) x) -> ()", Dialect.TORCH_LIBRARY)
    assert (sig.namespace, sig.name, sig.base_name) == ("mylib", "my_op_", "my_op")
    assert sig.kind is SchemaKind.INPLACE
    assert sig.returns == ()
    assert str(sig) == "mylib::my_op_(Tensor(a0!) x) -> ()"


def test_torch_library_dialect_normalises_whitespace_but_keeps_meaning():
    sig = parse_schema("f(Tensor x,int[2]  pads=[1, 1],*,str s=\"a, b\")->(Tensor a, Tensor)", Dialect.TORCH_LIBRARY)
    assert [a.name for a in sig.arguments] == ["x", "pads", "s"]
    assert sig.argument("pads").default == "[1,1]"
    assert sig.argument("s").kwarg_only and sig.argument("s").default == '"a, b"'
    assert sig.output_names == ("a", "out1")
    assert str(sig) == 'f(Tensor x, int[2] pads=[1,1], *, str s="a, b") -> (Tensor a, Tensor)'


@pytest.mark.parametrize(
    "text, dialect, column, fragment",
    [
        ("f(int[2] pads=[1, 1]) -> ()", Dialect.OP_PLUGIN, 3, "contains spaces"),
        ("my_op_(Tensor(a!) x) -> ()", Dialect.OP_PLUGIN, 1, "self argument"),
        ("f(Tensor x, Dimname d) -> Tensor", Dialect.OP_PLUGIN, 13, "unknown type 'Dimname'"),
        ("f(Tensor x, Foo y) -> ()", Dialect.TORCH_LIBRARY, 13, "unknown type 'Foo'"),
        ("f(Tensor x, int k=1, Tensor y) -> ()", Dialect.TORCH_LIBRARY, 22, "without a default"),
        ("f(Tensor x", Dialect.TORCH_LIBRARY, 2, "unbalanced"),
        ("f(Tensor x)", Dialect.TORCH_LIBRARY, 12, "->"),
        ("f(Tensor(a!!) x) -> ()", Dialect.TORCH_LIBRARY, 10, "alias annotation"),
        ("", Dialect.OP_PLUGIN, 1, "empty schema"),
    ],
)
def test_errors_point_at_the_column_and_name_the_dialect(text, dialect, column, fragment):
    with pytest.raises(SchemaError) as info:
        parse_schema(text, dialect)
    error = info.value
    assert error.column == column
    assert fragment in error.message
    assert dialect.value in str(error)


def test_op_plugin_spelling_error_offers_the_canonical_form():
    with pytest.raises(SchemaError) as info:
        parse_schema("my_op(Tensor x,Tensor y)->Tensor")
    assert info.value.canonical == "my_op(Tensor x, Tensor y) -> Tensor"


def test_same_string_parses_to_the_same_object():
    assert parse_schema(MY_OP) is parse_schema(MY_OP)


def test_signature_is_immutable():
    sig = parse_schema(MY_OP)
    with pytest.raises(AttributeError):
        sig.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "camel, snake",
    [("AddCustom", "add_custom"), ("Conv2D", "conv2_d"), ("ABCDef", "abc_def"), ("Abc2DEF", "abc2_def"),
     ("MatMulV2", "mat_mul_v2"), ("RMSNorm", "rms_norm"), ("IoU", "io_u")],
)  # fmt: skip
def test_msopgen_snake_matches_documented_examples(camel, snake):
    assert naming.msopgen_snake(camel) == snake


@pytest.mark.parametrize(
    "name, camel, round_trips",
    [("npu_conv2d", "Conv2d", True), ("npu_add_rms_norm", "AddRmsNorm", True), ("conv2d_v2", "Conv2dV2", True), ("rms_norm_2d", "RmsNorm2d", False), ("my_inplace", "MyInplace", True)],
)
def test_upper_camel_and_round_trip(name, camel, round_trips):
    sig = parse_schema(f"{name}(Tensor x) -> Tensor")
    assert sig.op_type == camel
    assert sig.name_round_trips is round_trips


@pytest.mark.parametrize("name", ["", "1op", "my-op", "a/b", "..", "class", "for", "namespace", "x..y"])
def test_unsafe_names_are_refused(name):
    assert naming.name_problem(name) is not None


@pytest.mark.parametrize("name", ["my_op", "x", "attr_2", "type", "match"])
def test_safe_names_are_accepted(name):
    assert naming.name_problem(name) is None


def test_omittable_arguments_follow_pytorchs_calling_convention():
    sig = parse_schema("f(Tensor x, Tensor? y=None, int[] dims, int k=2, float s=1.0, *, bool flag=False) -> ()", Dialect.TORCH_LIBRARY)
    # y is followed by dims (no default), so PyTorch always passes it; k and s trail; flag is keyword-only.
    assert [a.name for a in sig.omittable_arguments] == ["k", "s", "flag"]
    assert sig.is_omittable(sig.argument("k")) and not sig.is_omittable(sig.argument("y"))


@pytest.mark.parametrize(
    "arg, value",
    [("int[2] p=1", [1, 1]), ("float e=1e-6", 1e-6), ("float f=1", 1.0), ("str s='ab'", "ab"), ('str t="a, b"', "a, b"),
     ("bool b=True", True), ("Tensor? t=None", None), ("int[] d=[1,2]", [1, 2]), ("float[] w=[1,2]", [1.0, 2.0])],
)  # fmt: skip
def test_default_values(arg, value):
    (argument,) = parse_schema(f"f({arg}) -> ()", Dialect.TORCH_LIBRARY).arguments
    assert argument.default_value == value and type(argument.default_value) is type(value)


def test_default_value_of_an_enum_name_is_the_int_torch_gives_it():
    (argument,) = parse_schema("f(MemoryFormat? m=contiguous_format) -> ()", Dialect.TORCH_LIBRARY).arguments
    assert argument.default_value == 0  # torch's parse_schema: c10::MemoryFormat::Contiguous


def test_msopgen_facts_follow_its_transform_table():
    from opkit import msopgen

    assert "NCL" not in msopgen.FORMATS and "FRACTAL_NZ" in msopgen.FORMATS
    assert {"complex32", "int2", "uint1", "string"} <= set(msopgen.DTYPES)
    assert {"type", "list_string", "list_type", "tensor", "list_tensor"} <= set(msopgen.ATTR_METHODS)
    assert [msopgen.soc_family(s) for s in ("ascend950pr", "ascend310p3vir01", "ascend910b", "ascend910_9391", "ascend999x", "gpu")] == [
        "ascend950", "ascend310p", "ascend910", "ascend910_93", None, None]  # fmt: skip
    assert msopgen.compute_unit(("ascend910b1", "ascend910_9391")) == "ai_core-ascend910b1,ai_core-ascend910_9391"


@pytest.mark.parametrize(
    "argument, attr_type, default",
    [
        ("int? k=None", "int", "0"),
        ("int[]? k=None", "list_int", "{}"),
        ("int[2] k=[1,1]", "list_int", "{1,1}"),
        ("ScalarType? k=None", "type", "DT_UNDEFINED"),
        ("ScalarType k=long", "type", "DT_INT64"),
        ("int k=Mean", "int", "1"),
        ("str? k=None", "string", ""),
        ("SymInt k=4", "int", "4"),
    ],
)
def test_attr_types_and_defaults(argument, attr_type, default):
    from opkit import msopgen

    sig = parse_schema(f"my_op(Tensor x, {argument}) -> Tensor")
    (attr,) = msopgen.prototype_from_signature(sig).attrs
    assert (attr.type, attr.param_type, attr.default_value) == (attr_type, "optional", default)


@pytest.mark.parametrize("argument", ['int i="abc"', 'bool b="x"', "float f='a'", "int[] k=[1.5]"])
def test_attr_defaults_are_checked_against_the_attr_type(argument):
    from opkit import msopgen

    try:
        sig = parse_schema(f"my_op(Tensor x, {argument}) -> Tensor")
    except SchemaError:
        return  # torch's own parser already refuses it
    with pytest.raises(msopgen.UnsupportedSignature, match="is not a"):
        msopgen.prototype_from_signature(sig)
