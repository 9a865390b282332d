"""opkit.msopgen's small translations, each against what msopgen.md says msOpGen takes or writes."""

from __future__ import annotations

import pytest

from opkit import msopgen
from opkit.signature import DType, parse_schema


@pytest.mark.parametrize(
    ("soc", "family"),
    [
        # §3: the chip variants and their families; a bare ascend910b is the FIRST-generation ascend910
        ("ascend910b1", "ascend910b"), ("ascend910b4", "ascend910b"), ("ascend910b", "ascend910"),
        ("ascend310p1", "ascend310p"), ("ascend310p7", "ascend310p"), ("ascend910_9391", "ascend910_93"),
        # §6: msOpGen's own map; a family is its own; an ascend... name the map lacks is refused (msOpGen would
        # pass it through into an OpDef no CANN builds)
        ("ascend950dt", "ascend950"), ("ascend950pr", "ascend950"), ("ascend310p3vir01", "ascend310p"),
        ("ascend310p", "ascend310p"), ("ascend999x", None), ("ascend999", None), ("Ascend910B1", None), ("ai_core-ascend910b1", None), ("", None),
    ],
)  # fmt: skip
def test_soc_family(soc, family):
    assert msopgen.soc_family(soc) == family


def test_compute_unit_is_ai_core_dash_soc_comma_separated():
    """§3 and §6: `-c ai_core-<soc>`, several compute units in one -c, comma-separated."""
    assert msopgen.compute_unit("ascend910b1") == "ai_core-ascend910b1"
    assert msopgen.compute_unit(("ascend910b1", "ascend910_9391")) == "ai_core-ascend910b1,ai_core-ascend910_9391"
    assert msopgen.compute_unit(["ascend310p3"]) == "ai_core-ascend310p3"


def test_ge_dtype():
    """§1: float32 is DT_FLOAT; a torch name msOpGen's table lacks maps through ge's own enum or is undefined."""
    assert [msopgen.ge_dtype(t) for t in ("float32", "float16", "bfloat16", "int64", "float64", "int4")] == [
        "DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_INT64", "DT_DOUBLE", "DT_UNDEFINED",
    ]  # fmt: skip


def test_default_value_text_is_a_cpp_literal_with_braced_lists():
    """§6: msOpGen pastes default_value into C++; lists need braces."""
    assert [msopgen.default_value_text(v) for v in (True, False, 1, 1e-06, "abc", [1, 1], [True, False], [], DType("float32"))] == [
        "true", "false", "1", "1e-06", "abc", "{1,1}", "{true,false}", "{}", "DT_FLOAT",
    ]  # fmt: skip
    assert msopgen.json_default("True") == "true" and msopgen.json_default("False") == "false"
    assert msopgen.json_default("[1,1]") == "[1,1]"


def test_expand_columns_broadcasts_only_a_single_value():
    """§1 rule 1: a length-1 list is broadcast to the other's length."""
    assert msopgen.expand_columns(("ND",), 3) == ("ND", "ND", "ND")
    assert msopgen.expand_columns(("ND", "NCHW"), 3) == ("ND", "NCHW")


SCHEMA = (
    "f(Tensor x, int a=True, float b=1, int? c=None, str d=\"a(b\", int[2] e=1, bool[] g=[True], int h=2.5, "
    "float[] i=[1,2], int[] j=[True], bool k=1, str? v=None, ScalarType? t=None, ScalarType u=float, "
    "ScalarType w=\"abc\", ScalarType[] y=[1,2], ScalarType[] z=[], ScalarType n=[]) -> Tensor"
)


def _default(name):
    (arg,) = [a for a in parse_schema(SCHEMA).arguments if a.name == name]
    return msopgen.attr_default(arg)


@pytest.mark.parametrize(
    ("name", "value"),
    [("b", 1.0), ("c", 0), ("e", [1, 1]), ("g", [True]), ("i", [1.0, 2.0]), ("v", ""), ("t", DType("undefined")), ("u", DType("float32")),
     ("z", [])],
)
def test_attr_default_values(name, value):
    assert _default(name) == value
    assert type(_default(name)) is type(value)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a", "default True of 'int a' is not an int value; write e.g. 0"),
        ("h", "default 2.5 of 'int h' is not an int value; write e.g. 0"),
        ("k", "default 1 of 'bool k' is not a bool value; write e.g. False"),
        ("d", "default '\"a(b\"' of 'd' contains characters msOpGen rejects"),
        # a ScalarType attr (msOpGen `type`, §6) takes dtypes only, one or a list
        ("w", "default \"abc\" of 'ScalarType w' is not a ScalarType value; write e.g. float"),
        # the signature model reads a list default element by element, as torch does, and refuses a wrong one
        ("j", "default '[True]' of 'j' is not a literal msOpGen can carry"),
        ("n", "default '[]' of 'n' is not a literal msOpGen can carry"),
    ],
)
def test_attr_default_refusals(name, message):
    with pytest.raises(msopgen.UnsupportedSignature) as refused:
        _default(name)
    assert str(refused.value) == message


def test_attr_default_of_an_argument_without_one():
    with pytest.raises(ValueError, match="argument 'x' has no default"):
        msopgen.attr_default(parse_schema(SCHEMA).arguments[0])


def test_trailing_kernel_parameters_step_aside_from_every_operand():
    sig = parse_schema("f(Tensor workspace, Tensor workspace_, Tensor tiling) -> Tensor")
    prototype = msopgen.prototype_from_signature(sig, ("float",))
    assert prototype.kernel_parameters == ("workspace", "workspace_", "tiling", "out", "workspace__", "tiling_")


def test_attr_default_refusals_say_which_default():
    sig = parse_schema("f(Tensor x, ScalarType[] b=[float], Scalar? s=None, str m=\"" + "a" * 1024 + "\", str l=\"" + "a" * 1025 + "\") -> Tensor")
    _, s, m, long = sig.arguments[1:]
    with pytest.raises(msopgen.UnsupportedSignature, match=r"^attr 'Scalar\? s=None' has no msOpGen default; give a value default or drop it$"):
        msopgen.attr_default(s)
    assert msopgen.attr_default(m) == "a" * 1024  # §1: default_value up to 1024 characters
    with pytest.raises(msopgen.UnsupportedSignature, match="contains characters msOpGen rejects"):
        msopgen.attr_default(long)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("f(Tensor x, Generator? g=None) -> Tensor", "argument 'Generator? g': random number generation cannot enter an npugraph_ex graph"),
        ("f(Tensor x, Tensor?[] i) -> Tensor", "argument 'i: Tensor?[]' has no msOpGen input kind"),
        ("f(Tensor x, Stream s) -> Tensor", "argument 's: Stream' has no msOpGen attr type"),
        ("f(Tensor x) -> Tensor?", "return 'Tensor?' is not a Tensor or Tensor[]; msOpGen outputs are tensors"),
        ("f(Tensor x) -> Tensor?[]", "return 'Tensor?[]' is not a Tensor or Tensor[]; msOpGen outputs are tensors"),
        ("f(Tensor x) -> int", "return 'int' is not a Tensor or Tensor[]; msOpGen outputs are tensors"),
        ("f(Tensor x) -> ()", "the op returns nothing and mutates nothing; return a Tensor or mark the written input Tensor(a!)"),
    ],
)
def test_prototype_refusals_name_the_argument(schema, message):
    with pytest.raises(msopgen.UnsupportedSignature) as refused:
        msopgen.prototype_from_signature(parse_schema(schema))
    assert str(refused.value).startswith(message)


def test_prototype_json_is_torchairs_document():
    """§1/§2: op, input_desc, output_desc, attr; a Scalar operand is an input (the OpDef marks it .Scalar())."""
    prototype = msopgen.prototype_from_signature(parse_schema("my_op(Tensor x, Scalar alpha, int k=2) -> Tensor"), ("float",))
    assert prototype.to_json() == {
        "op": "MyOp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]},
            {"name": "alpha", "param_type": "required", "format": ["ND"], "type": ["float"]},
        ],
        "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["float"]}],
        "attr": [{"name": "k", "param_type": "optional", "type": "int", "default_value": "2"}],
    }
    assert [d.scalar for d in prototype.inputs] == [False, True]
    assert not prototype.outputs[0].scalar


def test_per_descriptor_dtype_columns_pair_with_every_format():
    """§6: per-descriptor dtype columns; column i across descriptors is one combination, each dtype with each format."""
    sig = parse_schema("f(Tensor x) -> (Tensor values, Tensor indices)")
    prototype = msopgen.prototype_from_signature(sig, ("float16", "float"), ("ND", "NCHW"), descriptor_dtypes={"indices": ("int32", "int64")})
    assert [(d.name, d.types, d.formats) for d in (*prototype.inputs, *prototype.outputs)] == [
        ("x", ("float16", "float16", "float", "float"), ("ND", "NCHW", "ND", "NCHW")),
        ("values", ("float16", "float16", "float", "float"), ("ND", "NCHW", "ND", "NCHW")),
        ("indices", ("int32", "int32", "int64", "int64"), ("ND", "NCHW", "ND", "NCHW")),
    ]


@pytest.mark.parametrize(
    ("schema", "outputs"),
    [
        # §2: a Tensor[] is a DYNAMIC descriptor, as an input and as an output
        ("f(Tensor(a!)[] xs, Tensor y) -> ()", [("xs", "dynamic")]),
        ("f(Tensor(a!) x, Tensor y) -> ()", [("x", "required")]),
        ("f(Tensor x) -> Tensor[]", [("out", "dynamic")]),
        ("f(Tensor x) -> (Tensor a, Tensor[] b)", [("a", "required"), ("b", "dynamic")]),
        ("f(Tensor(a!)[] xs) -> Tensor", [("xs", "dynamic"), ("out", "required")]),
    ],
)
def test_outputs_are_dynamic_exactly_for_tensor_lists(schema, outputs):
    prototype = msopgen.prototype_from_signature(parse_schema(schema), ("float",))
    assert [(o.name, o.param_type) for o in prototype.outputs] == outputs
