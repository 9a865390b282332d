"""C++ operator registrations (``torch/library.h``) read into located records; not a C++ compiler.

What it reads, as projects write it:

* blocks: ``TORCH_LIBRARY(ns, m)``, ``TORCH_LIBRARY_FRAGMENT(ns, m)``, ``TORCH_LIBRARY_IMPL(ns, Key, m)``,
  and project macros wrapping them (``#define TORCH_LIBRARY_EXPAND(NAME, M) TORCH_LIBRARY(NAME, M)``)
  whose definitions are in the files given; a namespace written through macros (``CONCAT(_C, _ascend)``
  with ``#define CONCAT(A, B) A##B``) is expanded when their definitions are given, else kept as written
  and said so (``Block.namespace_note``);
* ``m.def("schema")`` with adjacent string literals, raw strings, ``torch::schema(...)`` and
  ``TORCH_SELECTIVE_SCHEMA(...)``, optionally with a kernel (a catch-all, CompositeImplicitAutograd);
* ``m.impl("name", [key,] kernel)`` with ``torch::kPrivateUse1``, ``c10::DispatchKey::X``, ``"Meta"``
  or the block's key; kernels ``TORCH_FN(f)``, ``&f``, ``f``, ``static_cast<R (*)(A...)>(&f)`` and lambdas;
* the C++ functions the file defines or declares (namespaces tracked), so each kernel's parameters can
  be checked against the schema;
* ``#if``/``#ifdef``/``#else`` blocks: a record inside one carries its ``conditions`` (it may or may not
  be compiled); records in different arms of one ``#if`` are alternatives (``exclusive``), not doubles.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from opkit.formats.cpp_text import CppTextError
from opkit.formats.files import CPP_EXTENSIONS
from opkit.formats.cpp_tokens import Token, split_code, tokenize
from opkit.formats.files import InputError
from opkit.formats.noqa import NoqaMap
from opkit.formats.schema_site import SchemaSite, position_in
from opkit.formats.source_op import AdoptError, Skipped, SourceOp
from opkit.signature import Dialect

BLOCK_MACROS = {"TORCH_LIBRARY": ("def", 2), "TORCH_LIBRARY_FRAGMENT": ("def", 2), "TORCH_LIBRARY_IMPL": ("impl", 3)}
# A def's own kernel is registered as a catch-all: torch files it under CompositeImplicitAutograd.
CATCH_ALL = "CompositeImplicitAutograd"
# Markers a file must contain to register anything (with the wrapper macros the files given define).
MARKERS = tuple(BLOCK_MACROS)

_DEVICE_KEYS = {"kPrivateUse1": "PrivateUse1", "kCPU": "CPU", "kCUDA": "CUDA", "kMeta": "Meta", "kXPU": "XPU", "kHIP": "HIP", "kMPS": "MPS", "kXLA": "XLA", "kLazy": "Lazy"}
_NOT_FUNCTIONS = frozenset("if for while switch return sizeof catch decltype alignof static_assert new delete throw typeid".split())
_TYPE_QUALIFIERS = frozenset({"const", "volatile", "&", "&&", "*", "typename", "struct", "class"})


class CppReadError(CppTextError):
    """A registration opkit cannot read (or text it cannot tokenize): one message with its line and column."""


@dataclass(frozen=True)
class Branch:
    """One arm of a preprocessor conditional: ``#ifdef X`` (arm 0), its ``#elif``/``#else`` (1, 2, ...)."""

    line: int  # the opening #if's line: it names the conditional
    arm: int
    condition: str  # the directive that opened this arm, as written
    opening: str = ""  # the conditional's opening directive (``#ifdef X``), the same for all its arms


Conditions = tuple[Branch, ...]


def exclusive(a: Conditions, b: Conditions, *, same_file: bool = True) -> bool:
    """Whether code under ``a`` and code under ``b`` are never both compiled: different arms of one #if
    (of one file), or, across files, different arms of conditionals opened by the same test
    (``#ifdef ASCEND_PLATFORM_310P`` ... ``#else`` in a binding file and in its Meta file)."""
    if same_file:
        arms = {branch.line: branch.arm for branch in a}
        return any(branch.line in arms and arms[branch.line] != branch.arm for branch in b)
    tests = {branch.opening: branch.arm for branch in a}
    return any(branch.opening in tests and tests[branch.opening] != branch.arm for branch in b)


@dataclass(frozen=True)
class Macro:
    """A ``#define``: its name read at once, its parameters and body lexed when first asked for (a repository
    has tens of thousands of defines, of which a lint expands a handful)."""

    name: str
    directive: str = field(repr=False)  # the #define as the lexer gives it (comments blanked), or as written
    path: str
    line: int

    @functools.cached_property
    def _parts(self) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
        m = _DEFINE.match(self.directive)
        if not m:
            return None, ()
        params = tuple(p.strip() for p in m.group(3).split(",") if p.strip()) if m.group(2) is not None else None
        return params, tuple(split_code(m.group(4)))

    @property
    def params(self) -> tuple[str, ...] | None:
        """The parameters' names; None: an object-like macro."""
        return self._parts[0]

    @property
    def body(self) -> tuple[str, ...]:
        """The replacement's token texts."""
        return self._parts[1]


Macros = dict[str, Macro]


@dataclass(frozen=True)
class CppParameter:
    type: str  # as written, normalised spaces: "const at::Tensor &"
    name: str  # "" when unnamed

    @property
    def schema_type(self) -> str | None:
        """The schema type torch infers for this C++ type (``int`` for int64_t and SymInt alike); None if unknown."""
        return schema_type_of(self.type)


@dataclass(frozen=True)
class CppFunction:
    """A C++ function (or lambda, or the type a ``static_cast`` gives a kernel) and its parameters."""

    name: str  # qualified as declared ("vllm_ascend::meta::f_meta"); "<lambda>" for a lambda
    parameters: tuple[CppParameter, ...]
    returns: str  # the return type as written ("" for a lambda without ``->``)
    path: str
    line: int
    column: int
    defined: bool = True  # a definition (with a body), not only a declaration
    # a definition's body: the offsets in the file of its '{' and its '}' ((0, 0) for a declaration)
    body: tuple[int, int] = field(default=(0, 0), compare=False, repr=False)

    @property
    def short_name(self) -> str:
        return self.name.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class Kernel:
    """What an ``impl`` (or a def's second argument) registers."""

    kind: str  # "function" (a named function), "lambda", "boxed" (a boxed kernel: no typed signature), "unknown"
    name: str  # as written, without ``&`` / ``TORCH_FN``: "vllm_ascend::f"; "" for a lambda
    line: int
    column: int
    signature: CppFunction | None = None  # a lambda's, or a static_cast's target type; else resolved by name


@dataclass(frozen=True)
class Block:
    macro: str  # TORCH_LIBRARY, TORCH_LIBRARY_FRAGMENT or TORCH_LIBRARY_IMPL (after unwrapping project macros)
    written_as: str  # the macro as written (TORCH_LIBRARY_EXPAND)
    namespace: str
    # what opkit assumed: a namespace taken as written (a macro it could not expand), a wrapper macro read by its name
    namespace_note: str | None
    dispatch_key: str | None  # TORCH_LIBRARY_IMPL's key
    variable: str
    line: int
    column: int
    conditions: Conditions


@dataclass(frozen=True)
class CppDef:
    namespace: str  # the block's, or the schema's own ``ns::`` prefix
    schema: str  # the schema text torch receives (adjacent literals joined)
    line: int  # of the schema's first character
    column: int
    runs: tuple[tuple[int, int, int], ...] = field(compare=False, repr=False)  # schema index → file position
    block: Block | None = field(compare=False, default=None)
    kernel: Kernel | None = None  # m.def(schema, kernel): a catch-all kernel
    conditions: Conditions = ()
    tags: tuple[str, ...] = ()  # m.def(schema, {at::Tag::inplace}): the tags' names

    def position(self, index: int) -> tuple[int, int]:
        """File (line, column) of the schema's character ``index`` (0-based)."""
        return position_in(self.runs, index)

    @property
    def qualname(self) -> str:
        """``name`` or ``name.overload`` as the schema spells it, without its namespace."""
        head = self.schema.split("(", 1)[0].strip()
        return head.rsplit("::", 1)[-1]

    @property
    def maybe(self) -> bool:
        return bool(self.conditions)


@dataclass(frozen=True)
class CppImpl:
    namespace: str
    op: str  # "name" or "name.overload"
    dispatch_key: str  # "PrivateUse1", "Meta", "CPU", "CompositeExplicitAutograd", ...; "" for a catch-all impl
    kernel: Kernel
    line: int
    column: int
    block: Block | None = field(compare=False, default=None)
    conditions: Conditions = ()

    @property
    def maybe(self) -> bool:
        return bool(self.conditions)


@dataclass(eq=False)  # identity: lint rules cache indexes per file
class CppRegistrationFile:
    path: str
    noqa: NoqaMap = field(default_factory=NoqaMap)
    blocks: list[Block] = field(default_factory=list)
    defs: list[CppDef] = field(default_factory=list)
    impls: list[CppImpl] = field(default_factory=list)
    functions: list[CppFunction] = field(default_factory=list)
    macros: Macros = field(default_factory=dict)
    # Statements inside a block that register nothing opkit reads (m.fallback, a helper call): (message, line, column)
    skipped: list[tuple[str, int, int]] = field(default_factory=list)
    includes: tuple[str, ...] = ()  # the headers it includes by a quoted path, as written

    @property
    def registers(self) -> bool:
        return bool(self.blocks)

    def schema_sites(self) -> list[SchemaSite]:
        """Each def's schema where the schema rules see it: torch.library's dialect, the block's namespace."""
        return [
            SchemaSite(d.schema, self.path, d.line, d.column, Dialect.TORCH_LIBRARY, op_hint=d.qualname.split(".")[0] or None, namespace=d.namespace, runs=d.runs, tags=d.tags)
            for d in self.defs
        ]


# ------------------------------------------------------------------------------------------------
# C++ types → the schema type torch infers for them (c10/core/op_registration/infer_schema.h)
# ------------------------------------------------------------------------------------------------

_BASE_TYPES = {
    "at::Tensor": "Tensor", "torch::Tensor": "Tensor", "Tensor": "Tensor", "torch::autograd::Variable": "Tensor",
    "int64_t": "int", "c10::SymInt": "int", "SymInt": "int", "double": "float", "bool": "bool",
    "c10::string_view": "str", "std::string_view": "str", "std::string": "str", "c10::basic_string_view<char>": "str",
    "at::Scalar": "Scalar", "c10::Scalar": "Scalar", "Scalar": "Scalar",
    "at::ScalarType": "ScalarType", "c10::ScalarType": "ScalarType", "ScalarType": "ScalarType",
    "at::Layout": "Layout", "c10::Layout": "Layout", "at::Device": "Device", "c10::Device": "Device",
    "at::MemoryFormat": "MemoryFormat", "c10::MemoryFormat": "MemoryFormat", "at::Generator": "Generator",
    "at::TensorList": "Tensor[]", "c10::TensorList": "Tensor[]", "at::ITensorListRef": "Tensor[]",
    "at::IntArrayRef": "int[]", "c10::IntArrayRef": "int[]", "IntArrayRef": "int[]",
    "c10::SymIntArrayRef": "int[]", "at::SymIntArrayRef": "int[]", "SymIntArrayRef": "int[]",
    "at::OptionalIntArrayRef": "int[]?", "c10::OptionalIntArrayRef": "int[]?", "at::OptionalSymIntArrayRef": "int[]?",
    "c10::OptionalArrayRef<int64_t>": "int[]?", "c10::OptionalArrayRef<c10::SymInt>": "int[]?",
    "void": "()",
}  # fmt: skip
_LIST_TEMPLATES = ("c10::ArrayRef", "at::ArrayRef", "std::vector", "c10::List", "at::List", "std::array")
_OPTIONAL_TEMPLATES = ("c10::optional", "std::optional", "at::optional", "optional")


def _strip_qualifiers(cpp_type: str) -> str:
    words = [w for w in re.split(r"(?<=[\w>])\s*(?=[&*])|(?<=[&*])\s*|\s+", cpp_type.strip()) if w and w not in _TYPE_QUALIFIERS]
    return "".join(w if not words or i == 0 else (" " + w if w[0].isalnum() and words[i - 1][-1].isalnum() else w) for i, w in enumerate(words))


def _template(cpp_type: str) -> tuple[str, list[str]] | None:
    m = re.fullmatch(r"([\w:]+)\s*<(.*)>", cpp_type.strip(), re.S)
    if not m:
        return None
    return m.group(1), split_top(m.group(2), ",")


def schema_type_of(cpp_type: str) -> str | None:
    """``const c10::optional<at::Tensor> &`` → ``Tensor?``; ``std::tuple<at::Tensor, at::Tensor>`` → ``(Tensor, Tensor)``."""
    base = _strip_qualifiers(cpp_type)
    if base in _BASE_TYPES:
        return _BASE_TYPES[base]
    template = _template(base)
    if template is None:
        return None
    name, args = template
    inner = [schema_type_of(a) for a in args]
    if name in ("std::tuple", "::std::tuple") and all(inner):
        # torch infers one return per element: a 1-tuple returns what its element does
        return inner[0] if len(inner) == 1 else "(" + ", ".join(inner) + ")"
    if len(inner) != 1 or inner[0] is None:
        return None
    if name in _OPTIONAL_TEMPLATES or name.endswith("::optional"):
        return inner[0] + "?"
    if name in _LIST_TEMPLATES:
        return inner[0] + "[]"
    return None


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside (), [], {} and <> (a ``<`` after an identifier opens a template)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}>" and depth:
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return parts


# ------------------------------------------------------------------------------------------------
# Macros
# ------------------------------------------------------------------------------------------------

_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)", re.S)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
# A ``#define`` is found by its '#' (a literal the regex engine scans for quickly; a pattern opening
# with ``^[ \t]*`` in MULTILINE mode tries every line start: 1.6 s of CPU over ops-nn's 127 MB of C++),
# then taken as a directive only when blanks alone precede it on its line.
_DEFINE_HASH = re.compile(r"#[ \t]*define\b")
_LOGICAL_LINE_REST = re.compile(r"(?:[^\n]*\\\n)*[^\n]*")


def _define_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each ``#define`` line of ``text``, its backslash continuations included."""
    end = 0
    for m in _DEFINE_HASH.finditer(text):
        if m.start() < end:
            continue  # inside the continuation lines of the define before
        start = text.rfind("\n", 0, m.start()) + 1
        if text[start : m.start()].strip(" \t"):
            continue  # not the first thing on its line
        end = _LOGICAL_LINE_REST.match(text, m.end()).end()
        yield start, text[start:end]


def macro_definitions(path: str, text: str) -> Macros:
    """The ``#define``s of a file; only those lines are lexed, so every C++ file given can be asked."""
    macros: Macros = {}
    line, counted = 1, 0
    for start, define_line in _define_lines(text):
        line += text.count("\n", counted, start)
        counted = start
        written = define_line.lstrip()
        if "/" not in written and "\\\n" not in written and '"' not in written and "'" not in written:
            directive = written  # nothing for the lexer to blank or join: lexed when the macro is used
        else:
            try:
                directives = [t.text for t in tokenize(define_line) if t.kind == "directive"]
            except CppTextError:
                continue
            if not directives:
                continue
            directive = directives[0]
        named = _DEFINE.match(directive)
        if named:
            macros[named.group(1)] = Macro(named.group(1), directive, path, line)
    return macros


# The most tokens one expansion may produce: a 447-byte chain of macros each naming the last ten times
# expands to 10^9 tokens; a registration's namespace or wrapper expands to a handful.
MAX_EXPANDED_TOKENS = 10_000


def _expand(texts: list[str], macros: Macros, depth: int = 0, budget: list[int] | None = None) -> list[str] | None:
    """Token texts with function-like and object-like macros expanded and ``##`` pasted; None where a
    call-shaped name is no macro given (``CONCAT(_C, _ascend)`` without CONCAT's definition), or where the
    expansion would pass ``MAX_EXPANDED_TOKENS`` tokens (then it is not expanded: taken as written)."""
    budget = [MAX_EXPANDED_TOKENS] if budget is None else budget
    budget[0] -= len(texts)
    if depth > 16 or budget[0] < 0:
        return None
    out: list[str] = []
    i = 0
    while i < len(texts):
        t = texts[i]
        macro = macros.get(t)
        calls = i + 1 < len(texts) and texts[i + 1] == "("
        if macro is None:
            if calls and _IDENT_RE.fullmatch(t):
                return None
            out.append(t)
            i += 1
            continue
        if macro.params is None:
            expanded = _expand(list(macro.body), {k: v for k, v in macros.items() if k != t}, depth + 1, budget)
            if expanded is None:
                return None
            out += expanded
            i += 1
            continue
        if not calls:
            out.append(t)
            i += 1
            continue
        args, end = _call_args(texts, i + 1)
        if end is None or len(args) != len(macro.params):
            return None
        bound = dict(zip(macro.params, args))
        body: list[str] = []
        for piece in macro.body:
            body += bound.get(piece, [piece])
        pasted: list[str] = []
        k = 0
        while k < len(body):
            if body[k] == "##" and pasted and k + 1 < len(body):
                pasted[-1] = pasted[-1] + body[k + 1]
                k += 2
            else:
                pasted.append(body[k])
                k += 1
        expanded = _expand(pasted, macros, depth + 1, budget)
        if expanded is None:
            return None
        out += expanded
        i = end + 1
    return out


_IDENT_RE = re.compile(r"[A-Za-z_]\w*")


def _call_args(texts: list[str], open_index: int) -> tuple[list[list[str]], int | None]:
    args: list[list[str]] = [[]]
    depth = 0
    for k in range(open_index, len(texts)):
        t = texts[k]
        if t in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                return ([] if args == [[]] else args), k
        elif t == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(t)
    return args, None


def block_macros(macros: Macros) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every macro name that opens a registration block → (the torch macro, which of its arguments
    feed that macro's arguments), the torch macros themselves included. Wrappers of wrappers resolve."""
    found: dict[str, tuple[str, tuple[int, ...]]] = {name: (name, tuple(range(arity))) for name, (_, arity) in BLOCK_MACROS.items()}
    changed = True
    while changed:
        changed = False
        for macro in macros.values():
            # a wrapper's body opens with a block macro's name: the others are never lexed here
            if macro.name in found or "(" not in macro.directive or not any(name in macro.directive for name in found):
                continue
            if macro.params is None or len(macro.body) < 3:
                continue
            target = found.get(macro.body[0])
            if target is None or macro.body[1] != "(":
                continue
            args, end = _call_args(list(macro.body), 1)
            if end is None or end != len(macro.body) - 1 or len(args) != len(target[1]):
                continue
            if not all(len(a) == 1 and a[0] in macro.params for a in args):
                continue
            # target's argument j is wrapper's parameter index; composed with target's own mapping
            mapping = tuple(macro.params.index(args[j][0]) for j in target[1])
            found[macro.name] = (target[0], mapping)
            changed = True
    return found


def registers_anything(text: str, macros: Macros, *, blocks: dict | None = None) -> bool:
    """Whether the text can register an op: it names a torch block macro or a wrapper of one.
    ``blocks``: ``block_macros(macros)`` when the caller asks for many files."""
    names = blocks if blocks is not None else block_macros(macros)
    # a name holding TORCH_LIBRARY is in the text only where TORCH_LIBRARY is: one scan of the text for all of them
    return "TORCH_LIBRARY" in text or any(name in text for name in names if "TORCH_LIBRARY" not in name)


# ------------------------------------------------------------------------------------------------
# Reading
# ------------------------------------------------------------------------------------------------


def _macro(path: str, token: Token) -> Macro | None:
    """A ``#define`` directive token (comments already blanked by the lexer) as a Macro."""
    m = _DEFINE.match(token.text)
    return Macro(m.group(1), token.text, path, token.line) if m else None


def read_cpp_registrations(path: str, text: str, macros: Macros | None = None) -> CppRegistrationFile:
    """The registrations and functions of one C++ file. ``macros``: definitions from the other files
    given (this file's own are added). CppReadError for text that cannot be read."""
    try:
        tokens = tokenize(text)
    except CppTextError as exc:
        raise CppReadError(exc.message, exc.line, exc.column) from None
    own = {m.name: m for m in (_macro(path, t) for t in tokens if t.kind == "directive") if m is not None}  # lexed already
    all_macros = {**(macros or {}), **own}
    records = _Reader(path, tokens, all_macros, own).read()
    records.noqa = NoqaMap.from_text(text, comment="//")
    records.includes = tuple(_INCLUDE.findall(text))
    return records


class _Reader:
    def __init__(self, path: str, tokens: list[Token], macros: Macros, own: Macros):
        self.path = path
        self.tokens = [t for t in tokens if t.kind != "directive"]
        self.conditions = _conditions(tokens)
        self.macros = macros
        self.blocks = block_macros(macros)
        self.guessed: set[str] = set()  # wrapper macros read by their name alone
        self.result = CppRegistrationFile(path, macros=own)

    def read(self) -> CppRegistrationFile:
        toks = self.tokens
        i, n = 0, len(toks)
        namespaces: list[str | None] = []  # one per open brace: a namespace's name, or None for other braces
        statement_start = 0
        while i < n:
            t = toks[i]
            if t.kind == "ident" and self._opens_block(t.text) and i + 1 < n and toks[i + 1].text == "(" and _top(namespaces):
                i = self._block(i)
                statement_start = i
                continue
            if t.text == "namespace" and t.kind == "ident":
                j, names = i + 1, []
                while j < n and (toks[j].kind == "ident" or toks[j].text in ("::", "inline")):
                    if toks[j].kind == "ident" and toks[j].text != "inline":
                        names.append(toks[j].text)
                    j += 1
                if j < n and toks[j].text == "{":
                    namespaces.append("::".join(names))  # "" for an anonymous namespace
                    i = j + 1
                    statement_start = i
                    continue
            if t.text == "{":
                if i >= 2 and toks[i - 1].kind == "string" and toks[i - 2].text == "extern":
                    namespaces.append("")  # extern "C" { ... }: still file scope
                    i += 1
                    statement_start = i
                    continue
                if _top(namespaces):
                    function_end = self._function(statement_start, i, namespaces, defined=True)
                    if function_end is not None:
                        i = function_end + 1
                        statement_start = i
                        continue
                namespaces.append(None)
                i += 1
                statement_start = i
                continue
            if t.text == "}":
                if namespaces:
                    namespaces.pop()
                i += 1
                statement_start = i
                continue
            if t.text == ";":
                if _top(namespaces):
                    self._function(statement_start, i, namespaces, defined=False)
                i += 1
                statement_start = i
                continue
            i += 1
        return self.result

    # -- blocks ------------------------------------------------------------------------------------

    def _opens_block(self, name: str) -> bool:
        """A torch block macro, a wrapper the files given define, or an undefined ``TORCH_LIBRARY*`` name
        (a project wrapper whose header was not given: read by its name, and the block says so)."""
        if name in self.blocks:
            return True
        if name.startswith("TORCH_LIBRARY") and name not in self.macros:
            self.blocks[name] = ("TORCH_LIBRARY_IMPL", (0, 1, 2)) if name.startswith("TORCH_LIBRARY_IMPL") else ("TORCH_LIBRARY", (0, 1))
            self.guessed.add(name)
            return True
        return False

    def _block(self, i: int) -> int:
        toks = self.tokens
        written = toks[i]
        macro, mapping = self.blocks[written.text]
        args, close = self._args(i + 1)
        if close is None or len(args) <= max(mapping):
            raise CppReadError(f"{written.text}(...) is never closed or lacks its arguments", written.line, written.column)
        own = [args[k] for k in mapping]
        ns_tokens = own[0]
        expanded = _expand([t.text for t in ns_tokens], self.macros)
        as_written = " ".join(t.text for t in ns_tokens).replace(" ( ", "(").replace(" , ", ", ").replace(" )", ")")
        note = None
        if expanded is None or len(expanded) != 1 or not _IDENT_RE.fullmatch(expanded[0]):
            namespace = as_written
            note = f"namespace taken as written, {as_written!r}: the macro it uses is not defined in the files given"
        else:
            namespace = expanded[0]
        if written.text in self.guessed:
            note = (note + "; " if note else "") + f"{written.text} is not defined in the files given: read as {macro}"
        key = None
        if macro == "TORCH_LIBRARY_IMPL":
            key = _dispatch_key([t.text for t in own[1]]) or " ".join(t.text for t in own[1])
        variable = own[-1][-1].text if own[-1] else "m"
        block = Block(macro, written.text, namespace, note, key, variable, written.line, written.column, self.conditions(written))
        self.result.blocks.append(block)
        j = close + 1
        if j >= len(toks) or toks[j].text != "{":
            return j  # a declaration without a body (a macro forwarding to another): nothing registered
        end = self._matching(j)
        self._body(block, j + 1, end)
        return end + 1

    def _body(self, block: Block, start: int, end: int) -> None:
        toks = self.tokens
        i = start
        while i < end:
            t = toks[i]
            if t.text == "." and i + 2 < end and toks[i + 1].text in ("def", "impl", "fallback") and toks[i + 2].text == "(":
                receiver = toks[i - 1]
                if receiver.text == block.variable or receiver.text == ")":
                    args, close = self._args(i + 2)
                    if close is None:
                        raise CppReadError(f"{block.variable}.{toks[i + 1].text}( is never closed", toks[i + 1].line, toks[i + 1].column)
                    if toks[i + 1].text == "def":
                        self._def(block, toks[i + 1], args)
                    elif toks[i + 1].text == "impl":
                        self._impl(block, toks[i + 1], args)
                    else:
                        self.result.skipped.append((f"{block.variable}.fallback(...) registers no op", toks[i + 1].line, toks[i + 1].column))
                    i = close + 1
                    continue
            i += 1

    def _def(self, block: Block, at: Token, args: list[list[Token]]) -> None:
        if not args:
            raise CppReadError("def() without a schema", at.line, at.column)
        schema = _string_argument(_unwrap(args[0], ("torch::schema", "c10::schema", "schema", "TORCH_SELECTIVE_SCHEMA")))
        if schema is None:
            self.result.skipped.append(("def() whose schema is not a string literal", at.line, at.column))
            return
        value, runs, first = schema
        # m.def(schema, {at::Tag::inplace}) / m.def(schema, kernel, {tags}): tags are no kernel
        tags = tuple(t for rest in args[1:] for t in _tag_names(rest))
        kernels = [a for a in args[1:] if not _tag_names(a)]
        kernel = self._kernel(kernels[0]) if kernels else None
        head = value.split("(", 1)[0]
        namespace = head.split("::", 1)[0].strip() if "::" in head else block.namespace
        lead = len(value) - len(value.lstrip())
        line, column = position_in(runs, lead)
        self.result.defs.append(CppDef(namespace, value, line, column, runs, block, kernel, self.conditions(first), tags))

    def _impl(self, block: Block, at: Token, args: list[list[Token]]) -> None:
        if len(args) < 2:
            raise CppReadError("impl() needs an op name and a kernel", at.line, at.column)
        name = _string_argument(_unwrap(args[0], ("TORCH_SELECTIVE_NAME",)))
        if name is None:
            self.result.skipped.append(("impl() whose op name is not a string literal", at.line, at.column))
            return
        op, first = name[0].strip(), name[2]
        namespace = block.namespace
        if "::" in op:
            namespace, op = op.split("::", 1)
        if len(args) >= 3:
            key_tokens = args[1]
            key = _dispatch_key([t.text for t in key_tokens])
            if key is None:
                literal = _string_argument(key_tokens)
                key = literal[0] if literal else " ".join(t.text for t in key_tokens)
            kernel_tokens = args[2]
        else:
            key = block.dispatch_key or ""
            kernel_tokens = args[1]
        kernel = self._kernel(kernel_tokens)
        self.result.impls.append(CppImpl(namespace, op, key, kernel, first.line, first.column, block, self.conditions(first)))

    # -- kernels -----------------------------------------------------------------------------------

    def _kernel(self, toks: list[Token]) -> Kernel:
        if not toks:
            return Kernel("unknown", "", 0, 0)
        first = toks[0]
        texts = [t.text for t in toks]
        if texts[0] == "[":  # a lambda: [captures](params) -> ret { body }
            close = _matching_in(toks, 0)
            if close is not None and close + 1 < len(toks) and toks[close + 1].text == "(":
                params_end = _matching_in(toks, close + 1)
                if params_end is not None:
                    returns = ""
                    k = params_end + 1
                    while k < len(toks) and toks[k].text in ("mutable", "noexcept", "constexpr"):
                        k += 1
                    brace = next((m for m in range(k, len(toks)) if toks[m].text == "{"), None)
                    if k < len(toks) and toks[k].text == "->":
                        returns = _join(toks[k + 1 : brace if brace is not None else len(toks)])
                    end = _matching_in(toks, brace) if brace is not None else None
                    body = (toks[brace].offset, toks[end].offset) if end is not None else (0, 0)
                    signature = CppFunction("<lambda>", _parameters(toks[close + 2 : params_end]), returns, self.path, first.line, first.column, True, body)
                    return Kernel("lambda", "", first.line, first.column, signature)
            return Kernel("lambda", "", first.line, first.column)
        if texts[0] in ("TORCH_FN", "TORCH_FN_TYPE") and len(texts) > 2 and texts[1] == "(":
            return self._kernel(toks[2:-1])
        if texts[0] in ("static_cast", "reinterpret_cast") and len(texts) > 2 and texts[1] == "<":
            depth, k = 0, 1
            for k in range(1, len(toks)):
                depth += {"<": 1, ">": -1, ">>": -2}.get(toks[k].text, 0)
                if depth <= 0:
                    break
            target = toks[2:k]
            inner = toks[k + 2 : -1] if k + 1 < len(toks) and toks[k + 1].text == "(" else []
            named = self._kernel(inner)
            signature = _function_type(target, self.path, first)
            return Kernel(named.kind, named.name, named.line, named.column, signature)
        if any(t in ("makeFromBoxedFunction", "makeFromBoxedKernel", "makeFallthrough") for t in texts):
            return Kernel("boxed", _join(toks), first.line, first.column)
        if texts[0] == "&":
            toks, texts = toks[1:], texts[1:]
        if toks and all(t.kind == "ident" or t.text == "::" for t in toks) and toks[-1].kind == "ident":
            return Kernel("function", "".join(texts), toks[0].line, toks[0].column)
        if toks and toks[-1].text == ">" and "<" in texts:  # f<T>: a template instance
            head = texts[: texts.index("<")]
            if head and all(_IDENT_RE.fullmatch(h) or h == "::" for h in head):
                return Kernel("function", "".join(head), toks[0].line, toks[0].column)
        return Kernel("unknown", _join(toks), first.line, first.column)

    # -- functions ---------------------------------------------------------------------------------

    def _function(self, start: int, brace_or_semicolon: int, namespaces: list[str | None], *, defined: bool) -> int | None:
        """A function definition (``ret name(params) [const] {``) or declaration ending at the token given:
        recorded, and for a definition the index of its closing brace returned; None if it is no function."""
        toks = self.tokens
        k = start
        while k < brace_or_semicolon and toks[k].text in ("template", "static", "inline", "extern", "constexpr", "virtual", "TORCH_API", "C10_API", "EXPORT_API"):
            if toks[k].text == "template" and k + 1 < brace_or_semicolon and toks[k + 1].text == "<":
                depth = 0
                for m in range(k + 1, brace_or_semicolon):
                    depth += {"<": 1, ">": -1, ">>": -2}.get(toks[m].text, 0)
                    if depth <= 0:
                        k = m
                        break
            k += 1
        # the parameter list: the last top-level (...) before the brace, after optional const/noexcept/-> ret
        end = brace_or_semicolon - 1
        while end > k and toks[end].text in ("const", "noexcept", "override", "final"):
            end -= 1
        trailing = ""
        arrow = next((m for m in range(k, brace_or_semicolon) if toks[m].text == "->"), None)
        if arrow is not None:
            trailing = _join(toks[arrow + 1 : brace_or_semicolon])
            end = arrow - 1
        if end <= k or toks[end].text != ")":
            return None
        open_paren = _opening(toks, end, k)
        if open_paren is None or open_paren - 1 <= k:
            return None
        name_end = open_paren - 1
        if toks[name_end].kind != "ident" or toks[name_end].text in _NOT_FUNCTIONS:
            return None
        name_start = name_end
        while name_start - 2 >= k and toks[name_start - 1].text == "::" and toks[name_start - 2].kind == "ident":
            name_start -= 2
        # a macro call without a semicolon before the function (``REGISTER_EXTENSION(_C)``) is not its type
        last_paren = max((m for m in range(k, name_start) if toks[m].text == ")"), default=None)
        if last_paren is not None:
            k = last_paren + 1
        returns = _join(toks[k:name_start]) if arrow is None else trailing
        if not returns or any(t.text in ("=", ";", "(", "return", "else", "operator") for t in toks[k:name_start]):
            return None
        scope = "::".join(ns for ns in namespaces if ns)
        written = "".join(t.text for t in toks[name_start : name_end + 1])
        name = f"{scope}::{written}" if scope and not written.startswith("::") else written.lstrip(":")
        params = _parameters(toks[open_paren + 1 : end])
        close = self._matching(brace_or_semicolon) if defined else None
        body = (toks[brace_or_semicolon].offset, toks[close].offset) if close is not None else (0, 0)
        self.result.functions.append(CppFunction(name, params, returns, self.path, toks[name_end].line, toks[name_end].column, defined, body))
        return close

    # -- helpers -----------------------------------------------------------------------------------

    def _matching(self, open_index: int) -> int:
        close = _matching_in(self.tokens, open_index)
        if close is None:
            t = self.tokens[open_index]
            raise CppReadError(f"{t.text!r} is never closed", t.line, t.column)
        return close

    def _args(self, open_index: int) -> tuple[list[list[Token]], int | None]:
        """Arguments of the call whose ``(`` is at ``open_index``, split at top-level commas (templates
        are not split: ``static_cast<void (*)(a, b)>``)."""
        toks = self.tokens
        close = _matching_in(toks, open_index)
        if close is None:
            return [], None
        args: list[list[Token]] = [[]]
        depth = 0
        angle = 0
        for k in range(open_index + 1, close):
            t = toks[k]
            if t.text in ("(", "[", "{"):
                depth += 1
            elif t.text in (")", "]", "}"):
                depth -= 1
            elif t.text == "<" and (angle or toks[k - 1].text in _CASTS):  # a cast's target type
                angle += 1
            elif t.text in (">", ">>") and angle:
                angle = max(angle - len(t.text), 0)
            elif t.text == "," and depth == 0 and angle == 0:
                args.append([])
                continue
            args[-1].append(t)
        return ([] if args == [[]] else args), close


_CASTS = frozenset({"static_cast", "reinterpret_cast", "TORCH_FN_TYPE"})


def _top(namespaces: list[str | None]) -> bool:
    """At file or namespace scope (not inside a function, class or other braces)."""
    return all(ns is not None for ns in namespaces)


def _matching_in(toks: list[Token], open_index: int) -> int | None:
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener = toks[open_index].text
    closer = pairs[opener]
    depth = 0
    for k in range(open_index, len(toks)):
        text = toks[k].text
        if text == opener:
            depth += 1
        elif text == closer:
            depth -= 1
            if depth == 0:
                return k
    return None


def _opening(toks: list[Token], close_index: int, lower: int) -> int | None:
    depth = 0
    for k in range(close_index, lower - 1, -1):
        if toks[k].text == ")":
            depth += 1
        elif toks[k].text == "(":
            depth -= 1
            if depth == 0:
                return k
    return None


def _join(toks: list[Token]) -> str:
    """Token texts as a type is usually written: ``const at::Tensor &``, ``std::tuple<a, b>``."""
    out = ""
    for t in toks:
        word_after_word = out and (out[-1].isalnum() or out[-1] == "_") and (t.text[0].isalnum() or t.text[0] == "_")
        reference = out and t.text in ("&", "&&", "*") and out[-1] not in "<("
        if word_after_word or reference or (out and out[-1] == ","):
            out += " "
        out += t.text
    return out


def _parameters(toks: list[Token]) -> tuple[CppParameter, ...]:
    """``const at::Tensor &x, int64_t k = 1`` → parameters; ``void`` or nothing → none."""
    if not toks or (len(toks) == 1 and toks[0].text == "void"):
        return ()
    groups: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.text in ("(", "[", "{", "<"):
            depth += 1
        elif t.text in (")", "]", "}", ">") and depth:
            depth -= 1
        elif t.text == ">>" and depth:
            depth = max(depth - 2, 0)
        elif t.text == "," and depth == 0:
            groups.append([])
            continue
        groups[-1].append(t)
    params = []
    for group in groups:
        if "=" in [t.text for t in group]:
            group = group[: [t.text for t in group].index("=")]
        if len(group) >= 2 and group[-1].kind == "ident" and group[-2].text not in ("::",) and group[-1].text not in _BASE_TYPE_WORDS:
            params.append(CppParameter(_join(group[:-1]), group[-1].text))
        else:
            params.append(CppParameter(_join(group), ""))
    return tuple(params)


# Words that end a type rather than name a parameter (``unsigned int``, ``long long``).
_BASE_TYPE_WORDS = frozenset({"int", "long", "short", "char", "double", "float", "bool", "unsigned", "signed", "int64_t", "int32_t", "void", "const"})


def _function_type(toks: list[Token], path: str, at: Token) -> CppFunction | None:
    """``R (*)(A, B)`` (a static_cast's target) as a nameless function."""
    texts = [t.text for t in toks]
    try:
        star = texts.index("*")
    except ValueError:
        return None
    if star < 1 or texts[star - 1] != "(" or star + 2 >= len(texts) or texts[star + 1] != ")" or texts[star + 2] != "(":
        return None
    close = _matching_in(toks, star + 2)
    if close is None:
        return None
    return CppFunction("<cast>", _parameters(toks[star + 3 : close]), _join(toks[: star - 1]), path, at.line, at.column)


def _unwrap(toks: list[Token], wrappers: tuple[str, ...]) -> list[Token]:
    """``torch::schema("...", ...)`` → the tokens of its first argument; other token lists unchanged."""
    texts = [t.text for t in toks]
    for w in wrappers:
        parts = w.split("::")
        head = [p for part in parts for p in (part, "::")][:-1]
        if texts[: len(head)] == head and len(texts) > len(head) and texts[len(head)] == "(":
            close = _matching_in(toks, len(head))
            if close is None:
                return toks
            inner = toks[len(head) + 1 : close]
            depth = 0
            for k, t in enumerate(inner):
                if t.text in "([{":
                    depth += 1
                elif t.text in ")]}":
                    depth -= 1
                elif t.text == "," and depth == 0:
                    return inner[:k]
            return inner
    return toks


def _string_argument(toks: list[Token]) -> tuple[str, tuple[tuple[int, int, int], ...], Token] | None:
    """Adjacent string literals joined (C++ concatenates them): (value, runs over it, first token)."""
    if not toks or any(t.kind != "string" for t in toks):
        return None
    value, runs = "", []
    for t in toks:
        runs += [(start + len(value), line, column) for start, line, column in t.runs]
        value += t.value
    return value, tuple(runs), toks[0]


def _tag_names(toks: list[Token]) -> list[str]:
    """The ``at::Tag::X`` / ``torch::Tag::X`` / ``Tag::X`` names an argument lists (``{at::Tag::inplace}``)."""
    return [toks[k + 2].text for k in range(len(toks) - 2) if toks[k].text == "Tag" and toks[k + 1].text == "::"]


def _dispatch_key(texts: list[str]) -> str | None:
    """``torch::kPrivateUse1`` → PrivateUse1, ``c10::DispatchKey::Meta`` → Meta, ``PrivateUse1`` → itself."""
    if not texts:
        return None
    last = texts[-1]
    if "DispatchKey" in texts or "DeviceType" in texts:
        return last
    if last in _DEVICE_KEYS:
        return _DEVICE_KEYS[last]
    if len(texts) == 1 and _IDENT_RE.fullmatch(last):
        return last
    return None


_IF = re.compile(r"#\s*(if|ifdef|ifndef)\b")
_ELSE = re.compile(r"#\s*(elif|elifdef|elifndef|else)\b")
_ENDIF = re.compile(r"#\s*endif\b")


# Deeper nesting of #if than this is refused: each change keeps the whole stack, so 15,000 unclosed
# #ifdef lines cost 15,000^2 entries (883 MB); real files nest a handful deep.
MAX_CONDITIONAL_DEPTH = 64


def _conditions(tokens: list[Token]):
    """A function giving the ``Conditions`` that hold at a token (by its offset)."""
    changes: list[tuple[int, Conditions]] = [(-1, ())]
    stack: list[Branch] = []
    for t in tokens:
        if t.kind != "directive":
            continue
        if _IF.match(t.text):
            if len(stack) >= MAX_CONDITIONAL_DEPTH:
                raise CppReadError(f"#if blocks nested more than {MAX_CONDITIONAL_DEPTH} deep: opkit does not read this file", t.line, t.column)
            stack.append(Branch(t.line, 0, t.text, t.text))
        elif _ELSE.match(t.text) and stack:
            top = stack.pop()
            stack.append(Branch(top.line, top.arm + 1, t.text, top.opening))
        elif _ENDIF.match(t.text) and stack:
            stack.pop()
        else:
            continue
        changes.append((t.offset, tuple(stack)))
    offsets = [offset for offset, _ in changes]

    import bisect

    def at(token: Token) -> Conditions:
        return changes[bisect.bisect_right(offsets, token.offset) - 1][1]

    return at


# ------------------------------------------------------------------------------------------------
# One op of one file: what `opkit new --from` and `opkit verify --from` take
# ------------------------------------------------------------------------------------------------

def read_with_includes(path: str, text: str, read_text) -> CppRegistrationFile:
    """The file's registrations, with the macros of the headers it includes by a quoted path (found beside
    it): so ``TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), m)`` resolves from ``#include "utils.h"``.
    ``read_text(path)`` reads a header; one it cannot read is passed over."""
    import os

    macros: Macros = {}
    directory = os.path.dirname(path)
    for name in _INCLUDE.findall(text):
        header = os.path.join(directory, name)
        if os.path.isfile(header):
            try:
                macros.update(macro_definitions(header, read_text(header)))
            except Exception:  # unreadable header: its macros stay unknown, and the blocks say so
                continue
    return read_cpp_registrations(path, text, macros)


def find_def(records: CppRegistrationFile, op: str | None) -> tuple[CppDef, list[str]]:
    """The def ``op`` names (``name``, ``name.overload``, ``ns::name``), and notes on what else matched.

    ValueError with the message to show when there is none, or several and ``op`` does not choose."""
    if not records.defs:
        raise ValueError("no m.def(...) in the file (TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT blocks define ops)")
    names = sorted({f"{d.namespace}::{d.qualname}" for d in records.defs})
    if op is None:
        if len(names) > 1:
            raise ValueError(f"the file defines {len(names)} ops ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}): choose one with --op NAME")
        op = names[0]
    namespace, _, name = op.rpartition("::")
    matches = [d for d in records.defs if d.qualname == name and (not namespace or d.namespace == namespace)]
    if not matches and "." not in name:
        matches = [d for d in records.defs if d.qualname.split(".", 1)[0] == name and (not namespace or d.namespace == namespace)]
        if len({d.qualname for d in matches}) > 1:
            raise ValueError(f"{op} has overloads ({', '.join(sorted({d.qualname for d in matches}))}); name one as NAME.OVERLOAD")
    if not matches:
        raise ValueError(f"no m.def of {op} in the file; it defines {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}")
    chosen, notes = matches[0], []
    for other in matches[1:]:
        if other.schema != chosen.schema:
            where = " under " + chosen.conditions[-1].condition if chosen.conditions else ""
            notes.append(f"line {other.line}: another def of {op} (another #if arm) not adopted; line {chosen.line}{where} is")
    return chosen, notes


# ------------------------------------------------------------------------------------------------
# For `opkit lint`: the files of one group read together
# ------------------------------------------------------------------------------------------------

def group_macros(texts: dict[str, str]) -> Macros:
    """The ``#define``s of every C++ file of a group, so a header's wrapper serves the files beside it."""
    macros: Macros = {}
    for path, text in texts.items():
        if path.lower().endswith(CPP_EXTENSIONS) and "#" in text:
            macros.update(macro_definitions(path, text))
    return macros


def load_cpp_registrations(path: str, text: str, macros: Macros) -> CppRegistrationFile:
    """``read_cpp_registrations`` for lint: what cannot be read is InputError E002 at its line and column."""
    try:
        return read_cpp_registrations(path, text, macros)
    except CppReadError as exc:
        raise InputError("E002", f"cannot read the C++ registrations: {exc.message}", line=exc.line, column=exc.column) from None


def function_index(files: list[CppRegistrationFile], others: dict[str, str], macros: Macros) -> dict[str, list[CppFunction]]:
    """Every C++ function the registrations' kernels may name, by its unqualified name: those of the
    registering files, and those of the group's other C++ files (headers, kernel sources) that mention a
    name a kernel uses and is not yet found (only those files are read)."""
    index: dict[str, list[CppFunction]] = {}
    for file in files:
        for fn in file.functions:
            index.setdefault(fn.short_name, []).append(fn)
    wanted = {i.kernel.name.rsplit("::", 1)[-1] for f in files for i in f.impls if i.kernel.kind == "function"}
    wanted |= {d.kernel.name.rsplit("::", 1)[-1] for f in files for d in f.defs if d.kernel is not None and d.kernel.kind == "function"}
    wanted -= set(index)
    if not wanted:
        return index
    included = quoted_includes([(f.path, f.includes) for f in files], others)
    chosen = set(included)
    # the headers they include first; then the group's other C++ files, for what is still not found
    for path in (*included, *(p for p in others if p not in chosen)):
        if not wanted:
            break
        pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, wanted))) + r")\s*\(")
        text = others[path]
        if not pattern.search(text):
            continue
        try:
            records = read_cpp_registrations(path, text, macros)
        except CppReadError:
            continue  # a header opkit cannot tokenize: its functions stay unknown, never an error of the linted files
        found = {fn.short_name for fn in records.functions if fn.short_name in wanted}
        for fn in records.functions:
            if fn.short_name in found:
                index.setdefault(fn.short_name, []).append(fn)
        wanted -= found
    return index


_NAMESPACE_OPEN = re.compile(r"\bnamespace\s+([A-Za-z_][\w:]*)?\s*\{")


def find_definitions(path: str, text: str, name: str) -> list[CppFunction]:
    """The definitions (with bodies) of the functions called ``name`` in ``text``, found without reading the
    whole file: the file is lexed (comments and literals known, brackets matched) and only each definition's
    declaration is cut into tokens. Namespaces around it are kept in its name; [] for text that cannot be lexed."""
    from opkit.formats.cpp_text import CppText
    from opkit.formats.cpp_tokens import tokenize_span

    try:
        cpp = CppText(text)
    except CppTextError:
        return []
    code = cpp.code
    pattern = re.compile(r"\b" + re.escape(name) + r"\s*\(")
    found = []
    for m in pattern.finditer(code):
        try:
            close = cpp.closing(m.end() - 1)
        except (CppTextError, ValueError):
            continue
        tail = re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:->[^;{}]*)?\{", code[close + 1 : close + 256])
        if tail is None:
            continue
        brace = close + tail.end()
        try:
            end = cpp.closing(brace)
        except (CppTextError, ValueError):
            continue
        start = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1
        while True:  # past preprocessor lines between the previous statement and the declaration
            line_end = code.find("\n", start)
            if line_end < 0 or line_end > m.start() or not code[start:line_end].strip().startswith("#"):
                break
            start = line_end + 1
        try:
            tokens = [t for t in tokenize_span(text, start, brace + 1) if t.kind != "directive"]
        except CppTextError:
            continue
        namespaces = [
            (n.group(1) or "") for n in _NAMESPACE_OPEN.finditer(code, 0, m.start())
            if _encloses(cpp, n.end() - 1, m.start())
        ]
        reader = _Reader(path, tokens, {}, {})
        reader._function(0, len(tokens) - 1, namespaces, defined=False)
        for fn in reader.result.functions:
            if fn.short_name == name:
                found.append(CppFunction(fn.name, fn.parameters, fn.returns, path, fn.line, fn.column, True, (brace, end)))
    return found


def _encloses(cpp, brace: int, offset: int) -> bool:
    try:
        return cpp.closing(brace) > offset
    except (CppTextError, ValueError):
        return False


def resolve_kernel(functions: dict[str, list[CppFunction]], kernel: Kernel) -> CppFunction | None:
    """The function a kernel names (``functions``: ``function_index``'s), when the C++ read shows exactly
    one parameter list for it; the definition where there is one."""
    if kernel.signature is not None:
        return kernel.signature
    if kernel.kind != "function":
        return None
    short = kernel.name.rsplit("::", 1)[-1]
    candidates = functions.get(short, [])
    if "::" in kernel.name.lstrip(":"):  # a qualified name picks its namespace's function, never another's
        chosen = [f for f in candidates if f.name == kernel.name.lstrip(":") or f.name.endswith("::" + kernel.name) or kernel.name.endswith("::" + f.name)]
    else:
        chosen = candidates
    shapes = {tuple(p.type for p in f.parameters) + (f.returns,) for f in chosen}
    if len(shapes) != 1:
        return None  # unknown, or overloaded: which one the & picks is the compiler's business
    return next((f for f in chosen if f.defined), chosen[0])


def quoted_includes(starts: list[tuple[str, tuple[str, ...]]], texts: dict[str, str], depth: int = 3, by_path: dict[str, str] | None = None) -> list[str]:
    """The paths of ``texts`` that the files ``starts`` ((path, the names it includes by a quoted path)) include,
    and what those include, ``depth`` levels down, in the order found: each name resolved beside the including
    file, else under one of its parent directories (an -I root). ``by_path``: normpath → path of ``texts``, for
    a caller that asks many times."""
    import os

    if by_path is None:
        by_path = {os.path.normpath(path): path for path in texts}
    found: list[str] = []
    frontier = list(starts)
    seen = {os.path.normpath(path) for path, _ in starts}
    for _ in range(depth):
        following = []
        for path, includes in frontier:
            for name in includes:
                base = os.path.dirname(os.path.normpath(path))
                for _up in range(4):
                    candidate = os.path.normpath(os.path.join(base, name))
                    if candidate in by_path:
                        break
                    base = os.path.dirname(base)
                if candidate in by_path and candidate not in seen:
                    seen.add(candidate)
                    found.append(by_path[candidate])
                    following.append((candidate, tuple(_INCLUDE.findall(texts[by_path[candidate]]))))
        frontier = following
    return found


def included_in(path: str, texts: dict[str, str], depth: int = 3, by_path: dict[str, str] | None = None) -> list[str]:
    """``quoted_includes`` of the one file ``path`` of ``texts``."""
    return quoted_includes([(path, tuple(_INCLUDE.findall(texts[path])))], texts, depth, by_path)


# ------------------------------------------------------------------------------------------------
# For `opkit new --from`: a C++-defined op as a SourceOp, adopted like a yaml entry
# ------------------------------------------------------------------------------------------------

CPP_DEF_KIND = "C++ TORCH_LIBRARY def"


def read_cpp_def(path: str, text: str, op: str | None, read_text) -> SourceOp:
    """The def ``op`` names as a SourceOp: its schema (the namespace travels in ``entry``), no descriptors."""
    try:
        records = read_with_includes(path, text, read_text)
    except CppReadError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    try:
        chosen, notes = find_def(records, op)
    except ValueError as exc:
        raise AdoptError(str(exc), path=path, line=1) from None
    head, sep, rest = chosen.schema.strip().partition("(")
    schema = head.strip().rsplit("::", 1)[-1] + sep + rest
    skipped = tuple(Skipped(0, note) for note in notes)
    if chosen.block is not None and chosen.block.namespace_note:
        skipped += (Skipped(chosen.block.line, chosen.block.namespace_note),)
    return SourceOp(path=path, kind=CPP_DEF_KIND, op_type="", schema=schema, schema_line=chosen.line, skipped=skipped, line=chosen.line, entry=(("namespace", chosen.namespace),))
