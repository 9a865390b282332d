"""opkit.signature piece by piece: literal expectations, fast enough for mutation testing.

Each expectation is written from what PyTorch's own parsers do (``torch._C.parse_schema`` for the
torch.library dialect, ``torchgen.model.FunctionSchema`` for op-plugin's), from msopgen.md for the attr
and param types, and from docs/lint.md, "Schema dialects", for opkit's deliberate refusals; never from opkit's
own tables. tests/signature/test_torch_agreement.py compares the two dialects with torch at large.
"""

from __future__ import annotations

import pickle

import pytest

from opkit.signature import (
    Alias,
    Argument,
    ArgType,
    Dialect,
    DType,
    Return,
    SchemaError,
    SchemaKind,
    check_schema,
    default_problem,
    iter_alias_letters,
    parse_default,
    parse_schema,
    parsed_results,
    parser_fingerprint,
    remember_results,
)

OP = Dialect.OP_PLUGIN
LIB = Dialect.TORCH_LIBRARY


def lib(text: str):
    return parse_schema(text, LIB)


def error(text: str, dialect: Dialect = LIB) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        parse_schema(text, dialect)
    return info.value


# -- Dialect and SchemaError ------------------------------------------------------------------------


def test_each_dialect_names_the_parser_it_follows():
    assert Dialect.OP_PLUGIN.parser == "torchgen.model.FunctionSchema, as op-plugin's codegen"
    assert Dialect.TORCH_LIBRARY.parser == "torch._C.parse_schema, as torch.library"
    assert (Dialect.OP_PLUGIN.value, Dialect.TORCH_LIBRARY.value) == ("op-plugin", "torch.library")


def test_schema_error_prints_message_dialect_column_and_hint():
    e = SchemaError("bad thing", text="f(x) -> ()", column=3, dialect=LIB, hint="do this")
    assert str(e) == "bad thing [torch.library schema, column 3] (hint: do this)"
    assert str(SchemaError("bad", text="t", column=1, dialect=OP)) == "bad [op-plugin schema, column 1]"
    assert (e.message, e.text, e.column, e.dialect, e.hint, e.canonical) == ("bad thing", "f(x) -> ()", 3, LIB, "do this", None)
    assert e.args == ("bad thing",)


def test_schema_error_pickles_with_every_field():
    e = SchemaError("unknown type 'Foo'", text="f(Foo x) -> ()", column=3, dialect=OP, hint="h")
    e.canonical = "f(Tensor x) -> ()"
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is SchemaError
    assert (back.message, back.text, back.column, back.dialect, back.hint, back.canonical) == (
        "unknown type 'Foo'", "f(Foo x) -> ()", 3, OP, "h", "f(Tensor x) -> ()")  # fmt: skip
    assert str(back) == str(e)


@pytest.mark.parametrize("message, unknown", [("unknown type 'Foo'", True), ("an unknown type 'Foo'", False), ("Unknown type", False)])
def test_is_unknown_type(message, unknown):
    assert SchemaError(message, text="", column=1, dialect=LIB).is_unknown_type is unknown


# -- ArgType -------------------------------------------------------------------------------------

# type text (torch.library) -> (is_tensor, is_scalar, is_input, msOpGen attr type, msOpGen param_type)
# msopgen.md §2/§6: int, float, bool, string, type and their list_ forms; Tensor inputs are required,
# optional or dynamic (lists); a Scalar operand is an input.
TYPE_FACTS = {
    "Tensor": (True, False, True, None, "required"),
    "Tensor?": (True, False, True, None, "optional"),
    "Tensor[]": (True, False, True, None, "dynamic"),
    "Tensor[]?": (True, False, True, None, "dynamic"),
    "Tensor?[]": (True, False, True, None, "dynamic"),
    "Scalar": (False, True, True, None, "required"),
    "Scalar?": (False, True, True, None, "optional"),
    "Scalar[]": (False, False, False, None, None),
    "int": (False, False, False, "int", None),
    "int?": (False, False, False, "int", None),
    "SymInt": (False, False, False, "int", None),
    "float": (False, False, False, "float", None),
    "bool": (False, False, False, "bool", None),
    "str": (False, False, False, "string", None),
    "ScalarType": (False, False, False, "type", None),
    "int[]": (False, False, False, "list_int", None),
    "int[2]": (False, False, False, "list_int", None),
    "SymInt[]": (False, False, False, "list_int", None),
    "float[]": (False, False, False, "list_float", None),
    "bool[]": (False, False, False, "list_bool", None),
    "str[]": (False, False, False, "list_string", None),
    "ScalarType[]": (False, False, False, "list_type", None),
    "int[]?": (False, False, False, "list_int", None),
    "int?[]": (False, False, False, None, None),
    "Generator?": (False, False, False, None, None),
    "Layout": (False, False, False, None, None),
}


@pytest.mark.parametrize("text", list(TYPE_FACTS))
def test_type_facts(text):
    (a,) = lib(f"f({text} v) -> ()").arguments
    t = a.type
    assert (t.is_tensor, t.is_scalar, t.is_input, t.msopgen_attr_type, t.msopgen_param_type) == TYPE_FACTS[text]
    assert a.is_tensor is t.is_tensor
    assert str(t) == text


@pytest.mark.parametrize(
    "text, base, optional, is_list, size, elem_optional",
    [("Tensor", "Tensor", False, False, None, False), ("Tensor?", "Tensor", True, False, None, False),
     ("Tensor?[]", "Tensor", False, True, None, True), ("Tensor[]?", "Tensor", True, True, None, False),
     ("int[3]", "int", False, True, 3, False), ("int[2]?", "int", True, True, 2, False),
     ("SymInt?[]", "SymInt", False, True, None, True)],
)  # fmt: skip
def test_type_fields(text, base, optional, is_list, size, elem_optional):
    for dialect in (OP, LIB):
        (a,) = parse_schema(f"f({text} v) -> ()", dialect).arguments
        assert a.type == ArgType(base, optional, is_list, size, elem_optional)
    assert str(ArgType(base, optional, is_list, size, elem_optional)) == text


@pytest.mark.parametrize("base", ["Generator", "Device", "Layout", "MemoryFormat", "Dimname"])
def test_refused_types_say_what_to_write_instead(base):
    why = ArgType(base).refusal
    assert why is not None and "drop the argument" in why or "drop the Generator argument" in why or "take the dimension as an int" in why
    assert ArgType(base, optional=True).refusal == why


@pytest.mark.parametrize("base", ["Tensor", "int", "Scalar", "ScalarType", "str"])
def test_supported_types_are_not_refused(base):
    assert ArgType(base).refusal is None


def test_refusal_texts():
    assert ArgType("Generator").refusal == (
        "random number generation cannot enter an npugraph_ex graph: drop the Generator argument and seed outside the op")
    assert ArgType("Dimname").refusal == "torch 2.13's torchgen no longer parses Dimname: take the dimension as an int"


def test_dtype_prints_as_python_spells_it():
    assert repr(DType("float32")) == "torch.float32"
    assert DType("int64") == DType("int64") and DType("int64") != DType("float32")


# -- Alias, Argument, Return printing ------------------------------------------------------------


@pytest.mark.parametrize(
    "alias, printed",
    [(Alias(("a",), False), "a"), (Alias(("a",), True), "a!"), (Alias(("a", "b"), True), "a|b!"),
     (Alias(("a",), False, ("*",)), "a -> *"), (Alias(("a",), True, ("b", "c")), "a! -> b|c")],
)  # fmt: skip
def test_alias_prints_as_torch_writes_it(alias, printed):
    assert str(alias) == printed


@pytest.mark.parametrize(
    "argument, printed",
    [
        (Argument("x", ArgType("Tensor")), "Tensor x"),
        (Argument("x", ArgType("Tensor"), alias=Alias(("a",), True)), "Tensor(a!) x"),
        (Argument("x", ArgType("Tensor", optional=True), alias=Alias(("a",), False)), "Tensor(a)? x"),
        (Argument("x", ArgType("Tensor", is_list=True), alias=Alias(("a",), True)), "Tensor(a!)[] x"),
        (Argument("x", ArgType("Tensor", is_list=True), alias=Alias(("a",), True, on_list=True)), "Tensor[](a!) x"),
        (Argument("x", ArgType("Tensor", is_list=True, elem_optional=True), alias=Alias(("$3",), True, shorthand=True, on_list=True)), "Tensor?[]! x"),
        (Argument("x", ArgType("Tensor"), alias=Alias(("$3",), True, shorthand=True)), "Tensor! x"),
        (Argument("k", ArgType("int", is_list=True, size=2), default="[1,1]"), "int[2] k=[1,1]"),
        (Argument("s", ArgType("str"), default='"a, b"', kwarg_only=True), 's="a, b"'.join(["str ", ""])),
    ],
)
def test_argument_prints_back(argument, printed):
    assert str(argument) == printed


def test_return_prints_back():
    assert str(Return(ArgType("Tensor"))) == "Tensor"
    assert str(Return(ArgType("Tensor"), "values")) == "Tensor values"
    assert str(Return(ArgType("Tensor"), None, Alias(("a",), True))) == "Tensor(a!)"
    assert str(Return(ArgType("Tensor", is_list=True), "outs", Alias(("a",), True, on_list=True))) == "Tensor[](a!) outs"


def test_argument_mutation_follows_the_write_mark():
    x, y, z = lib("f(Tensor(a!) x, Tensor(b) y, Tensor z) -> ()").arguments
    assert (x.is_mutated, y.is_mutated, z.is_mutated) == (True, False, False)


def test_default_value_errors_name_the_argument():
    (a,) = lib("f(int k) -> ()").arguments
    with pytest.raises(ValueError, match=r"^argument 'k' has no default$"):
        a.default_value
    bad = Argument("k", ArgType("int"), default="x")
    with pytest.raises(ValueError, match=r"^default 'x' of 'k': default x is not a number, a string, True, False or None$"):
        bad.default_value


# -- OpSignature: names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, full_name, base_name, inplace_name",
    [("add.Tensor(Tensor self, Tensor other) -> Tensor", "add.Tensor", "add", False),
     ("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)", "add_", "add", True),
     ("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", "__iand__.Tensor", "__and__", True),
     ("__ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", "__ilshift__.Scalar", "__lshift__", True),
     ("__and__.Tensor(Tensor self, Tensor other) -> Tensor", "__and__.Tensor", "__and__", False),
     ("__ifoo__(Tensor(a!) self) -> Tensor(a!)", "__ifoo__", "__ifoo__", False),
     ("_foo(Tensor self) -> Tensor", "_foo", "_foo", False)],
)  # fmt: skip
def test_names_and_inplace_names_as_torchgen_reads_them(text, full_name, base_name, inplace_name):
    # torchgen: a trailing '_', or one of AUGMENTED_ASSIGNMENT_NAMES as __i<name>__ (an unknown __ifoo__ is not)
    for dialect in (OP, LIB) if inplace_name or "ifoo" not in text else (LIB,):
        sig = parse_schema(text, dialect)
        assert (sig.full_name, sig.base_name, sig.is_inplace_name) == (full_name, base_name, inplace_name)
        assert (sig.kind is SchemaKind.INPLACE) is inplace_name


def test_names_derived_for_msopgen_aclnn_and_meta():
    sig = parse_schema("npu_add_rms_norm_(Tensor(a!) self, Tensor y) -> Tensor(a!)")
    assert (sig.op_type, sig.kernel_name, sig.aclnn_name, sig.meta_function_name) == (
        "AddRmsNorm", "add_rms_norm", "aclnnAddRmsNorm", "npu_add_rms_norm__meta")  # fmt: skip
    assert sig.name_round_trips
    sig = parse_schema("rms_norm_2d(Tensor x) -> Tensor")
    assert (sig.op_type, sig.kernel_name, sig.name_round_trips) == ("RmsNorm2d", "rms_norm2d", False)


@pytest.mark.parametrize(
    "text, dialect, printed",
    [("mylib::f.o(Tensor x, *, int k=1) -> Tensor", LIB, "mylib::f.o(Tensor x, *, int k=1) -> Tensor"),
     ("f(*, Tensor x) -> (Tensor a, Tensor b)", LIB, "f(*, Tensor x) -> (Tensor a, Tensor b)"),
     ("f(Tensor x, *) -> ()", LIB, "f(Tensor x) -> ()"),
     ("f(Tensor x) -> (Tensor)", LIB, "f(Tensor x) -> Tensor"),
     ("f(Tensor x) -> (Tensor a)", LIB, "f(Tensor x) -> Tensor a"),
     ("f(Tensor x) -> Tensor[]", OP, "f(Tensor x) -> Tensor[]"),
     ("f(Tensor x) -> ()", OP, "f(Tensor x) -> ()")],
)  # fmt: skip
def test_prints_back_as_the_dialect_spells_it(text, dialect, printed):
    # torch prints a trailing '*' not at all, and one return without parentheses
    assert str(parse_schema(text, dialect)) == printed


# -- OpSignature: arguments and kind ---------------------------------------------------------------

MIXED = "f(Tensor x, int k, Tensor(a!) y, *, float s=1., Tensor(b!) out) -> Tensor(b!)"


def test_argument_groups():
    sig = lib(MIXED)
    names = lambda args: [a.name for a in args]  # noqa: E731
    assert names(sig.positional_arguments) == ["x", "k", "y"]
    assert names(sig.kwarg_only_arguments) == ["s", "out"]
    assert names(sig.tensor_arguments) == ["x", "y", "out"]
    assert names(sig.attr_arguments) == ["k", "s"]
    assert names(sig.mutated_arguments) == ["y", "out"]
    assert names(sig.out_arguments) == ["out"]
    assert names(sig.returned_mutated_arguments) == ["out"]
    assert names(sig.omittable_arguments) == ["s"]
    assert sig.argument("k") is sig.arguments[1] and sig.argument("nope") is None
    assert [(letter, a.name) for letter, a in iter_alias_letters(sig)] == [("a", "y"), ("b", "out")]


def test_alias_letters_of_a_multi_set_annotation_in_order():
    sig = lib("f(Tensor(a|b!) x, Tensor y, Tensor(c) z) -> ()")
    assert [(letter, a.name) for letter, a in iter_alias_letters(sig)] == [("a", "x"), ("b", "x"), ("c", "z")]


@pytest.mark.parametrize(
    "text, omittable",
    [("f(Tensor x, int a=1, int b) -> ()", []),  # torch.library refuses this; built by hand below
     ("f(Tensor x, int a=1, int b=2) -> ()", ["a", "b"]),
     ("f(Tensor x, int[] d=[], int e=1) -> ()", ["d", "e"]),
     ("f(Tensor x=None, int k=1, *, int m, int n=1) -> ()", ["x", "k", "n"]),
     ("f(*, int m) -> ()", []),
     ("f(int a=1, Tensor x) -> ()", [])],
)  # fmt: skip
def test_omittable_arguments(text, omittable):
    try:
        sig = lib(text)
    except SchemaError:
        from opkit.signature import OpSignature
        from opkit.signature.parse import _parse_torch_library  # noqa: F401

        args = (Argument("x", ArgType("Tensor")), Argument("a", ArgType("int"), "1"), Argument("b", ArgType("int")))
        sig = OpSignature(text=text, dialect=LIB, name="f", arguments=args)
    assert [a.name for a in sig.omittable_arguments] == omittable
    for a in sig.arguments:
        assert sig.is_omittable(a) is (a.name in omittable)


def test_is_omittable_compares_identity_not_equality():
    sig = lib("f(int k=1) -> ()")
    twin = Argument("k", ArgType("int"), "1", column=3)
    assert twin == sig.arguments[0] and sig.is_omittable(sig.arguments[0]) and not sig.is_omittable(twin)


@pytest.mark.parametrize(
    "text, kind",
    [("f(Tensor x) -> Tensor", SchemaKind.FUNCTIONAL),
     ("f_(Tensor(a!) self) -> Tensor(a!)", SchemaKind.INPLACE),
     ("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", SchemaKind.OUT),
     ("f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) _scratch_w) -> Tensor(a!)", SchemaKind.SCRATCH),
     ("f(Tensor(a!) x, Tensor y) -> ()", SchemaKind.MUTABLE),
     ("f(Tensor self, Tensor(a!) y) -> ()", SchemaKind.MUTABLE),
     ("f(Tensor(a!) self, Tensor y) -> ()", SchemaKind.FUNCTIONAL),  # torchgen: a mutated self alone is functional
     ("f(Tensor x, Tensor(a!) self) -> ()", SchemaKind.FUNCTIONAL),
     ("f(Tensor x, *, Tensor(a) y) -> ()", SchemaKind.FUNCTIONAL),
     ("f(Tensor x, *, Tensor y) -> ()", SchemaKind.FUNCTIONAL)],
)  # fmt: skip
def test_kind_is_torchgens(text, kind):
    assert parse_schema(text).kind is kind  # each also parses with torchgen: the op-plugin dialect


def test_kind_of_a_mutated_argument_before_self_is_mutable():
    # torchgen refuses it (mutable pre-self positional); torch.library takes it and opkit calls it mutable
    assert lib("f(Tensor(a!) x, Tensor self, Tensor(b!) y) -> ()").kind is SchemaKind.MUTABLE
    assert lib("f(Tensor(a!) x, Tensor self) -> ()").kind is SchemaKind.FUNCTIONAL


# -- OpSignature: returns --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "returns, names, fresh, returns_alias",
    [("Tensor", ("out",), 1, False), ("Tensor y", ("y",), 1, False), ("()", (), 0, False),
     ("(Tensor, Tensor)", ("out0", "out1"), 2, False), ("(Tensor a, Tensor)", ("a", "out1"), 2, False),
     ("(Tensor, Tensor b)", ("out0", "b"), 2, False), ("Tensor(a)", ("out",), 0, True), ("(Tensor(a), Tensor)", ("out0", "out1"), 1, True)],
)  # fmt: skip
def test_returns(returns, names, fresh, returns_alias):
    sig = lib(f"f(Tensor(a) x) -> {returns}")
    assert sig.output_names == names
    assert len(sig.fresh_returns) == fresh and all(r.alias is None for r in sig.fresh_returns)
    assert sig.returns_alias is returns_alias


def test_returned_mutated_arguments_need_a_written_return_of_their_set():
    assert [a.name for a in lib("f(Tensor(a!) x, Tensor(b!) y) -> Tensor(b!)").returned_mutated_arguments] == ["y"]
    assert lib("f(Tensor(a!) x) -> Tensor(a)").returned_mutated_arguments == ()
    assert lib("f(Tensor(a!) x, Tensor(a) y) -> Tensor(b!)").returned_mutated_arguments == ()
    assert [a.name for a in lib("f(Tensor(a|b!) x) -> Tensor(b!)").returned_mutated_arguments] == ["x"]


@pytest.mark.parametrize("text, has", [("f(Tensor x, Generator? g=None) -> Tensor", True), ("f(Tensor x, Generator g) -> Tensor", True),
                                       ("f(Tensor x, int g) -> Tensor", False), ("f(Tensor x, Device? d=None) -> Tensor", False)])  # fmt: skip
def test_has_generator(text, has):
    assert lib(text).has_generator is has


def test_signature_pickles_to_an_equal_one_and_recomputes_derived_facts():
    sig = lib("ns::f.o(Tensor(a!) x, *, int k=1) -> Tensor(a!)")
    assert sig.kind is SchemaKind.MUTABLE and "kind" in vars(sig)  # cached on the instance
    back = pickle.loads(pickle.dumps(sig))
    assert back == sig and back is not sig and "kind" not in vars(back)
    assert str(back) == str(sig) and back.kind is SchemaKind.MUTABLE


# -- Parsing: where the pieces are, and located errors ---------------------------------------------

LAYOUT_HINT = "write '-> ()' for an op that returns nothing"


@pytest.mark.parametrize("dialect", [OP, LIB])
@pytest.mark.parametrize(
    "text, column, message, hint",
    [("f", 2, "expected '(' after the op name", "a schema reads name(Type arg, ...) -> Return"),
     ("f(", 2, "unbalanced '(' in the argument list", None),
     ("f(Tensor x, int k", 2, "unbalanced '(' in the argument list", None),
     ("f(Tensor x)", 12, "expected ' -> ' and the returns after the argument list", LAYOUT_HINT),
     ("f(Tensor x) => Tensor", 12, "expected ' -> ' and the returns after the argument list", LAYOUT_HINT),
     ("f(Tensor x) ->", 15, "missing return type after '->'", LAYOUT_HINT),
     ("f(Tensor x) ->   ", 18, "missing return type after '->'", LAYOUT_HINT),
     ("f(Tensor x)->", 14, "missing return type after '->'", LAYOUT_HINT)],
)  # fmt: skip
def test_layout_errors(text, dialect, column, message, hint):
    e = error(text, dialect)
    assert (e.column, e.message, e.hint, e.dialect, e.text) == (column, message, hint, dialect, text)


@pytest.mark.parametrize("text", [None, "", "   ", "\n"])
@pytest.mark.parametrize("dialect", [OP, LIB])
def test_empty_schema(text, dialect):
    e = error(text, dialect)
    assert (e.message, e.column, e.hint, e.text) == ("empty schema", 1, "a schema reads name(Type arg, ...) -> Return", str(text))


@pytest.mark.parametrize(
    "text, columns",
    [("f(Tensor x, int k) -> ()", [3, 13]), ("f( Tensor x ,  int   k ) -> ()", [4, 16]),
     ("f(str s=\"a, b\", int k=1) -> ()", [3, 17]), ("f(str s='(', int[2] k=[1, 2]) -> ()", [3, 14]),
     ("f(Tensor x, *, int k) -> ()", [3, 16]), ("f(\tTensor x,\tint k) -> ()", [4, 14])],
)  # fmt: skip
def test_argument_columns_in_torch_library_text(text, columns):
    assert [a.column for a in lib(text).arguments] == columns


@pytest.mark.parametrize(
    "text, columns",
    [("f(Tensor x, int k) -> ()", [3, 13]), ("f(Tensor self, Tensor x, *, Scalar alpha=1) -> Tensor", [3, 16, 29]),
     ("f(Tensor x, str s='a', str t='a') -> ()", [3, 13, 24]),
     ("f.Tensor_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [14, 30])],
)  # fmt: skip
def test_argument_columns_in_op_plugin_text(text, columns):
    assert [a.column for a in parse_schema(text).arguments] == columns


def test_op_plugin_columns_when_torchgen_parses_what_the_fast_path_leaves():
    # a dunder name and a TensorOptions group go to torchgen: the columns are found in its printing
    sig = parse_schema("__ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert [a.column for a in sig.arguments] == [16, 33]
    sig = parse_schema("f(Tensor x, *, ScalarType? dtype=None, Layout? layout=None) -> Tensor")
    assert [(a.name, a.column, a.kwarg_only) for a in sig.arguments] == [("x", 3, False), ("dtype", 16, True), ("layout", 40, True)]
    assert sig.namespace is None and sig.overload == ""  # as torchgen gives a name without one


@pytest.mark.parametrize(
    "text, returns",
    [("f(Tensor x) -> ()", []), ("f(Tensor x) -> ( )", []), ("f(Tensor x) -> Tensor", [("Tensor", None)]),
     ("f(Tensor x) -> (Tensor a, Tensor b)", [("Tensor", "a"), ("Tensor", "b")]),
     ("f(Tensor x) -> (Tensor a)", [("Tensor", "a")]), ("f(Tensor x) -> Tensor[] y", [("Tensor[]", "y")]),
     ("f(Tensor x) -> ( Tensor ,int )", [("Tensor", None), ("int", None)])],
)  # fmt: skip
def test_torch_library_returns(text, returns):
    assert [(str(r.type), r.name) for r in lib(text).returns] == returns


# torch.library errors: (text, column, message, hint); torch._C.parse_schema refuses each of these, or
# accepts it and opkit refuses on purpose ("unsupported by opkit", docs/lint.md, "Schema dialects").
UNSUPPORTED_HINT = "torch.library accepts it, but opkit cannot generate an op for it"
NAME_HINT = "an op name is [namespace::]identifier[.overload]"


@pytest.mark.parametrize(
    "text, column, message, hint",
    [
        ("1f(Tensor x) -> ()", 1, "invalid op name '1f'", NAME_HINT),
        ("f.o.p(Tensor x) -> ()", 1, "invalid op name 'f.o.p'", NAME_HINT),
        ("a::b::f(Tensor x) -> ()", 1, "invalid op name 'a::b::f'", NAME_HINT),
        ("ns::def(Tensor x) -> ()", 1, "'def' is a keyword of torch's schema lexer, not a name", None),
        ("def::f(Tensor x) -> ()", 1, "'def' is a keyword of torch's schema lexer, not a name", None),
        ("f.None(Tensor x) -> ()", 1, "'None' is a keyword of torch's schema lexer, not a name", None),
        ("f.default(Tensor x) -> ()", 1, "'default' is not a legal overload name (torch reserves 'default' and dunder names)", None),
        ("f.__x(Tensor x) -> ()", 1, "'__x' is not a legal overload name (torch reserves 'default' and dunder names)", None),
        ("f(Tensor x,) -> ()", 12, "empty argument", None),
        ("f(, Tensor x) -> ()", 3, "empty argument", None),
        ("f(Tensor x) -> (Tensor,)", 24, "empty return", None),
        ("f(Tensor x) -> (Tensor, )", 25, "empty return", None),
        ("f(Tensor x, ...) -> ()", 13, "unsupported by opkit: varargs '...': an Ascend op has a fixed operand list", None),
        ("f(Tensor x) -> ...", 16, "unsupported by opkit: varargs '...': an Ascend op has a fixed operand list", None),
        ("f(Foo x) -> ()", 3, "unknown type 'Foo'", None),
        ("f(Tensor x) -> Foo", 16, "unknown type 'Foo'", None),
        ("f(Tensor x) -> (Tensor, Foo y)", 25, "unknown type 'Foo'", None),
        ("f(foo x) -> ()", 3, "unsupported by opkit: the type variable 'foo': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(tensor x) -> ()", 3, "unsupported by opkit: the type variable 'tensor': no Ascend C operand or msOpGen attr maps to it (did you mean 'Tensor'?)", UNSUPPORTED_HINT),
        ("f(symInt x) -> ()", 3, "unsupported by opkit: the type variable 'symInt': no Ascend C operand or msOpGen attr maps to it (did you mean 'SymInt'?)", UNSUPPORTED_HINT),
        ("f(complex x) -> ()", 3, "unsupported by opkit: the TorchScript type 'complex': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Any x) -> ()", 3, "unsupported by opkit: the TorchScript type 'Any': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Tensor x) -> NoneType", 16, "unsupported by opkit: the TorchScript type 'NoneType': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Dict(str, int) x) -> ()", 3, "unsupported by opkit: the TorchScript type Dict: no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Future(int) x) -> ()", 3, "unsupported by opkit: the TorchScript type Future: no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(__torch__.torch.classes.a.B x) -> ()", 3, "unsupported by opkit: the TorchScript type __torch__: no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f((int, int) x) -> ()", 3, "unsupported by opkit: a tuple type: no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(int[][] x) -> ()", 3, "unsupported by opkit: the nested list type 'int[][]': msOpGen attrs are flat lists", UNSUPPORTED_HINT),
        ("f(int [] ? [] x) -> ()", 3, "unsupported by opkit: the nested list type 'int[]?[]': msOpGen attrs are flat lists", UNSUPPORTED_HINT),
        ("f(int(a) x) -> ()", 3, "unsupported by opkit: the alias annotation in 'int(a)': opkit models aliasing of Tensors only", UNSUPPORTED_HINT),
        ("f(Tensor x) -> int(a)", 16, "unsupported by opkit: the alias annotation in 'int(a)': opkit models aliasing of Tensors only", UNSUPPORTED_HINT),
        ("f(int def) -> ()", 3, "invalid argument name 'def'", "torch's lexer reads keywords (def, None, in, ...) as tokens, not names"),
        ("f(Tensor x, int 1x) -> ()", 13, "invalid argument name '1x'", "a name is letters, digits and '_'"),
        ("f(Tensor x) -> Tensor def", 16, "invalid return name 'def'", None),
        ("f(Tensor x) -> Tensor 1x", 16, "invalid return name '1x'", None),
        ("f(Tensor(def) x) -> ()", 10, "unrecognized alias annotation 'def'",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
        ("f(Tensor x, Tensor[]( a!!) y) -> ()", 22, "unrecognized alias annotation ' a!!'",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
        ("f(Tensor x) -> Tensor(a|)", 23, "unrecognized alias annotation 'a|'",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
        ("f(int x)\n-> ()", 10, "a schema is one declaration: nothing may follow a line break outside parentheses", None),
        ("f(int é) -> ()", 7, "character 'é' (U+00E9) is not allowed outside a string literal: torch's lexer reads ASCII", None),
        ("f(str s='a\n') -> ()", 9, "unterminated string literal", None),
        ("f(str s='a) -> Tensor", 9, "unterminated string literal", None),
        ("(Tensor x) -> ()", 1, "invalid op name ''", NAME_HINT),
        ("f(1) -> ()", 3, "illegal argument '1'", None),
        ("f(Tensor x) -> (1)", 17, "unknown type '1'", None),
        ("f(Tensor x) -> Tensor a b", 16, "unknown type 'Tensor a'", None),
        ("f(def) -> ()", 3, "unknown type 'def'", None),
        ("f(x y) -> ()", 3, "unsupported by opkit: the type variable 'x': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Tensor x) -> (x)", 17, "unsupported by opkit: the type variable 'x': no Ascend C operand or msOpGen attr maps to it", UNSUPPORTED_HINT),
        ("f(Tensor(None) x) -> ()", 10, "unrecognized alias annotation 'None'",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
        ("f(Tensor(a|True) x) -> ()", 10, "unrecognized alias annotation 'a|True'",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
        ("f(int[] k=[1,[2]], int j) -> ()", 3, "default [2] is not a number, a string, True, False or None",
         "torch.library parses defaults by type: write e.g. 1, 1.5, True, None, 'text', [1,1]"),
    ],
)  # fmt: skip
def test_torch_library_errors(text, column, message, hint):
    e = error(text)
    assert (e.column, e.message, e.hint, e.text, e.dialect) == (column, message, hint, text, LIB)


# -- Defaults, as torch's parseDefaultValue reads them ---------------------------------------------

# (argument, the value torch._C.parse_schema gives it; a DType where opkit names the dtype torch codes)
DEFAULTS = [
    ("int k=None", None), ("int k=True", True), ("bool k=False", False), ("str s='a'", "a"), ('str s="a\\nb"', "a\nb"),
    ("int k=float", 6), ("int k=long", 4), ("int k=complex", 9), ("int k=Mean", 1), ("int k=strided", 0),
    ("int k=contiguous_format", 0), ("ScalarType k=float", DType("float32")), ("ScalarType k=long", DType("int64")),
    ("ScalarType k=complex", 9), ("ScalarType? k=float", DType("float32")), ("ScalarType? k=None", None),
    ("ScalarType k=0", DType("uint8")), ("ScalarType k=1", DType("int8")), ("ScalarType k=2", DType("int16")),
    ("ScalarType k=3", DType("int32")), ("ScalarType k=4", DType("int64")), ("ScalarType k=5", DType("float16")),
    ("ScalarType k=6", DType("float32")), ("ScalarType k=7", DType("float64")), ("ScalarType k=11", DType("bool")),
    ("ScalarType k=15", DType("bfloat16")), ("ScalarType k=99", DType("float32")),
    ("float k=1", 1.0), ("float? k=1", 1.0), ("float k=1E5", 100000.0), ("float? k=1e5", 100000.0), ("float? k=-2", -2.0), ("float[]? k=1", 1), ("float k=-2", -2.0), ("int k=-3", -3), ("int k=1.5", 1.5), ("Scalar s=1", 1),
    ("Scalar s=1.5", 1.5), ("Scalar s=True", True), ("bool b=1", 1), ("str s=1", 1), ("int k='a'", "a"), ("int? k=1", 1),
    ("DeviceIndex i=1", 1), ("Layout l=strided", 0), ("MemoryFormat m=contiguous_format", 0),
    ("float[] k=[1, 2]", [1.0, 2.0]), ("float[2] k=1", [1.0, 1.0]), ("float[] k=[1.5,2]", [1.5, 2.0]), ("bool[2] k=True", [True, True]),
    ("bool[3] k=False", [False, False, False]), ("int[2] k=[]", []), ("int[] k=[ ]", []), ("int[] k=[ 1 ,2 ]", [1, 2]),
    ("int[2] k=[1,2,3]", [1, 2, 3]), ("int[2] k=-1", [-1, -1]), ("int[] k=[float]", [6]), ("SymInt[] k=[2]", [2]),
    ("ScalarType[] k=[float, long]", [DType("float32"), DType("int64")]), ("bool[] k=[True,False]", [True, False]),
    ("int[]? k=None", None), ("Tensor t=None", None), ("Tensor? t=None", None), ("Generator g=None", None), ("Generator? g=None", None),
    ("Device d='cpu'", "cpu"), ('Device d="cuda:1"', "cuda:1"), ("Device d='npu'", "npu"), ("Device? d=None", None),
]  # fmt: skip


@pytest.mark.parametrize("argument, value", DEFAULTS)
def test_default_values_as_torch_reads_them(argument, value):
    (a,) = lib(f"f({argument}) -> ()").arguments
    assert a.default_value == value and type(a.default_value) is type(value)
    assert default_problem(a.type, a.default) is None


# (argument, opkit's message); torch._C.parse_schema refuses each, or opkit refuses torch's odd reading
BAD_DEFAULTS = [
    ("int[2] k=True", "default True is not a list of int values"),
    ("int[2] k=long", "default long is not a list of int values"),
    ("float[2] k=Mean", "default Mean is not a list of float values"),
    ("int[2] k=None", "default None is not a list of int values"),
    ("int[] k=[1,]", "default [1,] is not a list of int values"),
    ("int[] k=[,1]", "default [,1] is not a list of int values"),
    ("int[] k=1", "default 1 is not a list of int values"),
    ("int[] k=(1)", "default (1) is not a list of int values"),
    ("bool[] k=[1]", "default [1] is not a list of bool values"),
    ("float[] k=[True]", "default [True] is not a list of float values"),
    ("float[] k=[Mean]", "default [Mean] is not a list of float values"),
    ("float[2] k=[long, 1]", "default [long,1] is not a list of float values"),
    ("int[] k=[1.5]", "default [1.5] is not a list of int values"),
    ("int[] k=['a']", "default ['a'] is not a list of int values"),
    ("int[] k=[None]", "default [None] is not a list of int values"),
    ("int[]? k=[1]", "default [1] is not a number, a string, True, False or None"),
    ("int?[] k=None", "a int?[] argument cannot have a default"),
    ("str[] k=['a']", "a str[] argument cannot have a default"),
    ("Scalar[] k=[1]", "a Scalar[] argument cannot have a default"),
    ("Tensor[] t=None", "a Tensor[] argument cannot have a default"),
    ("Tensor t=1", "a Tensor default can only be None, not 1"),
    ("Generator g=0", "a Generator default can only be None, not 0"),
    ("Device d=None", 'a Device default is a string naming a device, e.g. "cpu", not None'),
    ("Device d=cpu", 'a Device default is a string naming a device, e.g. "cpu", not cpu'),
    ("Device d='\\x41'", "torch refuses the escape '\\x' in a string default"),
    ("Storage s=None", "torch.library allows no default for a Storage argument"),
    ("Stream s=None", "torch.library allows no default for a Stream argument"),
    ("SymBool b=True", "torch.library allows no default for a SymBool argument"),
    ("str s='\\x41'", "torch refuses the escape '\\x' in a string default"),
    ("str s='a' 'b'", "default 'a' 'b' is not one string literal"),
    ("int k=x", "default x is not a number, a string, True, False or None"),
    ("int k=inf", "default inf is not a number, a string, True, False or None"),
    ("int x=0x10", "unsupported by opkit: the hexadecimal default 0x10, which torch reads as its leading 0: write it in decimal"),
    # torch gives int x=0X1P3 the default 0 (its lexer reads a hexadecimal number as a float only with '.' or 'e' in it)
    ("int x=0X1P3", "unsupported by opkit: the hexadecimal default 0X1P3, which torch reads as its leading 0: write it in decimal"),
    ("int x=0x1e", "unsupported by opkit: the hexadecimal default 0x1e, which torch reads as a float: write it in decimal"),
    ("float x=0x1p3", "unsupported by opkit: the hexadecimal default 0x1p3, which torch reads as a float: write it in decimal"),
    # a float? argument's number is read as written, not as a float: torch gives float? x=1E5 the default 1, float? x=0x10 0,
    # and refuses float? x=99999999999999999999 (stoll)
    ("float? x=1E5", "unsupported by opkit: the integer default 1E5, which torch reads only up to the 'E' (1): write 100000"),
    ("float? x=0x10", "unsupported by opkit: the hexadecimal default 0x10, which torch reads as its leading 0: write it in decimal"),
    ("float? x=99999999999999999999", "default 99999999999999999999 is out of the range of a 64-bit integer"),
]  # fmt: skip


@pytest.mark.parametrize("argument, message", BAD_DEFAULTS)
def test_defaults_torch_refuses(argument, message):
    text = f"f(Tensor x, {argument}) -> ()"
    e = error(text)
    assert (e.message, e.column, e.text, e.dialect) == (message, 13, text, LIB)
    assert e.hint == "torch.library parses defaults by type: write e.g. 1, 1.5, True, None, 'text', [1,1]"


def test_the_device_message_lists_the_device_types():
    e = error("f(Device d='cpu:01') -> ()")
    assert e.message.startswith("'cpu:01' is not a device torch knows (one of cpu, cuda, fpga, hip,")
    assert e.message.endswith(", xla, xpu, with an optional :index)")


def test_parse_default_directly():
    assert parse_default(ArgType("int", is_list=True, size=2), "3") == [3, 3]
    assert parse_default(ArgType("float", optional=True), "2") == 2.0
    assert parse_default(ArgType("int", optional=True, is_list=True), "None") is None
    with pytest.raises(ValueError, match=r"^a int\?\[\] argument cannot have a default$"):
        parse_default(ArgType("int", is_list=True, elem_optional=True), "None")
    assert default_problem(ArgType("int"), "x") == "default x is not a number, a string, True, False or None"
    assert default_problem(ArgType("int"), "7") is None


@pytest.mark.parametrize(
    "text, column, name",
    [("f(Tensor x, int k=1, Tensor y) -> ()", 22, "y"), ("f(int a=1, int b, int c=1) -> ()", 12, "b"),
     ("f(Tensor? x=None, int[]? d) -> ()", 19, "d")],
)  # fmt: skip
def test_no_argument_without_a_default_after_one_with(text, column, name):
    e = error(text)
    assert (e.message, e.column, e.text, e.dialect) == (f"argument {name!r} without a default follows one with a default", column, text, LIB)
    assert e.hint == "give it a default, move it before the defaulted arguments, or make it keyword-only after '*'"


@pytest.mark.parametrize("text", ["f(int a=1, int[] b) -> ()", "f(int a=1, int[2] b, int c=1) -> ()", "f(int a=1, *, int b) -> ()", "f(int a, int b=1) -> ()"])
def test_lists_and_keyword_only_arguments_may_follow_a_default(text):
    # torch's checkSchema exempts lists ("historically serialized broadcasting lists") and keyword-only ones
    lib(text)


def test_check_schema_on_built_arguments():
    args = [Argument("a", ArgType("int"), "1", column=0), Argument("b", ArgType("int"), column=0)]
    e = check_schema(args, "text", OP)
    assert (e.message, e.column, e.dialect, e.text) == ("argument 'b' without a default follows one with a default", 1, OP, "text")
    bad = check_schema([Argument("a", ArgType("int"), "x", column=0)], "text")
    assert (bad.column, bad.dialect, bad.text) == (1, LIB, "text")
    assert check_schema([Argument("a", ArgType("int"), "1", column=5), Argument("b", ArgType("int"), "2", column=9)], "t") is None


@pytest.mark.parametrize("text, column, type_text", [("f(int[0] x) -> ()", 3, "int[0]"), ("f(Tensor x, int [ 00 ]? y) -> ()", 13, "int[00]?"),
                                                     ("f(int[01] x) -> ()", 3, "int[01]"), ("f(Tensor x) -> Tensor[0]", 16, "Tensor[0]")])  # fmt: skip
def test_list_sizes_torchgen_cannot_read_are_refused(text, column, type_text):
    # torch reads int[0] and int[01] (as int[1]); torchgen prints size 0 as int[] and asserts its round trip
    e = error(text)
    assert e.message == f"unsupported by opkit: the list size in {type_text!r}: op-plugin's codegen (torchgen) reads a size from 1 up, without leading zeros"
    assert e.column == column
    assert str(lib("f(int[10] x) -> ()")) == "f(int[10] x) -> ()"


# -- torch.library normalisation: what the C++ lexer ignores ---------------------------------------


@pytest.mark.parametrize(
    "text, printed",
    [("f(int [2] k = [1, 1]) -> ()", "f(int[2] k=[1,1]) -> ()"),
     ("f(Tensor ? x) -> ()", "f(Tensor? x) -> ()"),
     ("f(Tensor  x,\tint\tk) -> ()", "f(Tensor x, int k) -> ()"),
     ("f(int  [ 2 ] ?  k) -> ()", "f(int[2]? k) -> ()"),
     ("f(str s = 'a  b') -> ()", "f(str s='a  b') -> ()"),
     ('f(str s="a,  b") -> ()', 'f(str s="a,  b") -> ()'),
     ("f(int k =  1) -> ()", "f(int k=1) -> ()"),
     ("f(float[] k=[ 1. , 2 ]) -> ()", "f(float[] k=[1.,2]) -> ()"),
     ("f(Tensor ( a ! ) x) -> ()", "f(Tensor(a!) x) -> ()"),
     ("f(Tensor [ ] ( a ! ) x) -> ()", "f(Tensor[](a!) x) -> ()"),
     ("f(Tensor ? [] ! x) -> ()", "f(Tensor?[]! x) -> ()"),
     ("f(Tensor[](a!)? x) -> ()", "f(Tensor[](a!)? x) -> ()"),
     ("f(Tensor?[] (a!) ? x) -> ()", "f(Tensor?[](a!)? x) -> ()"),
     ("f(Tensor(a) ? x) -> ()", "f(Tensor(a)? x) -> ()"),
     ("f(Tensor(a -> *) x) -> ()", "f(Tensor(a -> *) x) -> ()"),
     ("f(Tensor(a|b!) x) -> Tensor(a|b!)", "f(Tensor(a|b!) x) -> Tensor(a|b!)"),
     ("f(Tensor(*) x) -> ()", "f(Tensor(*) x) -> ()"),
     ("ns :: f . o(Tensor x) -> ()", "ns::f.o(Tensor x) -> ()"),
     ("f(Tensor x, # the input\n int k) -> Tensor", "f(Tensor x, int k) -> Tensor"),
     ("f(Tensor x) -> Tensor # comment", "f(Tensor x) -> Tensor"),
     ("f(int x) -> ()\n", "f(int x) -> ()"),
     ("f(Tensor x)->(Tensor a,Tensor b)", "f(Tensor x) -> (Tensor a, Tensor b)"),
     ("f(Tensor ? [ ] (a) ? x) -> ()", "f(Tensor?[](a)? x) -> ()"),
     ("f(Tensor ? [] ? x) -> ()", "f(Tensor?[]? x) -> ()"), ("f(Tensor ? [ ] ? x=None) -> ()", "f(Tensor?[]? x=None) -> ()"),
     ("f(Tensor x, * , int k) -> ()", "f(Tensor x, *, int k) -> ()"),
     ("f() -> ()", "f() -> ()"), ("f( ) -> Tensor", "f() -> Tensor"),
     ("f(Tensor X, int Y) -> ()", "f(Tensor X, int Y) -> ()"),
     ("f(str s='(a b') -> ()", "f(str s='(a b') -> ()")],
)  # fmt: skip
def test_torch_library_normalises_what_the_lexer_ignores(text, printed):
    # each is one torch._C.parse_schema reads, and prints as ``printed`` (test_torch_agreement checks the agreement)
    assert str(lib(text)) == printed


@pytest.mark.parametrize(
    "text, alias",
    [("f(Tensor(a!) x) -> ()", Alias(("a",), True)),
     ("f(Tensor(a) x) -> ()", Alias(("a",), False)),
     ("f(Tensor(a0!) x) -> ()", Alias(("a0",), True)),
     ("f(Tensor( a | b ! ) x) -> ()", Alias(("a", "b"), True)),
     ("f(Tensor(a -> b|c) x) -> ()", Alias(("a",), False, ("b", "c"))),
     ("f(Tensor(*) x) -> ()", Alias(("*",), False)),
     ("f(Tensor[](a!) x) -> ()", Alias(("a",), True, on_list=True)),
     ("f(Tensor(a!)[] x) -> ()", Alias(("a",), True)),
     ("f(Tensor ! x) -> ()", Alias(("$3",), True, shorthand=True)),
     ("f(int k, Tensor[]! x) -> ()", Alias(("$10",), True, shorthand=True, on_list=True))],
)  # fmt: skip
def test_alias_annotations(text, alias):
    (a,) = [a for a in lib(text).arguments if a.is_tensor]
    assert a.alias == alias
    assert a.type.is_tensor


def test_shorthand_write_marks_get_a_set_each():
    x, y = lib("f(Tensor! x, Tensor! y) -> ()").arguments
    assert x.alias.sets != y.alias.sets and x.is_mutated and y.is_mutated


@pytest.mark.parametrize(
    "text, column, message",
    [("f(int(a!) x) -> ()", 3, "unsupported by opkit: the alias annotation in 'int(a!)': opkit models aliasing of Tensors only"),
     ("f(int! x) -> ()", 3, "unknown type 'int!'"),
     ("f(Tensor(a) x) -> int(a)", 19, "unsupported by opkit: the alias annotation in 'int(a)': opkit models aliasing of Tensors only")],
)  # fmt: skip
def test_alias_annotations_on_non_tensors(text, column, message):
    e = error(text)
    assert (e.column, e.message) == (column, message)


# -- op-plugin errors: located, with a hint and torchgen's spelling --------------------------------

SPELLING_HINT = "op-plugin needs the exact spelling torchgen prints: ', ' between arguments, ' -> ', and defaults without spaces"
SPACES_HINT = "op-plugin's codegen splits arguments at ', ': write defaults without spaces, e.g. int[2] pads=[1,1]"
QUOTED_HINT = "op-plugin's codegen splits arguments at ', ' and an argument at its '=': a string default can hold neither"
INPLACE_HINT = "for op-plugin, write an in-place op as a mutable op: no trailing '_', Tensor(a!) on the written argument, return () or fresh tensors"


@pytest.mark.parametrize(
    "text, column, message, hint, canonical",
    [
        ("f(Tensor x, int[2] k=[1, 1]) -> ()", 13, "default of 'int[2] k=[1, 1]' contains spaces", SPACES_HINT, None),
        ("f(Tensor x, int k=(1, 1)) -> ()", 13, "default of 'int k=(1, 1)' contains spaces", SPACES_HINT, None),
        ("f(Tensor x, int[2]k=[1, 1]) -> ()", 13, "default of 'int[2]k=[1, 1]' contains spaces", SPACES_HINT, None),
        # torchgen splits an argument at its one '=' (refuses a second) and arguments at ', ', quoted or not; a quoted
        # default may hold other spaces: str s="(x y)" is accepted, and the error is the next argument's
        ("f(str s='[a b]=') -> ()", 3, "string default of \"str s='[a b]='\" contains '='", QUOTED_HINT, None),
        ('f(Tensor x, str eq="a=(b c)") -> Tensor', 13, "string default of 'str eq=\"a=(b c)\"' contains '='", QUOTED_HINT, None),
        ('f(str eq="a=b", int[2] p=[1, 1]) -> Tensor', 3, "string default of 'str eq=\"a=b\"' contains '='", QUOTED_HINT, None),
        ('f(Tensor x, str s="a, b") -> Tensor', 13, "string default of 'str s=\"a, b\"' contains ', '", QUOTED_HINT, None),
        ('f(Tensor x, str eq="(x y)", Foo z) -> Tensor', 29, "unknown type 'Foo'", None, None),
        # a string left open swallows the ')': said at its quote (torch: "expected a valid token but found '"'")
        ('f(Tensor x, str s="a, Foo y) -> Tensor', 19, "unterminated string literal", None, None),
        ("f(Tensor x, (int k) -> Tensor", 2, "unbalanced '(' in the argument list", None, None),
        ("f(Tensor x, Foo y) -> Tensor", 13, "unknown type 'Foo'", None, None),
        ("f(Tensor x) -> Foo", 16, "unknown type 'Foo'", None, None),
        ("f(Tensor x) -> (Tensor, Foo)", 25, "unknown type 'Foo'", None, None),
        ("f(Tensor x, int[][] y) -> Tensor", 13, "unsupported by opkit: the nested list type int[][]: msOpGen attrs are flat lists", None, None),
        ("f(Tensor x) -> (Tensor, int[][])", 16, "unsupported by opkit: the nested list type int[][]: msOpGen attrs are flat lists", None, None),
        ("f(Tensor x, int {{a}}) -> Tensor", 13, "unsupported by opkit: argument name '{{a}}' is not an identifier",
         "op-plugin's codegen writes argument names into C++: use letters, digits and '_'", None),
        ("f(Tensor x) -> Tensor {{b}}", 16, "unsupported by opkit: return name '{{b}}' is not an identifier", None, None),
        # an alias annotation's '->' before the returns' one
        ("f(Tensor(a -> *) x) -> int[][]", 24, "unsupported by opkit: the nested list type int[][]: msOpGen attrs are flat lists", None, None),
        ("f(Tensor(a -> *) x) -> Tensor {{b}}", 24, "unsupported by opkit: return name '{{b}}' is not an identifier", None, None),
        ("my_op_(Tensor(a!) x) -> ()", 1, "Inplace op my_op_ must have a self argument with a mutable annotation", INPLACE_HINT, None),
        ("f_out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", 1,
         "_out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?",
         "name the out variant with an overload: my_op.out(...)", None),
        ("f(Tensor(A!) x) -> ()", 3, "unrecognized alias annotation A!",
         "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument", None),
        ("my_op(Tensor  x) -> Tensor", 7, "unknown type 'Tensor'", None, "my_op(Tensor x) -> Tensor"),
        ("f(Tensor x, int k = 1) -> Tensor", 13, "unknown type 'int k'", None, "f(Tensor x, int k=1) -> Tensor"),
        ("f(Tensor x, Tensor(a!) y) -> Tensor(a!)", 1,
         "If you have a schema with mutable positional args, we expect them to not be returned. schema: f(Tensor x, Tensor(a!) y) -> Tensor(a!)",
         "a custom op must not return a mutated input: return () or fresh tensors, keep Tensor(a!) on the argument", None),
    ],
)  # fmt: skip
def test_op_plugin_errors(text, column, message, hint, canonical):
    e = error(text, OP)
    assert (e.column, e.message, e.hint, e.canonical, e.dialect, e.text) == (column, message, hint, canonical, OP, text)


def test_op_plugin_spelling_errors_give_torchgens_spelling():
    e = error("my_op(Tensor x,Tensor y)->Tensor", OP)
    assert e.message == "Invalid function schema: my_op(Tensor x,Tensor y)->Tensor"
    assert (e.column, e.hint) == (16, None)
    assert e.canonical == "my_op(Tensor x, Tensor y) -> Tensor"
    # already canonical for torch.library, but torchgen refuses it: no spelling to offer
    assert error("f(Tensor(a!) x) -> Tensor(a!)", OP).canonical is None
    # torch.library refuses it too: no spelling to offer
    assert error("f(Tensor x,Foo y) -> Tensor", OP).canonical is None


@pytest.mark.parametrize(
    "message, hint",
    [("Inplace op f_ must have a self argument with a mutable annotation", INPLACE_HINT),
     ("Inplace ops on self", INPLACE_HINT), ("Inplace op", None), ("a must have a self argument", INPLACE_HINT),
     ("int[] != int[0]", SPELLING_HINT), ("a!=b", None), ("unrecognized alias annotation x", "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"),
     ("_out suffix is reserved", "name the out variant with an overload: my_op.out(...)"), ("something else", None)],
)  # fmt: skip
def test_hints(message, hint):
    from opkit.signature.parse import _hint_for

    assert _hint_for(message) == hint


@pytest.mark.parametrize("exc, message", [(AssertionError(), "AssertionError"), (ValueError("  "), "ValueError"), (ValueError("unrecognized type Foo"), "unknown type 'Foo'"),
                                          (RuntimeError(" spaced out "), "spaced out"), (KeyError("x"), "'x'")])  # fmt: skip
def test_torchgen_messages(exc, message):
    from opkit.signature.parse import _torchgen_message

    assert _torchgen_message(exc) == message


# -- parse_schema's memo and the persistent cache's hooks ------------------------------------------


def test_results_are_remembered_and_errors_raised_as_fresh_copies():
    text = "memo_probe(Tensor x, Foo y) -> ()"
    first, second = error(text, OP), error(text, OP)
    assert first is not second and (first.message, first.column) == (second.message, second.column)
    assert first.__traceback__ is not None
    stored = parsed_results([(text, OP), ("never parsed(", OP)])
    assert list(stored) == [(text, OP)]
    assert stored[(text, OP)].__traceback__ is None and stored[(text, OP)].__context__ is None


def test_remembered_results_answer_later_parses():
    sig = parse_schema("memo_seed(Tensor x) -> Tensor")
    remember_results({("memo_other(Tensor x) -> Tensor", OP): sig})
    assert parse_schema("memo_other(Tensor x) -> Tensor") is sig
    assert parsed_results([("memo_other(Tensor x) -> Tensor", OP)]) == {("memo_other(Tensor x) -> Tensor", OP): sig}


def test_parser_fingerprint_names_opkit_and_torchgen():
    import os

    import torchgen.model

    from opkit import __version__

    stat = os.stat(torchgen.model.__file__)
    assert parser_fingerprint() == f"opkit={__version__};torchgen={torchgen.model.__file__}:{stat.st_mtime_ns}:{stat.st_size}"


@pytest.mark.parametrize(
    "text, column",
    [("my_op(Tensor x,Tensor y)->Tensor", 16), ("my_op(Tensor x, Tensor y)->Tensor", 26), ("f(Tensor x) ->  Tensor", 16),
     ("f(Tensor x)  -> Tensor", 13), ("f(Tensor x,  Tensor y) -> Tensor", 13), ("f(Tensor x) -> (Tensor a,Tensor b)", 26),
     ("f( Tensor x) -> Tensor", 3), ("f(Tensor x) -> (Tensor)", 16), ("f(Tensor x, *) -> Tensor", 11),
     ("my_op_(Tensor(a!) x) -> ()", 1), ("f(*, Tensor x, *) -> ()", 1),
     ("f(Tensor x, Foo y) -> Tensor", 13), ("f(Tensor x) -> (Tensor, Foo)", 25), ("f(Tensor x, *, Foo y) -> Tensor", 16),
     ("f(Tensor x,Tensor y) -> ()", 12), ("f(Tensor x) -> Tensor\n", 22), ("f(Tensor x) -> ()\n", 18), (".o(Tensor x) -> ()", 1), ("f.(Tensor x) -> ()", 1)],
)  # fmt: skip
def test_op_plugin_errors_point_at_the_first_difference_from_torchgens_spelling(text, column):
    # torchgen prints ', ' between arguments and returns, ' -> ', one return bare, no trailing '*'
    assert error(text, OP).column == column


# -- op-plugin schemas the fast path leaves to torchgen --------------------------------------------


@pytest.mark.parametrize(
    "text, argument_aliases, return_aliases",
    [("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", [Alias(("a",), True), None], [Alias(("a",), True)]),
     ("f(Tensor(a -> *) x) -> ()", [Alias(("a",), False, ("*",))], []),
     ("f(Tensor(a|b) x) -> Tensor(a|b)", [Alias(("a", "b"), False)], [Alias(("a", "b"), False)]),
     ("f(Tensor x, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)", [None, None, Alias(("a",), True)], [Alias(("a",), True)])],
)  # fmt: skip
def test_torchgen_alias_annotations(text, argument_aliases, return_aliases):
    from opkit.signature.parse import _parse_op_plugin

    sig = _parse_op_plugin(text)  # torchgen's reading (the fast path answers some of these as well)
    assert [a.alias for a in sig.arguments] == argument_aliases
    assert [r.alias for r in sig.returns] == return_aliases
    assert str(sig) == text


def test_torchgen_path_facts():
    sig = parse_schema("aten::__ior__.Tensor(Tensor(a!) self, Tensor other, *, int k=1) -> Tensor(a!)")
    assert (sig.namespace, sig.name, sig.overload, sig.full_name, sig.kind) == ("aten", "__ior__", "Tensor", "__ior__.Tensor", SchemaKind.INPLACE)
    assert [(a.name, str(a.type), a.default, a.kwarg_only, a.column) for a in sig.arguments] == [
        ("self", "Tensor", None, False, 22), ("other", "Tensor", None, False, 39), ("k", "int", "1", True, 56)]  # fmt: skip
    assert sig.dialect is OP and sig.text.startswith("aten::")


@pytest.mark.parametrize(
    "text, column, message",
    [("f(Tensor x) -> (Tensor a, (int, int) b)", 27, "unsupported by opkit: a tuple type: no Ascend C operand or msOpGen attr maps to it"),
     ("f(str s=')', Tensor x) -> ()", 14, "argument 'x' without a default follows one with a default"),
     ("f(str s=\"'\", Tensor x) -> ()", 14, "argument 'x' without a default follows one with a default")],
)  # fmt: skip
def test_quotes_and_parentheses_inside_pieces(text, column, message):
    e = error(text)
    assert (e.column, e.message) == (column, message)


def test_quoted_brackets_do_not_split_or_close():
    sig = lib("f(int[2] k=[1,1], str s=\"]\", str t='(,') -> (Tensor)")
    assert [(a.name, a.default, a.column) for a in sig.arguments] == [("k", "[1,1]", 3), ("s", '"]"', 19), ("t", "'(,'", 30)]
    assert str(sig) == "f(int[2] k=[1,1], str s=\"]\", str t='(,') -> Tensor"


def test_torchgen_path_columns_when_one_argument_prints_inside_another():
    # 'Tensor o' is also the start of 'Tensor oo' (before it) and of 'Tensor o2' (after it)
    sig = parse_schema("__ior__.T(Tensor(a!) self, Tensor oo, Tensor o, Tensor o2) -> Tensor(a!)")
    assert [a.column for a in sig.arguments] == [11, 28, 39, 49]


def test_torchgen_path_columns_start_after_the_name():
    # torchgen takes any op name, blanks included: the argument's printing also occurs in the name
    sig = parse_schema("Tensor x(Tensor x) -> ()")
    assert (sig.name, [a.column for a in sig.arguments]) == ("Tensor x", [10])


def test_a_namespace_of_several_parts():
    # torchgen keeps everything before the last '::' as the namespace
    sig = parse_schema("a::b::f(Tensor x) -> Tensor")
    assert (sig.namespace, sig.name, str(sig)) == ("a::b", "f", "a::b::f(Tensor x) -> Tensor")


@pytest.mark.parametrize(
    "arg_type, text, problem",
    [(ArgType("int"), "X", "default X is not a number, a string, True, False or None"),
     (ArgType("int", is_list=True), "[1", "default [1 is not a list of int values"),
     (ArgType("int", is_list=True), "1]", "default 1] is not a list of int values"),
     (ArgType("int", is_list=True, size=2), "[1", "default [1 is not a list of int values"),
     (ArgType("int", is_list=True, size=2), "a1", "default a1 is not a list of int values"),
     (ArgType("int", is_list=True, size=2), "Mean", "default Mean is not a list of int values")],
)  # fmt: skip
def test_default_problems_of_texts_no_schema_can_hold(arg_type, text, problem):
    assert default_problem(arg_type, text) == problem


def test_torch_library_signature_fields():
    text = "ns::f.o(Tensor X, *, int Y=1) -> Tensor"
    sig = lib(text)
    assert (sig.text, sig.dialect, sig.namespace, sig.name, sig.overload) == (text, LIB, "ns", "f", "o")
    assert [(a.name, a.kwarg_only, a.column) for a in sig.arguments] == [("X", False, 9), ("Y", True, 22)]


def test_an_unterminated_string_in_an_op_plugin_schema_ends_the_search_for_its_parenthesis():
    # torchgen refuses it (unknown type 'Foo'); locating the error must stop at the quote that never closes
    import signal

    def hang(signum, frame):
        raise TimeoutError("the parse did not end")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    try:
        e = error("f(str s='a, Foo y) -> Tensor", OP)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert (e.column, e.message) == (9, "unterminated string literal")


def test_torch_library_none_return_reads_as_no_returns():
    """``-> None`` (TorchAir declares its ops so): torch registers one NoneType return, seen as None by callers."""
    from opkit.signature import Dialect, SchemaError, parse_schema

    sig = parse_schema("scope_exit(bool need_execute=False) -> None", Dialect.TORCH_LIBRARY)
    assert sig.returns == () and str(sig) == "scope_exit(bool need_execute=False) -> ()"
    with pytest.raises(SchemaError, match="TorchScript type 'None'"):
        parse_schema("f(Tensor x) -> (Tensor, None)", Dialect.TORCH_LIBRARY)
    with pytest.raises(SchemaError, match="unknown type 'None'"):
        parse_schema("f(Tensor x) -> None", Dialect.OP_PLUGIN)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("f(Tensor(a!) x, *, Tensor?z=None) -> ()", "f(Tensor(a!) x, *, Tensor? z=None) -> ()"),
        ("f(int[]x, Tensor[]?y) -> Tensor", "f(int[] x, Tensor[]? y) -> Tensor"),
        ("f(int[2]k=[1,2]) -> ()", "f(int[2] k=[1,2]) -> ()"),
    ],
)
def test_torch_library_type_suffix_glued_to_the_name(text, printed):
    """torch's lexer needs no blank between a type's last suffix and the name (TorchAir's tests write ``Tensor?z=None``)."""
    import torch

    from opkit.signature import Dialect, SchemaError, parse_schema

    assert str(parse_schema(text, Dialect.TORCH_LIBRARY)) == printed
    assert str(torch._C.parse_schema(text)).replace('"', "'").replace(", 2]", ",2]") == printed
    with pytest.raises(SchemaError, match="illegal argument"):
        parse_schema(text, Dialect.OP_PLUGIN)  # torchgen splits type and name at a blank
