"""Ascend C device code (``__global__ __aicore__`` kernels in ``.asc``, op_kernel ``.cpp`` and the headers they
include), read for one fact per global-memory parameter: does the kernel write it?

A kernel writes a parameter (``GM_ADDR y``, ``__gm__ uint8_t *y``) when the memory it points to is the
destination of a copy out of local memory: ``yGm.SetGlobalBuffer((__gm__ T *)y, n)`` then
``DataCopy(yGm[i], local, n)`` / ``DataCopyPad(yGm[i], local, params)``, ``yGm.SetValue(i, v)``, pto's
``TSTORE(yGlobal, tile)`` on a ``GlobalTensor yGlobal(y + offset)`` / ``TASSIGN(yGlobal, y)``, or a raw store
``y[i] = v`` or ``y->field = v``; ``Fixpipe(yGm, l0c, ...)`` out of the cube unit. The pointer is followed
through what real kernels do with it: casts and offsets, local copies, calls of the file's functions (a kernel
class's ``Init`` that stores it in a member, the ``Process``/``CopyOut`` methods that copy into that member), each
call followed by position, ``MAX_DEPTH`` calls deep; a copy functor called through a ``using`` alias (its
constructor; a class template's explicit specializations rather than its empty primary template); a helper
that returns memory reached from the pointer (a ``Tensor[]``'s item address), followed where its call goes.
A value read out of the memory (``n = tiling->rows``) or used as an index (``gm[off]``) is a read.

Each answer is ``yes`` (with every place that writes), ``no`` (every use was read and none writes) or
``unknown`` (it reaches code this reader does not follow: a function not in the files read, a method it does
not know), never a guess. Not a C++ front end: names are resolved within the files given (the launching file
and what it includes), a class's members by name within its methods.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from opkit.formats.cpp_text import CppTextError
from opkit.formats.cpp_tokens import Token, cached_tokens, tokenize
from opkit.formats.kernel_launches import _join, _Reader

YES, NO, UNKNOWN = "yes", "no", "unknown"
MAX_DEPTH = 8  # calls followed from a kernel's body
_EVIDENCE_KEPT = 3

# Copies whose first argument is the destination in global memory (Fixpipe: out of the cube unit's L0C;
# copy_ubuf_to_gm*, copy_matrix_cc_to_gm: the CCE intrinsics under them).
_COPIES_OUT = frozenset({"DataCopy", "DataCopyPad", "DataCopyUB2GM", "TSTORE", "InitGlobalMemory", "InitOutput", "Fill", "Fixpipe", "copy_matrix_cc_to_gm"})
_COPY_OUT_PREFIXES = ("copy_ubuf_to_gm",)
_WRITING_METHODS = frozenset({"SetValue"})
# Methods of a GlobalTensor that only read it or describe it.
_READING_METHODS = frozenset({"GetValue", "GetSize", "SetL2CacheHint", "GetShapeInfo", "SetShapeInfo", "operator"})
# Calls that take a GM tensor or pointer and never write through it.
_READING_CALLS = frozenset({"DataCacheCleanAndInvalid", "TLOAD", "sizeof", "decltype", "static_assert", "assert", "ASSERT", "printf", "PRINTF"})
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})
_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "else", "do", "case", "new", "delete", "throw"})
_ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "<<=", ">>=", "++", "--"})
_GM_PARAMETER = re.compile(r"\bGM_ADDR\b|\b__gm__\b")


@dataclass(frozen=True)
class Write:
    """Where device code writes global memory bound to a parameter, and how."""

    path: str
    line: int
    column: int
    why: str  # "DataCopy(yGm[...], ...) in KernelAdd::CopyOut, yGm bound to y by SetGlobalBuffer (line 30)"


@dataclass(frozen=True)
class KernelParameter:
    name: str
    index: int  # position among the kernel's parameters
    type: str  # as written: "GM_ADDR", "__gm__ uint8_t *"
    written: str  # YES, NO, UNKNOWN
    writes: tuple[Write, ...] = ()
    unknown_because: str = ""

    @property
    def global_memory(self) -> bool:
        """A pointer into global memory (``GM_ADDR``, ``__gm__ T *``): a tensor's data, a workspace, tiling."""
        return bool(_GM_PARAMETER.search(self.type))


@dataclass(frozen=True)
class DeviceKernel:
    """One ``__global__`` kernel and what it does with each global-memory parameter."""

    name: str
    path: str
    line: int
    column: int
    parameters: tuple[KernelParameter, ...]  # every parameter, in order; scalars have written NO

    def parameter(self, index: int) -> KernelParameter | None:
        return self.parameters[index] if 0 <= index < len(self.parameters) else None


def has_device_kernels(text: str) -> bool:
    """Whether ``text`` may define an Ascend C kernel (cheap: before tokenizing)."""
    return "__global__" in text


@dataclass
class _Function:
    file: _File
    name: str
    klass: str  # the class it is a method of ('' for a free function)
    params: list[tuple[str, str]]  # (name, type as written)
    open: int  # token index of '{'
    close: int
    line: int
    column: int
    is_kernel: bool
    specialized: bool = False  # a method of an explicit specialization (``struct K<half> {...}``)

    @property
    def empty(self) -> bool:
        return self.close == self.open + 1


@dataclass
class _File:
    path: str
    reader: _Reader
    paren: list[int] = field(default_factory=list)  # token index → its innermost enclosing '(' (-1: none)


class DeviceCode:
    """The device code of some files, read together: kernels by name, and each one's parameter writes."""

    def __init__(self, texts: dict[str, str], *, cache: dict | None = None, parts: dict | None = None):
        """``cache``: path → tokens; ``parts``: path → that file's structure (functions, classes, macros), read
        once however many groups of files include it."""
        self.files: list[_File] = []
        self.functions: dict[str, list[_Function]] = {}
        self.class_members: dict[str, set[str]] = {}
        self.class_bases: dict[str, set[str]] = {}  # class → the classes it derives from (by name)
        self.errors: dict[str, str] = {}  # path → why it was not read
        self.macros: dict[str, frozenset[str]] = {}  # #define NAME → the words of its parameters and body
        self.aliases: dict[str, str] = {}  # ``using CopyOut = l0c_to_gm<...>;`` → "l0c_to_gm"
        self.class_names: dict[str, str] = {}  # an object-like #define → the first name of its body
        self._macro_words: dict[int, dict[str, str]] = {}
        for path, text in texts.items():
            if parts is None:
                self._read(path, text, cache)
                continue
            if path not in parts:
                parts[path] = DeviceCode({path: text}, cache=cache)
            self._add(parts[path])
        # methods defined outside their class through a macro naming it (`#define KERNEL_CLASS Kernel<T, N>`,
        # `KERNEL_CLASS::Process()`): the class the macro names
        for fns in self.functions.values():
            for fn in fns:
                if fn.klass in self.class_names and fn.klass not in self.class_members:
                    fn.klass = self.class_names[fn.klass]
        self._memo: dict[tuple[int, int], tuple[str, tuple[Write, ...], str]] = {}
        self._returned: dict[tuple[int, int], bool] = {}
        self.texts = texts
        self._constants: dict[str, object] = {}
        self._dead: frozenset[int] = frozenset()  # functions the launch being read never reaches (kernel(values=))
        self._member_memo: dict[tuple[str, str], tuple[str, tuple[Write, ...], str]] = {}

    # -- structure -------------------------------------------------------------------------------
    def _read(self, path: str, text: str, cache: dict | None) -> None:
        every = cached_tokens(path, text, cache)
        if every is None:
            self.errors[path] = "the C++ lexer cannot read it"
            return
        tokens = [t for t in every if t.kind != "directive"]
        for tok in every:
            m = _ANY_DEFINE.match(tok.text) if tok.kind == "directive" else None
            if m:
                self.macros[m.group(1)] = frozenset(re.findall(r"[A-Za-z_]\w*", m.group(2)))
                named = re.match(r"\s+([A-Za-z_]\w*)", m.group(2))
                if named and not m.group(2).startswith("("):
                    self.class_names[m.group(1)] = named.group(1)
        self._index(_File(path, _Reader(path, tokens)))
        for expansion in _macro_kernels([t for t in every if t.kind == "directive"], tokens):
            self._index(_File(path, _Reader(path, expansion)))

    def _add(self, part: DeviceCode) -> None:
        """One file's structure (read alone) joined to the group's."""
        self.files += part.files
        for name, fns in part.functions.items():
            self.functions.setdefault(name, []).extend(fns)
        for table, mine in ((part.class_members, self.class_members), (part.class_bases, self.class_bases)):
            for name, names in table.items():
                mine.setdefault(name, set()).update(names)
        self.errors.update(part.errors)
        self.macros.update(part.macros)
        self.class_names.update(part.class_names)
        for name, target in part.aliases.items():
            self.aliases.setdefault(name, target)

    def _index(self, file: _File) -> None:
        self.files.append(file)
        r, t = file.reader, file.reader.t
        stack, paren = [], [-1] * len(t)
        for i, tok in enumerate(t):
            paren[i] = stack[-1] if stack else -1
            if tok.text == "(":
                stack.append(i)
            elif tok.text == ")" and stack:
                stack.pop()
        file.paren = paren
        classes = self._classes(r)
        self._aliases(r)
        for body in r.bodies:
            if body.kind != "function":
                continue
            close_paren = self._parameter_close(r, body.open)
            if close_paren is None:
                continue
            opening = r.match[close_paren]
            params = self._parameters(r, opening, close_paren)
            klass = ""
            if r._text(opening - 2) == "::":
                k = opening - 3
                if r._text(k) == ">":  # Kernel<T>::Init
                    k = self._template_start(r, k) - 1
                klass = r._text(k)
            specialized = False
            if not klass:
                inside = [c for c in classes if c[1] < body.open < c[2]]
                if inside:
                    klass, _, _, specialized = max(inside, key=lambda c: c[1])
            start = opening - 1
            is_kernel = any(t[k].text == "__global__" for k in range(max(0, start - 12), start))
            fn = _Function(file, t[opening - 1].text, klass, params, body.open, body.close, t[opening - 1].line, t[opening - 1].column, is_kernel, specialized)
            self.functions.setdefault(fn.name, []).append(fn)
        for name, start, end, _ in classes:
            members = self.class_members.setdefault(name, set())
            self.class_bases.setdefault(name, set()).update(self._bases(r, start))
            depth_bodies = [b for b in r.bodies if b.kind == "function" and start < b.open < end]
            k = start + 1
            while k < end:
                inner = next((b for b in depth_bodies if b.open == k), None)
                if inner is not None:
                    k = inner.close + 1
                    continue
                if t[k].kind == "ident" and r._text(k + 1) in (";", ",", "=", "{", "[") and r._text(k - 1) not in (".", "->", "::"):
                    members.add(t[k].text)
                k += 1

    @staticmethod
    def _classes(r: _Reader) -> list[tuple[str, int, int, bool]]:
        """(name, '{', '}', whether it is an explicit specialization ``struct K<half, float> {``) of each class."""
        found = []
        t = r.t
        for i, tok in enumerate(t):
            if tok.text in ("class", "struct") and i + 1 < len(t) and t[i + 1].kind == "ident" and r._text(i - 1) != "enum":
                k = i + 2
                while k < len(t) and t[k].text not in ("{", ";", "(", ")") and k < i + 40:
                    k += 1
                if k < len(t) and t[k].text == "{" and k in r.match:
                    found.append((t[i + 1].text, k, r.match[k], r._text(i + 2) == "<"))
        return found

    def _aliases(self, r: _Reader) -> None:
        """``using Name = [typename] ns::Target<...>;``: a call of ``Name(...)`` constructs a ``Target``."""
        t = r.t
        for i, tok in enumerate(t):
            if tok.text == "using" and r._text(i + 2) == "=" and t[i + 1].kind == "ident":
                k = i + 3
                target = ""
                while k < len(t) and k < i + 12 and t[k].text not in ("<", ";", "("):
                    if t[k].kind == "ident" and t[k].text != "typename":
                        target = t[k].text
                    k += 1
                if target and target != t[i + 1].text:
                    self.aliases.setdefault(t[i + 1].text, target)

    @staticmethod
    def _bases(r: _Reader, brace: int) -> list[str]:
        """The base classes named between a class's name and its ``{``: ``: public Base<T, N>, Other``."""
        k = brace - 1
        while k > 0 and r._text(k) not in ("class", "struct", ";", "}"):
            k -= 1
        names, depth, colon = [], 0, False
        for j in range(k + 2, brace):
            text = r._text(j)
            depth += {"<": 1, ">": -1, ">>": -2}.get(text, 0)
            if depth == 0 and text == ":":
                colon = True
            elif colon and depth == 0 and r.t[j].kind == "ident" and text not in ("public", "protected", "private", "virtual"):
                if r._text(j + 1) != "::":
                    names.append(text)
        return names

    def lineage(self, klass: str) -> list[str]:
        """``klass`` and the classes it derives from, nearest first."""
        found, frontier = [klass], [klass]
        while frontier:
            frontier = [b for c in frontier for b in sorted(self.class_bases.get(c, ())) if b not in found]
            found += frontier
        return found

    def family(self, klass: str) -> set[str]:
        """The classes whose methods may run on an object whose ``klass`` part binds a member: ``klass``, its
        bases, and the classes derived from it."""
        found = set(self.lineage(klass))
        changed = True
        while changed:
            derived = {c for c, bases in self.class_bases.items() if bases & found and c not in found and klass in self.lineage(c)}
            changed = bool(derived)
            found |= derived
        return found

    @staticmethod
    def _template_start(r: _Reader, k: int) -> int:
        depth = 0
        while k >= 0:
            depth += {">": 1, ">>": 2, "<": -1}.get(r._text(k), 0)
            if depth <= 0:
                return k
            k -= 1
        return 0

    @staticmethod
    def _parameter_close(r: _Reader, brace: int) -> int | None:
        for j in range(brace - 1, max(brace - 16, -1), -1):
            if r._text(j) == ")" and j in r.match:
                return j
            if r._text(j) in (";", "}", "{"):
                return None
        return None

    @staticmethod
    def _parameters(r: _Reader, opening: int, close: int) -> list[tuple[str, str]]:
        params: list[tuple[str, str]] = []
        item: list[Token] = []
        depth = 0
        for tok in r.t[opening + 1 : close + 1]:
            if tok.text in "([{" or tok.text == "<":
                depth += 1
            elif tok.text in ")]}" or tok.text == ">":
                depth -= 1
            if (depth == 0 and tok.text == ",") or depth < 0:
                if item:
                    before = item[: next((i for i, x in enumerate(item) if x.text == "="), len(item))]
                    names = [x for x in before if x.kind == "ident"]
                    name = names[-1].text if len(names) >= 2 else ""
                    params.append((name, _join(before[:-1] if name else before)))
                item = []
            else:
                item.append(tok)
        return params

    # -- kernels ---------------------------------------------------------------------------------
    def kernel_names(self) -> list[str]:
        return sorted({name for name, fns in self.functions.items() if any(f.is_kernel for f in fns)})

    def kernel(self, name: str, values: dict[int, int] | None = None) -> DeviceKernel | None:
        """The ``__global__`` kernel ``name`` (unqualified; template arguments dropped) and its parameters'
        writes; None when the files define no such kernel, or more than one. ``values``: scalar parameters'
        values the launch gives (by index): the arms of a ``switch`` or ``if (p == C)`` on one of them that
        this launch never takes are not read (a kernel whose mode argument picks what it writes)."""
        short = name.split("<", 1)[0].rsplit("::", 1)[-1].strip()
        found = [f for f in self.functions.get(short, []) if f.is_kernel]
        if len(found) != 1:
            return None
        fn = found[0]
        given = {fn.params[i][0]: v for i, v in (values or {}).items() if i < len(fn.params) and fn.params[i][0] and not _GM_PARAMETER.search(fn.params[i][1])}
        dead = self._dead_arms(fn, given) if given else ()
        if dead:  # what this launch runs differs from what the kernel may run: answers of their own
            saved = self._memo, self._member_memo, self._dead
            self._memo, self._member_memo, self._dead = {}, {}, self._unreached(fn, dead)
            try:
                return self._kernel(fn, dead)
            finally:
                self._memo, self._member_memo, self._dead = saved
        return self._kernel(fn, ())

    def _kernel(self, fn: _Function, dead: tuple[tuple[int, int], ...]) -> DeviceKernel:
        parameters = []
        empty = fn.empty  # a skeleton's kernel: what it will write is not written yet
        for index, (pname, ptype) in enumerate(fn.params):
            if not _GM_PARAMETER.search(ptype) or not pname:
                parameters.append(KernelParameter(pname, index, ptype, NO))
                continue
            if empty:
                parameters.append(KernelParameter(pname, index, ptype, UNKNOWN, unknown_because=f"the body of {fn.name} is empty (a skeleton)"))
                continue
            state, writes, because = _Scan(self, fn, 0, dead=dead).run({pname}) if dead else self._writes(fn, index, 0)
            parameters.append(KernelParameter(pname, index, ptype, state, writes, because))
        return DeviceKernel(fn.name, fn.file.path, fn.line, fn.column, tuple(parameters))

    def _dead_arms(self, fn: _Function, values: dict[str, int]) -> tuple[tuple[int, int], ...]:
        """Token ranges of ``fn`` that ``values`` of its parameters never run: the other arms of
        ``switch (p) { case C: ... break; }`` and of ``if (p == C) ... else ...`` (``!=`` too). A label or
        constant that cannot be evaluated leaves that statement whole."""
        r, t = fn.file.reader, fn.file.reader.t
        dead: list[tuple[int, int]] = []
        for k in range(fn.open + 1, fn.close):
            if t[k].text not in ("switch", "if") or r._text(k + 1) != "(" or k + 1 not in r.match:
                continue
            close = r.match[k + 1]
            condition = t[k + 2 : close]
            if t[k].text == "switch":
                if len(condition) == 1 and condition[0].text in values and r._text(close + 1) == "{" and close + 1 in r.match:
                    dead += self._dead_cases(fn, close + 1, values[condition[0].text])
                continue
            texts = [x.text for x in condition]
            operator = next((op for op in ("==", "!=") if texts.count(op) == 1), None)
            if operator is None:
                continue
            left, right = condition[: texts.index(operator)], condition[texts.index(operator) + 1 :]
            if len(right) == 1 and right[0].text in values:
                left, right = right, left
            if len(left) != 1 or left[0].text not in values or not right:
                continue
            label = self._constant(fn, right)
            if label is None:
                continue
            then_end = _statement_end(r, close + 1)
            taken = (values[left[0].text] == label) == (operator == "==")
            if not taken:
                dead.append((close + 1, then_end + 1))
            elif r._text(then_end + 1) == "else":
                dead.append((then_end + 1, _statement_end(r, then_end + 2) + 1))
        return tuple(dead)

    def _unreached(self, kernel: _Function, dead: tuple[tuple[int, int], ...]) -> frozenset[int]:
        """The functions (by id) the kernel's code outside ``dead`` never reaches, by the names it calls (and
        the classes it names, for their constructors), followed through what those call: a method only the
        untaken arm calls (its writes to a member are not this launch's)."""
        def named(fn: _Function, skip=()) -> set[str]:
            r, t = fn.file.reader, fn.file.reader.t
            return {t[k].text for k in range(fn.open + 1, fn.close) if t[k].kind == "ident" and not any(a <= k < b for a, b in skip)
                    and (r._text(k + 1) in ("(", "<") or t[k].text in self.class_members)}  # fmt: skip

        names = named(kernel, dead)
        reached: set[int] = {id(kernel)}
        frontier = True
        while frontier:
            frontier = False
            for fns in self.functions.values():
                for fn in fns:
                    if id(fn) in reached:
                        continue
                    # operators and constructors run without their names being called
                    if fn.name in names or fn.name == fn.klass or not fn.name.isidentifier() or fn.name == "operator":
                        reached.add(id(fn))
                        names |= named(fn)
                        frontier = True
        return frozenset(id(fn) for fns in self.functions.values() for fn in fns if id(fn) not in reached)

    def _dead_cases(self, fn: _Function, brace: int, value: int) -> list[tuple[int, int]]:
        r, t = fn.file.reader, fn.file.reader.t
        end = r.match[brace]
        arms: list[tuple[int | None, int, int]] = []  # (label value, None for default; label start; body start)
        k = brace + 1
        while k < end:
            if t[k].text in ("(", "[", "{") and k in r.match:
                k = r.match[k] + 1
                continue
            if t[k].text in ("case", "default"):
                colon = next((m for m in range(k + 1, end) if t[m].text == ":"), None)
                if colon is None:
                    return []
                if t[k].text == "default":
                    label = None
                else:
                    label = self._constant(fn, t[k + 1 : colon])
                    if label is None:
                        return []  # a label opkit cannot evaluate: every arm may run
                arms.append((label, k, colon + 1))
                k = colon + 1
                continue
            k += 1
        if not arms:
            return []
        bounds = [(label, start, body, arms[n + 1][1] if n + 1 < len(arms) else end) for n, (label, start, body) in enumerate(arms)]
        first = next((n for n, b in enumerate(bounds) if b[0] == value), None)
        if first is None:
            first = next((n for n, b in enumerate(bounds) if b[0] is None), None)
        live = set()
        n = first
        while n is not None and n < len(bounds):
            live.add(n)
            label, start, body, stop = bounds[n]
            if _ends_arm(t, body, stop):
                break
            n += 1  # falls through to the next arm
        return [(start, stop) for n, (label, start, body, stop) in enumerate(bounds) if n not in live]

    def _constant(self, fn: _Function, tokens: list[Token]) -> int | None:
        from opkit.formats.cpp_constants import CppConstants, Unreadable
        from opkit.formats.cpp_text import CppText

        path = fn.file.path
        if path not in self._constants:
            self._constants[path] = CppConstants(CppText(self.texts[path])) if path in self.texts else None
        constants = self._constants[path]
        if constants is None or not tokens:
            return None
        try:
            value = constants.value(_join(tokens), tokens[0].offset)
        except (Unreadable, ValueError, ArithmeticError):
            return None
        return int(value) if isinstance(value, (int, bool)) else None

    # -- analysis --------------------------------------------------------------------------------
    def _writes(self, fn: _Function, index: int, depth: int) -> tuple[str, tuple[Write, ...], str]:
        key = (id(fn), index)
        if key in self._memo:
            return self._memo[key]
        if depth > MAX_DEPTH:
            return UNKNOWN, (), f"calls nested deeper than {MAX_DEPTH}"
        self._memo[key] = (UNKNOWN, (), f"{fn.name} calls itself")
        if index < len(fn.params) and not fn.params[index][0]:
            result = (NO, (), "")  # an unnamed parameter: the body cannot name it
        elif index < len(fn.params):
            scan = _Scan(self, fn, depth, returns_to_caller=True)
            result = scan.run({fn.params[index][0]})
            self._returned[key] = scan.returned
        else:
            result = (UNKNOWN, (), "no such parameter")
        self._memo[key] = result
        return result

    def returns_memory(self, fn: _Function, index: int) -> bool:
        """Whether ``fn`` returns its parameter ``index`` or memory reached from it (``GetTensorAddr(i, list)``
        returning a pointer the list holds): its call is then that memory (read after ``_writes``)."""
        return self._returned.get((id(fn), index), False)

    def _member_writes(self, klass: str, member: str, depth: int) -> tuple[str, tuple[Write, ...], str]:
        key = (klass, member)
        if key in self._member_memo:
            return self._member_memo[key]
        self._member_memo[key] = (NO, (), "")  # a member bound again while its class is read: nothing new
        states = []
        family = self.family(klass)
        for fns in self.functions.values():
            for fn in fns:
                if fn.klass in family and id(fn) not in self._dead:
                    states.append(_Scan(self, fn, depth, members_only=True).run({member}))
        result = _combine(states)
        self._member_memo[key] = result
        return result

    def macro_words(self, fn: _Function) -> dict[str, str]:
        """Each word the macros ``fn``'s body uses may expand to (macros of macros included) → the macro used:
        a name in one may be read or written where the body does not show it."""
        key = id(fn)
        if key not in self._macro_words:
            words: dict[str, str] = {}
            if self.macros:
                t = fn.file.reader.t
                pending = [(tok.text, tok.text) for tok in t[fn.open + 1 : fn.close] if tok.kind == "ident" and tok.text in self.macros]
                seen = set()
                while pending:
                    name, used = pending.pop()
                    if name in seen:
                        continue
                    seen.add(name)
                    for word in self.macros[name]:
                        words.setdefault(word, used)
                        if word in self.macros:
                            pending.append((word, used))
                    # a macro passed to another as an argument (X-macros): its words count too
                    for k in range(fn.open + 1, fn.close):
                        if t[k].text == name and t[k + 1].text == "(":
                            for arg in t[k + 2 : fn.file.reader.match.get(k + 1, k + 2)]:
                                if arg.kind == "ident" and arg.text in self.macros:
                                    pending.append((arg.text, used))
            self._macro_words[key] = words
        return self._macro_words[key]

    def callees(self, name: str, klass: str | None, arity: int) -> list[_Function]:
        """The functions a call of ``name`` with ``arity`` arguments may reach: ``klass``'s method, else its nearest
        base class's that defines it. A functor called through a ``using`` alias runs its constructor; where a
        class template has explicit specializations, its primary template's empty body is the fallback no
        instantiation in these files reaches, not code that runs."""
        if name not in self.functions and name in self.aliases:
            name = self.aliases[name]
            klass = name
        for owner in self.lineage(klass) if klass is not None else [None]:
            candidates = [f for f in self.functions.get(name, []) if len(f.params) >= arity and (owner is None or f.klass == owner)]
            found = [f for f in candidates if len(f.params) == arity] or candidates
            if found:
                if any(f.specialized for f in found):
                    found = [f for f in found if f.specialized or not f.empty] or found
                return found
        return []


# _argument's answer for a call that returns the memory passed to it: follow the call's value instead
_RETURNED: list[str] = ["<the call's value>"]


def _combine(states: list[tuple[str, tuple[Write, ...], str]]) -> tuple[str, tuple[Write, ...], str]:
    writes = tuple(w for s in states if s[0] == YES for w in s[1])
    if writes:
        return YES, writes[:_EVIDENCE_KEPT], ""
    unknown = next((s for s in states if s[0] == UNKNOWN), None)
    if unknown is not None:
        return unknown
    return NO, (), ""


class _Scan:
    """The uses of some names (a parameter and what it is copied into) inside one function."""

    def __init__(self, code: DeviceCode, fn: _Function, depth: int, *, members_only: bool = False, returns_to_caller: bool = False, dead: tuple[tuple[int, int], ...] = ()):
        self.code, self.fn, self.depth = code, fn, depth
        self.returns_to_caller = returns_to_caller  # a parameter's scan: its call site follows what is returned
        self.returned = False
        self.dead = dead  # token ranges the launch never runs (DeviceCode._dead_arms)
        self.r = fn.file.reader
        self.t = self.r.t
        self.members_only = members_only
        self.results: list[tuple[str, tuple[Write, ...], str]] = []
        self.bindings: dict[str, str] = {}  # alias → how it was bound ("SetGlobalBuffer (line 30)")

    def run(self, names: set[str]) -> tuple[str, tuple[Write, ...], str]:
        pending, seen = list(names), set(names)
        while pending:
            name = pending.pop()
            for i in range(self.fn.open + 1, self.fn.close):
                tok = self.t[i]
                if tok.kind != "ident" or tok.text != name or self.r._text(i + 1) == "::" or any(a <= i < b for a, b in self.dead):
                    continue
                before = self.r._text(i - 1)
                if before in (".", "->") and not (before == "->" and self.r._text(i - 2) == "this"):
                    continue
                for alias in self._use(i, name):
                    if alias not in seen:
                        seen.add(alias)
                        pending.append(alias)
        expanded = self.code.macro_words(self.fn)
        for name in sorted(seen & expanded.keys()):
            self._unknown(f"{name} is named in macro {expanded[name]}, used in {self.fn.name} and not expanded")
        return _combine(self.results)

    def _write(self, at: int, why: str) -> None:
        tok = self.t[at]
        where = f"{self.fn.klass}::{self.fn.name}" if self.fn.klass else self.fn.name
        self.results.append((YES, (Write(self.fn.file.path, tok.line, tok.column, f"{why} in {where}"),), ""))

    def _unknown(self, why: str) -> None:
        self.results.append((UNKNOWN, (), why))

    def _alias(self, name: str, at: int, how: str) -> list[str]:
        """``name`` now points into the same memory; a class member is followed through every method."""
        first = self.r._text(at - 2) == "this" and self.r._text(at - 1) == "->"
        is_member = self.fn.klass and (first or name in self.code.class_members.get(self.fn.klass, ())) and not self._declared_here(name)
        self.bindings[name] = f"{how} (line {self.t[at].line})"
        if is_member:
            state, writes, because = self.code._member_writes(self.fn.klass, name, self.depth)
            where = f"{self.fn.klass}::{self.fn.name}"
            writes = tuple(Write(w.path, w.line, w.column, f"{w.why} ({name} bound by {how} in {where}, line {self.t[at].line})") for w in writes)
            self.results.append((state, writes, because))
            return []
        return [name]

    def _declared_here(self, name: str) -> bool:
        for k in range(self.fn.open + 1, self.fn.close):
            if self.t[k].text == name and self.t[k].kind == "ident" and self.r._text(k - 1) not in (".", "->", "::", ",", "(", "=", "+", "-", "[", "return"):
                prev = self.t[k - 1]
                if prev.kind == "ident" or prev.text in (">", "*", "&", ">>"):
                    return True
        return False

    def _use(self, i: int, name: str) -> list[str]:
        """What the use of ``name`` at token ``i`` does: a write, a new alias (returned), a read, or unknown."""
        r, t = self.r, self.t
        start = i - 2 if r._text(i - 1) == "->" and r._text(i - 2) == "this" else i
        # name.Method(...)
        if r._text(i + 1) in (".", "->") and i + 2 < len(t):
            method = r._text(i + 2)
            if r._text(i + 3) in ("(", "<"):
                if method in _WRITING_METHODS:
                    self._write(i, f"{name}.{method}(...)")
                elif method == "SetGlobalBuffer":
                    pass  # the tensor being bound
                elif method not in _READING_METHODS and not method.startswith("Get"):
                    self._unknown(f"{name}.{method}(...) at line {t[i].line} is not followed")
                return []
            if t[i + 2].kind == "ident":
                return self._field(i, name)
        # a raw store: name[i] = v, *name = v
        after = i + 1
        if r._text(after) == "[" and after in r.match:
            after = r.match[after] + 1
        if r._text(after) in _ASSIGNMENTS and (after != i + 1 or self._dereferenced(start)):
            self._write(i, f"{_join(t[start:after])} = ...")
            return []
        return self._in_context(start, i, name)

    def _dereferenced(self, start: int) -> bool:
        """``*name`` at ``start``: a store through the pointer, not ``T *name = ...`` declaring it."""
        if self.r._text(start - 1) != "*":
            return False
        before = self.t[start - 2] if start >= 2 else None
        return before is None or (before.kind != "ident" and before.text not in (">", ">>", "*", "&"))

    def _field(self, i: int, name: str) -> list[str]:
        """``name->a.b`` not called: a store into the memory ``name`` points to when assigned, else a value read
        (``n = tiling->m`` copies a number, not the pointer)."""
        r, t = self.r, self.t
        k = i + 1
        while r._text(k) in (".", "->") and t[k + 1].kind == "ident":
            k += 2
        if r._text(k) in _ASSIGNMENTS:
            self._write(i, f"{_join(t[i:k])} = ...")
        elif r._text(k) == "[" and r._text(r.match.get(k, k) + 1) in _ASSIGNMENTS:
            self._unknown(f"{_join(t[i:k])}[...] is stored into at line {t[i].line}: opkit does not know whether that field holds the memory or points elsewhere")
        return []

    def _in_subscript(self, start: int, p: int) -> bool:
        """Whether the use at ``start`` is inside an index (``gm[off]``) within its enclosing parenthesis ``p``:
        a read of the index, not a use of the memory."""
        depth = 0
        for k in range(start - 1, max(p, self.fn.open), -1):
            text = self.r._text(k)
            if text in (")", "]", "}"):
                depth += 1
            elif text in ("(", "{"):
                depth -= 1
            elif text == "[":
                if depth == 0:
                    return True
                depth -= 1
            elif text == ";" and depth == 0:
                return False
        return False

    def _in_context(self, start: int, i: int, name: str) -> list[str]:
        r, t, paren = self.r, self.t, self.fn.file.paren
        p = paren[start]
        if self._in_subscript(start, p):
            return []
        # walk out of grouping parentheses and casts around the use: (x + 1), static_cast<T>(x)
        while p > self.fn.open:
            callee_at = p - 1
            if r._text(callee_at) == ">":
                k = DeviceCode._template_start(r, callee_at) - 1
                if r._text(k) in _CASTS:
                    start, p = k, paren[k]
                    continue
                callee_at = k
            callee = r._text(callee_at)
            if t[callee_at].kind == "ident" and callee not in _KEYWORDS:
                found = self._argument(p, callee_at, callee, i, name)
                if found is not _RETURNED:
                    return found
                start, p = callee_at, paren[callee_at]  # the call is that memory: follow where it goes
                continue
            if callee in _KEYWORDS:
                return []  # if (y), while (y), sizeof(y): read
            start, p = p, paren[p]  # a group: (y + off)
        return self._statement(start, i, name)

    def _argument(self, p: int, callee_at: int, callee: str, i: int, name: str) -> list[str]:
        r, t = self.r, self.t
        close = r.match.get(p, p)
        args = _split(t, p + 1, close)
        index = next((n for n, (a, b) in enumerate(args) if a <= i < b), 0)
        obj = r._text(callee_at - 1) in (".", "->")
        if callee in _COPIES_OUT or callee.startswith(_COPY_OUT_PREFIXES):
            if index == 0:
                self._write(i, f"{callee}({_join(t[args[0][0]:args[0][1]])}, ...){self._bound(name)}")
            return []
        if callee == "TASSIGN":
            if index == 1 and args and args[0][1] > args[0][0]:
                target = args[0][0]
                return self._alias(t[target].text, target, "TASSIGN")
            return []
        if callee == "SetGlobalBuffer" and obj:
            holder = callee_at - 2
            return self._alias(t[holder].text, holder, "SetGlobalBuffer") if t[holder].kind == "ident" else []
        if callee in _READING_CALLS or callee.startswith("Get") and not obj and callee not in self.code.functions:
            return []
        # a declaration: GlobalTensor<T> g(y + off); __gm__ T *q(y);
        before = t[callee_at - 1] if callee_at > 0 else None
        if not obj and before is not None and (before.kind == "ident" and before.text not in _KEYWORDS or before.text in (">", "*", "&", ">>")) and r._text(callee_at - 1) != "return":
            if not self.code.functions.get(callee):
                return self._alias(callee, callee_at, "declared from it")
        klass = None
        if obj:
            holder = callee_at - 2
            klass = self._class_of(t[holder].text, holder) if t[holder].kind == "ident" and t[holder].text != "this" else self.fn.klass
        elif self.fn.klass and any(f.klass == self.fn.klass for f in self.code.functions.get(callee, [])):
            klass = self.fn.klass
        targets = self.code.callees(callee, klass, len(args))
        if not targets:
            self._unknown(f"passed to {callee}(...) at line {t[i].line}, which is not in the files read")
            return []
        states = []
        for target in targets:
            states.append(self.code._writes(target, index, self.depth + 1))
        if all(s[0] == YES for s in states) or all(s[0] != YES for s in states):
            self.results.append(_combine(states))
        else:
            self._unknown(f"{callee} has overloads that differ (line {t[i].line})")
        if any(self.code.returns_memory(target, index) for target in targets):
            return _RETURNED
        return []

    def _class_of(self, variable: str, at: int) -> str | None:
        """The class of a local object (``KernelAdd<T> op;``), or None when not declared in this function."""
        r, t = self.r, self.t
        for k in range(at - 1, self.fn.open, -1):
            if t[k].text == variable and t[k].kind == "ident" and r._text(k + 1) in (";", "(", "{", "="):
                j = k - 1
                if r._text(j) == ">":
                    j = DeviceCode._template_start(r, j) - 1
                if t[j].kind == "ident" and t[j].text in self.code.class_members:
                    return t[j].text
                return None
        return None

    def _statement(self, start: int, i: int, name: str) -> list[str]:
        """A use outside any call: ``auto q = y + off;``, ``this->y_ = y;``, ``return y;`` or an expression that reads."""
        r, t = self.r, self.t
        brace = self._enclosing_brace(start)
        if brace is not None:
            # Params p{x, y}, Type{x}, = {x}: stored in an aggregate, which is not followed
            self._unknown(f"{name} is stored in the aggregate {_join(t[max(brace - 2, self.fn.open + 1) : brace])}{{...}} at line {t[i].line}, which is not followed")
            return []
        k = start - 1
        while k > self.fn.open and r._text(k) not in (";", "{", "}", "=", "return", ","):
            k -= 1
        if r._text(k) == "=" and t[k - 1].kind == "ident":
            return self._alias(t[k - 1].text, k - 1, "assigned")
        if r._text(k) == "return":
            if self.returns_to_caller:
                self.returned = True
            else:
                self._unknown(f"returned from {self.fn.name} at line {t[i].line}")
        return []

    def _enclosing_brace(self, start: int) -> int | None:
        """The ``{`` of a braced initialiser around token ``start`` (not a block's), or None."""
        r, t = self.r, self.t
        k = start - 1
        while k > self.fn.open:
            text = r._text(k)
            if text in (")", "]", "}") and k in r.match:
                k = r.match[k] - 1
                continue
            if text == ";":
                return None
            if text == "{":
                before = t[k - 1]
                initialiser = (before.kind == "ident" and before.text not in ("else", "do", "try")) or before.text in ("=", "(", ",", ">", "return")
                return k if initialiser else None
            k -= 1
        return None

    def _bound(self, name: str) -> str:
        how = self.bindings.get(name)
        return f", {name} bound by {how}" if how else ""


_ANY_DEFINE = re.compile(r"#\s*define\s+(\w+)(.*)", re.S)
_DEFINE = re.compile(r"#\s*define\s+(\w+)\(([^)]*)\)(.*)", re.S)


def _macro_kernels(directives: list[Token], tokens: list[Token]) -> list[list[Token]]:
    """Kernels a function-like macro declares (``#define DECLARE(TYPE) __global__ void k_##TYPE(...) {...}``),
    expanded at each top-level use (``DECLARE(half)``): the tokens of each expansion, placed at the use."""
    macros = {}
    for tok in directives:
        m = _DEFINE.match(tok.text)
        if m and "__global__" in m.group(3):
            macros[m.group(1)] = ([p.strip() for p in m.group(2).split(",")], m.group(3))
    if not macros:
        return []
    expansions = []
    depth = 0
    for k, tok in enumerate(tokens):
        if tok.text == "{":
            depth += 1
        elif tok.text == "}":
            depth -= 1
        elif depth == 0 and tok.text in macros and k + 1 < len(tokens) and tokens[k + 1].text == "(":
            end = next((m for m in range(k + 2, min(k + 64, len(tokens))) if tokens[m].text == ")"), None)
            if end is None:
                continue
            args = [a.strip() for a in _join(tokens[k + 2 : end]).split(",")]
            params, body = macros[tok.text]
            if len(args) != len(params):
                continue
            body = re.sub(r"\s*##\s*", "##", body)
            for param, arg in zip(params, args):
                body = re.sub(r"\b%s\b" % re.escape(param), arg, body)
            try:
                expanded = tokenize(body.replace("##", ""))
            except CppTextError:
                continue
            expansions.append([t._replace(line=tok.line, column=tok.column) for t in expanded if t.kind != "directive"])
    return expansions


def _statement_end(r: _Reader, k: int) -> int:
    """The last token of the statement starting at token ``k``: a block, an ``if`` (with its ``else``), or up to ``;``."""
    t = r.t
    if r._text(k) == "{" and k in r.match:
        return r.match[k]
    if r._text(k) in ("if", "for", "while", "switch") and r._text(k + 1) == "(" and k + 1 in r.match:
        end = _statement_end(r, r.match[k + 1] + 1) if r._text(k) != "switch" else r.match.get(r.match[k + 1] + 1, r.match[k + 1] + 1)
        if r._text(k) == "if" and r._text(end + 1) == "else":
            return _statement_end(r, end + 2)
        return end
    while k < len(t) and t[k].text != ";":
        k = r.match[k] + 1 if t[k].text in ("(", "[", "{") and k in r.match else k + 1
    return k


def _ends_arm(t: list[Token], body: int, stop: int) -> bool:
    """A switch arm ``tokens[body:stop]`` ends in ``break;`` or ``return ...;`` (in a block or not): no fall-through."""
    texts = [x.text for x in t[body:stop]]
    while texts and texts[-1] == "}":
        texts.pop()
    if texts[-2:] == ["break", ";"]:
        return True
    if texts and texts[-1] == ";":
        start = max((n for n, x in enumerate(texts[:-1]) if x in (";", "{", "}")), default=-1) + 1
        return texts[start : start + 1] == ["return"]
    return False


def _split(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]]:
    """The top-level comma-separated items of tokens[start:end] as (start, end) index pairs; the commas of a
    template's arguments (``RoundUp<uint64_t, 16>(n)``) do not split."""
    items, depth, item_start = [], 0, start
    k = start
    while k < end:
        text = tokens[k].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
        elif text == "<" and k > start and tokens[k - 1].kind == "ident":
            close = _template_close(tokens, k, end)
            if close is not None:
                k = close
        elif text == "," and depth == 0:
            items.append((item_start, k))
            item_start = k + 1
        k += 1
    if end > item_start:
        items.append((item_start, end))
    return items


def _template_close(tokens: list[Token], at: int, end: int) -> int | None:
    """The ``>`` closing the template argument list opened at ``at``, when one closes it before ``end`` and a
    call, a scope or a brace follows it; None for a comparison (``a < b, c > d`` is two items)."""
    depth = parens = 0
    for k in range(at, end):
        text = tokens[k].text
        if text in ("(", "["):
            parens += 1
        elif text in (")", "]"):
            if parens == 0:
                return None
            parens -= 1
        elif text in (";", "{", "}", "&&", "||"):
            return None
        elif parens == 0 and text == "<":
            depth += 1
        elif parens == 0 and text in (">", ">>"):
            depth -= len(text)
            if depth <= 0:
                return k if depth == 0 and k + 1 < end and tokens[k + 1].text in ("(", "::", "{") else None
    return None
