"""Host C++ that launches Ascend C kernels with ``<<<blockDim, l2ctrl, stream>>>``, read into located records.

What the launch-mode rules (``opkit lint``, family K) judge, read from the code's tokens (comments are
gone, strings are single tokens), never from names: for each launch, the stream it is given and where
that stream came from (an ``NPUStream`` object, ``.stream(false)``, or ``.stream(true)``/``.stream()``,
which drain torch_npu's task queue first), whether it runs inside a lambda that
``OpCommand::RunOpApi*`` puts on that queue, and the work queued between a draining stream and an
unqueued launch; and, in functions that launch a kernel, host work that waits for the device (``.item()``,
``.cpu()``, stream synchronisation, reading device memory on the host).

For the kernel-effects model (``read_pointer_calls``), the pointers each launch passes, traced to the host
function's tensors; launches are ``k<<<...>>>(args)``, CANN's ``ACLRT_LAUNCH_KERNEL(k)(blockDim, stream,
args...)``, and a project's launch macro (``launch_macros``): a function-like ``#define`` whose body launches
the kernel one of its parameters names and forwards ``__VA_ARGS__`` to it, directly or through a conversion
(sgl-kernel-npu's ``EXEC_KERNEL_CMD(kernel, blockDim, args...)`` turns each tensor into its data pointer with
``ConvertTypes(__VA_ARGS__)`` and ``std::apply``).

Not a C++ front end: one function's statements are followed in text order, and a stream variable is
traced through its last assignment before the launch (one variable deep).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opkit.formats.files import InputError
from opkit.formats.noqa import NoqaMap

if TYPE_CHECKING:
    from opkit.formats.cpp_text import CppTextError
    from opkit.formats.cpp_tokens import Token

# Where a launch's stream comes from (StreamOrigin.kind).
MAX_LAUNCH_CONFIG_TOKENS = 512  # between '<<<' and '>>>'
NPU_STREAM = "npu_stream"  # the c10_npu::NPUStream object: <<<>>> drains the task queue before launching
NO_DRAIN = "acl_no_drain"  # .stream(false): the ACL stream, the queue left as it is
DRAINED = "acl_drained"  # .stream(true) or .stream(): the ACL stream, after the queue drained
UNKNOWN = "unknown"  # a parameter, a member, a call opkit does not follow

# CANN's ascendc build generates `#define ACLRT_LAUNCH_KERNEL(k) aclrtlaunch_##k`, a function taking
# (blockDim, stream, kernel arguments...): the header exists only after a build, so the name is known here.
ACLRT_LAUNCH = "ACLRT_LAUNCH_KERNEL"
QUEUE_CALLS = frozenset({"RunOpApi", "RunOpApiV2", "RunOpApiV3"})  # OpCommand's: run a callable on the task queue
# ATen functions that only allocate or describe: no work on the task queue.
_NOT_QUEUED = frozenset(
    """empty empty_like empty_strided empty_symint new_empty from_blob
    IntArrayRef SymIntArrayRef TensorOptions TensorList ArrayRef OptionalIntArrayRef device dtype
    scalarTypeToTypeMeta typeMetaToScalarType get_default_dtype globalContext""".split()
)
# Tensor methods that queue device work although their names do not end in '_'.
_QUEUED_METHODS = frozenset({"clone", "contiguous", "to", "copy", "fill", "zero"})
_CONTROL = frozenset({"if", "constexpr", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "static_assert", "new", "delete", "throw"})
_SYNCHRONIZE = frozenset({"aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice", "aclrtSynchronizeEvent", "npuSynchronizeDevice"})
_DATA_POINTERS = frozenset({"data_ptr", "const_data_ptr", "mutable_data_ptr"})


@dataclass(frozen=True)
class Located:
    line: int
    column: int
    text: str  # the code, as written (tokens joined)


@dataclass(frozen=True)
class StreamOrigin:
    kind: str  # NPU_STREAM, NO_DRAIN, DRAINED, UNKNOWN
    where: Located | None = None  # the expression that made it (None: the launch's own argument, or unknown)


@dataclass(frozen=True)
class Launch:
    """One ``kernel<<<blockDim, l2ctrl, stream>>>(args)``."""

    line: int
    column: int
    kernel: str
    function: str  # the enclosing function's name ('' at file scope)
    stream: str  # the stream argument as written ('' when none is given)
    origin: StreamOrigin
    queued: bool  # inside a lambda that OpCommand::RunOpApi* runs on the task queue
    queued_work: tuple[Located, ...] = ()  # work queued after a draining stream was taken, before this launch
    # offsets in the text: the kernel expression's first character, '<<<', and just after '>>>'
    span: tuple[int, int, int] = (0, 0, 0)
    config: str = ""  # between '<<<' and '>>>', as written


@dataclass(frozen=True)
class PointerSource:
    """Where a pointer passed to a launch or a call comes from, traced back through the host function."""

    kind: str  # "tensor": a tensor parameter's data pointer; "pointer": a pointer parameter itself; "local": a tensor made here
    parameter: int  # the enclosing function's parameter index ("tensor", "pointer"); -1 for "local"
    name: str  # the parameter's (or the local tensor's) name
    via: str  # the argument as written: "(uint8_t *)(x.mutable_data_ptr())", "xGm"


@dataclass(frozen=True)
class PointerCall:
    """A ``<<<>>>`` launch or a call of a named function, with what each argument points into."""

    callee: str  # the kernel or function as written, template arguments dropped
    function: str  # the enclosing function
    line: int
    column: int
    launch: bool
    arguments: tuple[str, ...]  # as written (a launch: the kernel's arguments, in order)
    sources: tuple[PointerSource | None, ...]  # None: not traced to a tensor or a pointer parameter
    form: str = ""  # a launch: how it is written ("k<<<>>>", "ACLRT_LAUNCH_KERNEL(k)", "EXEC_KERNEL_CMD(k, ...) (#define at f.h:120)")
    values: tuple[int | None, ...] = ()  # each argument's integer value where the function shows it (a literal, a variable set once)


@dataclass(frozen=True)
class LaunchMacro:
    """A function-like ``#define`` that launches the kernel its parameter ``kernel`` names, the kernel's
    arguments being the parameters ``leading`` then the variadic arguments, in order."""

    name: str
    kernel: int  # the parameter naming the kernel
    leading: tuple[int, ...]  # parameters passed to the kernel before the variadic arguments
    variadic: int  # the index of the first variadic argument at a use
    converted: bool  # __VA_ARGS__ reaches the launch through a conversion (a tensor becomes its data pointer)
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path.removeprefix('./')}:{self.line}"


@dataclass(frozen=True)
class HostFunction:
    """A host function's parameters and the pointer-carrying calls it makes."""

    name: str
    path: str
    line: int
    parameters: tuple[str, ...]
    calls: tuple[PointerCall, ...]


@dataclass(frozen=True)
class HostWait:
    """Host work inside a launching function that waits for the device, which capture cannot record."""

    line: int
    column: int
    kind: str  # item | cpu | synchronize | device_read
    text: str
    function: str


@dataclass(frozen=True)
class KernelLaunchFile:
    path: str
    launches: tuple[Launch, ...] = ()
    host_waits: tuple[HostWait, ...] = ()
    error: CppTextError | None = None  # text the C++ lexer cannot read
    noqa: NoqaMap | None = field(default=None, compare=False, repr=False)


@dataclass
class _Body:
    kind: str  # function | lambda | block
    name: str
    open: int  # token index of '{'
    close: int  # token index of the matching '}'
    start: int = 0  # lambdas: the token index of '['
    signature: str = ""  # functions: the tokens from the declaration's start to '{' (return type, parameters)
    parent: _Body | None = field(default=None, repr=False)

    def contains(self, index: int) -> bool:
        return self.open < index < self.close


def has_launches(text: str) -> bool:
    """Whether ``text`` may hold a ``<<<>>>`` launch (cheap: before tokenizing)."""
    return "<<<" in text


def read_kernel_launches(path: str, text: str, *, cache: dict | None = None) -> KernelLaunchFile:
    """``cache``: path → tokens, shared with the readers that follow the file again (``read_pointer_calls``)."""
    # only when a launcher is read: a yaml-only lint never loads the C++ lexer
    from opkit.formats.cpp_text import CppTextError
    from opkit.formats.cpp_tokens import tokenize

    try:
        tokens = cache.get(path) if cache is not None else None
        tokens = tokenize(text) if tokens is None else tokens
    except CppTextError as exc:
        return KernelLaunchFile(path, error=exc)
    if cache is not None:
        cache[path] = tokens
    return _Reader(path, [t for t in tokens if t.kind != "directive"]).read()


def read_pointer_calls(
    path: str, text: str, callees: frozenset[str] = frozenset(), *, cache: dict | None = None, macros: dict[str, LaunchMacro] | None = None,
    lambdas: frozenset[tuple[int, int]] = frozenset(),
) -> dict[str, HostFunction]:
    """The functions of ``text`` that launch a kernel or call one of ``callees`` (unqualified names), by
    unqualified name, each call's arguments traced to the tensors whose data pointers they pass; {} for text
    the lexer cannot read. ``cache``: path → tokens, shared by the readers of one run; ``macros``: the launch
    macros of the files read (``launch_macros``); ``lambdas``: (line, column) of the ``[`` of lambdas read as
    functions of their own (kernels registered by ``m.impl``), keyed ``lambda_key(line, column)``."""
    from opkit.formats.cpp_tokens import cached_tokens

    tokens = cached_tokens(path, text, cache)
    if tokens is None:
        return {}
    return _Reader(path, [t for t in tokens if t.kind != "directive"]).pointer_calls(callees, macros or {}, lambdas)


def lambda_key(line: int, column: int) -> str:
    """The name ``read_pointer_calls`` gives the lambda whose ``[`` is at ``line``:``column``."""
    return f"<lambda {line}:{column}>"


def has_launch_macros(text: str) -> bool:
    """Whether ``text`` may define a launch macro (cheap: before reading its #defines)."""
    return "__VA_ARGS__" in text and (ACLRT_LAUNCH in text or "<<<" in text)


def launch_macros(texts: dict[str, str]) -> dict[str, LaunchMacro]:
    """The launch macros the files define, by name: a function-like ``#define`` with a variadic parameter
    whose body launches ``ACLRT_LAUNCH_KERNEL(P)(blockDim, stream, args)`` or ``P<<<...>>>(args)``, with P one
    of its parameters and ``args`` its parameters and then ``__VA_ARGS__``, or a pack (``params...``) made from
    ``__VA_ARGS__`` passed whole to one call (``ConvertTypes(__VA_ARGS__)``). A macro defined twice in
    different shapes is left out (which one a file sees is the preprocessor's business)."""
    from opkit.formats.cpp_registrations import macro_definitions

    found: dict[str, LaunchMacro | None] = {}
    for path, text in texts.items():
        if not has_launch_macros(text):
            continue
        for macro in macro_definitions(path, text).values():
            if "__VA_ARGS__" not in macro.directive or (ACLRT_LAUNCH not in macro.directive and "<<<" not in macro.directive):
                continue
            read = _launch_macro(macro)
            if read is None:
                continue
            if macro.name in found and (found[macro.name] is None or found[macro.name][:5] != read[:5]):
                found[macro.name] = None
            else:
                found[macro.name] = read
    return {name: macro for name, macro in found.items() if macro is not None}


def _launch_macro(macro) -> LaunchMacro | None:
    from opkit.formats.cpp_registrations import _call_args

    params = macro.params
    if not params or params[-1] != "...":
        return None
    named = params[:-1]
    body = list(macro.body)
    sites = []
    for k, text in enumerate(body):
        if text == ACLRT_LAUNCH and body[k + 1 : k + 2] == ["("] and body[k + 2 : k + 3] and body[k + 2] in named and body[k + 3 : k + 5] == [")", "("]:
            sites.append((named.index(body[k + 2]), k + 4, 2))  # (blockDim, stream, kernel arguments...)
        elif text in named and body[k + 1 : k + 3] == ["<<", "<"]:
            close = next((m for m in range(k + 3, len(body) - 3) if body[m : m + 3] == [">", ">", ">"]), None)
            if close is not None and body[close + 3 : close + 4] == ["("]:
                sites.append((named.index(text), close + 3, 0))
    if len(sites) != 1:
        return None  # no launch, or several: which kernel gets what is not one answer
    kernel, opening, skipped = sites[0]
    args, end = _call_args(body, opening)
    if end is None or len(args) <= skipped:
        return None
    passed = args[skipped:]
    leading = []
    for arg in passed[:-1]:
        if len(arg) != 1 or arg[0] not in named:
            return None
        leading.append(named.index(arg[0]))
    last = passed[-1]
    if last == ["__VA_ARGS__"]:
        converted = False
    elif len(last) == 2 and last[1] == "..." and _converts_va_args(body):
        converted = True
    else:
        return None
    return LaunchMacro(macro.name, kernel, tuple(leading), len(named), converted, macro.path, macro.line)


def _converts_va_args(body: list[str]) -> bool:
    """``__VA_ARGS__`` appears once, as the whole argument list of one call: ``F(__VA_ARGS__)``."""
    uses = [k for k, text in enumerate(body) if text == "__VA_ARGS__"]
    return len(uses) == 1 and body[uses[0] - 1 : uses[0]] == ["("] and body[uses[0] + 1 : uses[0] + 2] == [")"] and uses[0] >= 2 and body[uses[0] - 2][:1].isalpha()


def load_kernel_launch_file(path: str, text: str, *, explicit: bool = True, cache: dict | None = None) -> KernelLaunchFile:
    """`opkit lint`'s loader: the launches of a host C++ file (``.asc``, or a ``.cpp`` with ``<<<``), with its
    ``// noqa`` comments; text the tokenizer cannot read is InputError E002 at its place."""
    read = read_kernel_launches(path, text, cache=cache)
    if read.error is not None:
        raise InputError("E002", f"cannot read the host C++: {read.error.message}", line=read.error.line, column=read.error.column)
    return KernelLaunchFile(path, read.launches, read.host_waits, noqa=NoqaMap.from_text(text, comment="//"))


def _allocates(expr: list[Token]) -> bool:
    """The expression makes a tensor of its own (``at::empty(...)``, ``OpPreparation::apply_tensor(...)``)."""
    return any(x.text in ("empty", "empty_like", "zeros", "zeros_like", "apply_tensor", "apply_tensor_without_format") for x in expr)


def _join(tokens: list[Token]) -> str:
    out = ""
    for prev, tok in zip([None, *tokens], tokens):
        if prev is not None and (prev.kind in ("ident", "number") and tok.kind in ("ident", "number")):
            out += " "
        out += tok.text
    return out


class _Reader:
    def __init__(self, path: str, tokens: list[Token]):
        self.path = path
        self.t = tokens
        self.match = self._matching()
        self.bodies = self._bodies()
        self._positions: dict[str, list[int]] | None = None
        self.roots: list[_Body] = []  # lambdas read as functions of their own (pointer_calls)

    # -- structure ---------------------------------------------------------------------------
    def _matching(self) -> dict[int, int]:
        pairs = {")": "(", "]": "[", "}": "{"}
        stack: list[int] = []
        match: dict[int, int] = {}
        for i, tok in enumerate(self.t):
            if tok.kind != "punct":
                continue
            if tok.text in "([{":
                stack.append(i)
            elif tok.text in pairs:
                while stack and self.t[stack[-1]].text != pairs[tok.text]:
                    stack.pop()  # an unbalanced bracket (inside a macro): skip it
                if stack:
                    j = stack.pop()
                    match[i], match[j] = j, i
        return match

    def _text(self, i: int) -> str:
        return self.t[i].text if 0 <= i < len(self.t) else ""

    def _named(self, name: str, before: int, low: int) -> list[int]:
        """The indexes of the tokens written ``name`` in (``low``, ``before``), last first: the backward scans
        look at these alone (an index of every token text, built on the first scan)."""
        if self._positions is None:
            self._positions = {}
            for i, tok in enumerate(self.t):
                self._positions.setdefault(tok.text, []).append(i)
        found = self._positions.get(name, [])
        return found[bisect.bisect_right(found, low) : bisect.bisect_left(found, before)][::-1]

    def _bodies(self) -> list[_Body]:
        bodies: list[_Body] = []
        open_stack: list[_Body] = []
        for i, tok in enumerate(self.t):
            if tok.kind != "punct":
                continue
            while open_stack and open_stack[-1].close < i:
                open_stack.pop()
            if tok.text != "{" or i not in self.match:
                continue
            body = self._classify(i)
            body.parent = open_stack[-1] if open_stack else None
            bodies.append(body)
            open_stack.append(body)
        return bodies

    def _classify(self, brace: int) -> _Body:
        close = self.match[brace]
        j = brace - 1
        steps = 0
        while j >= 0 and self._text(j) not in (")", "]", ";", "{", "}") and steps < 24:
            j -= 1
            steps += 1
        if self._text(j) == "]" and j in self.match:
            return _Body("lambda", "", brace, close, self.match[j])
        if self._text(j) == ")" and j in self.match:
            opening = self.match[j]
            before = opening - 1
            if self._text(before) == "]" and before in self.match:
                return _Body("lambda", "", brace, close, self.match[before])
            tok = self.t[before] if before >= 0 else None
            if tok is not None and tok.kind == "ident" and tok.text not in _CONTROL:
                k = before
                while k > 0 and self._text(k - 1) not in (";", "{", "}"):
                    k -= 1
                return _Body("function", tok.text, brace, close, signature=_join(self.t[k:brace]))
        return _Body("block", "", brace, close)

    def _innermost(self, index: int, kinds: tuple[str, ...]) -> _Body | None:
        found = None
        for body in self.bodies:
            if body.kind in kinds and body.contains(index) and (found is None or body.open > found.open):
                found = body
        return found

    def _enclosing_lambdas(self, index: int, function: _Body | None) -> list[_Body]:
        """The lambdas around token ``index``, innermost first, inside ``function`` (a launch in a lambda that a
        queued lambda calls, such as AT_DISPATCH_CASE's, is queued with it)."""
        low = function.open if function is not None else -1
        return sorted((b for b in self.bodies if b.kind == "lambda" and b.contains(index) and b.open > low), key=lambda b: -b.open)

    def _function_of(self, index: int) -> _Body | None:
        return self._innermost(index, ("function",))

    # -- launches ----------------------------------------------------------------------------
    def _launch_sites(self) -> list[tuple[int, int]]:
        """(index of '<<', index of the first '>' of '>>>') of each launch (cpp_tokens splits '<<<' as '<<' '<', '>>>' as '>' '>' '>')."""
        sites = []
        t = self.t
        for i in range(len(t) - 1):
            if t[i].text == "<<" and t[i + 1].text == "<" and t[i + 1].offset == t[i].offset + 2:
                depth = 0
                # a launch configuration is a few tokens: an unclosed '<<<' is given up on after this many,
                # so a run of them costs linear time, not a scan to the end of the file each
                for k in range(i + 2, min(len(t) - 1, i + 2 + MAX_LAUNCH_CONFIG_TOKENS)):
                    if t[k].text in "([{":
                        depth += 1
                    elif t[k].text in ")]}":
                        depth -= 1
                    elif depth == 0 and self._closes_launch(k):
                        sites.append((i, k))
                        break
                    if depth < 0 or t[k].text == ";" or (t[k].text == "<<" and t[k + 1].text == "<"):  # another launch starts
                        break
        return sites

    def _closes_launch(self, k: int) -> bool:
        t = self.t
        return k + 2 < len(t) and all(x.text == ">" for x in t[k : k + 3]) and t[k + 2].offset == t[k].offset + 2

    def _callee_start(self, i: int) -> int:
        """The first token of the kernel expression before '<<<' (``ns::kernel<T>``)."""
        j = i - 1
        if self._text(j) in (">", ">>"):
            depth = 0
            while j >= 0:
                text = self._text(j)
                depth += {">": 1, ">>": 2, "<": -1, "<<": -2}.get(text, 0)
                if depth <= 0:
                    break
                j -= 1
            j -= 1
        while j >= 0 and self.t[j].kind == "ident":
            if self._text(j - 1) == "::" and self.t[j - 2].kind == "ident":
                j -= 2
            else:
                break
        return j

    def _config(self, start: int, end: int) -> list[list[Token]]:
        """The launch configuration's arguments: tokens between '<<<' and '>>>' split at top-level commas."""
        args: list[list[Token]] = [[]]
        depth = 0
        for tok in self.t[start:end]:
            if tok.text in "([{":
                depth += 1
            elif tok.text in ")]}":
                depth -= 1
            if depth == 0 and tok.text == ",":
                args.append([])
            else:
                args[-1].append(tok)
        return args

    def _located(self, tokens: list[Token]) -> Located:
        return Located(tokens[0].line, tokens[0].column, _join(tokens))

    def _assignment(self, name: str, before: int, scope: _Body | None) -> list[Token] | None:
        """The expression last assigned to variable ``name`` before token ``before`` in ``scope``."""
        low = scope.open if scope is not None else -1
        for j in self._named(name, before, low):
            tok = self.t[j]
            if tok.kind == "ident" and tok.text == name and self._text(j + 1) in ("=", "{", "(") and self._is_declaration_or_assignment(j):
                opener = self._text(j + 1)
                if opener == "=":
                    end = j + 2
                    while end < len(self.t) and self._text(end) not in (";", ","):
                        end = self.match.get(end, end) + 1 if self._text(end) in "([{" else end + 1
                    return self.t[j + 2 : end]
                close = self.match.get(j + 1)
                if close is not None:
                    return self.t[j + 2 : close]
        return None

    def _is_declaration_or_assignment(self, j: int) -> bool:
        prev = self.t[j - 1] if j > 0 else None
        if prev is None:
            return True
        if self._text(j + 1) == "=":
            return prev.text not in (".", "->", "::")  # x = ..., auto x = ..., but not obj.x = ...
        return prev.kind == "ident" or prev.text in (">", "&", "*")  # Type x(...), Type x{...}

    def _origin(self, expr: list[Token], at: int, scope: _Body | None, depth: int = 0) -> StreamOrigin:
        texts = [t.text for t in expr]
        where = self._located(expr) if expr else None
        if "stream" in texts:
            k = len(texts) - 1 - texts[::-1].index("stream")
            if k > 0 and texts[k - 1] in (".", "->") and k + 1 < len(texts) and texts[k + 1] == "(":
                inner = [t for t in texts[k + 2 :] if t != ")"]
                base = expr[: k - 1]
                base_origin = self._origin(base, at, scope, depth + 1) if base else StreamOrigin(UNKNOWN)
                if base_origin.kind != NPU_STREAM:
                    return StreamOrigin(UNKNOWN, where)
                if inner[:1] == ["false"]:
                    return StreamOrigin(NO_DRAIN, where)
                if not inner or inner[:1] == ["true"]:
                    return StreamOrigin(DRAINED, where)
                return StreamOrigin(UNKNOWN, where)
        if any(t in ("getCurrentNPUStream", "getStreamFromPool", "getDefaultNPUStream") for t in texts):
            return StreamOrigin(NPU_STREAM, where)
        if len(expr) == 1 and expr[0].kind == "ident" and depth < 3:
            assigned = self._assignment(expr[0].text, at, scope)
            if assigned:
                return self._origin(assigned, at, scope, depth + 1)
            if self._declared_as_npu_stream(expr[0].text, at, scope):
                return StreamOrigin(NPU_STREAM, where)
        return StreamOrigin(UNKNOWN, where)

    def _declared_as_npu_stream(self, name: str, before: int, scope: _Body | None) -> bool:
        low = scope.open if scope is not None else -1
        for j in self._named(name, before, low):
            if self.t[j].text == name and self._text(j - 1) in ("NPUStream", "&") and "NPUStream" in (self._text(j - 1), self._text(j - 2), self._text(j - 3)):
                return True
        return False

    def _queued_lambda(self, lam: _Body, function: _Body | None) -> bool:
        """Whether lambda ``lam`` is handed to OpCommand::RunOpApi* (inline, or through the variable it initialises)."""
        start = lam.start
        # inline: RunOpApiV2("name", [=]() { ... })
        for j in range(start - 1, max(start - 64, -1), -1):
            if self._text(j) == "(" and self.match.get(j, -1) > lam.close:
                return self._text(j - 1) in QUEUE_CALLS
        # through a variable: auto launch = [=]() { ... }; RunOpApiV2("name", launch);
        if self._text(start - 1) == "=" and start >= 2 and self.t[start - 2].kind == "ident":
            variable = self.t[start - 2].text
            end = function.close if function is not None else len(self.t)
            for j in range(lam.close + 1, end):
                if self.t[j].kind == "ident" and self.t[j].text in QUEUE_CALLS and self._text(j + 1) == "(":
                    close = self.match.get(j + 1, j + 1)
                    if any(t.kind == "ident" and t.text == variable for t in self.t[j + 2 : close]):
                        return True
        return False

    def _queued_work(self, after: int, before: int, function: _Body | None) -> tuple[Located, ...]:
        """Calls between tokens ``after`` and ``before`` (outside lambdas) that put device work on the task queue."""
        found = []
        lambdas = [b for b in self.bodies if b.kind == "lambda"]
        j = after
        while j < before:
            inside = next((lam for lam in lambdas if lam.start <= j <= lam.close), None)
            if inside is not None:
                j = inside.close + 1
                continue
            tok = self.t[j]
            if tok.kind == "ident" and self._text(j + 1) == "(" and self._is_queued_call(j):
                close = self.match.get(j + 1, j + 1)
                first = j - 2 if self._text(j - 1) == "::" else j
                found.append(self._located(self.t[first : close + 1]))
                j = close + 1
                continue
            j += 1
        return tuple(found)

    def _is_queued_call(self, j: int) -> bool:
        name = self.t[j].text
        prev = self._text(j - 1)
        if prev == "::" and self._text(j - 2) in ("at", "torch"):
            return name[:1].islower() and name not in _NOT_QUEUED
        if prev in (".", "->"):
            return name in _QUEUED_METHODS or (name.endswith("_") and not name.startswith("_"))
        return False

    def read(self) -> KernelLaunchFile:
        launches = []
        launching_functions: set[int] = set()
        for lt, gt in self._launch_sites():
            start = self._callee_start(lt)
            kernel = _join(self.t[start:lt])
            function = self._function_of(lt)
            if function is not None:
                launching_functions.add(function.open)
            queued = any(self._queued_lambda(lam, function) for lam in self._enclosing_lambdas(lt, function))
            config = self._config(lt + 2, gt)
            stream_tokens = config[2] if len(config) >= 3 else []
            origin = self._origin(stream_tokens, lt, function) if stream_tokens else StreamOrigin(UNKNOWN)
            work: tuple[Located, ...] = ()
            if origin.kind == DRAINED and not queued and origin.where is not None:
                taken = self._index_of(origin.where)
                if taken is not None:
                    work = self._queued_work(taken, start, function)
            span = (self.t[start].offset, self.t[lt].offset, self.t[gt + 2].offset + 1)
            launches.append(
                Launch(
                    self.t[start].line, self.t[start].column, kernel, function.name if function else "", _join(stream_tokens), origin, queued, work,
                    span, ", ".join(_join(arg) for arg in config),
                )
            )  # fmt: skip
        waits = []
        for body in self.bodies:
            # a PyTorch op's host function (it takes or returns tensors) is what a graph captures; a test
            # program's main() may wait for the device as it likes
            if body.kind == "function" and body.open in launching_functions and "Tensor" in body.signature:
                waits += self._host_waits(body)
        return KernelLaunchFile(self.path, tuple(launches), tuple(sorted(waits, key=lambda w: (w.line, w.column))))

    def _index_of(self, where: Located) -> int | None:
        return next((i for i, t in enumerate(self.t) if t.line == where.line and t.column == where.column), None)

    # -- pointers passed to launches and calls ---------------------------------------------
    def pointer_calls(self, callees: frozenset[str], macros: dict[str, LaunchMacro], lambdas: frozenset[tuple[int, int]]) -> dict[str, HostFunction]:
        t = self.t
        found: dict[int, list[PointerCall]] = {}
        self.roots = [b for b in self.bodies if b.kind == "lambda" and (t[b.start].line, t[b.start].column) in lambdas] if lambdas else []
        for lt, gt in self._launch_sites():
            start = self._callee_start(lt)
            opening = gt + 3
            if self._text(opening) != "(" or opening not in self.match:
                continue
            kernel = _join(self.t[start:lt]).split("<", 1)[0]
            self._pointer_call(found, kernel, start, self._arguments(opening), launch=True, form=f"{kernel}<<<>>>")
        if callees or macros or ACLRT_LAUNCH in (tok.text for tok in t):
            for j, tok in enumerate(t):
                if tok.kind != "ident" or self._text(j + 1) != "(" or j + 1 not in self.match or self._text(j - 1) in (".", "->"):
                    continue
                if tok.text == ACLRT_LAUNCH:
                    self._aclrt_launch(found, j)
                elif tok.text in macros:
                    self._macro_launch(found, macros[tok.text], j)
                elif tok.text in callees and self._innermost(j, ("function",)) is not None and not self._is_declaration(j):
                    self._pointer_call(found, tok.text, j, self._arguments(j + 1), launch=False)
        result: dict[str, HostFunction] = {}
        for body in self.bodies:
            if body.open in found:
                name = lambda_key(t[body.start].line, t[body.start].column) if body.kind == "lambda" else body.name
                result.setdefault(name, HostFunction(name, self.path, t[body.open].line, self._parameter_names(body), tuple(found[body.open])))
        return result

    def _arguments(self, opening: int) -> list[list[Token]]:
        args = self._config(opening + 1, self.match[opening])
        return [] if args == [[]] else args

    def _aclrt_launch(self, found: dict[int, list[PointerCall]], j: int) -> None:
        """``ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, args...)``: a launch of ``k`` with ``args``."""
        close = self.match[j + 1]
        kernel = self.t[j + 2 : close]
        if len(kernel) != 1 or kernel[0].kind != "ident" or self._text(close + 1) != "(" or close + 1 not in self.match:
            return
        args = self._arguments(close + 1)
        if len(args) >= 2:
            self._pointer_call(found, kernel[0].text, j, args[2:], launch=True, form=f"{ACLRT_LAUNCH}({kernel[0].text})")

    def _macro_launch(self, found: dict[int, list[PointerCall]], macro: LaunchMacro, j: int) -> None:
        """A use of a launch macro: the kernel its argument names, given the arguments the macro passes it."""
        args = self._arguments(j + 1)
        if len(args) < macro.variadic or macro.kernel >= len(args):
            return
        kernel = args[macro.kernel]
        if len(kernel) != 1 or kernel[0].kind != "ident":
            return
        passed = [args[i] for i in macro.leading] + args[macro.variadic :]
        form = f"{macro.name}({kernel[0].text}, ...) (the launch in its #define, {macro.where})"
        self._pointer_call(found, kernel[0].text, j, passed, launch=True, form=form, tensors=macro.converted)

    def _is_declaration(self, j: int) -> bool:
        """``void f(int a);`` or ``extern void f(...)`` inside a body: a declaration, not a call."""
        prev = self.t[j - 1] if j > 0 else None
        return prev is not None and (prev.kind == "ident" and prev.text not in _CONTROL and prev.text not in ("else", "do")) and self._text(self.match[j + 1] + 1) != "."

    def _pointer_call(self, found: dict[int, list[PointerCall]], callee: str, start: int, args: list[list[Token]], *, launch: bool, form: str = "", tensors: bool = False) -> None:
        """``tensors``: the launch takes each tensor itself and passes its data pointer (a converting macro)."""
        function = self._caller(start)
        if function is None:
            return
        params = self._parameter_names(function)
        sources = tuple(self._source(arg, start, function, params, tensors) if arg else None for arg in args)
        values = tuple(self._integer(arg, function) for arg in args) if launch else ()
        tok = self.t[start]
        found.setdefault(function.open, []).append(
            PointerCall(callee.rsplit("::", 1)[-1], function.name, tok.line, tok.column, launch, tuple(_join(a) for a in args), sources, form, values)
        )

    def _integer(self, expr: list[Token], function: _Body, depth: int = 0) -> int | None:
        """An integer literal (``0``, ``1u``, ``true``), or a local variable of ``function`` set once, to one."""
        if len(expr) != 1:
            return None
        tok = expr[0]
        if tok.kind == "number":
            try:
                return int(tok.text.rstrip("uUlL"), 0)
            except ValueError:
                return None
        if tok.text in ("true", "false"):
            return int(tok.text == "true")
        if tok.kind != "ident" or depth > 0:
            return None
        sets = [j for j in self._named(tok.text, function.close, function.open)
                if self._text(j + 1) in ("=", "+=", "-=", "++", "--", "|=", "&=", "{", "(") or self._text(j - 1) in ("&", "++", "--")][::-1]  # fmt: skip
        # handed whole to a call besides the launch: a reference parameter may set it
        passed = [j for j in self._named(tok.text, function.close, function.open) if self._text(j - 1) in ("(", ",") and self._text(j + 1) in (",", ")")]
        if len(sets) != 1 or self._text(sets[0] + 1) != "=" or not self._is_declaration_or_assignment(sets[0]) or self.t[sets[0] - 1].kind != "ident" or len(passed) > 1:
            return None  # set more than once, through a reference, or not declared here with a value
        end = sets[0] + 2
        while end < function.close and self._text(end) != ";":
            end += 1
        return self._integer(self.t[sets[0] + 2 : end], function, depth + 1)

    def _caller(self, index: int) -> _Body | None:
        """The function a call at token ``index`` belongs to: a lambda read as a function of its own, else the
        enclosing function."""
        inside = [b for b in self.roots if b.contains(index)]
        return max(inside, key=lambda b: b.open) if inside else self._function_of(index)

    def _source(self, expr: list[Token], at: int, function: _Body, params: tuple[str, ...], tensors: bool) -> PointerSource | None:
        if tensors and len(expr) == 1 and expr[0].kind == "ident":
            found = self._tensor_source(expr[0].text, at, function, params, expr[0].text, 0)
            if found is not None:
                return found
        return self._pointer_source(expr, at, function, params, 0)

    def _parameter_names(self, function: _Body) -> tuple[str, ...]:
        j = function.open - 1
        while j > 0 and self._text(j) != ")" and self._text(j) not in (";", "}", "{"):
            j -= 1
        if self._text(j) != ")" or j not in self.match:
            return ()
        names = []
        for item in self._config(self.match[j] + 1, j):
            head = item[: next((k for k, x in enumerate(item) if x.text == "="), len(item))]
            idents = [x.text for x in head if x.kind == "ident"]
            names.append(idents[-1] if len(idents) >= 2 else "")
        return tuple(n for n in names) if any(names) else ()

    def _pointer_source(self, expr: list[Token], at: int, function: _Body, params: tuple[str, ...], depth: int) -> PointerSource | None:
        via = _join(expr)
        texts = [x.text for x in expr]
        for k, x in enumerate(expr):
            if x.kind != "ident":
                continue
            # x.data_ptr(), x->data_ptr() and an optional's (*x).data_ptr(), x.value().data_ptr()
            after = k + 1
            if texts[k - 1 : k] == ["*"] and texts[k - 2 : k - 1] == ["("] and texts[k + 1 : k + 2] == [")"]:
                after = k + 2
            elif texts[k + 1 : k + 5] == [".", "value", "(", ")"]:
                after = k + 5
            if after + 1 < len(expr) and texts[after] in (".", "->"):
                member = texts[after + 1]
                if member in _DATA_POINTERS or (member == "storage" and texts[after + 2 : after + 7] == ["(", ")", ".", "data", "("]):
                    return self._tensor_source(x.text, at, function, params, via, depth)
        names = self._value_names(expr)
        if len(names) != 1 or not names[0]:
            return None
        name = names[0]
        if name in params:
            return PointerSource("pointer", params.index(name), name, via)
        if depth < 3:
            assigned = self._assignment(name, at, function)
            if assigned and "?" in (x.text for x in assigned):  # c ? x : at::empty(...): x itself, where given
                found = self._conditional_source(assigned, at, function, params, via, depth + 1)
                if found is not None:
                    return PointerSource("pointer", found.parameter, found.name, via)
            if assigned:
                found = self._pointer_source(assigned, at, function, params, depth + 1)
                return PointerSource(found.kind, found.parameter, found.name, via) if found is not None else None
        return None

    def _tensor_source(self, name: str, at: int, function: _Body, params: tuple[str, ...], via: str, depth: int) -> PointerSource | None:
        if name in params:
            return PointerSource("tensor", params.index(name), name, via)
        if depth >= 3:
            return None
        assigned = self._assignment(name, at, function)
        if assigned and len(assigned) == 1 and assigned[0].kind == "ident":  # at::Tensor y_out = y;
            return self._tensor_source(assigned[0].text, at, function, params, via, depth + 1)
        if assigned and "?" in (x.text for x in assigned):
            return self._conditional_source(assigned, at, function, params, via, depth)
        if assigned and _allocates(assigned):
            return PointerSource("local", -1, name, via)
        if assigned and self._returns_fresh(assigned, depth):  # auto z = add_meta(x, y);
            return PointerSource("local", -1, name, via)
        return None

    def _returns_fresh(self, call: list[Token], depth: int) -> bool:
        """Whether ``call`` (``f(args)``, ``ns::f(args)``) calls the one function ``f`` of this file, every
        ``return`` of which returns a tensor it allocates: a new tensor, not memory of an argument."""
        k = 0
        while k + 1 < len(call) and call[k].kind == "ident" and call[k + 1].text == "::":
            k += 2
        if not (k + 1 < len(call) and call[k].kind == "ident" and call[k + 1].text == "(" and call[-1].text == ")"):
            return False
        defined = [b for b in self.bodies if b.kind == "function" and b.name == call[k].text]
        if len(defined) != 1:
            return False
        fn = defined[0]
        params = self._parameter_names(fn)
        returns = [j for j in range(fn.open + 1, fn.close) if self.t[j].text == "return" and self._innermost(j, ("function", "lambda")) is fn]
        for j in returns:
            end = j + 1
            while end < fn.close and self._text(end) != ";":
                end = self.match.get(end, end) + 1 if self._text(end) in "([{" else end + 1
            value = self.t[j + 1 : end]
            if len(value) != 1 or value[0].kind != "ident":
                return False
            found = self._tensor_source(value[0].text, j, fn, params, "", depth + 1)
            if found is None or found.kind != "local":
                return False
        return bool(returns)

    def _conditional_source(self, expr: list[Token], at: int, function: _Body, params: tuple[str, ...], via: str, depth: int) -> PointerSource | None:
        """``c ? x : at::empty(...)`` (``x.has_value() ? *x : ...``): argument ``x`` where it is given, else a
        tensor of the function's own, so what the kernel writes through it is a write of ``x``; None when
        both arms may be arguments, or an arm is not read."""
        marks = [k for k, x in enumerate(expr) if x.text in ("?", ":") and self._depth_in(expr, k) == 0]
        if [expr[k].text for k in marks] != ["?", ":"]:
            return None
        sources = []
        for arm in (expr[marks[0] + 1 : marks[1]], expr[marks[1] + 1 :]):
            texts = [x.text for x in arm]
            if texts[:1] == ["*"] or texts[-4:] == [".", "value", "(", ")"]:  # an optional's tensor
                arm = arm[1:] if texts[:1] == ["*"] else arm[:-4]
            if len(arm) == 1 and arm[0].kind == "ident":
                sources.append(self._tensor_source(arm[0].text, at, function, params, via, depth + 1))
            else:
                sources.append(PointerSource("local", -1, "", via) if arm and _allocates(arm) else None)
        tensors = [x for x in sources if x is not None and x.kind == "tensor"]
        if None in sources or len(tensors) != 1:
            return None
        return PointerSource("tensor", tensors[0].parameter, tensors[0].name, via)

    @staticmethod
    def _depth_in(expr: list[Token], index: int) -> int:
        depth = 0
        for x in expr[:index]:
            depth += 1 if x.text in "([{" else -1 if x.text in ")]}" else 0
        return depth

    def _value_names(self, expr: list[Token]) -> list[str]:
        """The variables an expression reads, casts left out: ``(GM_ADDR)x``, ``static_cast<uint8_t *>(p)``."""
        names, k = [], 0
        while k < len(expr):
            x = expr[k]
            if x.text in ("static_cast", "reinterpret_cast", "const_cast") and k + 1 < len(expr) and expr[k + 1].text == "<":
                while k < len(expr) and expr[k].text not in (">", ">>"):
                    k += 1
                k += 1
                continue
            if x.text == "(":
                end = next((m for m in range(k + 1, len(expr)) if expr[m].text == ")"), None)
                inside = expr[k + 1 : end] if end is not None else []
                if end is not None and end + 1 < len(expr) and inside and all(y.kind == "ident" or y.text in ("*", "::", "&") for y in inside):
                    k = end + 1  # a C cast: (uint8_t *)x, (GM_ADDR)x
                    continue
            if x.kind == "ident" and (k == 0 or expr[k - 1].text not in (".", "->", "::")):
                # x.size(0), f(x), ns::x: not the pointer itself
                names.append(x.text if k + 1 >= len(expr) or expr[k + 1].text not in ("::", "(", ".", "->") else "")
            k += 1
        return names

    # -- host waits --------------------------------------------------------------------------
    def _host_waits(self, function: _Body) -> list[HostWait]:
        waits = []
        t = self.t
        for j in range(function.open + 1, function.close):
            tok = t[j]
            if tok.kind != "ident":
                continue
            prev, nxt = self._text(j - 1), self._text(j + 1)
            kind = None
            end = j
            if prev in (".", "->") and tok.text == "item" and nxt in ("(", "<"):
                kind = "item"
            elif prev in (".", "->") and tok.text == "cpu" and nxt == "(":
                kind = "cpu"
            elif prev in (".", "->") and tok.text == "to" and nxt == "(":
                args = t[j + 2 : self.match.get(j + 1, j + 1)]
                if any(a.text in ("kCPU", "CPU") or (a.kind == "string" and a.value == "cpu") for a in args):
                    kind = "cpu"
            elif tok.text in _SYNCHRONIZE and nxt == "(":
                kind = "synchronize"
            elif prev in (".", "->") and tok.text == "synchronize" and nxt == "(":
                kind = "synchronize"
            elif tok.text in ("aclrtMemcpy", "aclrtMemcpyAsync") and nxt == "(":
                args = t[j + 2 : self.match.get(j + 1, j + 1)]
                if any(a.text == "ACL_MEMCPY_DEVICE_TO_HOST" for a in args):
                    kind = "device_read"
            elif tok.text in _DATA_POINTERS and prev in (".", "->"):
                kind, end = self._dereferenced_pointer(j)
            if kind is None:
                continue
            call = self._call_open(j)
            close = self.match.get(call, j) if call is not None else j
            first = self._expression_start(j)
            waits.append(HostWait(t[first].line, t[first].column, kind, _join(t[first : max(close, end) + 1]), function.name))
        return waits

    def _call_open(self, j: int) -> int | None:
        """The '(' calling the name at token ``j``, past template arguments (``item<float>()``)."""
        k = j + 1
        if self._text(k) == "<":
            while k < len(self.t) and self._text(k) not in (">", ";", "{"):
                k += 1
            k += 1
        return k if self._text(k) == "(" and k in self.match else None

    def _dereferenced_pointer(self, j: int) -> tuple[str | None, int]:
        """``x.data_ptr<float>()[0]`` or ``*x.data_ptr<float>()``: a host read of the tensor's device memory."""
        k = self._call_open(j)
        if k is None:
            return None, j
        close = self.match[k]
        if self._text(close + 1) == "[":
            return "device_read", self.match.get(close + 1, close + 1)
        first = self._expression_start(j)
        if self._text(first - 1) == "*" and (first - 2 < 0 or self._text(first - 2) in ("=", "(", ",", "return", ";", "{", "+", "-", "*", "/", "<", ">", "==", "!=")):
            return "device_read", close
        return None, j

    def _expression_start(self, j: int) -> int:
        """The first token of ``obj.member`` chains ending at token ``j`` (``x.data_ptr``, ``at::foo``)."""
        k = j
        while k >= 2 and self._text(k - 1) in (".", "->", "::") and self.t[k - 2].kind in ("ident",) or (k >= 2 and self._text(k - 1) in (".", "->") and self._text(k - 2) in (")", "]")):
            if self._text(k - 2) in (")", "]"):
                opening = self.match.get(k - 2)
                if opening is None:
                    break
                k = opening - 1 if opening > 0 and self.t[opening - 1].kind == "ident" else opening
            else:
                k -= 2
        return k
