"""The op-signature model: one schema, as frozen values, with every fact the rest of opkit needs.

``OpSignature`` and its parts (``Argument``, ``Return``, ``ArgType``, ``Alias``), the dialects, the
schema error, and how torch reads a default (``parse_default``). The parsers that build these values
from a schema string live in ``opkit.signature.parse`` and ``opkit.signature.fastpath``, above this module.

This module knows nothing of files, YAML or torch.compile, never imports torch, and imports no parser.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator
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

    @functools.cached_property
    def grouping_signature(self) -> str:
        """torchgen's ``FunctionSchema.signature()``, printed: what a functional op and its in-place, out= and
        mutable variants share (``x_functional`` pairs with ``x``). op-plugin's codegen groups ``custom:`` entries by it and generates a
        ``Functionalize`` kernel for each mutating member of a group that holds a functional op.

        Kept exactly: the overload and the in-place ``_`` go, out= arguments and a TensorOptions group
        (``dtype, layout, device, pin_memory``) go, annotations and return names go (defaults stay), and a
        written ``self``, out= or post-``self`` argument that no return aliases becomes a trailing return."""
        positional = self.positional_arguments
        self_index = next((i for i, a in enumerate(positional) if a.name == "self"), None)
        kwargs = [a for a in self.kwarg_only_arguments if not (a.kwarg_only and a.is_mutated)]
        names = [a.name for a in kwargs]
        for i in range(len(kwargs) - 3):
            if names[i : i + 4] == ["dtype", "layout", "device", "pin_memory"]:
                del kwargs[i : i + 4]
                break

        def plain(a: Argument) -> str:
            default = "0.5" if a.name == "p" and (self.name, self.overload) == ("bernoulli", "p") else a.default  # as torchgen
            return f"{a.type} {a.name}" + ("" if default is None else f"={default}")

        args = [plain(a) for a in positional] + (["*"] + [plain(a) for a in kwargs] if kwargs else [])
        written = (
            ([positional[self_index]] if self_index is not None else [])
            + list(self.out_arguments)
            + list(positional[(self_index + 1) if self_index is not None else 0 :])
        )
        extra = [a.type for a in written if a.is_mutated and not any(a.alias == r.alias for r in self.returns)]
        returns = [str(r.type) for r in self.returns] + [str(t) for t in extra]
        ret = returns[0] if len(returns) == 1 else f"({', '.join(returns)})"
        base = self.base_name.removesuffix("_functional")  # torchgen's functional overload of a mutable op
        return f"{base}({', '.join(args)}) -> {ret}"

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


def iter_alias_letters(sig: OpSignature) -> Iterator[tuple[str, Argument]]:
    """(alias set, argument) for every annotated argument, in order."""
    for a in sig.arguments:
        if a.alias is not None:
            for s in a.alias.sets:
                yield s, a
