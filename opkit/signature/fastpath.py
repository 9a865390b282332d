"""A fast path for the op-plugin dialect: the common schemas, parsed without torchgen, with torchgen's verdict.

torchgen's ``FunctionSchema.parse`` is the authority for op_plugin_functions.yaml ``func`` strings,
and the slowest step of a cold lint (~0.15 ms a schema, plus ~20 ms importing torchgen). Real schemas
use a small part of its grammar: single-letter alias annotations (``Tensor(a!)``, ``Tensor(a)``),
plain, ``_functional`` and dunder names (``__ilshift__``, in-place for the augmented assignments), the
TensorOptions group (``dtype, layout, device, pin_memory``, functional schemas only), types that are
a base type with ``?`` and one ``[N]``. For a string in that part this module applies the grammar,
the exact round trip and every semantic check torchgen makes there (``BaseOperatorName.parse``,
``Arguments._preparse``/``parse``, ``Arguments`` and ``FunctionSchema.__post_init__``: out arguments,
mutable returns, in-place ``self``, TensorOptions only in a functional schema), and returns None on
any failure or anything it is not sure of: torchgen then parses the string and keeps the last word
(and writes every error message but one: ``signature.parse._dimname_refusal`` gives torchgen 2.13's
"unknown type 'Dimname'" for a schema this module accepts once its Dimname types are spelt
otherwise). A differential test compares both, answers and that error, on every schema of the real
op_plugin_functions.yaml (all 1514 answered), torchgen's native_functions.yaml and
``torch._C._jit_get_all_schemas()``.
"""

from __future__ import annotations

import re

from opkit.signature.model import Alias, Argument, ArgType, Dialect, OpSignature, Return

# torchgen.model.BaseTy, as of torch 2.13 (the differential test checks this list against it).
BASE_TYPES = frozenset(
    """Generator ScalarType Tensor int DimVector float str bool Layout Device DeviceIndex Scalar MemoryFormat
    QScheme Storage Stream SymInt SymBool GraphModule""".split()
)

_DECL = re.compile(r"^(?P<name>[^(]+)\((?P<args>.*)\) -> (?P<returns>.*)$")
_NAME = re.compile(r"^(?P<base>(?!__)[A-Za-z_][A-Za-z0-9_]*)(?:\.(?P<overload>[A-Za-z0-9_]+))?$")
# A dunder method (``__ilshift__``): torchgen reads ``__i<name>__`` as in-place for the augmented assignments.
_DUNDER = re.compile(r"^(?P<base>__(?P<method>[A-Za-z0-9]+)__)(?:\.(?P<overload>[A-Za-z0-9_]+))?$")
_AUGMENTED = frozenset(f"i{n}" for n in "add sub mul div mod pow lshift rshift and xor or".split())
_ANNOTATED = re.compile(r"^Tensor\((?P<set>[a-z])(?P<write>!?)\)(?P<rest>|\?|\[\])$")
_TYPE = re.compile(r"^(?P<base>[A-Za-z]+)(?P<elem_opt>\?)?(?:\[(?P<size>[1-9][0-9]*)?\](?P<list_opt>\?)?)?$")
_ARGUMENT = re.compile(r"^(?P<type>\S+) (?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<default>[^=]+))?$")
_RETURN = re.compile(r"^(?P<type>\S+)(?: (?P<name>[A-Za-z_][A-Za-z0-9_]*))?$")
# The kwarg-only run torchgen groups as TensorOptions: these names in this order, each of its type or optional.
_TENSOR_OPTIONS = (("dtype", "ScalarType"), ("layout", "Layout"), ("device", "Device"), ("pin_memory", "bool"))

_types: dict[str, ArgType | None] = {}


def _type(text: str) -> ArgType | None:
    known = _types.get(text, False)
    if known is not False:
        return known
    m = _TYPE.match(text)
    result = None
    if m is not None and m.group("base") in BASE_TYPES:
        base, elem_opt, list_opt = m.group("base"), bool(m.group("elem_opt")), bool(m.group("list_opt"))
        if "[" in text:
            size = int(m.group("size")) if m.group("size") is not None else None
            result = ArgType(base, list_opt, True, size, elem_opt)
        else:
            result = ArgType(base, elem_opt)
    _types[text] = result
    return result


def _type_and_alias(text: str) -> tuple[ArgType | None, Alias | None]:
    if not text.startswith("Tensor("):
        return _type(text), None
    m = _ANNOTATED.match(text)
    if m is None:
        return None, None
    return _type("Tensor" + m.group("rest")), Alias((m.group("set"),), m.group("write") == "!")


_arguments: dict[str, tuple[str, ArgType, str | None, Alias | None] | None] = {}


def _argument(piece: str) -> tuple[str, ArgType, str | None, Alias | None] | None:
    """(name, type, default, alias) of one argument; memoised: real schemas repeat ``Tensor self`` ..."""
    known = _arguments.get(piece, False)
    if known is not False:
        return known
    m = _ARGUMENT.match(piece)
    result = None
    if m is not None:
        arg_type, alias = _type_and_alias(m.group("type"))
        if arg_type is not None:
            result = (m.group("name"), arg_type, m.group("default"), alias)
    _arguments[piece] = result
    return result


def parse_simple(text: str) -> OpSignature | None:
    """The signature torchgen would give ``text`` in the op-plugin dialect, or None to ask torchgen.

    Every piece is matched by a pattern that only admits torchgen's own printing of it, so the
    exact round trip ``str(parse(text)) == text`` holds piece by piece; what is left to check is the
    return list's parentheses (the differential test also asserts the whole round trip).
    """
    if "\n" in text:
        return None
    decl = _DECL.match(text)
    if decl is None:
        return None
    name = _NAME.match(decl.group("name"))
    if name is not None:
        base, overload = name.group("base"), name.group("overload") or ""
        inplace = base.endswith("_")
        # '_functional' ends a functional overload's name, which may not be in-place too
        if base.endswith("_out") or (inplace and base[:-1].endswith("_functional")):
            return None
    else:
        name = _DUNDER.match(decl.group("name"))
        if name is None:
            return None
        base, overload, method = name.group("base"), name.group("overload") or "", name.group("method")
        inplace = method in _AUGMENTED
        if method.startswith("i") and not inplace:
            return None  # torchgen: "unexpected dunder method starting with 'i'"
    if "functional" in overload:
        return None  # torchgen then requires a functional kind of schema
    arguments: list[Argument] = []
    out: list[Argument] = []
    kwarg_only = in_out = annotated = False
    position = len(decl.group("name")) + 1
    args_text = decl.group("args")
    for piece in args_text.split(", ") if args_text else ():
        if piece == "*":
            if kwarg_only:
                return None
            kwarg_only = True
            position += 3
            continue
        parsed = _argument(piece)
        if parsed is None:
            return None
        arg_name, arg_type, default, alias = parsed
        annotated = annotated or alias is not None
        if kwarg_only and alias is not None and alias.is_write:
            in_out = True
        elif in_out:
            return None  # "non-mutable argument cannot follow mutable out arguments"
        argument = Argument(arg_name, arg_type, default, alias, kwarg_only, position + 1)
        arguments.append(argument)
        if in_out:
            out.append(argument)
        position += len(piece) + 2
    if kwarg_only and not any(a.kwarg_only for a in arguments):
        return None  # a trailing '*' does not print back
    returns_text = decl.group("returns")
    returns: list[Return] = []
    if returns_text != "()":
        inner = returns_text[1:-1] if returns_text.startswith("(") and returns_text.endswith(")") else returns_text
        for piece in inner.split(", "):
            m = _RETURN.match(piece)
            if m is None:
                return None
            ret_type, alias = _type_and_alias(m.group("type"))
            annotated = annotated or alias is not None
            if ret_type is None:
                return None
            returns.append(Return(ret_type, m.group("name"), alias))
    if (len(returns) == 1) == returns_text.startswith("("):
        return None  # torchgen prints one return bare and several in parentheses: no exact round trip
    # namespace None, as torchgen gives it for a name without one
    sig = OpSignature(text=text, dialect=Dialect.OP_PLUGIN, name=base, overload=overload, namespace=None, arguments=tuple(arguments), returns=tuple(returns))
    if (annotated or inplace) and not _torchgen_checks_hold(sig, inplace):
        return None
    if _tensor_options_refused(sig, out, inplace):
        return None
    return sig


def _tensor_options_refused(sig: OpSignature, out: list[Argument], inplace: bool) -> bool:
    """torchgen's TensorOptions grouping (``Arguments.parse``): more than one group is an error, and one
    is allowed only in a functional schema (``FunctionSchema.__post_init__``, ``kind()``)."""
    grouped = [a for a in sig.kwarg_only_arguments if a not in out]
    if len(grouped) < len(_TENSOR_OPTIONS):
        return False
    groups, i = 0, 0
    while i < len(grouped):
        window = grouped[i : i + len(_TENSOR_OPTIONS)]
        if len(window) == len(_TENSOR_OPTIONS) and all(
            a.name == n and a.type in (ArgType(t), ArgType(t, True)) for a, (n, t) in zip(window, _TENSOR_OPTIONS)
        ):
            groups += 1
            i += len(_TENSOR_OPTIONS)
        else:
            i += 1
    if groups == 0:
        return False
    if groups > 1 or inplace or out:
        return True
    _, _, post_self = _split_at_self(sig.positional_arguments)
    return any(a.is_mutated for a in post_self)  # a mutable schema, not a functional one


def _split_at_self(positional: tuple[Argument, ...]) -> tuple[int | None, tuple[Argument, ...], tuple[Argument, ...]]:
    """(index of ``self``, the arguments before it, after it) as torchgen splits them; all are after it without one."""
    self_index = next((i for i, a in enumerate(positional) if a.name == "self"), None)
    if self_index is None:
        return None, (), positional
    return self_index, positional[:self_index], positional[self_index + 1 :]


def _torchgen_checks_hold(sig: OpSignature, inplace: bool) -> bool:
    """torchgen's Arguments and FunctionSchema ``__post_init__`` checks, for the subset parsed here."""
    positional = sig.positional_arguments
    out = [a for a in sig.kwarg_only_arguments if a.is_mutated]
    self_index, pre_self, post_self = _split_at_self(positional)
    if any(a.is_mutated for a in pre_self):
        return False
    returns = sig.returns
    if any(a.alias != r.alias for a, r in zip(out, returns)):
        return False
    if any(a.alias == r.alias for a in post_self if a.is_mutated for r in returns):
        return False
    mutable = [r for r in returns if r.alias is not None and r.alias.is_write]
    if mutable and len(mutable) != len(returns):
        return False
    out_and_self = [*out, *(a for a in positional if a.name == "self")]
    if any(not any(r.alias == a.alias for a in out_and_self) for r in mutable):
        return False
    if out:
        if any(a.type != ArgType("Tensor") for a in out):
            if returns:
                return False
        elif len([a for a in out if not a.name.startswith("_scratch_")]) != len(returns):
            return False
    if inplace:  # in-place: Tensor(a!) self, returned when a Tensor, else nothing returned
        self_arg = positional[self_index] if self_index is not None else None
        if self_arg is None or not self_arg.is_mutated:
            return False
        if self_arg.type == ArgType("Tensor"):
            return len(returns) == 1 and returns[0].alias == self_arg.alias
        return not returns
    return True
