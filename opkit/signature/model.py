"""The op-signature model: one schema string, parsed once, with every fact the rest of opkit needs.

Two dialects of the schema language exist and they disagree (see ``Dialect``). Both are parsed with
the parsers PyTorch ships, never a parser of our own:

* ``Dialect.OP_PLUGIN`` is exactly ``torchgen.model.FunctionSchema.parse``, what op-plugin's codegen
  runs on every ``func:`` of ``op_plugin_functions.yaml``: ATen naming conventions and the exact
  round trip ``str(parse(f)) == f`` included.
* ``Dialect.TORCH_LIBRARY`` is the grammar of ``torch._C.parse_schema`` (``Library.define``,
  ``custom_op``). It is more lenient about whitespace, namespaces, alias names and naming
  conventions; opkit normalises those away and hands each argument and return to torchgen's
  ``Argument``/``Return``/``Type`` parsers, which share the C++ parser's type grammar.

This module knows nothing of files, YAML or torch.compile, and never imports torch.
"""

from __future__ import annotations

import copy
import enum
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from opkit import naming, torch_lexer


class Dialect(str, enum.Enum):
    """Which schema parser a string must satisfy."""

    OP_PLUGIN = "op-plugin"
    TORCH_LIBRARY = "torch.library"

    @property
    def parser(self) -> str:
        """The PyTorch parser this dialect follows, for messages."""
        if self is Dialect.OP_PLUGIN:
            return "torchgen.model.FunctionSchema, as op-plugin's codegen"
        return "torch._C.parse_schema, as torch.library"


class SchemaKind(str, enum.Enum):
    """What an op does to its arguments: torchgen's SchemaKind (``OpSignature.kind`` says how it is decided)."""

    FUNCTIONAL = "functional"  # returns fresh tensors, mutates nothing
    INPLACE = "inplace"  # name ends in '_', mutates and returns ``self``
    OUT = "out"  # writes keyword-only ``Tensor(a!)`` out arguments
    MUTABLE = "mutable"  # mutates positional arguments, e.g. ``my_inplace(Tensor(a!) x, ...)``
    SCRATCH = "scratch"  # an out variant whose out arguments include ``_scratch_*`` buffers


class SchemaError(ValueError):
    """A schema string that the dialect's parser rejects, located at a 1-based column."""

    def __init__(self, message: str, *, text: str, column: int, dialect: Dialect, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.text = text
        self.column = column
        self.dialect = dialect
        self.hint = hint
        self.canonical: str | None = None  # the accepted spelling, when only the spelling is wrong

    def __reduce__(self):
        return (_restore_schema_error, (self.message, self.text, self.column, self.dialect, self.hint, self.canonical))

    @property
    def is_unknown_type(self) -> bool:
        return self.message.startswith("unknown type")

    def __str__(self) -> str:
        where = f"{self.dialect.value} schema, column {self.column}"
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.message} [{where}]{hint}"


def _restore_schema_error(message, text, column, dialect, hint, canonical) -> SchemaError:
    error = SchemaError(message, text=text, column=column, dialect=dialect, hint=hint)
    error.canonical = canonical
    return error


# Argument types msOpGen can express as an attr, and the attr type each becomes (msopgen.md §2, §6).
# An optional one (``int? k=None``) is an OPTIONAL attr of the same type (docs/new.md, "Type mapping").
_ATTR_TYPES = {
    ("int", False): "int",
    ("SymInt", False): "int",
    ("float", False): "float",
    ("bool", False): "bool",
    ("str", False): "string",
    ("ScalarType", False): "type",
    ("int", True): "list_int",
    ("SymInt", True): "list_int",
    ("float", True): "list_float",
    ("bool", True): "list_bool",
    ("str", True): "list_string",
    ("ScalarType", True): "list_type",
}

# torchgen's AUGMENTED_ASSIGNMENT_NAMES, as the in-place dunders spell them (``__iadd__``).
_AUGMENTED_DUNDERS = frozenset(f"i{n}" for n in "add sub mul div mod pow lshift rshift and xor or".split())

# Types whose mere presence stops npugraph_ex capture (random number generation).
_UNCAPTURABLE_TYPES = frozenset({"Generator"})

# Types that stay refused, each with what to write instead (the corrected schema drops or retypes them).
REFUSED_TYPES = {
    "Generator": "random number generation cannot enter an npugraph_ex graph: drop the Generator argument and seed outside the op",
    "Device": "a device is not an operand of an Ascend C kernel: drop the argument (the op runs where its tensors are)",
    "Layout": "a layout is not an operand of an Ascend C kernel: drop the argument (outputs are strided)",
    "MemoryFormat": "a memory format is not an operand of an Ascend C kernel: drop the argument (outputs are contiguous)",
    "Dimname": "torch 2.13's torchgen no longer parses Dimname: take the dimension as an int",
}

# Enum-like defaults torch resolves itself, and the value torchgen/torch give them.
ENUM_DEFAULTS: dict[str, int] = {"Mean": 1, "Sum": 2, "contiguous_format": 0, "strided": 0}
# ScalarType names a default may use, and the torch dtype / msOpGen dtype each is.
SCALAR_TYPE_DEFAULTS: dict[str, tuple[str, str]] = {"float": ("float32", "float"), "long": ("int64", "int64")}


@dataclass(frozen=True)
class ArgType:
    """A schema type: ``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]``, ``int[2]``, ``ScalarType?``, ..."""

    base: str
    optional: bool = False
    is_list: bool = False
    size: int | None = None
    elem_optional: bool = False

    @property
    def is_tensor(self) -> bool:
        """A Tensor, optional Tensor or list of Tensors: an input of the kernel, not an attr."""
        return self.base == "Tensor"

    @property
    def is_scalar(self) -> bool:
        """A ``Scalar`` operand: real OpDefs declare it as a tensor input marked ``.Scalar()``."""
        return self.base == "Scalar" and not self.is_list

    @property
    def is_input(self) -> bool:
        """A kernel input (a tensor, a tensor list or a Scalar operand), not an attr."""
        return self.is_tensor or self.is_scalar

    @property
    def msopgen_attr_type(self) -> str | None:
        """The msOpGen attr type, or None when there is no faithful one (Scalar, Generator, Tensor?[], ...)."""
        if self.is_tensor or self.elem_optional:
            return None
        return _ATTR_TYPES.get((self.base, self.is_list))

    @property
    def msopgen_param_type(self) -> str | None:
        """msOpGen ``param_type`` of an input: required, optional or dynamic (``Tensor[]?`` is dynamic too)."""
        if not self.is_input:
            return None
        if self.is_list:
            return "dynamic"
        return "optional" if self.optional else "required"

    @property
    def refusal(self) -> str | None:
        """Why opkit will not generate an op with this type, or None."""
        return REFUSED_TYPES.get(self.base)

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.size}]" if self.size is not None else "[]"
        return s + ("?" if self.optional else "")


@dataclass(frozen=True)
class DType:
    """A torch dtype as a default value (``ScalarType d=float``): ``repr`` is its Python spelling."""

    name: str  # torch's name: float32, int64, ...

    def __repr__(self) -> str:
        return f"torch.{self.name}"


# ScalarType codes torch prints for dtype defaults (c10::ScalarType order, as torch 2.13 passes each code
# to a Python kernel: ``ScalarType dst_type=39`` is torch.int3).
_SCALAR_TYPE_CODES = dict(enumerate(
    """uint8 int8 int16 int32 int64 float16 float32 float64 complex32 complex64 complex128 bool qint8 quint8 qint32
    bfloat16 quint4x2 quint2x4 bits1x8 bits2x4 bits4x2 bits8 bits16 float8_e5m2 float8_e4m3fn float8_e5m2fnuz
    float8_e4m3fnuz uint16 uint32 uint64 uint1 uint2 uint3 uint4 uint5 uint6 uint7 int1 int2 int3 int4 int5 int6 int7
    float8_e8m0fnu float4_e2m1fn_x2""".split()
))


@dataclass(frozen=True)
class Alias:
    """An alias annotation such as ``a!`` (in ``Tensor(a!)``): alias sets and whether it writes."""

    sets: tuple[str, ...]
    is_write: bool
    after: tuple[str, ...] = ()
    shorthand: bool = False  # torch.library's ``Tensor! x``: written, with an alias set of its own
    on_list: bool = False  # torch.library's ``Tensor[](a!)``: the annotation follows the list, not the element

    def __str__(self) -> str:
        s = "|".join(self.sets) + ("!" if self.is_write else "")
        return s + (f" -> {'|'.join(self.after)}" if self.after else "")


def _type_str(type_: ArgType, alias: Alias | None) -> str:
    if alias is None:
        return str(type_)
    # The annotation sits right after the base name (Tensor(a!), Tensor(a)?, Tensor(a)[]) or, when
    # written on the list, after its brackets (Tensor[](a!), Tensor?[]!).
    printed = str(type_)
    at = printed.index("]") + 1 if alias.on_list else len("Tensor")
    annotation = "!" if alias.shorthand else f"({alias})"
    return printed[:at] + annotation + printed[at:]


@dataclass(frozen=True)
class Argument:
    name: str
    type: ArgType
    default: str | None = None
    alias: Alias | None = None
    kwarg_only: bool = False
    column: int = 0  # 1-based column of the argument in the text it was parsed from

    @property
    def is_tensor(self) -> bool:
        return self.type.is_tensor

    @property
    def is_mutated(self) -> bool:
        return self.alias is not None and self.alias.is_write

    @property
    def default_value(self) -> object:
        """The default as torch reads it: None, True, 3, 1.5, "text" (escapes decoded), [1, 1] (``int[2] k=1``),
        a DType for a ScalarType, the int torch gives ``Mean``/``contiguous_format``/``strided``.

        Raises ValueError when there is none, or torch refuses it (``parse_default``).
        """
        if self.default is None:
            raise ValueError(f"argument {self.name!r} has no default")
        try:
            return parse_default(self.type, self.default)
        except ValueError as exc:
            raise ValueError(f"default {self.default!r} of {self.name!r}: {exc}") from None

    def __str__(self) -> str:
        s = f"{_type_str(self.type, self.alias)} {self.name}"
        return s if self.default is None else f"{s}={self.default}"


@dataclass(frozen=True)
class Return:
    type: ArgType
    name: str | None = None
    alias: Alias | None = None

    def __str__(self) -> str:
        s = _type_str(self.type, self.alias)
        return s if self.name is None else f"{s} {self.name}"


@dataclass(frozen=True)
class OpSignature:
    """An op schema, immutable; ``str()`` prints it back in the dialect's canonical spelling.

    Derived facts are computed on first use and kept (``cached_property``): rules ask often.
    """

    text: str
    dialect: Dialect
    name: str
    overload: str = ""
    namespace: str = ""
    arguments: tuple[Argument, ...] = ()
    returns: tuple[Return, ...] = ()

    # -- names ---------------------------------------------------------------------------------
    @property
    def full_name(self) -> str:
        """``name.overload`` as op-plugin and torch.ops spell it (``name`` for the default overload)."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def base_name(self) -> str:
        """The name without a trailing in-place ``_``: what naming conventions derive from."""
        if not self.is_inplace_name:
            return self.name
        return f"__{self.name[3:]}" if self.name.startswith("__") else self.name[:-1]  # __iand__ → __and__

    @functools.cached_property
    def op_type(self) -> str:
        """msOpGen's UpperCamelCase op type (``my_inplace`` → ``MyInplace``)."""
        return naming.op_type(self.base_name)

    @functools.cached_property
    def kernel_name(self) -> str:
        """The snake_case name msOpGen gives files and the kernel function."""
        return naming.msopgen_snake(self.op_type)

    @property
    def aclnn_name(self) -> str:
        return naming.aclnn_name(self.base_name)

    @property
    def meta_function_name(self) -> str:
        return naming.meta_function_name(self.name)

    @property
    def name_round_trips(self) -> bool:
        """Whether ``msopgen_snake(UpperCamel(name)) == name``: file names and converters rely on it."""
        return self.kernel_name == naming.kernel_base(self.base_name)

    # -- arguments -----------------------------------------------------------------------------
    @functools.cached_property
    def positional_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @functools.cached_property
    def kwarg_only_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    @functools.cached_property
    def tensor_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_tensor)

    @functools.cached_property
    def attr_arguments(self) -> tuple[Argument, ...]:
        """Non-tensor arguments: msOpGen attrs."""
        return tuple(a for a in self.arguments if not a.is_tensor)

    @functools.cached_property
    def mutated_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_mutated)

    @functools.cached_property
    def omittable_arguments(self) -> tuple[Argument, ...]:
        """Arguments PyTorch may leave out when it calls a kernel or Meta function.

        It drops keyword-only arguments equal to their default, and positional ones equal to their
        default only from the end: a defaulted argument followed by one without a default is always
        passed. Each omittable argument needs a default in a Meta/fake function; the others cannot
        have one there if a later parameter has none (Python's own rule).
        """
        trailing: list[Argument] = []
        for a in reversed(self.positional_arguments):
            if a.default is None:
                break
            trailing.append(a)
        return tuple(a for a in self.arguments if (a.kwarg_only and a.default is not None) or any(a is t for t in trailing))

    def is_omittable(self, argument: Argument) -> bool:
        return id(argument) in self._omittable_ids

    @functools.cached_property
    def _omittable_ids(self) -> frozenset[int]:  # is_omittable in constant time: sample calls ask per argument
        return frozenset(map(id, self.omittable_arguments))

    @functools.cached_property
    def out_arguments(self) -> tuple[Argument, ...]:
        """Keyword-only mutated arguments: the out= tensors of an out variant."""
        return tuple(a for a in self.arguments if a.kwarg_only and a.is_mutated)

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    @property
    def is_inplace_name(self) -> bool:
        """torchgen's in-place names: a trailing ``_``, or an augmented-assignment dunder (``__iand__``)."""
        if self.name.startswith("__") and self.name.endswith("__"):
            return self.name[2:-2] in _AUGMENTED_DUNDERS
        return self.name.endswith("_")

    @functools.cached_property
    def kind(self) -> SchemaKind:
        """torchgen's ``FunctionSchema.kind()``, which op-plugin's codegen branches on.

        Its rules, kept exactly: an in-place name wins; then out arguments; then a mutated positional
        argument *after* ``self`` makes the op mutable. A mutated ``self`` under a name without ``_``
        (ATen's ``set_data``, ``record_stream``) is therefore functional: ask ``mutated_arguments``
        what an op writes.
        """
        if self.is_inplace_name:
            return SchemaKind.INPLACE
        if self.out_arguments:
            return SchemaKind.SCRATCH if any(a.name.startswith("_scratch_") for a in self.out_arguments) else SchemaKind.OUT
        positional = self.positional_arguments
        self_index = next((i for i, a in enumerate(positional) if a.name == "self"), -1)
        if any(a.is_mutated for a in positional[self_index + 1 :]):
            return SchemaKind.MUTABLE
        return SchemaKind.FUNCTIONAL

    # -- returns -------------------------------------------------------------------------------
    @functools.cached_property
    def returned_mutated_arguments(self) -> tuple[Argument, ...]:
        """Mutated arguments that a return aliases (``-> Tensor(a!)``)."""
        letters = {s for r in self.returns if r.alias is not None and r.alias.is_write for s in r.alias.sets}
        return tuple(a for a in self.mutated_arguments if a.alias is not None and set(a.alias.sets) & letters)

    @functools.cached_property
    def returns_alias(self) -> bool:
        """Any return carries an alias annotation: automatic functionalization rejects such custom ops."""
        return any(r.alias is not None for r in self.returns)

    @functools.cached_property
    def output_names(self) -> tuple[str, ...]:
        """Stable names of the returned tensors: the return's own name, else ``out`` or ``out0``, ``out1``..."""
        if len(self.returns) == 1:
            return (self.returns[0].name or "out",)
        return tuple(r.name or f"out{i}" for i, r in enumerate(self.returns))

    @functools.cached_property
    def fresh_returns(self) -> tuple[Return, ...]:
        """Returns that are newly allocated tensors (not aliases of an argument)."""
        return tuple(r for r in self.returns if r.alias is None)

    @functools.cached_property
    def has_generator(self) -> bool:
        return any(a.type.base in _UNCAPTURABLE_TYPES for a in self.arguments)

    def __reduce__(self):
        # Pickle the fields only: derived facts cached on the instance are recomputed on demand.
        return (OpSignature, (self.text, self.dialect, self.name, self.overload, self.namespace, self.arguments, self.returns))

    def __str__(self) -> str:
        name = f"{self.namespace}::{self.full_name}" if self.namespace else self.full_name
        args: list[str] = [str(a) for a in self.positional_arguments]
        if self.kwarg_only_arguments:
            args.append("*")
            args.extend(str(a) for a in self.kwarg_only_arguments)
        if len(self.returns) == 1:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(map(str, self.returns)) + ")"
        return f"{name}({', '.join(args)}) -> {rets}"


# ------------------------------------------------------------------------------------------------
# Parsing
# ------------------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^(?:(?P<ns>[A-Za-z_][A-Za-z0-9_]*)::)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\.(?P<overload>[A-Za-z_][A-Za-z0-9_]*))?$")
_ALIAS_SET = r"(?:\*|[A-Za-z_]\w*)(?:\|(?:\*|[A-Za-z_]\w*))*"
_ALIAS_RE = re.compile(rf"^(?P<sets>{_ALIAS_SET})(?P<write>!?)(?:->(?P<after>{_ALIAS_SET}))?$")
# An annotation follows ``Tensor`` or its list suffix: Tensor(a!), Tensor[](a!), Tensor?[](a), Tensor!, Tensor?[]!
_TENSOR_ANNOT_RE = re.compile(r"^Tensor(?P<list>\s*\??\s*\[\s*\])?\s*(?:\((?P<ann>[^)]*)\)|(?P<bang>!))")


@dataclass(frozen=True)
class _Piece:
    text: str
    column: int  # 1-based


def _unquoted(text: str, start: int, end: int) -> Iterator[tuple[int, str]]:
    """(index, character) of ``text[start:end]``, skipping quoted strings (str defaults may hold ',' or ')');
    an unterminated string runs to the end."""
    resume = start  # the index after the last string skipped
    for i in range(start, end):
        if i < resume:
            continue
        ch = text[i]
        if ch in "\"'":
            resume = torch_lexer.string_end(text, i)
            if resume == -1:
                return
            continue
        yield i, ch


def _split_top_level(text: str, start: int, end: int) -> list[_Piece]:
    """Split ``text[start:end]`` at commas outside brackets and quotes, keeping each piece's column."""
    pieces: list[_Piece] = []
    depth = 0
    piece_start = start
    for i, ch in _unquoted(text, start, end):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(_Piece(text[piece_start:i], piece_start + 1))
            piece_start = i + 1
    pieces.append(_Piece(text[piece_start:end], piece_start + 1))
    out = []
    for p in pieces:
        stripped = p.text.lstrip()
        out.append(_Piece(stripped.rstrip(), p.column + len(p.text) - len(stripped)))
    return out


def _matching_paren(text: str, open_at: int) -> int:
    """Index of the ')' closing the '(' at ``open_at``, or -1."""
    depth = 0
    for i, ch in _unquoted(text, open_at, len(text)):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


@dataclass(frozen=True)
class _Layout:
    """Where the name, the arguments and the returns sit in a schema string."""

    name: str
    arguments: list[_Piece]
    returns: list[_Piece]


def _layout(text: str, dialect: Dialect) -> _Layout:
    def fail(message: str, column: int, hint: str | None = None) -> SchemaError:
        return SchemaError(message, text=text, column=column, dialect=dialect, hint=hint)

    open_at = text.find("(")
    if open_at < 0:
        raise fail("expected '(' after the op name", len(text) + 1, "a schema reads name(Type arg, ...) -> Return")
    close_at = _matching_paren(text, open_at)
    if close_at < 0:
        try:  # a string left open swallows the ')' (torch.library's dialect met the lexer before; op-plugin's has not)
            torch_lexer.blank_out(text)
        except torch_lexer.LexError as e:
            if e.message == "unterminated string literal":
                raise fail(e.message, e.index + 1) from None
        raise fail("unbalanced '(' in the argument list", open_at + 1)
    name = text[:open_at]
    rest = text[close_at + 1 :]
    m = re.match(r"^(\s*)->(\s*)", rest)
    if m is None:
        raise fail("expected ' -> ' and the returns after the argument list", close_at + 2, "write '-> ()' for an op that returns nothing")
    ret_start = close_at + 1 + m.end()
    ret_text = text[ret_start:].rstrip()
    if not ret_text:
        raise fail("missing return type after '->'", ret_start + 1, "write '-> ()' for an op that returns nothing")
    args = [] if not text[open_at + 1 : close_at].strip() else _split_top_level(text, open_at + 1, close_at)
    if ret_text.startswith("(") and _matching_paren(text, ret_start) == ret_start + len(ret_text) - 1:
        inner = text[ret_start + 1 : ret_start + len(ret_text) - 1]
        rets = [] if not inner.strip() else _split_top_level(text, ret_start + 1, ret_start + len(ret_text) - 1)
    else:
        rets = [_Piece(ret_text, ret_start + 1)]
    return _Layout(name, args, rets)


@functools.lru_cache(maxsize=None)
def _convert_type(t: object) -> ArgType:
    """torchgen Type → ArgType; memoised, so equal types share one object (and one pickle record)."""
    from torchgen import model as tg

    if isinstance(t, tg.OptionalType):
        inner = _convert_type(t.elem)
        return ArgType(inner.base, True, inner.is_list, inner.size, inner.elem_optional)
    if isinstance(t, tg.ListType):
        elem = _convert_type(t.elem)
        if elem.is_list:
            raise ValueError(f"{UNSUPPORTED}: the nested list type {t}: msOpGen attrs are flat lists")
        return ArgType(elem.base, False, True, t.size, elem.optional)
    if isinstance(t, tg.CustomClassType):
        return ArgType(f"__torch__.torch.classes.{t.class_name}")
    return ArgType(t.name.name)  # BaseType


def _convert_alias(a: object | None) -> Alias | None:
    if a is None:
        return None
    return Alias(tuple(a.alias_set), a.is_write, tuple(a.alias_set_after))


def _torchgen_message(exc: BaseException) -> str:
    msg = str(exc).strip() or type(exc).__name__
    m = re.match(r"unrecognized type (.+)", msg)
    if m:
        return f"unknown type {m.group(1)!r}"
    return msg


_ALIAS_HINT = "alias annotations read Tensor(a), Tensor(a!) with one lowercase letter per argument"


def _hint_for(message: str) -> str | None:
    """A one-line fix for the parser messages users meet most."""
    if "must have a self argument" in message or ("Inplace" in message and "self" in message):
        return "for op-plugin, write an in-place op as a mutable op: no trailing '_', Tensor(a!) on the written argument, return () or fresh tensors"
    if "mutable positional args" in message:
        return "a custom op must not return a mutated input: return () or fresh tensors, keep Tensor(a!) on the argument"
    if " != " in message:
        return "op-plugin needs the exact spelling torchgen prints: ', ' between arguments, ' -> ', and defaults without spaces"
    if "alias annotation" in message:
        return _ALIAS_HINT
    if "_out suffix" in message:
        return "name the out variant with an overload: my_op.out(...)"
    return None


def _parse_op_plugin(text: str) -> OpSignature:
    from torchgen import model as tg

    dialect = Dialect.OP_PLUGIN
    try:
        fs = tg.FunctionSchema.parse(text)
    except Exception as exc:  # torchgen raises AssertionError/RuntimeError/KeyError/ValueError
        raise _op_plugin_error(text, exc) from None
    # The text is canonical now (torchgen asserted the round trip): find each argument in order.
    arguments: list[Argument] = []
    position = text.find("(") + 1
    positional_count = len(fs.arguments.flat_positional)
    for index, a in enumerate(fs.arguments.flat_all):
        printed = str(a)
        position = text.find(printed, position)
        column = position + 1
        position += len(printed)
        try:
            arg_type = _convert_type(a.type)
        except ValueError as exc:  # a type torchgen knows but the model does not (nested lists)
            raise SchemaError(str(exc), text=text, column=column, dialect=dialect) from None
        if not naming.IDENTIFIER_RE.match(a.name):  # torchgen takes any name; the C++ it feeds would not compile
            raise SchemaError(f"{UNSUPPORTED}: argument name {a.name!r} is not an identifier", text=text, column=column, dialect=dialect, hint="op-plugin's codegen writes argument names into C++: use letters, digits and '_'")
        arguments.append(Argument(a.name, arg_type, a.default, _convert_alias(a.annotation), index >= positional_count, column))
    try:
        returns = tuple(Return(_convert_type(r.type), r.name, _convert_alias(r.annotation)) for r in fs.returns)
    except ValueError as exc:
        raise SchemaError(str(exc), text=text, column=text.rfind("->") + 4, dialect=dialect) from None
    for r in returns:
        if r.name is not None and not naming.IDENTIFIER_RE.match(r.name):
            raise SchemaError(f"{UNSUPPORTED}: return name {r.name!r} is not an identifier", text=text, column=text.rfind("->") + 4, dialect=dialect)
    return OpSignature(
        text=text,
        dialect=dialect,
        name=str(fs.name.name).rsplit("::", 1)[-1],
        overload=fs.name.overload_name,
        namespace=fs.name.name.namespace,
        arguments=tuple(arguments),
        returns=returns,
    )


def _op_plugin_error(text: str, exc: BaseException) -> SchemaError:
    """Turn torchgen's exception into a located SchemaError with a hint."""
    dialect = Dialect.OP_PLUGIN
    try:
        layout = _layout(text, dialect)
    except SchemaError as e:
        return e
    for piece in layout.arguments:
        split = _default_split_problem(piece.text)
        if split is not None:
            return SchemaError(split[0], text=text, column=piece.column, dialect=dialect, hint=split[1])
    message = _torchgen_message(exc)
    error = SchemaError(message, text=text, column=_locate_op_plugin_error(text, layout), dialect=dialect, hint=_hint_for(message))
    error.canonical = _canonical_op_plugin_spelling(text)
    return error


def _default_split_problem(piece: str) -> tuple[str, str] | None:
    """(message, hint) for an argument whose default breaks torchgen's splits, which give a confusing message: it
    splits arguments at ', ' and an argument at its one '='. A quoted default may hold other spaces (torchgen reads
    str s="(x y)")."""
    default = piece.partition("=")[2]
    if default[:1] in ("'", '"'):
        problem = "'='" if "=" in default else "', '" if ", " in default else None
        if problem is None:
            return None
        return (f"string default of {piece!r} contains {problem}",
                "op-plugin's codegen splits arguments at ', ' and an argument at its '=': a string default can hold neither")
    if re.search(r"[\[(][^\])]*\s", default):
        return (f"default of {piece!r} contains spaces",
                "op-plugin's codegen splits arguments at ', ': write defaults without spaces, e.g. int[2] pads=[1,1]")
    return None


def _canonical_op_plugin_spelling(text: str) -> str | None:
    """torchgen's spelling of ``text`` when only whitespace/spelling keeps torchgen from accepting it."""
    from torchgen import model as tg

    try:
        printed = str(_parse_torch_library(text))
        if printed == text:
            return None
        tg.FunctionSchema.parse(printed)
    except Exception:
        return None
    return printed


def _locate_op_plugin_error(text: str, layout: _Layout) -> int:
    """Column of the first piece torchgen rejects on its own: the name, an argument or a return."""
    from torchgen import model as tg

    try:
        name = tg.OperatorName.parse(layout.name)
    except Exception:
        return 1
    for piece in layout.arguments:
        if piece.text == "*":
            continue
        try:
            tg.Argument.parse(piece.text)
        except Exception:
            return piece.column
    for piece in layout.returns:
        try:
            tg.Return.parse(piece.text)
        except Exception:
            return piece.column
    # Pieces parse alone; the whole breaks a convention or the exact spelling: find the first difference
    # from torchgen's printing of the pieces (split as the layout found them, not at torchgen's ', ').
    try:
        fs = tg.FunctionSchema(
            name=name,
            arguments=tg.Arguments.parse(", ".join(p.text for p in layout.arguments)),
            returns=tg.parse_returns(", ".join(p.text for p in layout.returns) or "()"),
        )
        printed = str(fs)
    except Exception:
        return 1
    for i, (a, b) in enumerate(zip(printed, text)):
        if a != b:
            return i + 1
    return min(len(printed), len(text)) + 1


def _strip_alias(piece: _Piece, dialect: Dialect, text: str) -> tuple[str, Alias | None]:
    """Take ``Tensor(a0!)``, ``Tensor[](a!)``, ``Tensor(*)``, ``Tensor!`` apart (torch.library's alias grammar)."""
    m = _TENSOR_ANNOT_RE.match(piece.text)
    if m is None:
        return piece.text, None
    body = "Tensor" + (m.group("list") or "") + piece.text[m.end() :]  # _normalise_piece joins 'Tensor ? [ ]'
    if m.group("bang"):  # torch gives each ``Tensor!`` a fresh alias set ($0, $1, ...)
        return body, Alias((f"${piece.column}",), True, shorthand=True, on_list=bool(m.group("list")))
    annotation = re.sub(r"\s+", "", m.group("ann"))  # the lexer ignores blanks: Tensor(a !) is Tensor(a!)
    am = _ALIAS_RE.match(annotation)
    names = re.findall(r"[A-Za-z_]\w*", annotation)
    if am is None or any(n in torch_lexer.KEYWORDS for n in names):
        raise SchemaError(
            f"unrecognized alias annotation {m.group('ann')!r}",
            text=text,
            column=piece.column + m.start("ann"),
            dialect=dialect,
            hint=_ALIAS_HINT,
        )
    after = am.group("after")
    alias = Alias(tuple(am.group("sets").split("|")), am.group("write") == "!", tuple(after.split("|")) if after else (), on_list=bool(m.group("list")))
    return body, alias


_CANONICAL_PIECE_RE = re.compile(r"^[^\s\"'=]+(?: [A-Za-z_]\w*(?:=[^\s\"']+)?)?$")


@functools.lru_cache(maxsize=8192)
def _normalise_piece(piece: str) -> str:
    """Collapse whitespace the C++ lexer ignores: inside brackets and around '=' (string literals are kept)."""
    if _CANONICAL_PIECE_RE.match(piece):
        return _GLUED_NAME_RE.sub(r"\1 \2", piece, count=1)  # 'int[2] k=[1,1]': nothing to collapse
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(piece):
        ch = piece[i]
        if ch in "\"'":
            end = torch_lexer.string_end(piece, i)
            end = len(piece) if end < 0 else end
            out.append(piece[i:end])
            i = end
            continue
        i += 1
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch.isspace():
            if depth > 0 or (out and out[-1] == " "):
                continue
            ch = " "
        out.append(ch)
    s = "".join(out).strip()
    s = re.sub(r"\s*=\s*", "=", s, count=1)
    # A type's suffixes may each stand apart: 'Tensor ? [] ? x' → 'Tensor?[]? x' (torch reads three, 'int [] ? [] x' four).
    while True:  # each pass joins one: 'Tensor ?' / 'int [2]' → 'Tensor?' / 'int[2]'
        joined = re.sub(r"^([^ ]*?)\s+([?\[])", r"\1\2", s)
        if joined == s:
            break
        s = joined
    # torch's lexer needs no blank after a type's last suffix: 'Tensor?z=None' is 'Tensor? z=None'
    return _GLUED_NAME_RE.sub(r"\1 \2", s, count=1)


_GLUED_NAME_RE = re.compile(r"^([A-Za-z_]\w*(?:\?|\[\d*\])+)([A-Za-z_]\w*(?:=.*)?)$")


# Types torch's parser knows and opkit does not model (TorchScript's), and why opkit refuses them.
_TORCH_ONLY_TYPES = frozenset("complex Any AnyClassType AnyEnumType Capsule Quantizer ConstQuantizerPtr None NoneType".split())
_TORCH_ONLY_CONSTRUCTORS = frozenset({"Dict", "Future", "RRef", "Await", "Union"})
# Base types both torch's parser and the model know (torchgen's BaseTy, less the ones torch refuses).
_TORCH_LIBRARY_BASES = frozenset(
    "Tensor int float bool str Scalar SymInt SymBool ScalarType Layout MemoryFormat Device DeviceIndex Generator QScheme Storage Stream".split()
)
UNSUPPORTED = torch_lexer.UNSUPPORTED


def _unsupported_type(type_text: str) -> str | None:
    """Why opkit refuses a type torch.library accepts (docs/lint.md, "Schema dialects"), or None."""
    base = re.match(r"[A-Za-z_]\w*", type_text)
    name = base.group(0) if base else ""
    if type_text.startswith("(") or name in _TORCH_ONLY_CONSTRUCTORS or name == "__torch__":
        what = "a tuple type" if type_text.startswith("(") else f"the TorchScript type {name}"
        return f"{what}: no Ascend C operand or msOpGen attr maps to it"
    if name in _TORCH_ONLY_TYPES or (name and name[0].islower() and name not in _TORCH_LIBRARY_BASES and name not in torch_lexer.KEYWORDS):
        kind = "type variable" if name[0].islower() and name not in _TORCH_ONLY_TYPES else "TorchScript type"
        meant = next((b for b in _TORCH_LIBRARY_BASES if b.lower() == name.lower() and b != name), None)
        return f"the {kind} {name!r}: no Ascend C operand or msOpGen attr maps to it" + (f" (did you mean {meant!r}?)" if meant else "")
    if type_text.count("[") > 1:
        return f"the nested list type {type_text!r}: msOpGen attrs are flat lists"
    size = re.search(r"\[(\d+)\]", type_text)
    if size is not None and size.group(1).startswith("0"):  # int[0], int[01]: torch reads them, torchgen does not
        return f"the list size in {type_text!r}: op-plugin's codegen (torchgen) reads a size from 1 up, without leading zeros"
    if "(" in type_text:
        return f"the alias annotation in {type_text!r}: opkit models aliasing of Tensors only"
    return None


def _parse_torch_library(text: str) -> OpSignature:
    from torchgen import model as tg

    dialect = Dialect.TORCH_LIBRARY

    def fail(message: str, column: int, hint: str | None = None) -> SchemaError:
        return SchemaError(message, text=text, column=column, dialect=dialect, hint=hint or _hint_for(message))

    try:
        source = torch_lexer.blank_out(text)  # comments, line breaks in parentheses: what the lexer skips
    except torch_lexer.LexError as exc:
        raise fail(exc.message, exc.index + 1) from None
    layout = _layout(source, dialect)
    name_text = re.sub(r"\s+", "", layout.name)  # 'ns :: f . o' is three tokens apart, as torch reads it
    nm = _NAME_RE.match(name_text)
    if nm is None:
        raise fail(f"invalid op name {name_text!r}", 1, "an op name is [namespace::]identifier[.overload]")
    for part in ("ns", "name", "overload"):
        if nm.group(part) in torch_lexer.KEYWORDS:
            raise fail(f"{nm.group(part)!r} is a keyword of torch's schema lexer, not a name", 1)
    overload = nm.group("overload") or ""
    if overload == "default" or overload.startswith("__"):
        raise fail(f"{overload!r} is not a legal overload name (torch reserves 'default' and dunder names)", 1)

    def check_type(body: str, column: int) -> None:
        type_text = body.partition(" ")[0]  # a tuple's blanks are gone (_normalise_piece): '(int,int) x' → '(int,int)'
        if type_text == "...":
            raise fail(f"{UNSUPPORTED}: varargs '...': an Ascend op has a fixed operand list", column)
        why = _unsupported_type(type_text)
        if why is not None:
            raise fail(f"{UNSUPPORTED}: {why}", column, "torch.library accepts it, but opkit cannot generate an op for it")
        base = re.match(r"[A-Za-z_]\w*", type_text)
        if base is not None and base.group(0) not in _TORCH_LIBRARY_BASES:
            raise fail(f"unknown type {base.group(0)!r}", column)

    arguments: list[Argument] = []
    kwarg_only = False
    for piece in layout.arguments:
        if piece.text == "*":
            kwarg_only = True  # torch accepts '*' twice, and a trailing one (then prints neither)
            continue
        if not piece.text:
            raise fail("empty argument", piece.column)
        # An annotation is only taken off 'Tensor' (_strip_alias), and check_type lets no other name follow
        # it: an annotated argument or return is a Tensor's (int(a!) is refused by check_type).
        body, alias = _strip_alias(piece, dialect, text)
        body = _normalise_piece(body)
        check_type(body, piece.column)
        try:
            parsed = tg.Argument.parse(body)
            arg_type = _convert_type(parsed.type)
        except Exception as exc:
            message = _torchgen_message(exc)
            raise fail(message, piece.column) from None
        if not naming.IDENTIFIER_RE.match(parsed.name) or parsed.name in torch_lexer.KEYWORDS:
            keyword = parsed.name in torch_lexer.KEYWORDS
            raise fail(f"invalid argument name {parsed.name!r}", piece.column, "torch's lexer reads keywords (def, None, in, ...) as tokens, not names" if keyword else "a name is letters, digits and '_'")
        arguments.append(Argument(parsed.name, arg_type, parsed.default, alias, kwarg_only, piece.column))

    problem = check_schema(arguments, text)
    if problem is not None:
        raise problem

    returns: list[Return] = []
    # ``-> None``: torch registers one NoneType return, which a caller sees as None, as it sees ``-> ()``;
    # TorchAir's own ops are declared so. Read as no returns (``str()`` prints ``-> ()``).
    pieces = [] if [p.text for p in layout.returns] == ["None"] else layout.returns
    for piece in pieces:
        if not piece.text:
            raise fail("empty return", piece.column)
        body, alias = _strip_alias(piece, dialect, text)
        body = _normalise_piece(body)
        check_type(body, piece.column)
        try:
            parsed_ret = tg.Return.parse(body)
            ret_type = _convert_type(parsed_ret.type)
        except Exception as exc:
            raise fail(_torchgen_message(exc), piece.column) from None
        if parsed_ret.name is not None and (not naming.IDENTIFIER_RE.match(parsed_ret.name) or parsed_ret.name in torch_lexer.KEYWORDS):
            raise fail(f"invalid return name {parsed_ret.name!r}", piece.column)
        returns.append(Return(ret_type, parsed_ret.name, alias))
    return OpSignature(
        text=text,
        dialect=dialect,
        name=nm.group("name"),
        overload=overload,
        namespace=nm.group("ns") or "",
        arguments=tuple(arguments),
        returns=tuple(returns),
    )


# How torch's C++ parser reads a default, by the argument's type (function_schema_parser.cpp,
# parseDefaultValue): Tensor and Generator take only None; these "single constant" types take a
# number, a string, True/False/None or one of a few identifiers; a Device a device string; a list of
# _LIST_ELEMENTS a bracketed list (a sized one also one element); any other type no default at all.
_SINGLE_CONSTANT_TYPES = frozenset("int SymInt float bool str Scalar ScalarType Layout MemoryFormat DeviceIndex".split())
_LIST_ELEMENTS = {"int": int, "SymInt": int, "ScalarType": int, "Layout": int, "MemoryFormat": int, "DeviceIndex": int, "float": float, "bool": bool}
# The identifiers its lexer resolves in a default, and the int each becomes (a dtype, layout, memory format, reduction).
_DEFAULT_IDENTIFIERS = {"float": 6, "complex": 9, "long": 4, "strided": 0, "Mean": 1, "contiguous_format": 0}
_INT_RE = re.compile(r"^-?\d+$")
_LIST_SPLIT_RE = re.compile(r"""\s*,\s*""")


def _single_constant(text: str, type_: ArgType) -> object:
    """One constant as torch reads it for ``type_`` (ValueError when it refuses): Python's value for it."""
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text[:1] in "\"'":
        if torch_lexer.string_end(text, 0) != len(text):
            raise ValueError(f"default {text} is not one string literal")
        return torch_lexer.string_value(text)
    if text in _DEFAULT_IDENTIFIERS:
        if type_.base == "ScalarType" and text in SCALAR_TYPE_DEFAULTS:
            return DType(SCALAR_TYPE_DEFAULTS[text][0])
        return _DEFAULT_IDENTIFIERS[text]
    # torch reads a number as a float for a float argument; for a ``float?`` one as written (``float? x=1E5`` is 1).
    # (A list reaches here only as an optional one's single default: ``float[]? x=1`` is 1.)
    value = torch_lexer.number_value(text, as_float=type_.base == "float" and not type_.optional)
    if type_.base == "float" and not type_.is_list and type(value) is int:
        value = float(value)  # opkit gives a float argument the float it receives, also when optional (torch keeps ``float? x=1`` an int)
    if type_.base == "ScalarType" and type(value) is int:
        return DType(_SCALAR_TYPE_CODES.get(value, "float32"))  # torch prints dtype defaults as their code
    return value


def parse_default(type_: ArgType, text: str) -> object:
    """The value torch's schema parser gives default ``text`` of an argument of ``type_``; ValueError
    (with the reason) where torch refuses it, or where its reading differs from what the text says."""
    if type_.optional:
        return _single_constant(text, type_)
    if type_.is_list:
        element = _LIST_ELEMENTS.get(type_.base) if not type_.elem_optional else None
        if element is None:
            raise ValueError(f"a {type_} argument cannot have a default")
        if text.startswith("[") and text.endswith("]"):
            inner = text[1:-1].strip()
            items = _LIST_SPLIT_RE.split(inner) if inner else []
        elif type_.size is not None and text[:1] not in "[" and not (text[:1].isalpha() and text not in ("True", "False")):
            # (torch repeats a number or a bool; a name such as ``long`` or ``Mean`` it refuses there)
            items = [text] * type_.size  # a sized list's single default is repeated
        else:
            raise ValueError(f"default {text} is not a list of {type_.base} values")
        elem_type = ArgType(type_.base)
        values = []
        for item in items:
            value = _single_constant(item, elem_type) if item else None  # a float element reads numbers as floats
            if type(value) is not element and not (element is int and isinstance(value, DType)):
                raise ValueError(f"default {text} is not a list of {type_.base} values")
            values.append(value)
        return values
    if type_.base in ("Tensor", "Generator"):
        if text != "None":
            raise ValueError(f"a {type_.base} default can only be None, not {text}")
        return None
    if type_.base == "Device":
        problem = torch_lexer.device_problem(text)
        if problem is not None:
            raise ValueError(problem)
        return torch_lexer.string_value(text)
    if type_.base not in _SINGLE_CONSTANT_TYPES:
        raise ValueError(f"torch.library allows no default for a {type_.base} argument")
    return _single_constant(text, type_)


@functools.lru_cache(maxsize=4096)
def default_problem(type_: ArgType, default: str) -> str | None:
    """Why torch's C++ parser rejects ``default`` for ``type_`` (or opkit refuses its odd reading), or None."""
    try:
        parse_default(type_, default)
    except ValueError as exc:
        return str(exc)
    return None


def check_schema(arguments: Sequence[Argument], text: str, dialect: Dialect = Dialect.TORCH_LIBRARY) -> SchemaError | None:
    """What torch's C++ schema parser checks and torchgen does not; torch_npu's ``m.def`` runs it on
    every op-plugin ``custom:`` entry. Defaults must suit their types (``default_problem``), and no
    positional argument without a default may follow one with a default (``FunctionSchema::checkSchema``;
    lists are exempt, "historically serialized broadcasting lists")."""
    seen_default = False
    for a in arguments:
        if a.default is not None:
            problem = default_problem(a.type, a.default)
            if problem is not None:
                return SchemaError(problem, text=text, column=a.column or 1, dialect=dialect, hint="torch.library parses defaults by type: write e.g. 1, 1.5, True, None, 'text', [1,1]")
            seen_default = True
        elif seen_default and not a.kwarg_only and not (a.type.is_list and not a.type.optional):
            return SchemaError(
                f"argument {a.name!r} without a default follows one with a default",
                text=text,
                column=a.column or 1,
                dialect=dialect,
                hint="give it a default, move it before the defaulted arguments, or make it keyword-only after '*'",
            )
    return None


def parse_schema(text: str, dialect: Dialect = Dialect.OP_PLUGIN) -> OpSignature:
    """Parse ``text`` as ``dialect`` requires; raise SchemaError with a column and a hint.

    Each (text, dialect) is parsed once per process; failures are remembered too, since every rule
    asks again. ``parsed_results``/``remember_results`` let a persistent cache carry them across runs.
    """
    key = (text, dialect)
    result = _RESULTS.get(key)
    if result is None:
        result = _parse_uncached(text, dialect)
        _RESULTS[key] = result
    if isinstance(result, SchemaError):
        # A copy: a traceback on the remembered error would keep its raiser's callers alive (a lint's whole project).
        raise copy.copy(result)
    return result


_RESULTS: dict[tuple[str, Dialect], OpSignature | SchemaError] = {}


def _parse_uncached(text: str, dialect: Dialect) -> OpSignature | SchemaError:
    if not isinstance(text, str) or not text.strip():
        return SchemaError("empty schema", text=str(text), column=1, dialect=dialect, hint="a schema reads name(Type arg, ...) -> Return")
    if dialect is Dialect.OP_PLUGIN:
        from opkit.signature.fastpath import parse_simple  # common schemas without torchgen; None: ask torchgen

        fast = parse_simple(text)
        if fast is not None:
            return fast
    try:
        return _parse_op_plugin(text) if dialect is Dialect.OP_PLUGIN else _parse_torch_library(text)
    except SchemaError as exc:
        # Remembered: neither its traceback nor the parser error it replaced (``__context__``, which
        # ``from None`` only hides) may keep the frames they were raised in, and their callers, alive.
        exc.__context__ = None
        return exc.with_traceback(None)


def parsed_results(keys: Iterable[tuple[str, Dialect]]) -> dict[tuple[str, Dialect], OpSignature | SchemaError]:
    """The remembered parse results for ``keys`` (those parsed so far)."""
    return {k: _RESULTS[k] for k in keys if k in _RESULTS}


def remember_results(results: dict[tuple[str, Dialect], OpSignature | SchemaError]) -> None:
    """Seed the parse memo with results computed earlier by the same parser version."""
    _RESULTS.update(results)


def parser_fingerprint() -> str:
    """Identifies the parsers whose results a cache may reuse: opkit's and the installed torchgen's."""
    import importlib.util
    import os

    from opkit import __version__

    origin = importlib.util.find_spec("torchgen.model").origin  # torch, a dependency, ships torchgen as files
    stat = os.stat(origin)
    return f"opkit={__version__};torchgen={origin}:{stat.st_mtime_ns}:{stat.st_size}"


def iter_alias_letters(sig: OpSignature) -> Iterator[tuple[str, Argument]]:
    """(alias set, argument) for every annotated argument, in order."""
    for a in sig.arguments:
        if a.alias is not None:
            for s in a.alias.sets:
                yield s, a
