"""The schema parsers: one schema string, parsed once per process, into the model (``opkit.signature.model``).

Two dialects of the schema language exist and they disagree (see ``Dialect``). Both are parsed with
the parsers PyTorch ships, never a parser of our own:

* ``Dialect.OP_PLUGIN`` is exactly ``torchgen.model.FunctionSchema.parse``, what op-plugin's codegen
  runs on every ``func:`` of ``op_plugin_functions.yaml``: ATen naming conventions and the exact
  round trip ``str(parse(f)) == f`` included.
* ``Dialect.TORCH_LIBRARY`` is the grammar of ``torch._C.parse_schema`` (``Library.define``,
  ``custom_op``). It is more lenient about whitespace, namespaces, alias names and naming
  conventions; opkit normalises those away and hands each argument and return to torchgen's
  ``Argument``/``Return``/``Type`` parsers, which share the C++ parser's type grammar.

The op-plugin dialect tries ``opkit.signature.fastpath`` first, which answers the common schemas as
torchgen would, without importing it. This module knows nothing of files, YAML or torch.compile, and
never imports torch.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from opkit import naming, torch_lexer
from opkit.signature.model import Alias, Argument, ArgType, Dialect, OpSignature, Return, SchemaError, default_problem


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


def _dimname_refusal(text: str) -> SchemaError | None:
    """torchgen 2.13's error for a schema that is fine but for its Dimname types, without importing torchgen
    (real op_plugin_functions.yaml files keep ~30 such ATen overloads); None when anything else may be wrong.

    The fast path accepting the text with each ``Dimname`` spelt ``Storage`` (a base type of the same
    length) means torchgen reads the name and every other piece, and stops at the first Dimname type
    with "unrecognized type Dimname": the error ``_op_plugin_error`` builds then, to the column (a
    differential test compares both on every such schema)."""
    from opkit.signature.fastpath import parse_simple

    if parse_simple(text.replace("Dimname", "Storage")) is None:
        return None
    dialect = Dialect.OP_PLUGIN
    try:
        layout = _layout(text, dialect)
    except SchemaError as e:
        return e
    for piece in layout.arguments:
        split = _default_split_problem(piece.text)
        if split is not None:
            return SchemaError(split[0], text=text, column=piece.column, dialect=dialect, hint=split[1])
    first = next((p for p in (*layout.arguments, *layout.returns) if re.match(r"Dimname\b", p.text)), None)
    if first is None:
        return None  # Dimname only in a name: not a type torchgen refuses
    message = "unknown type 'Dimname'"
    return SchemaError(message, text=text, column=first.column, dialect=dialect, hint=_hint_for(message))


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
        if "Dimname" in text:
            known = _dimname_refusal(text)
            if known is not None:
                return known
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
