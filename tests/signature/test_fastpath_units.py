"""The op-plugin fast path (opkit.signature.fastpath) case by case: literal expectations, fast enough for mutation testing.

For each schema: whether the fast path answers (it answers only for torchgen's own printing of the common
grammar, and hands everything else to torchgen), and whether torchgen (``FunctionSchema.parse`` with its
exact round trip, the op-plugin dialect's authority) accepts it. Where the fast path answers, its
signature must be torchgen's, with the same argument columns, printing back exactly.
tests/signature/test_fastpath_differential.py runs the same comparison over every real schema.
"""

from __future__ import annotations

import pytest

from opkit.signature import Alias, ArgType, Dialect, SchemaError
from opkit.signature.fastpath import BASE_TYPES, parse_simple
from opkit.signature.parse import _parse_op_plugin

# (schema, the fast path answers, torchgen accepts)
CASES = [
    ('f(Tensor x) -> Tensor', True, True),
    ('f.o(Tensor x) -> Tensor', True, True),
    ('f() -> ()', True, True),
    ('f(Tensor x) -> ()', True, True),
    ('f(Tensor x) -> (Tensor a, Tensor b)', True, True),
    ('f(Tensor x) -> (Tensor)', False, False),
    ('f(Tensor x) -> Tensor a', True, True),
    ('f(Tensor x, int[2] k=[1,1], float? s=None, *, bool b=False) -> Tensor', True, True),
    ('f(Tensor? x, Tensor[] y, Tensor?[] z, int[]? w) -> Tensor', True, True),
    ('f(Tensor x)\n -> Tensor', False, False),
    ('f(Tensor x)->Tensor', False, False),
    ('ns::f(Tensor x) -> Tensor', False, True),
    ('__ior__(Tensor(a!) self) -> Tensor(a!)', True, True),
    ('f_out(Tensor x) -> Tensor', False, False),
    ('f_functional(Tensor x) -> Tensor', True, True),
    ('f.functional(Tensor x) -> Tensor', False, True),
    ('f.out_functional(Tensor x) -> Tensor', False, True),
    ('f.Tensor_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)', True, True),
    ('f(Tensor x, *, *, int k) -> Tensor', False, False),
    ('f(Tensor x, *) -> Tensor', False, False),
    ('f(Tensor x, *, ScalarType? dtype=None) -> Tensor', True, True),
    ('f(Tensor x, *, Layout? layout=None) -> Tensor', True, True),
    ('f(Tensor x, *, Device? device=None) -> Tensor', True, True),
    ('f(Tensor x, *, bool? pin_memory=None) -> Tensor', True, True),
    ('f.out(Tensor x, *, Tensor(a!) out, int k) -> Tensor(a!)', False, False),
    ('f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)', True, True),
    ('f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) out2) -> (Tensor(a!), Tensor(b!))', True, True),
    ('f(Tensor x, Foo y) -> Tensor', False, False),
    ('f(Tensor x, int[01] k) -> Tensor', False, False),
    ('f(Tensor x, int[0] k) -> Tensor', False, False),
    ('f(Tensor x, int[10] k) -> Tensor', True, True),
    ('f(Tensor x, int[][] k) -> Tensor', False, False),
    ('f(Tensor x, int? [] k) -> Tensor', False, False),
    ('f(Tensor(a0!) x) -> ()', False, False),
    ('f(Tensor(A!) x) -> ()', False, False),
    ('f(Tensor(a!)[] x) -> ()', True, True),
    ('f(Tensor(a)? x) -> Tensor(a)?', True, True),
    ('f(Tensor(a!)? x) -> ()', True, True),
    ('f(Tensor x, int k=1=2) -> Tensor', False, False),
    ('f(Tensor x, int 1k) -> Tensor', False, False),
    ('f(Tensor x) -> Tensor 1a', False, False),
    ('f(Tensor x) -> (Tensor a, Foo b)', False, False),
    ('f(Tensor(a!) x, Tensor self) -> ()', False, False),
    ('f(Tensor self, Tensor(a!) x) -> Tensor(a!)', False, False),
    ('f(Tensor(a) self) -> Tensor(a)', True, True),
    ('f(Tensor(a!) self) -> Tensor(a!)', True, True),
    ('f_(Tensor(a!) self) -> Tensor(a!)', True, True),
    ('f_(Tensor(a!) self) -> ()', False, False),
    ('f_(Tensor self) -> Tensor', False, False),
    ('f_(Tensor(a!) x) -> Tensor(a!)', False, False),
    ('f_(Tensor(a!)[] self) -> ()', True, True),
    ('f_(Tensor(a!)[] self) -> Tensor(a!)[]', False, False),
    ('f_(Tensor(a!) self) -> Tensor(b!)', False, False),
    ('f_(Tensor(a!) self) -> (Tensor(a!), Tensor)', False, False),
    ('f.out(Tensor x, *, Tensor(a!) out) -> Tensor', False, False),
    ('f.out(Tensor x, *, Tensor(a!) out) -> Tensor(b!)', False, False),
    ('f.out(Tensor x, *, Tensor(a!)[] out) -> ()', True, True),
    ('f.out(Tensor x, *, Tensor(a!)[] out) -> Tensor[]', False, False),
    ('f.out(Tensor x, *, Tensor(a!)[] out) -> Tensor(a!)[]', False, False),  # a list out= returns nothing
    ('f.out(Tensor x, *, Tensor(a!)? out) -> Tensor(a!)?', False, False),
    ('f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) _scratch_w) -> Tensor(a!)', True, True),
    ('f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) out2) -> Tensor(a!)', False, False),
    ('f(Tensor(a!) x) -> Tensor(a!)', False, False),
    ('f(Tensor(a!) x) -> (Tensor(a!), Tensor)', False, False),
    ('f(Tensor x, *, Tensor(a!) out) -> (Tensor(a!), Tensor(a!))', False, False),
    ('f(Tensor self, Tensor(a!) x) -> ()', True, True),
    ('f(Tensor self, Tensor(a!) x) -> Tensor', True, True),
    ('f(Tensor(a!) self, Tensor(a!) x) -> Tensor(a!)', False, False),
    ('f(Tensor(a!) self, Tensor(b!) x) -> Tensor(a!)', True, True),
    ('f(Tensor(a) x) -> Tensor(a)', True, True),
    ('f(Tensor(a!) x) -> Tensor(b!)', False, False),
    ('f.out(Tensor self, *, Tensor(a!) out) -> (Tensor(a!), Tensor(a!))', False, False),
    # dunder methods: __i<op>__ of an augmented assignment is in-place, another __i...__ is refused
    ('__lshift__.Scalar(Tensor self, Scalar other) -> Tensor', True, True),
    ('__ilshift__.Scalar(Tensor self, Scalar other) -> Tensor', False, False),
    ('__int__(Tensor self) -> Tensor', False, False),
    ('__foo_bar__(Tensor x) -> Tensor', False, False),
    ('f_functional_(Tensor(a!) self) -> Tensor(a!)', False, False),
    # TensorOptions: one group of the four, in order, only in a functional schema
    ('f(Tensor x, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor', True, True),
    ('f(SymInt n, *, ScalarType dtype, Layout layout, Device device, bool pin_memory, int k=0) -> Tensor', True, True),
    ('f(Tensor x, *, Layout? layout=None, ScalarType? dtype=None, Device? device=None, bool? pin_memory=None) -> Tensor', True, True),
    ('f(Tensor x, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor', False, False),
    ('f.out(Tensor x, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, Tensor(a!) out) -> Tensor(a!)', False, False),
    ('f_(Tensor(a!) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor(a!)', False, False),
    ('f(Tensor self, Tensor(a!) x, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> ()', False, False),
    ('f(Tensor(a!) x, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> ()', False, False),
]


@pytest.mark.parametrize("text, answers, accepted", CASES)
def test_fast_path_answers_only_for_what_torchgen_accepts(text, answers, accepted):
    fast = parse_simple(text)
    assert (fast is not None) is answers
    try:
        reference = _parse_op_plugin(text)
    except SchemaError:
        reference = None
    assert (reference is not None) is accepted
    if fast is not None:
        assert fast == reference
        assert [a.column for a in fast.arguments] == [a.column for a in reference.arguments]
        assert str(fast) == text and fast.dialect is Dialect.OP_PLUGIN and fast.text == text


def test_fast_path_fields():
    sig = parse_simple("f.out(Tensor(a) self, Tensor? w, int[2] k=[1,1], *, float?[] s=None, Tensor(b!) out) -> Tensor(b!) r")
    assert (sig.name, sig.overload, sig.namespace) == ("f", "out", None)
    assert [(a.name, a.type, a.default, a.alias, a.kwarg_only, a.column) for a in sig.arguments] == [
        ("self", ArgType("Tensor"), None, Alias(("a",), False), False, 7),
        ("w", ArgType("Tensor", optional=True), None, None, False, 23),
        ("k", ArgType("int", is_list=True, size=2), "[1,1]", None, False, 34),
        ("s", ArgType("float", is_list=True, elem_optional=True), "None", None, True, 53),
        ("out", ArgType("Tensor"), None, Alias(("b",), True), True, 70),
    ]
    assert [(r.type, r.name, r.alias) for r in sig.returns] == [(ArgType("Tensor"), "r", Alias(("b",), True))]


@pytest.mark.parametrize(
    "type_text, arg_type",
    [("Tensor?", ArgType("Tensor", optional=True)), ("int[]?", ArgType("int", optional=True, is_list=True)),
     ("int?[]", ArgType("int", is_list=True, elem_optional=True)), ("int[3]", ArgType("int", is_list=True, size=3)),
     ("SymInt[12]?", ArgType("SymInt", optional=True, is_list=True, size=12)), ("Scalar", ArgType("Scalar"))],
)  # fmt: skip
def test_fast_path_types(type_text, arg_type):
    (a,) = parse_simple(f"f({type_text} v) -> ()").arguments
    assert a.type == arg_type


def test_base_types_are_torchgens():
    from torchgen.model import BaseTy

    assert BASE_TYPES == {t.name for t in BaseTy}


def test_a_repeated_argument_is_read_as_the_first_time():
    # the memo of argument pieces: 'Tensor x' and 'int k' of g are f's, answered from it
    first, second = parse_simple("f(Tensor x, int k) -> Tensor"), parse_simple("g(Tensor x, int k) -> Tensor")
    assert second is not None and first is not None
    assert [(a.name, a.type) for a in second.arguments] == [("x", ArgType("Tensor")), ("k", ArgType("int"))]


@pytest.mark.parametrize(
    "text",
    ["f(Tensor self, Dimname dim, bool keepdim=False) -> Tensor",
     "f.names_out(Tensor self, Dimname[1] dim, *, Tensor(a!) out) -> Tensor(a!)",
     "f(int[] size, *, Dimname[]? names, ScalarType? dtype=None) -> Tensor",
     "f.Dimname(Tensor self, int k) -> Dimname"],
)  # fmt: skip
def test_a_schema_wrong_only_in_its_dimname_types_gets_torchgens_error_without_torchgen(text):
    from opkit.signature.parse import _dimname_refusal

    refusal = _dimname_refusal(text)
    with pytest.raises(SchemaError) as raised:
        _parse_op_plugin(text)
    assert (refusal.message, refusal.column, refusal.hint, refusal.canonical) == (raised.value.message, raised.value.column, raised.value.hint, raised.value.canonical)
    assert refusal.message == "unknown type 'Dimname'"


@pytest.mark.parametrize("text", ["f(Tensor x, Dimname d, Foo y) -> Tensor", "f_(Tensor self, Dimname d) -> Tensor", "f.Dimname(Tensor x, Tensor Dimname) -> Tensor"])
def test_a_dimname_schema_with_another_problem_or_none_is_left_to_torchgen(text):
    from opkit.signature.parse import _dimname_refusal

    assert _dimname_refusal(text) is None
