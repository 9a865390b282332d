"""The body of a C++ function read into located facts: the calls, methods, assignments and returns a host
kernel makes, each with the operands it passes. Not a C++ front end: the tokens of the body (the project's
one lexer, ``cpp_tokens``) are walked once, in text order.

What ``opkit.effects.cpp`` makes of the facts (which tensor an aclnn call writes, which local is a view of
which parameter) is not decided here: a fact says what the code writes, located, and no more.

* ``call``: ``f(args)``, ``ns::f(args)``, ``f<T>(args)`` (macros such as ``EXEC_NPU_CMD(...)`` included);
* ``method``: ``x.m(args)``, ``x->m(args)``, ``x.view(...).copy_(y)`` (the receiver is an ``Operand``);
* ``assign``: ``[Type] name = expr``, ``Type name(expr)``/``{expr}``, ``name = expr``, and ``for (auto &t : expr)``;
* ``return``: ``return expr;``, a braced list or a tuple made of several (``std::make_tuple``,
  ``std::forward_as_tuple``, ``std::tie``, ``std::tuple<...>(...)``) read as its elements;
* ``launch``: ``kernel<<<...>>>(args)``, ``ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream, args)``.

Lambdas inside the body (``RunOpApiV2``'s, ``SetCustomHandler``'s, a dispatch macro's) are read as part of it
(``Fact.in_lambda``). Reading is linear in the body's tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from opkit.formats.cpp_tokens import Token
from opkit.formats.kernel_launches import ACLRT_LAUNCH

# Words that look like calls and are not: control flow, operators.
_NOT_CALLS = frozenset("if for while switch return sizeof catch decltype alignof static_assert new delete throw typeid do else case".split())
# Wrappers an operand is read through: the value inside is the operand.
_TRANSPARENT_CALLS = frozenset({"std::move", "std::ref", "std::cref", "move", "c10::make_optional", "std::make_optional", "at::TensorList", "c10::TensorList", "at::ITensorListRef"})
# Tuples made of their arguments: a return of one is read as its elements.
_TUPLE_CALLS = frozenset({"std::make_tuple", "std::forward_as_tuple", "std::tie", "std::tuple", "make_tuple", "forward_as_tuple", "std::pair", "std::make_pair"})
_CASTS = frozenset({"static_cast", "const_cast", "reinterpret_cast", "dynamic_cast"})
# Macros whose arguments are conditions and messages: calls inside them test, they do not compute.
CHECK_MACROS = ("TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "AT_ASSERT", "TORCH_WARN", "CHECK_RET", "OP_CHECK", "ASCEND_LOG", "OPS_LOG", "OP_LOG", "AT_ERROR", "TORCH_CHECK_")


@dataclass(frozen=True)
class Operand:
    """An expression passed, assigned or returned, and what it is made from."""

    text: str  # as written (tokens joined)
    line: int
    column: int
    root: str = ""  # the variable it starts from ("x" for ``x.view(...)[0]``); "" for a literal, a call's result
    chain: tuple[str, ...] = ()  # what is applied to the root, in order: method names, "[]" for a subscript
    call: str = ""  # the function whose result it starts from ("at::empty" for ``at::empty(...).to(...)``)
    address: bool = False  # written ``&x``: a pointer to the variable
    # every variable the expression mentions (not members, not qualified names, not functions called), located,
    # with the member it is used through ("size" for ``x.size(0)``; "" for the variable itself)
    names: tuple[tuple[str, int, int, str], ...] = ()


@dataclass(frozen=True)
class Fact:
    kind: str  # "call", "method", "assign", "return", "launch"
    name: str  # the callee or method as written ("at::empty", "copy_", "EXEC_NPU_CMD"); the variable for "assign"
    line: int
    column: int
    target: Operand | None = None  # a method's receiver; an assignment's source expression
    args: tuple[Operand, ...] = ()  # a call's or method's arguments; a return's values
    in_lambda: bool = False
    template: str = ""  # a call's template arguments as written (``item<float>``: "float")
    declared: str = ""  # "assign": the declared type as written ("at::Tensor", "auto &"); "" for a plain assignment
    checked: bool = False  # inside the arguments of a check or log macro (``TORCH_CHECK(is_npu(x), ...)``)


@dataclass(frozen=True)
class FunctionBody:
    facts: tuple[Fact, ...]
    lambdas: tuple[tuple[int, int], ...] = ()  # (line, column) of each lambda in the body
    # every place a variable is named (name, line, column), outside check macros and lambda capture lists:
    # a reader that explains each use of a tensor through the facts knows all that is done with it
    mentions: tuple[tuple[str, int, int], ...] = ()


def read_body_in(text: str, start: int, end: int) -> FunctionBody:
    """The facts of the body whose ``{`` is at offset ``start`` of ``text`` and ``}`` at ``end`` (``CppFunction.body``),
    lexing that body alone."""
    from opkit.formats.cpp_tokens import tokenize_span

    tokens = code_tokens(tokenize_span(text, start, end + 1))
    return _BodyReader(tokens[1:-1]).read()


def code_tokens(tokens: list[Token]) -> list[Token]:
    """The tokens a body reader walks: the file's, preprocessor lines left out."""
    return [t for t in tokens if t.kind != "directive"]


def join(tokens: list[Token]) -> str:
    out = ""
    for prev, tok in zip([None, *tokens], tokens):
        if prev is not None and prev.kind in ("ident", "number") and tok.kind in ("ident", "number"):
            out += " "
        elif prev is not None and prev.text == ",":
            out += " "
        out += tok.text
    return out


class _BodyReader:
    def __init__(self, tokens: list[Token]):
        self.t = tokens
        self.match = _matching(tokens)
        self.facts: list[Fact] = []
        self.lambda_spans: list[tuple[int, int]] = []
        self.check_spans: list[tuple[int, int]] = []
        self.capture_lists: list[int] = []  # token index of each lambda's closing ']'

    def _text(self, i: int) -> str:
        return self.t[i].text if 0 <= i < len(self.t) else ""

    def read(self) -> FunctionBody:
        t = self.t
        self._find_lambdas()
        i, n = 0, len(t)
        while i < n:
            tok = t[i]
            if tok.kind == "ident" and tok.text == "return":
                self._return(i)
            elif tok.kind == "ident" and tok.text == "for" and self._text(i + 1) == "(":
                self._range_for(i + 1)
            elif tok.text == "=" and tok.kind == "punct":
                self._assignment(i)
            elif tok.text == ";" and i > 0 and t[i - 1].kind == "ident":
                self._declaration(i - 1)
            elif tok.kind == "ident" and tok.text == ACLRT_LAUNCH and self._aclrt_launch(i):
                pass  # its arguments are read as they come, as a <<<>>> launch's are
            elif tok.kind == "ident" and tok.text not in _NOT_CALLS:
                self._name(i)
            elif tok.text == "<<" and self._text(i + 1) == "<" and t[i + 1].offset == tok.offset + 2:
                self._launch(i)
            i += 1
        captures = [(self.match[s], s) for s in self.capture_lists]
        mentions = tuple(
            (tok.text, tok.line, tok.column) for m, tok in enumerate(t)
            if self._variable(m) and not self._checked(m) and not any(a < m < b for a, b in captures)
        )  # fmt: skip
        return FunctionBody(tuple(self.facts), tuple((t[s].line, t[s].column) for s, _ in self.lambda_spans), mentions)

    # -- structure ---------------------------------------------------------------------------
    def _find_lambdas(self) -> None:
        """Each ``[captures](params) ... {`` ... ``}``: the token span of its body."""
        t = self.t
        for i, tok in enumerate(t):
            if tok.text != "[" or i not in self.match:
                continue
            before = self._text(i - 1)
            if before and (t[i - 1].kind in ("ident", "number") or before in (")", "]")):
                continue  # a subscript
            close = self.match[i]
            k = close + 1
            if self._text(k) == "(" and k in self.match:
                k = self.match[k] + 1
            while k < len(t) and self._text(k) not in ("{", ";", ")", ","):
                k += 1
            if self._text(k) == "{" and k in self.match:
                self.lambda_spans.append((k, self.match[k]))
                self.capture_lists.append(close)

    def _in_lambda(self, i: int) -> bool:
        return any(s < i < e for s, e in self.lambda_spans)

    # -- facts -------------------------------------------------------------------------------
    def _name(self, i: int) -> None:
        """An identifier: the start of a call or the name of a method called."""
        t = self.t
        prev = self._text(i - 1)
        if prev == "::":
            return  # inside a qualified name: read at its first part
        name_end = i
        while self._text(name_end + 1) == "::" and name_end + 2 < len(t) and t[name_end + 2].kind == "ident":
            name_end += 2
        open_at, template = self._call_open(name_end)
        if open_at is None:
            return
        name = "".join(tok.text for tok in t[i : name_end + 1])
        if t[name_end].text in _NOT_CALLS or name in _CASTS:
            return
        close = self.match[open_at]
        args = tuple(self._operand(s, e) for s, e in self._items(open_at + 1, close))
        if prev in (".", "->"):
            receiver = self._operand(self._postfix_start(i - 2), i - 1)
            self.facts.append(Fact("method", t[i].text, t[i].line, t[i].column, receiver, args, self._in_lambda(i), template, checked=self._checked(i)))
            return
        if self._declares(i, open_at):
            # ``Type name(expr)``: a declaration initialised from ``expr``, not a call of ``name``
            if len(args) == 1:
                self.facts.append(Fact("assign", name, t[i].line, t[i].column, args[0], (), self._in_lambda(i), declared=join(t[self._statement_start(i) : i])))
            return
        checked = self._checked(i)
        if name.startswith(CHECK_MACROS):
            self.check_spans.append((open_at, close))
        self.facts.append(Fact("call", name, t[i].line, t[i].column, None, args, self._in_lambda(i), template, checked=checked))

    def _variable(self, m: int) -> bool:
        """Whether token ``m`` may name a variable: an identifier, not a member, a qualified name's part or a function called."""
        tok = self.t[m]
        return tok.kind == "ident" and tok.text not in _NOT_CALLS and self._text(m - 1) not in (".", "->", "::") and self._text(m + 1) not in ("::", "(")

    def _member(self, m: int) -> str:
        """The member a variable at token ``m`` is used through (``x.size(0)``: "size"), "" if none."""
        if self._text(m + 1) in (".", "->") and m + 2 < len(self.t) and self.t[m + 2].kind == "ident":
            return self.t[m + 2].text
        return ""

    def _checked(self, i: int) -> bool:
        return any(s < i < e for s, e in self.check_spans)

    def _declares(self, i: int, open_at: int) -> bool:
        """``at::Tensor y(x)``: the name follows a type (an identifier or ``>``, ``&``, ``*`` at a statement's start)."""
        if open_at != i + 1:
            return False
        start = self._statement_start(i)
        if start >= i:
            return False
        before = self.t[i - 1]
        if before.kind != "ident" and before.text not in (">", "&", "*", "&&"):
            return False
        if before.kind == "ident" and before.text in ("return", "else", "case", "new", "throw", "co_return"):
            return False
        return all(tok.kind == "ident" or tok.text in ("::", "<", ">", ">>", ",", "&", "*", "&&") for tok in self.t[start:i])

    def _statement_start(self, i: int) -> int:
        k = i
        while k > 0 and self._text(k - 1) not in (";", "{", "}", ")") :
            k -= 1
        return k

    def _call_open(self, name_end: int) -> tuple[int | None, str]:
        """The ``(`` calling the name ending at token ``name_end`` (past template arguments), and those."""
        k = name_end + 1
        template = ""
        if self._text(k) == "<":
            depth, m = 0, k
            while m < len(self.t):
                text = self._text(m)
                if text in (";", "{", "}", "(", ")") and depth <= 1 and text != "(":
                    return None, ""
                depth += {"<": 1, ">": -1, ">>": -2}.get(text, 0)
                if depth <= 0:
                    break
                m += 1
            template = join(self.t[k + 1 : m])
            k = m + 1
        if self._text(k) == "(" and k in self.match:
            return k, template
        return None, ""

    def _assignment(self, i: int) -> None:
        """``[Type] name = expr`` (the variable just before '='; ``a.b = x`` and ``a[i] = x`` are not variables)."""
        t = self.t
        lhs = i - 1
        if lhs < 0 or t[lhs].kind != "ident" or self._text(lhs - 1) in (".", "->", "::"):
            return
        end = i + 1
        while end < len(t) and self._text(end) not in (";", ",", ")", "}"):
            end = self.match[end] + 1 if self._text(end) in ("(", "[", "{") and end in self.match else end + 1
        if end == i + 1:
            return
        start = self._statement_start(lhs)
        declared = join(t[start:lhs]) if start < lhs else ""
        source = self._operand(i + 1, end)
        self.facts.append(Fact("assign", t[lhs].text, t[lhs].line, t[lhs].column, source, (), self._in_lambda(i), declared=declared))

    def _declaration(self, name: int) -> None:
        """``Type name;``: a variable declared without a value (an ``assign`` fact without a source)."""
        start = self._statement_start(name)
        if start >= name or self.t[start].text in ("return", "break", "continue", "goto", "delete", "throw"):
            return
        if self._text(name - 1) in (".", "->", "::") or not all(tok.kind == "ident" or tok.text in ("::", "<", ">", ">>", ",", "&", "*", "&&") for tok in self.t[start:name]):
            return
        tok = self.t[name]
        self.facts.append(Fact("assign", tok.text, tok.line, tok.column, None, (), self._in_lambda(name), declared=join(self.t[start:name])))

    def _range_for(self, open_at: int) -> None:
        """``for (auto &x : list)``: x is each element of ``list``."""
        close = self.match.get(open_at)
        if close is None:
            return
        colon = next((k for k in range(open_at + 1, close) if self._text(k) == ":" and k - 1 > open_at and self.t[k - 1].kind == "ident"), None)
        if colon is None:
            return
        name = self.t[colon - 1]
        source = self._operand(colon + 1, close)
        element = Operand(source.text, source.line, source.column, source.root, (*source.chain, "[]"), source.call, False)
        self.facts.append(Fact("assign", name.text, name.line, name.column, element, (), self._in_lambda(open_at), declared=join(self.t[open_at + 1 : colon - 1])))

    def _return(self, i: int) -> None:
        t = self.t
        end = i + 1
        while end < len(t) and self._text(end) != ";":
            end = self.match[end] + 1 if self._text(end) in ("(", "[", "{") and end in self.match else end + 1
        if end == i + 1:
            self.facts.append(Fact("return", "return", t[i].line, t[i].column, None, (), self._in_lambda(i)))
            return
        self.facts.append(Fact("return", "return", t[i].line, t[i].column, None, self._returned(i + 1, end), self._in_lambda(i)))

    def _returned(self, start: int, end: int) -> tuple[Operand, ...]:
        """The values ``return`` hands back: a braced list's or a tuple's elements, else the one expression."""
        t = self.t
        if self._text(start) == "{" and self.match.get(start) == end - 1:
            return tuple(self._operand(s, e) for s, e in self._items(start + 1, end - 1))
        k = start
        while k < end and (t[k].kind == "ident" or t[k].text == "::"):
            k += 1
        head = "".join(tok.text for tok in t[start:k])
        if head in _TUPLE_CALLS:
            if self._text(k) == "<" :
                depth = 0
                while k < end:
                    depth += {"<": 1, ">": -1, ">>": -2}.get(self._text(k), 0)
                    k += 1
                    if depth <= 0:
                        break
            if self._text(k) in ("(", "{") and self.match.get(k) == end - 1:
                return tuple(self._operand(s, e) for s, e in self._items(k + 1, end - 1))
        return (self._operand(start, end),)

    def _aclrt_launch(self, i: int) -> bool:
        """``ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream, args)``: a launch of ``kernel`` with ``args``."""
        t = self.t
        if not (self._text(i + 1) == "(" and i + 2 < len(t) and t[i + 2].kind == "ident" and self._text(i + 3) == ")" and self._text(i + 4) == "(" and i + 4 in self.match):
            return False
        items = self._items(i + 5, self.match[i + 4])
        args = tuple(self._operand(s, e) for s, e in items[2:])
        self.facts.append(Fact("launch", t[i + 2].text, t[i].line, t[i].column, None, args, self._in_lambda(i)))
        return True

    def _launch(self, i: int) -> None:
        """``kernel<<<config>>>(args)``: the kernel named before '<<<', the arguments after '>>>'."""
        t = self.t
        k = i + 2
        depth = 0
        while k + 2 < len(t):
            text = self._text(k)
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and text == ">" and self._text(k + 1) == ">" and self._text(k + 2) == ">":
                break
            if text == ";" or depth < 0:
                return
            k += 1
        open_at = k + 3
        if self._text(open_at) != "(" or open_at not in self.match:
            return
        name_start = i - 1
        if self._text(name_start) in (">", ">>"):  # kernel<T><<<...>>>
            depth = 0
            while name_start >= 0:
                depth += {">": 1, ">>": 2, "<": -1, "<<": -2}.get(self._text(name_start), 0)
                if depth <= 0:
                    break
                name_start -= 1
            name_start -= 1
        while name_start - 2 >= 0 and self._text(name_start - 1) == "::" and t[name_start - 2].kind == "ident":
            name_start -= 2
        if name_start < 0 or t[name_start].kind != "ident":
            return
        args = tuple(self._operand(s, e) for s, e in self._items(open_at + 1, self.match[open_at]))
        name_end = name_start
        while self._text(name_end + 1) == "::" and name_end + 2 < i:
            name_end += 2
        name = "".join(tok.text for tok in t[name_start : name_end + 1])
        self.facts.append(Fact("launch", name, t[name_start].line, t[name_start].column, None, args, self._in_lambda(i)))

    # -- operands ----------------------------------------------------------------------------
    def _items(self, start: int, end: int) -> list[tuple[int, int]]:
        """The top-level comma-separated items of tokens ``[start, end)`` (template arguments are not split)."""
        items, item_start, k, angle = [], start, start, 0
        while k < end:
            text = self._text(k)
            if text in ("(", "[", "{") and k in self.match:
                k = self.match[k] + 1
                continue
            if text == "<" and k > 0 and (self.t[k - 1].text in _CASTS or (self.t[k - 1].kind == "ident" and self._looks_template(k))):
                angle += 1
            elif text in (">", ">>") and angle:
                angle = max(angle - len(text), 0)
            elif text == "," and angle == 0:
                items.append((item_start, k))
                item_start = k + 1
            k += 1
        if item_start < end:
            items.append((item_start, end))
        return items

    def _looks_template(self, k: int) -> bool:
        """A ``<`` after an identifier opens template arguments when a ``>`` closes it before a ``;`` or ``)``."""
        depth = 0
        for m in range(k, min(k + 32, len(self.t))):
            text = self._text(m)
            if text in (";", "{", "}", "&&", "||"):
                return False
            depth += {"<": 1, ">": -1, ">>": -2}.get(text, 0)
            if depth <= 0:
                return True
        return False

    def _postfix_start(self, end: int) -> int:
        """The first token of the postfix expression ending at token ``end`` (``a.b(c)[d]``, ``ns::f(x).g()``)."""
        k = end
        t = self.t
        while k >= 0:
            text = self._text(k)
            if text in (")", "]") and k in self.match:
                k = self.match[k]
                if k > 0 and (t[k - 1].kind == "ident" or self._text(k - 1) in (">",)) and self._text(k) == "(":
                    k -= 1
                    if self._text(k) == ">":  # f<T>(...)
                        depth = 0
                        while k >= 0:
                            depth += {">": 1, ">>": 2, "<": -1}.get(self._text(k), 0)
                            if depth <= 0:
                                break
                            k -= 1
                        k -= 1
                    continue
                if self._text(k - 1) in (".", "->", "::") or (k > 0 and self._text(k - 1) in (")", "]")):
                    k -= 1
                    continue
                return k
            if t[k].kind == "ident":
                if self._text(k - 1) in (".", "->", "::") and k >= 2:
                    k -= 2
                    continue
                if self._text(k - 1) in (")", "]") and False:
                    continue
                return k
            if text in (".", "->", "::"):
                k -= 1
                continue
            return k + 1
        return 0

    def _operand(self, start: int, end: int) -> Operand:
        """What tokens ``[start, end)`` are: a variable and what is applied to it, or a call's result."""
        t = self.t
        if start >= end:
            at = t[min(start, len(t) - 1)] if t else None
            return Operand("", at.line if at else 0, at.column if at else 0)
        text = join(t[start:end])
        first = t[start]
        names = tuple((tok.text, tok.line, tok.column, self._member(m)) for m, tok in enumerate(t[start:end], start) if self._variable(m))
        k = start
        address = False
        # casts and wrappers the value passes through unchanged
        while k < end:
            word = self._text(k)
            if word == "&":
                address = True
                k += 1
                continue
            if word in ("*", "const"):
                k += 1
                continue
            if word in _CASTS and self._text(k + 1) == "<":
                depth, m = 0, k + 1
                while m < end:
                    depth += {"<": 1, ">": -1, ">>": -2}.get(self._text(m), 0)
                    if depth <= 0:
                        break
                    m += 1
                if self._text(m + 1) == "(" and self.match.get(m + 1) == end - 1:
                    start, end, k = m + 2, end - 1, m + 2
                    continue
                break
            head_end = k
            while self._text(head_end + 1) == "::" and head_end + 2 < end and t[head_end + 2].kind == "ident":
                head_end += 2
            head = "".join(tok.text for tok in t[k : head_end + 1])
            if head in _TRANSPARENT_CALLS and self._text(head_end + 1) == "(" and self.match.get(head_end + 1) == end - 1:
                k, end = head_end + 2, end - 1
                continue
            if word == "(" and self.match.get(k) == end - 1:
                k, end = k + 1, end - 1
                continue
            if word == "(" and k in self.match and self._is_type(k + 1, self.match[k]) and self.match[k] + 1 < end and (
                self.t[self.match[k] + 1].kind == "ident" or self._text(self.match[k] + 1) in ("(", "*", "&")
            ):
                k = self.match[k] + 1  # (Type)expr: a C-style cast
                continue
            break
        if k >= end:
            return Operand(text, first.line, first.column, names=names)
        root, call = "", ""
        chain: list[str] = []
        if t[k].kind == "ident":
            head_end = k
            while self._text(head_end + 1) == "::" and head_end + 2 < end and t[head_end + 2].kind == "ident":
                head_end += 2
            name = "".join(tok.text for tok in t[k : head_end + 1])
            open_at, _ = self._call_open(head_end)
            if open_at is not None and open_at < end:
                call = name
                k = self.match[open_at] + 1
            elif self._text(head_end + 1) == "{" and head_end + 1 in self.match and self.match[head_end + 1] < end:
                call = name  # T{...}: a temporary
                k = self.match[head_end + 1] + 1
            else:
                root = name
                k = head_end + 1
        else:
            return Operand(text, first.line, first.column, address=address, names=names)
        while k < end:
            word = self._text(k)
            if word in (".", "->") and k + 1 < end and t[k + 1].kind == "ident":
                chain.append(t[k + 1].text)
                m = k + 2
                open_at, _ = self._call_open(k + 1)
                if open_at is not None and open_at < end:
                    m = self.match[open_at] + 1
                k = m
                continue
            if word == "[" and k in self.match:
                chain.append("[]")
                k = self.match[k] + 1
                continue
            break
        if k < end:  # more follows (an operator, a conditional): not one variable's value
            return Operand(text, first.line, first.column, address=address, names=names)
        return Operand(text, first.line, first.column, root, tuple(chain), call, address, names)

    def _is_type(self, start: int, end: int) -> bool:
        """Tokens ``[start, end)`` spell a type (``GM_ADDR``, ``void *``, ``const uint8_t*``): a C-style cast's."""
        words = self.t[start:end]
        return bool(words) and words[0].kind == "ident" and all(tok.kind == "ident" or tok.text in ("::", "*", "&", "<", ">", ",") for tok in words) and (
            len(words) == 1 or any(tok.text in ("*", "&") for tok in words) or words[0].text in ("const", "unsigned", "signed")
            or all(tok.kind == "ident" or tok.text == "::" for tok in words)
        )


def _matching(tokens: list[Token]) -> dict[int, int]:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[int] = []
    match: dict[int, int] = {}
    for i, tok in enumerate(tokens):
        if tok.kind != "punct":
            continue
        if tok.text in "([{":
            stack.append(i)
        elif tok.text in pairs:
            while stack and tokens[stack[-1]].text != pairs[tok.text]:
                stack.pop()
            if stack:
                j = stack.pop()
                match[i], match[j] = j, i
    return match
