"""Property tests: opkit's two dialects accept exactly what PyTorch's own parsers accept.

torch.library dialect vs ``torch._C.parse_schema``; op-plugin dialect vs
``torchgen.model.FunctionSchema.parse`` (and its exact round trip).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from opkit.signature import UNSUPPORTED, Dialect, SchemaError, parse_schema

torch = pytest.importorskip("torch")
from torchgen.model import FunctionSchema  # noqa: E402

NAMES = ["x", "self", "y2", "attr_1", "out", "weight", "1x", "x-y", "scale_"]
OP_NAMES = ["my_op", "my_op_", "add", "conv2d_v2", "npu_rms_norm", "__ior__", "f", "2op", "my-op", "my_out"]

# (type, valid defaults) — defaults are ones the C++ parser also accepts for that type.
TYPES = {
    "Tensor": [],
    "Tensor?": ["None"],
    "Tensor[]": [],
    "Tensor?[]": [],
    "int": ["0", "-1", "3"],
    "int?": ["None", "2"],
    "int[]": ["[]", "[1,1]", "[1, 1]"],
    "int[2]": ["[1,1]", "1"],
    "SymInt": ["0"],
    "SymInt[]": ["[0,1]"],
    "float": ["1.0", "1e-6", "-0.5"],
    "float?": ["None"],
    "float[]": ["[1.0,2.0]"],
    "bool": ["True", "False"],
    "bool[]": ["[True,False]"],
    "str": ["'abc'", '"a b"'],
    "str?": ["None"],
    "Scalar": ["1", "0.5"],
    "Scalar?": ["None"],
    "ScalarType?": ["None"],
    "Generator?": ["None"],
    "Layout?": ["None"],
    "Device?": ["None"],
    "MemoryFormat?": ["None"],
    "Dimname": [],
    "Foo": [],
}
# Defaults torch accepts for some types and rejects for others: the dialect must agree on each.
ODD_DEFAULTS = ["inf", "-inf", "true", "x", "[1.5]", "[None]", "[True]", "1.", "long", "Mean", '"cpu"', "[1,]", "[]", "None", "1"]
ANNOTATIONS = ["", "(a)", "(a!)", "(b!)", "(a0!)", "(A!)"]
COMMAS = [", ", ", ", ", ", ",", " , "]
ARROWS = [" -> ", " -> ", "->", "  ->  "]
RETURNS = ["()", "Tensor", "Tensor z", "(Tensor, Tensor)", "(Tensor a, Tensor b)", "Tensor(a!)", "(Tensor(a!), Tensor)", "Tensor[]", "int", "Foo", ""]


@st.composite
def arguments(draw):
    type_ = draw(st.sampled_from(sorted(TYPES)))
    annotation = draw(st.sampled_from(ANNOTATIONS)) if type_.startswith("Tensor") else ""
    if annotation:
        type_ = "Tensor" + annotation + type_[len("Tensor") :]
    name = draw(st.sampled_from(NAMES))
    defaults = TYPES[type_.split("(")[0] + (type_.split(")", 1)[1] if ")" in type_ else "")] if "(" in type_ else TYPES[type_]
    default = draw(st.sampled_from([None, *defaults, *ODD_DEFAULTS]))
    return f"{type_} {name}" + (f"={default}" if default is not None else "")


@st.composite
def schemas(draw):
    ns = draw(st.sampled_from(["", "", "mylib::"]))
    name = draw(st.sampled_from(OP_NAMES))
    overload = draw(st.sampled_from(["", "", ".out", ".Tensor"]))
    args = draw(st.lists(arguments(), max_size=5))
    if args and draw(st.booleans()):
        args.insert(draw(st.integers(0, len(args))), "*")
    comma = draw(st.sampled_from(COMMAS))
    arrow = draw(st.sampled_from(ARROWS))
    returns = draw(st.sampled_from(RETURNS))
    return f"{ns}{name}{overload}({comma.join(args)}){arrow}{returns}"


def _torch_accepts(text: str) -> bool:
    try:
        torch._C.parse_schema(text)
    except RuntimeError:
        return False
    return True


def _opkit_accepts(text: str, dialect: Dialect) -> bool:
    try:
        parse_schema(text, dialect)
    except SchemaError:
        return False
    return True


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
@example("my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor")
@example("mylib::my_op_(Tensor(a0!) x) -> ()")
@example("f(int[2] pads=[1, 1]) -> ()")
@example("f(Tensor x,Tensor y)->Tensor")
@example("f(Tensor x, Dimname d) -> Tensor")
@example("f(Tensor x, *) -> ()")
def test_torch_library_dialect_agrees_with_torch_parse_schema(text):
    assert _opkit_accepts(text, Dialect.TORCH_LIBRARY) == _torch_accepts(text), text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
@example("my_op_(Tensor(a!) x) -> ()")
@example("my_inplace(Tensor(a!) x, Tensor y) -> Tensor")
@example("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
def test_op_plugin_dialect_agrees_with_torchgen(text):
    try:
        expected = str(FunctionSchema.parse(text))
    except Exception:
        expected = None
    try:
        sig = parse_schema(text, Dialect.OP_PLUGIN)
    except SchemaError as exc:
        assert expected is None or exc.message.startswith(UNSUPPORTED), f"{text!r} rejected: {exc}"
        assert 1 <= exc.column <= len(text) + 1
        return
    assert expected == text, f"{text!r} accepted but torchgen says {expected!r}"
    # The model prints back exactly what it parsed, as the op-plugin codegen demands.
    assert str(sig) == text


@settings(max_examples=300, deadline=None)
@given(schemas())
def test_accepted_torch_library_schemas_reparse_to_the_same_model(text):
    try:
        sig = parse_schema(text, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return
    again = parse_schema(str(sig), Dialect.TORCH_LIBRARY)
    assert (again.namespace, again.full_name, again.returns) == (sig.namespace, sig.full_name, sig.returns)
    assert [(a.name, a.type, a.default, a.alias, a.kwarg_only) for a in again.arguments] == [
        (a.name, a.type, a.default, a.alias, a.kwarg_only) for a in sig.arguments
    ]
    assert str(again) == str(sig)
    # And torch agrees the printed form means the same schema.
    assert str(torch._C.parse_schema(str(sig))) == str(torch._C.parse_schema(text))
