"""The named values a C++ file declares, as real OpDef files use them: constants and dtype/format lists.

``CppConstants(cpp)`` collects, in one pass over the lexed file, every ``const``/``constexpr`` scalar
(``static constexpr float EPS = 1e-8f;``), every object-like ``#define`` and every
``std::vector<ge::DataType>``/``std::vector<ge::Format>`` (braced, ``(n, ge::FORMAT_ND)`` filled, or a
copy of another). ``value(expression, at)`` evaluates an integer or floating constant expression
(literals, named constants, ``+ - * / % << >> | & ~``, parentheses, casts, CANN's ``ge::DT_*`` enum
values, ``<cstdint>``'s limits) as C++ does; ``items(name, at)`` gives a named list's items. A name
declared more than once (a local list per OpDef) is the declaration nearest before ``at``.

What it cannot read raises ``Unreadable`` with the reason: the caller decides whether that is a
warning (a default it cannot show) or an error. Nothing is executed; expressions are parsed here.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from opkit import msopgen
from opkit.formats.cpp_text import CppText

# <cstdint> and <climits> limits real OpDefs name as defaults.
_LIMITS = {
    "INT8_MIN": -(2**7), "INT8_MAX": 2**7 - 1, "UINT8_MAX": 2**8 - 1,
    "INT16_MIN": -(2**15), "INT16_MAX": 2**15 - 1, "UINT16_MAX": 2**16 - 1,
    "INT32_MIN": -(2**31), "INT32_MAX": 2**31 - 1, "UINT32_MAX": 2**32 - 1,
    "INT64_MIN": -(2**63), "INT64_MAX": 2**63 - 1, "UINT64_MAX": 2**64 - 1,
    "INT_MIN": -(2**31), "INT_MAX": 2**31 - 1, "UINT_MAX": 2**32 - 1,
    "LLONG_MIN": -(2**63), "LLONG_MAX": 2**63 - 1,
    "FLT_MAX": 3.4028234663852886e38, "FLT_MIN": 1.1754943508222875e-38, "FLT_EPSILON": 1.1920928955078125e-07,
    "DBL_MAX": 1.7976931348623157e308, "DBL_MIN": 2.2250738585072014e-308, "DBL_EPSILON": 2.220446049250313e-16,
}  # fmt: skip
_NUMERIC_LIMITS = {
    "int8_t": (-(2**7), 2**7 - 1), "uint8_t": (0, 2**8 - 1), "int16_t": (-(2**15), 2**15 - 1), "uint16_t": (0, 2**16 - 1),
    "int32_t": (-(2**31), 2**31 - 1), "int": (-(2**31), 2**31 - 1), "uint32_t": (0, 2**32 - 1),
    "int64_t": (-(2**63), 2**63 - 1), "uint64_t": (0, 2**64 - 1), "float": (-_LIMITS["FLT_MAX"], _LIMITS["FLT_MAX"]),
    "double": (-_LIMITS["DBL_MAX"], _LIMITS["DBL_MAX"]),
}  # fmt: skip
_INTEGER_TYPES = frozenset("int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t size_t int long unsigned short char bool".split())
_FLOAT_TYPES = frozenset({"float", "double"})

# Each declaration pattern opens with a literal word, its \b written as a lookbehind after it: a pattern that
# opens with a literal is searched for by that literal (fast), one opening with \b is tried at every offset.
_SCALAR_DECL = re.compile(
    # at most 8 more qualifiers: a run of `const` costs each start a bounded look, not the rest of the run
    r"const(?<!\wconst)(?:expr)?\s+(?:(?:static|inline|constexpr|const|unsigned|signed|long)\s+){0,8}(?:std::)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*(=|\{)"
)
_LIST_DECL = re.compile(r"(?:vector(?<!\wvector)|initializer_list(?<!\winitializer_list))\s*<\s*(?:ge::)?(DataType|Format)\s*>\s+([A-Za-z_]\w*)\s*(=)?\s*")
# auto NAME = std::vector<ge::Format>(n, ge::FORMAT_ND);  (group 1: the name, 2: the element type)
_AUTO_LIST_DECL = re.compile(r"auto(?<!\wauto)\s+([A-Za-z_]\w*)\s*=\s*(?:std::)?vector\s*<\s*(?:ge::)?(DataType|Format)\s*>\s*(?=[({])")
# An object-like macro, its body continued over lines by backslashes.
# Possessive: the blanks after the name and the body never trade characters, so `#define X`, blanks and a
# trailing backslash fail in one pass instead of trying every split (quadratic).
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]|\\\n)++((?:[^\n\\]|\\[^\n]|\\\n)*+)$", re.M)
_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:0[xX][0-9A-Fa-f']+|0[bB][01']+|(?:\d[\d']*\.?[\d']*|\.\d[\d']*)(?:[eE][+-]?\d+)?)[uUlLfF]*)"
    r"|(?P<name>(?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)|(?P<op><<|>>|[-+*/%()|&^~!<>,]))"
)


class Unreadable(ValueError):
    """A value the reader cannot know from the text: ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Declaration:
    at: int  # offset of the name
    kind: str  # "scalar", "define", "list"
    type: str  # a scalar's C++ type; a list's element type (DataType, Format)
    start: int  # the initializer's text span in the file
    end: int
    form: str = "expression"  # list: "braced", "fill", "copy", "expression", "computed"


class CppConstants:
    """The named constants and lists of one lexed C++ file."""

    def __init__(self, cpp: CppText):
        self.cpp = cpp
        self._declarations: dict[str, list[_Declaration]] = {}
        code = cpp.code
        for m in _SCALAR_DECL.finditer(code):
            if m[3] == "{":
                start, end = m.end(), self._closing_or_none(m.end() - 1)
            else:
                start, end = m.end(), self._statement_end(m.end())
            if end is not None:
                self._add(m[2], _Declaration(m.start(2), "scalar", m[1], start, end))
        for m in _DEFINE.finditer(code) if "define" in code else ():  # a '^'-led MULTILINE pattern tries every line
            body = cpp.trimmed(m.start(2), m.end(2))
            if body[0] < body[1] and code[body[0]] == "{" and self._closing_or_none(body[0]) == body[1] - 1:
                self._add(m[1], _Declaration(m.start(1), "list", "", body[0] + 1, body[1] - 1, "braced"))
            else:
                self._add(m[1], _Declaration(m.start(1), "define", "", m.start(2), m.end(2)))
        for m in _LIST_DECL.finditer(code):
            declaration = self._list_declaration(m.start(2), m[1], m.end(), bool(m[3]))
            if declaration is not None:
                self._add(m[2], declaration)
        for m in _AUTO_LIST_DECL.finditer(code):
            declaration = self._list_declaration(m.start(1), m[2], m.end(), False)
            if declaration is not None:
                self._add(m[1], declaration)
        for found in self._declarations.values():
            found.sort(key=lambda d: d.at)

    def _add(self, name: str, declaration: _Declaration) -> None:
        self._declarations.setdefault(name, []).append(declaration)

    def _closing_or_none(self, opener: int) -> int | None:
        try:
            return self.cpp.closing(opener)
        except ValueError:  # CppTextError included: not a declaration this reader can use
            return None

    def _statement_end(self, start: int) -> int | None:
        end = self.cpp.code.find(";", start)
        return None if end < 0 else end

    def _list_declaration(self, name_at: int, element: str, at: int, assigned: bool) -> _Declaration | None:
        """The list declared at ``name_at`` whose initializer starts at ``at`` (after its ``=`` when ``assigned``)."""
        code = self.cpp.code
        if at >= len(code):
            return None
        if code[at] == "{":
            end = self._closing_or_none(at)
            return None if end is None else _Declaration(name_at, "list", element, at + 1, end, "braced")
        if code[at] == "(" and not assigned:
            end = self._closing_or_none(at)
            if end is None:
                return None
            inner = self.cpp.trimmed(at + 1, end)
            if inner[0] < inner[1] and code[inner[0]] == "{" and self._closing_or_none(inner[0]) == inner[1] - 1:
                return _Declaration(name_at, "list", element, inner[0] + 1, inner[1] - 1, "braced")
            parts = self.cpp.items(at + 1, end)
            return _Declaration(name_at, "list", element, at + 1, end, "fill" if len(parts) == 2 else "copy")
        if assigned:
            end = self._statement_end(at)
            return None if end is None else _Declaration(name_at, "list", element, at, end)
        if code[at] == ";":  # declared empty, filled by the code (push_back, for_each)
            return _Declaration(name_at, "list", element, at, at, "computed")
        return None  # a parameter, a return type, a template argument

    def _find(self, name: str, at: int, kinds: tuple[str, ...]) -> _Declaration | None:
        found = [d for d in self._declarations.get(name, ()) if d.kind in kinds]
        if not found:
            return None
        before = bisect.bisect_left([d.at for d in found], at)
        return found[before - 1] if before else found[0]

    # -- lists ----------------------------------------------------------------------------------------

    def is_list(self, name: str, at: int) -> bool:
        return self._find(name, at, ("list",)) is not None

    def items(self, name: str, at: int, _depth: int = 0) -> list[str]:
        """The items of the list named ``name`` as written (``ge::DT_FLOAT``), other lists expanded."""
        declaration = self._find(name, at, ("list",))
        if declaration is None:
            raise Unreadable(f"{name!r} is not a list declared in the file")
        if _depth > 20:
            raise Unreadable(f"{name!r} is defined in terms of itself")
        code, cpp = self.cpp.code, self.cpp
        text = code[declaration.start : declaration.end].strip()
        if declaration.form == "computed":
            raise Unreadable(f"list {name!r} is filled by the code, not written out")
        parts = cpp.items(declaration.start, declaration.end)
        if declaration.form == "braced" and not (len(parts) == 2 and self._is_count(code[slice(*parts[0])], declaration.at)):
            return self.expand([code[s:e] for s, e in parts], declaration.at, _depth)
        if declaration.form in ("braced", "fill"):  # {n, item} as (n, item): a count is no enumerator
            count_span, item_span = parts
            count_text, item = code[slice(*count_span)], code[slice(*item_span)].strip()
            size_of = re.fullmatch(r"([A-Za-z_]\w*)\s*\.\s*size\s*\(\s*\)", count_text.strip())
            count = len(self.items(size_of[1], declaration.at, _depth + 1)) if size_of else self.value(count_text, declaration.at)
            if not isinstance(count, int) or not 0 <= count <= 100_000:
                raise Unreadable(f"list {name!r} is filled {count_text.strip()!r} times")
            return [item] * count
        copied = re.fullmatch(r"([A-Za-z_]\w*)", text)
        if copied and self.is_list(copied[1], declaration.at):
            return self.items(copied[1], declaration.at, _depth + 1)
        raise Unreadable(f"list {name!r} is computed ({_short(text)}), not written out")

    def _is_count(self, text: str, at: int) -> bool:
        text = text.strip()
        if re.fullmatch(r"[A-Za-z_]\w*\s*\.\s*size\s*\(\s*\)", text):
            return True
        try:
            return isinstance(self.value(text, at), int) and not re.search(r"\bDT_|\bFORMAT_", text)
        except Unreadable:
            return False

    def expand(self, items: list[str], at: int, _depth: int = 0) -> list[str]:
        """Items with every named list among them replaced by its items."""
        out = []
        for item in items:
            item = item.replace("\\\n", " ").strip().rstrip("\\").strip()  # a macro's line continuations
            if re.fullmatch(r"[A-Za-z_]\w*", item) and self.is_list(item, at):
                out += self.items(item, at, _depth + 1)
            elif item:
                out.append(item)
        return out

    # -- scalars --------------------------------------------------------------------------------------

    def value(self, expression: str, at: int, _depth: int = 0) -> int | float | bool:
        """The value of an integer, floating or boolean constant expression at offset ``at``."""
        return _Evaluator(self, at, _depth).evaluate(expression)

    def named(self, name: str, at: int, depth: int) -> int | float | bool:
        plain = re.sub(r"\s+", "", name).removeprefix("::")
        if plain in ("true", "false"):
            return plain == "true"
        if plain.removeprefix("std::") in _LIMITS:
            return _LIMITS[plain.removeprefix("std::")]
        ge = plain.removeprefix("ge::").removeprefix("DataType::")
        if ge in msopgen.GE_DATA_TYPES and ge.startswith("DT_"):
            return msopgen.GE_DATA_TYPES[ge]
        declaration = self._find(plain.rsplit("::", 1)[-1], at, ("scalar", "define"))
        if declaration is None:
            raise Unreadable(f"{plain!r} is not a constant declared in the file")
        if depth > 20:
            raise Unreadable(f"{plain!r} is defined in terms of itself")
        text = self.cpp.code[declaration.start : declaration.end]
        value = self.value(text, declaration.at, depth + 1)
        return _converted(value, declaration.type)


def _converted(value: int | float | bool, type_name: str) -> int | float | bool:
    if type_name in _FLOAT_TYPES:
        return float(value)
    if type_name == "bool":
        return bool(value)
    if type_name in _INTEGER_TYPES and isinstance(value, float):
        return int(value)
    return value


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


class _Evaluator:
    """A C++ constant expression, by precedence climbing over its tokens."""

    _BINARY = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}

    def __init__(self, constants: CppConstants, at: int, depth: int):
        self.constants, self.at, self.depth = constants, at, depth

    def evaluate(self, expression: str) -> int | float | bool:
        self.text = expression
        self.tokens = self._tokens(expression)
        self.i = 0
        if not self.tokens:
            raise Unreadable("an empty expression")
        value = self._binary(0)
        if self.i != len(self.tokens):
            raise Unreadable(f"{_short(expression)!r} is not a constant expression opkit reads")
        return value

    def _tokens(self, text: str) -> list[tuple[str, str]]:
        text = re.sub(r"static_cast\s*<\s*([\w:]+)\s*>", r"\1", text)  # a cast reads as a functional cast
        tokens, i = [], 0
        while i < len(text):
            if text[i:].strip() == "":
                break
            m = _TOKEN.match(text, i)
            if m is None:
                raise Unreadable(f"{_short(text)!r} is not a constant expression opkit reads")
            kind = m.lastgroup
            tokens.append((kind, m[kind]))
            i = m.end()
        return tokens

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self, op: str) -> bool:
        if self._peek() == ("op", op):
            self.i += 1
            return True
        return False

    def _binary(self, level: int):
        left = self._unary()
        while True:
            token = self._peek()
            if token is None or token[0] != "op" or self._BINARY.get(token[1], 0) <= level:
                return left
            self.i += 1
            right = self._binary(self._BINARY[token[1]])
            left = _apply(token[1], left, right)

    def _unary(self):
        if self._take("-"):
            return -self._unary()
        if self._take("+"):
            return self._unary()
        if self._take("~"):
            return ~_integer(self._unary())
        if self._take("!"):
            return not self._unary()
        return self._primary()

    def _primary(self):
        token = self._peek()
        if token is None:
            raise Unreadable(f"{_short(self.text)!r} ends early")
        kind, text = token
        self.i += 1
        if kind == "number":
            return _number(text)
        if kind == "op" and text == "(":
            cast = self._peek()
            if cast is not None and cast[0] == "name" and self.i + 1 < len(self.tokens) and self.tokens[self.i + 1] == ("op", ")") and _is_type(cast[1]):
                self.i += 2  # a C-style cast: (float)x
                return _converted(self._unary(), cast[1].removeprefix("std::"))
            value = self._binary(0)
            if not self._take(")"):
                raise Unreadable(f"{_short(self.text)!r} has an unclosed '('")
            return value
        if kind == "name":
            name = re.sub(r"\s+", "", text)
            limits = re.fullmatch(r"(?:std::)?numeric_limits", name)
            if limits:
                return self._numeric_limits()
            if self._peek() == ("op", "(") and _is_type(name):
                self.i += 1
                value = self._binary(0)
                if not self._take(")"):
                    raise Unreadable(f"{_short(self.text)!r} has an unclosed '('")
                return _converted(value, name.removeprefix("std::"))
            if self._peek() == ("op", "("):
                raise Unreadable(f"{_short(self.text)!r} calls {name}(), a value known only when it runs")
            return self.constants.named(name, self.at, self.depth)
        raise Unreadable(f"{_short(self.text)!r} is not a constant expression opkit reads")

    def _numeric_limits(self):
        # numeric_limits<T>::max() / min() / lowest(): tokens '<' T '>' '::max' '(' ')'
        if not self._take("<"):
            raise Unreadable("numeric_limits without its type")
        type_token = self._peek()
        self.i += 1
        if type_token is None or type_token[0] != "name" or not self._take(">"):
            raise Unreadable("numeric_limits without its type")
        member = self._peek()
        self.i += 1
        if member is None or member[0] != "name" or not self._take("(") or not self._take(")"):
            raise Unreadable("numeric_limits<T> without max(), min() or lowest()")
        bounds = _NUMERIC_LIMITS.get(type_token[1].removeprefix("std::"))
        which = re.sub(r"\s+", "", member[1]).removeprefix("::")
        if bounds is None or which not in ("max", "min", "lowest"):
            raise Unreadable(f"numeric_limits<{type_token[1]}>::{which}() is not one opkit knows")
        if which == "min" and isinstance(bounds[1], float):
            return _LIMITS["FLT_MIN"] if type_token[1] == "float" else _LIMITS["DBL_MIN"]
        return bounds[1] if which == "max" else bounds[0]


def _is_type(name: str) -> bool:
    plain = name.removeprefix("std::")
    return plain in _INTEGER_TYPES or plain in _FLOAT_TYPES


def _number(text: str) -> int | float:
    digits = text.replace("'", "")
    lowered = digits.lower()
    if lowered.startswith(("0x", "0b")):
        return int(lowered.rstrip("ul"), 0)
    if any(c in lowered for c in ".e") or lowered.endswith("f"):
        return float(lowered.rstrip("fl"))
    core = lowered.rstrip("ul")
    return int(core, 8) if len(core) > 1 and core.startswith("0") else int(core)


def _integer(value) -> int:
    if isinstance(value, float):
        raise Unreadable("a bitwise operator on a floating value")
    return int(value)


def _apply(op: str, left, right):
    if op in "+-*":
        return left + right if op == "+" else left - right if op == "-" else left * right
    if op in ("/", "%"):
        if right == 0:
            raise Unreadable("a division by zero")
        if isinstance(left, float) or isinstance(right, float):
            if op == "%":
                raise Unreadable("'%' on a floating value")
            return left / right
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # C++ truncates
        return quotient if op == "/" else left - quotient * right
    a, b = _integer(left), _integer(right)
    if op in ("<<", ">>"):
        if not 0 <= b < 128:
            raise Unreadable(f"a shift by {b}")
        return a << b if op == "<<" else a >> b
    return a | b if op == "|" else a & b if op == "&" else a ^ b
