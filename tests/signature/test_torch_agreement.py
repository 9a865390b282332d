"""opkit's two schema dialects against PyTorch's own parsers, on every real schema and on the odd cases.

* torch.library dialect vs ``torch._C.parse_schema``: the same strings accepted and refused, except
  the deliberate refusals whose message starts with ``UNSUPPORTED`` (docs/lint.md, "Schema dialects");
  what opkit accepts prints back to a string torch reads as the same schema, with the same facts
  (names, keyword-only, alias sets, writes, defaults and their values, returns, mutability).
* op-plugin dialect vs ``torchgen.model.FunctionSchema.parse``: the same verdicts, the exact round
  trip, and the derived facts (``kind`` is torchgen's ``SchemaKind``, written arguments, defaults).

Run over ``torch._C._jit_get_all_schemas()`` and torchgen's packaged native_functions.yaml, over a
table of the odd cases, and over schemas drawn from a grammar that mostly produces valid ones.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torchgen
import yaml
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st
from torchgen import model as tg

from opkit.signature import UNSUPPORTED, Dialect, DType, SchemaError, parse_schema
from opkit.signature.model import _SCALAR_TYPE_CODES

torch = pytest.importorskip("torch")

# Measured with torch 2.13: the registered schemas opkit refuses as unsupported (varargs, TorchScript
# types such as Dict, Future, tuples, type variables and custom classes, alias annotations on non-Tensors).
UNSUPPORTED_JIT_SCHEMAS = 466


def _native() -> list[str]:
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    return [e["func"] for e in yaml.load(path.read_text(), Loader=yaml.CSafeLoader)]


@functools.cache
def _jit() -> list[str]:
    """torch's own registered schemas, read in a fresh process: this one may hold ops other tests
    registered (verify's emulation brings ``PyObject`` schemas that parse_schema itself cannot read)."""
    code = "import json, torch; print(json.dumps([str(s) for s in torch._C._jit_get_all_schemas()]))"
    return json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


@pytest.fixture(scope="module", autouse=True)
def _npu_device():
    """PrivateUse1 named "npu", as torch_npu names it on the machines opkit's ops run on (and as
    ``opkit verify``'s emulation does), so torch reads ``Device d='npu'`` as those machines do."""
    from opkit.verify.device import emulate_npu_device

    emulate_npu_device()
    assert torch._C._get_privateuse1_backend_name() == "npu"


def _torch(text: str):
    try:
        return torch._C.parse_schema(text)
    except Exception:  # RuntimeError, and the odd IndexError of its lexer
        return None


def _opkit(text: str, dialect: Dialect):
    try:
        return parse_schema(text, dialect), None
    except SchemaError as exc:
        return None, exc


def _torch_facts(schema) -> tuple:
    def sets(alias):
        if alias is None:
            return None
        return tuple(sorted("fresh" if s.startswith("$") else s for s in alias.before_set)) or None  # a list hides its elements' sets

    args = [(a.name, a.kwarg_only, bool(a.alias_info and a.alias_info.is_write), sets(a.alias_info), a.has_default_value()) for a in schema.arguments]
    rets = [(r.name or None, bool(r.alias_info and r.alias_info.is_write)) for r in schema.returns]
    return schema.name, schema.overload_name, args, rets, schema.is_mutable


def _opkit_facts(sig) -> tuple:
    def sets(a):
        if a.alias is None:
            return None
        if a.type.is_list and not a.alias.on_list:
            return None
        if a.alias.shorthand:
            return ("fresh",)  # torch names Tensor!'s set $0, $1, ...
        return tuple(sorted(a.alias.sets))

    args = [(a.name, a.kwarg_only, a.is_mutated, sets(a), a.default is not None) for a in sig.arguments]
    rets = [(r.name, bool(r.alias and r.alias.is_write)) for r in sig.returns]
    name = f"{sig.namespace}::{sig.name}" if sig.namespace else sig.name
    return name, sig.overload, args, rets, bool(sig.mutated_arguments)


def _same_default(ours: object, theirs: object, arg) -> bool:
    if isinstance(ours, DType):
        ours = {v: k for k, v in _SCALAR_TYPE_CODES.items()}[ours.name]
    if isinstance(theirs, torch.device):
        return str(theirs) == ours
    if arg.type.base == "float" and arg.type.optional and type(theirs) is int and arg.default[:1].isdigit():
        return ours == float(theirs) and type(ours) is float  # opkit gives a float? default the float it receives
    # (an enum name such as Mean stays torch's int, as it does for a plain float)
    return ours == theirs and type(ours) is type(theirs)


def torch_library_disagreement(text: str) -> str | None:
    """Why opkit's torch.library dialect disagrees with torch on ``text``, or None."""
    theirs = _torch(text)
    sig, error = _opkit(text, Dialect.TORCH_LIBRARY)
    if sig is None:
        if not 1 <= error.column <= len(text) + 1:
            return f"error column {error.column} outside the text: {error}"
        if theirs is not None and not error.message.startswith(UNSUPPORTED):
            return f"torch accepts, opkit rejects: {error}"
        return None
    if theirs is None:
        return f"opkit accepts, torch rejects (opkit prints {sig})"
    printed = _torch(str(sig))
    if printed is None or str(printed) != str(theirs):
        return f"prints back as {sig}, which torch reads as {printed}, not {theirs}"
    if _opkit_facts(sig) != _torch_facts(theirs):
        return f"facts {_opkit_facts(sig)} != torch's {_torch_facts(theirs)}"
    for ours, arg in zip(sig.arguments, theirs.arguments):
        if ours.default is not None and not _same_default(ours.default_value, arg.default_value, ours):
            return f"default of {ours.name}: {ours.default_value!r} != torch's {arg.default_value!r}"
    return None


def op_plugin_disagreement(text: str) -> str | None:
    """Why opkit's op-plugin dialect disagrees with torchgen on ``text``, or None."""
    try:
        fs = tg.FunctionSchema.parse(text)
        accepted = str(fs) == text
    except Exception:
        fs, accepted = None, False
    sig, error = _opkit(text, Dialect.OP_PLUGIN)
    if sig is None:
        return f"torchgen accepts, opkit rejects: {error}" if accepted and not error.message.startswith(UNSUPPORTED) else None
    if not accepted:
        return "opkit accepts, torchgen rejects"
    if str(sig) != text:
        return f"prints back as {sig}"
    if sig.kind.name.lower() != fs.kind().name:
        return f"kind {sig.kind.name} != torchgen's {fs.kind().name}"
    ours = [(a.name, a.is_mutated, a.default, a.kwarg_only) for a in sig.arguments]
    positional = len(fs.arguments.flat_positional)
    theirs = [(a.name, a.annotation is not None and a.annotation.is_write, a.default, i >= positional) for i, a in enumerate(fs.arguments.flat_all)]
    if ours != theirs or bool(sig.mutated_arguments) != fs.is_mutable:
        return f"arguments {ours} != torchgen's {theirs}"
    return None


@pytest.mark.parametrize("source", ["jit", "native"])
def test_torch_library_dialect_agrees_with_parse_schema_on_real_schemas(source):
    texts = _jit() if source == "jit" else _native()
    wrong = [f"{t}: {why}" for t in texts if (why := torch_library_disagreement(t)) is not None]
    assert wrong == []
    refused = [t for t in texts if _opkit(t, Dialect.TORCH_LIBRARY)[0] is None]
    assert all(_torch(t) is not None for t in refused)  # every refusal is a documented unsupported one
    assert all(str(_opkit(t, Dialect.TORCH_LIBRARY)[1]).startswith("unsupported by opkit") for t in refused)
    # A CUDA build of torch (what a plain `pip install torch` gives on Linux) adds TorchScript's cuda::
    # builtins (int64_t, the custom class cuda.Stream), refused the same way; the count is the CPU build's.
    assert len([t for t in refused if not t.startswith("cuda::")]) <= (UNSUPPORTED_JIT_SCHEMAS if source == "jit" else 0)


@pytest.mark.parametrize("source", ["jit", "native"])
def test_op_plugin_dialect_agrees_with_torchgen_on_real_schemas(source):
    texts = [re.sub(r"^\w+::", "", t) for t in _jit()] if source == "jit" else _native()
    wrong = [f"{t}: {why}" for t in texts if (why := op_plugin_disagreement(t)) is not None]
    assert wrong == []


@pytest.mark.parametrize(
    "text, refusal",
    [
        # torch refuses, and so does opkit, with a located message
        ("f(int\u00a0x) -> ()", None), ("f(int\u2003x) -> ()", None), ("f(int é) -> ()", None),  # Unicode outside strings
        ("f(int def) -> ()", None), ("f(int None) -> ()", None), ("f(int in) -> ()", None), ("def(int x) -> ()", None),  # keywords
        ("f.None(int x) -> ()", None), ("f(Tensor x) -> Tensor None", None),
        ("f(Storage s=None) -> ()", None), ("f(Stream s=None) -> ()", None), ("f(QScheme q=None) -> ()", None),  # no default
        ("f(Device d='npux') -> ()", None), ("f(Device d=1) -> ()", None), ("f(SymBool b=True) -> ()", None),
        ("f(float f=1e400) -> ()", None), ("f(float f=1e-400) -> ()", None), ("f(int x=9223372036854775808) -> ()", None),
        ("f.1a(int x) -> ()", None), ("f.default(int x) -> ()", None), ("f.__x(int x) -> ()", None),  # overload names
        ("f(str s='\\r') -> ()", None), ("f(str s='\\x41') -> ()", None), ("f(int {{a}}) -> ()", None),
        ("f(SymFloat x) -> ()", None), ("f(GraphModule g) -> ()", None), ("f(Dimname d) -> ()", None),
        ("f(int x)\n -> ()", None), ("f(int x=inf) -> ()", None), ("f(int[2] x=None) -> ()", None), ("f(int[2] x=long) -> ()", None), ("f(float[2] x=Mean) -> ()", None), ("f(bool[] b=[1]) -> ()", None), ("f(float[] x=[Mean]) -> ()", None),
        ("f(int[] x=[True]) -> ()", None), ("f(int x=1, int y) -> ()", None), ("f(Tensor?(a!) x) -> ()", None),
        # torch accepts, and so does opkit
        ("f(Tensor(*) a) -> ()", None), ("f(Tensor[](a!) a) -> ()", None), ("f(Tensor(a -> *) x) -> ()", None),
        ("ns :: f(Tensor(a !) x) -> ()", None), ("ns::f . o(Tensor x) -> ()", None), ("f(Tensor! x) -> ()", None),
        ("f(Tensor x) -> Tensor # comment", None), ("f(Tensor x, # the input\n int k) -> Tensor", None), ("f(int x) -> ()\n", None),
        ("f(float x=1E5) -> ()", None), ("f(int x=1e5) -> ()", None), ("f(int x=007) -> ()", None), ("f(int x=9223372036854775807) -> ()", None),
        ('f(str s="a\\\\b") -> ()', None), ("f(str s='a\\'b') -> ()", None), ("f(str s='''a''') -> ()", None), ("f(str s='\\101') -> ()", None),
        ('f(str a="\\"\'\\\\", str b=\'"\\\'\\\\\') -> ()', None), ("f(str s='é') -> ()", None),
        ("f(Device d=\"cpu\") -> ()", None), ("f(Device d='cuda:0') -> ()", None), ("f(Device d='npu:1') -> ()", None), ("f(SymBool b) -> SymBool", None),
        ("f(int x=float) -> ()", None), ("f(Layout l=strided) -> ()", None), ("f(float[] x=[1]) -> ()", None), ("f(SymInt[] s=[float, 2]) -> ()", None),
        ("f(Tensor x, *) -> ()", None), ("f(*, *, int x) -> ()", None), ("f(int[2] x=1) -> ()", None), ("f(int x) -> (int x, int x)", None),
        # torch accepts, opkit refuses on purpose (docs/lint.md, "Schema dialects")
        ("f(int[][] x) -> ()", "nested list"), ("f(complex c) -> ()", "'complex'"), ("f(Any a) -> ()", "'Any'"),
        ("f(...) -> ...", "varargs"), ("f(Tensor x, ...) -> ()", "varargs"), ("f(tensor x) -> ()", "did you mean 'Tensor'"),
        ("f(Dict(str, Tensor) d) -> ()", "Dict"), ("f((int, int) t) -> ()", "tuple"), ("f(int(a!) x) -> ()", "Tensors only"),
        ("f(int x=0x10) -> ()", "hexadecimal"), ("f(float x=0x10) -> ()", "hexadecimal"), ("f(int x=1E5) -> ()", "write 100000"),
        ("f(Scalar s=1j) -> ()", "complex default"),
        ("f(int[0] x) -> ()", "list size"), ("f(Tensor x) -> Tensor[0]", "list size"), ("f(int[01] x) -> ()", "list size"),
    ],
)  # fmt: skip
def test_odd_cases(text, refusal):
    assert torch_library_disagreement(text) is None
    sig, error = _opkit(text, Dialect.TORCH_LIBRARY)
    if refusal is not None:  # torch accepts it: opkit's refusal says why
        assert _torch(text) is not None and sig is None
        assert error.message.startswith(UNSUPPORTED) and refusal in error.message, error
    else:
        assert (sig is None) == (_torch(text) is None), error


# -- a grammar of schemas, mostly valid ones, with the odd pieces mixed in -----------------------
GOOD_TYPES = {
    "Tensor": ["None"], "Tensor?": ["None"], "Tensor[]": [], "Tensor?[]": [], "int": ["0", "-1", "7", "1e5", "007"], "int?": ["None", "2"],
    "int[]": ["[]", "[1,1]", "[1, 2]"], "int[2]": ["[1,1]", "1"], "SymInt": ["0"], "SymInt[]": ["[0,1]", "[float]"],
    "float": ["1.0", "1e-6", "-0.5", ".5", "5.", "1E5", "1"], "float?": ["None", "1"], "float[]": ["[1.0,2.0]", "[1]"],
    "bool": ["True", "False"], "bool[]": ["[True,False]"], "str": ["'abc'", '"a b"', "'a\\\\b'", '"a\\"b"', "'''x'''"], "str?": ["None"],
    "Scalar": ["1", "0.5", "True"], "Scalar?": ["None"], "ScalarType": ["float", "long", "6"], "ScalarType?": ["None"],
    "Layout?": ["None", "strided"], "MemoryFormat": ["contiguous_format"], "Device": ["'cpu'", '"cuda:1"'], "Device?": ["None"],
    "Generator?": ["None"], "Storage": [], "Stream": [], "SymBool": [], "int reduction": [],
}  # fmt: skip
ODD_TYPES = ["complex", "Any", "t", "int[][]", "SymFloat", "Dimname", "Foo", "Dict(str, Tensor)", "(int, int)", "int(a!)"]
ODD_DEFAULTS = ["0x10", "1e400", "9223372036854775808", "'\\r'", "'\\x41'", "inf", "Mean", "[ ]", "None", "'npu'", "1j", "--1", "[1.5]", "x"]
ANNOTATIONS = ["(a)", "(a!)", "(b!)", "(a !)", "(*)", "(a -> *)", "(a|b)", "!", "(def)"]
NAMES = ["x", "self", "out", "weight", "k", "y2", "_z"]
ODD_NAMES = ["def", "None", "in", "1x", "x\u00a0y"]
BLANKS = [" ", " ", " ", " ", "  ", "\t", " # note\n ", "\u00a0"]


@st.composite
def torch_library_schemas(draw) -> str:
    def pick(common, odd, p_odd=0.08):
        """One of ``common``, or of ``odd`` with about ``p_odd`` probability (sampled_from draws evenly)."""
        repeat = max(1, round(len(odd) * (1 - p_odd) / (p_odd * len(common))))
        return draw(st.sampled_from(list(common) * repeat + list(odd)))

    def chance(p):
        return draw(st.sampled_from([True] * round(p * 20) + [False] * (20 - round(p * 20))))

    blank = lambda: pick([" "], BLANKS[3:], 0.05)  # noqa: E731
    args = []
    for _ in range(draw(st.integers(0, 5))):
        type_ = pick(sorted(GOOD_TYPES), ODD_TYPES, 0.03)
        if type_ == "int reduction":
            type_, defaults = "int", ["Mean"]
        else:
            defaults = GOOD_TYPES.get(type_, [])
        if type_.startswith("Tensor") and chance(0.3):
            annotation = draw(st.sampled_from(ANNOTATIONS))
            type_ = f"Tensor{annotation}{type_[6:]}" if draw(st.booleans()) or "[]" not in type_ else f"{type_}{annotation}"
        arg = f"{type_}{blank()}{pick(NAMES, ODD_NAMES, 0.02)}"
        if chance(0.35) and (defaults or chance(0.1)):
            arg += "=" + pick(defaults or ODD_DEFAULTS, ODD_DEFAULTS, 0.05)
        args.append(arg)
    args.sort(key=lambda a: "=" in a)  # defaults last, as torch requires of positional arguments
    if args and chance(0.3):
        args.insert(draw(st.integers(0, len(args))), "*")
    if chance(0.05) and not any("=" in a for a in args):
        args.append("...")
    sep = pick([", "], [",", " , ", ", # c\n", ",\n  "], 0.1)
    name = pick(["my_op", "f", "npu_rms_norm", "my_op_", "__ior__"], ["def", "1op", "x-y"], 0.02)
    ns = pick(["", "", "mylib::"], ["mylib :: ", "in::"], 0.05)
    overload = pick(["", "", ".out", ".Tensor"], [".default", ".__x", ".1a", " . o"], 0.04)
    returns = pick(["()", "Tensor", "Tensor z", "(Tensor, Tensor)", "(Tensor a, Tensor b)", "Tensor(a!)", "(Tensor(a!), Tensor)", "Tensor[]", "int", "SymBool"],
                   ["...", "(Tensor, ...)", "Tensor None", "t", "Foo", ""], 0.04)  # fmt: skip
    arrow = pick([" -> "], ["->", "  ->  ", "\n->"], 0.05)
    tail = pick([""], [" # comment", "\n", "\n  ", "\nf() -> ()"], 0.05)
    return f"{ns}{name}{overload}({sep.join(args)}){arrow}{returns}{tail}"


def test_the_grammar_mostly_draws_schemas_torch_accepts():
    verdicts: list[bool] = []

    # A fixed seed: the share is a property of the grammar, measured on one fixed draw, so the test cannot
    # fail by the luck of one run's draw.
    @seed(20261201)
    @settings(max_examples=150, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(torch_library_schemas())
    def draw(text):
        verdicts.append(_torch(text) is not None)

    draw()
    assert len(verdicts) >= 100 and sum(verdicts) / len(verdicts) >= 0.6, sum(verdicts) / len(verdicts)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(torch_library_schemas())
@example("my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor")
@example("mylib::my_op_(Tensor(a0!) x) -> ()")
@example("f(Tensor[](a!) x, Tensor(b) y) -> Tensor(b)")
@example("my_op(*, float? x=Mean) -> ()")  # an enum default of a float?: torch's int, not the float a number gives
def test_torch_library_dialect_agrees_with_parse_schema_on_drawn_schemas(text):
    assert torch_library_disagreement(text) is None, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(torch_library_schemas())
def test_op_plugin_dialect_agrees_with_torchgen_on_drawn_schemas(text):
    assert op_plugin_disagreement(text) is None, text


@pytest.mark.parametrize("text, column", [("f(Tensor x, int {{a}}) -> Tensor", 13), ("f(Tensor x) -> Tensor {{b}}", 16)])
def test_op_plugin_dialect_refuses_names_its_codegen_cannot_write(text, column):
    assert str(tg.FunctionSchema.parse(text)) == text  # torchgen takes any name
    sig, error = _opkit(text, Dialect.OP_PLUGIN)
    assert sig is None and error.message.startswith(UNSUPPORTED) and "not an identifier" in error.message
    assert error.column == column
