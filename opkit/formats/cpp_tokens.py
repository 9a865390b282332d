"""C++ source as located tokens: what the C++ registration reader walks.

Comments are dropped, string literals are decoded (escapes, raw strings ``R"d(...)d"``, encoding
prefixes) and keep the file position of every character they produce, so a message about a schema
written as adjacent literals over several lines points at the right column. Preprocessor lines
become one ``directive`` token each (continuations joined). Not a C++ front end: no macro expansion
(``cpp_registrations`` expands the few macros it needs), no trigraphs.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.']|)*")
_PUNCT = re.compile(r"::|->\*?|\.\.\.|<<=|>>=|\+\+|--|&&|\|\||[-+*/%&|^!=<>]=|##|<<|[\[\](){}<>;:,.?~!+\-*/%&|^=#]")
_STRING_START = re.compile(r'(u8|u|U|L)?(R)?"')
_CHAR_START = re.compile(r"(u8|u|U|L)?'")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", '"': '"', "'": "'", "?": "?"}


class CppSyntaxError(ValueError):
    """Text the tokenizer cannot read: an unterminated comment, string or character literal."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "number", "string", "char", "punct", "directive"
    text: str  # as written; a string's decoded value is ``value``
    offset: int
    line: int
    column: int
    value: str = ""  # string literals: the characters the program sees
    # string literals: (index in value, line, column) where each run of consecutive source columns starts
    runs: tuple[tuple[int, int, int], ...] = ()


class Lines:
    """Offsets → (line, column), both 1-based."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


def tokenize(text: str) -> list[Token]:
    """Every token of ``text`` in order; CppSyntaxError for text that cannot be tokenized."""
    lines = Lines(text)
    tokens: list[Token] = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and text.startswith("\n", i + 1):  # a line continuation outside a directive
            i += 2
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise CppSyntaxError("unterminated /* comment", *lines.position(i))
            i = end + 2
            continue
        line, column = lines.position(i)
        if c == "#" and at_line_start:
            i = _directive(text, i, line, column, tokens)
            continue
        at_line_start = False
        m = _STRING_START.match(text, i)
        if m and (m.group(1) or c == '"' or m.group(2)):
            i = _string(text, i, m, lines, tokens)
            continue
        m = _CHAR_START.match(text, i)
        if m:
            j = m.end()
            while j < n and text[j] != "'":
                if text[j] == "\n":
                    raise CppSyntaxError("unterminated character literal", line, column)
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise CppSyntaxError("unterminated character literal", line, column)
            tokens.append(Token("char", text[i : j + 1], i, line, column))
            i = j + 1
            continue
        m = _IDENT.match(text, i)
        if m:
            tokens.append(Token("ident", m.group(), i, line, column))
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m:
            tokens.append(Token("number", m.group(), i, line, column))
            i = m.end()
            continue
        m = _PUNCT.match(text, i)
        end = m.end() if m else i + 1
        tokens.append(Token("punct", text[i:end], i, line, column))
        i = end
    return tokens


def _directive(text: str, i: int, line: int, column: int, tokens: list[Token]) -> int:
    """One preprocessor line (continuations joined, comments dropped) as a ``directive`` token."""
    parts: list[str] = []
    j, n = i, len(text)
    start = i
    while j < n:
        if text[j] == "\n":
            if j > start and text[j - 1] == "\\":
                parts.append(text[start : j - 1])
                start = j + 1
                j += 1
                continue
            break
        if text.startswith("//", j):
            parts.append(text[start:j])
            end = text.find("\n", j)
            j = n if end < 0 else end
            start = j
            break
        if text.startswith("/*", j):
            parts.append(text[start:j])
            end = text.find("*/", j + 2)
            if end < 0:
                raise CppSyntaxError("unterminated /* comment", line, column)
            j = end + 2
            start = j
            continue
        if text[j] in "\"'":
            quote, k = text[j], j + 1
            while k < n and text[k] != quote and text[k] != "\n":
                k += 2 if text[k] == "\\" else 1
            j = k + 1
            continue
        j += 1
    parts.append(text[start:j])
    tokens.append(Token("directive", " ".join(" ".join(parts).split()), i, line, column))
    return j


def _string(text: str, i: int, m: re.Match, lines: Lines, tokens: list[Token]) -> int:
    line, column = lines.position(i)
    n = len(text)
    value: list[str] = []
    runs: list[tuple[int, int, int]] = []

    def run_at(offset: int) -> None:
        runs.append((len(value), *lines.position(offset)))

    j = m.end()
    if m.group(2):  # raw: R"delim( ... )delim"
        open_paren = text.find("(", j)
        if open_paren < 0 or open_paren - j > 16 or any(ch in text[j:open_paren] for ch in ' \\)\n"'):
            raise CppSyntaxError("malformed raw string literal delimiter", line, column)
        closing = ")" + text[j:open_paren] + '"'
        end = text.find(closing, open_paren + 1)
        if end < 0:
            raise CppSyntaxError("unterminated raw string literal", line, column)
        body_start = open_paren + 1
        run_at(body_start)
        for k in range(body_start, end):
            value.append(text[k])
            if text[k] == "\n":
                run_at(k + 1)
        tokens.append(Token("string", text[i : end + len(closing)], i, line, column, "".join(value), tuple(runs)))
        return end + len(closing)
    run_at(j)
    while True:
        if j >= n or text[j] == "\n":
            raise CppSyntaxError("unterminated string literal", line, column)
        ch = text[j]
        if ch == '"':
            break
        if ch == "\\":
            if text.startswith("\n", j + 1):  # a continuation inside the literal
                j += 2
                run_at(j)
                continue
            decoded, width = _escape(text, j)
            value.append(decoded)
            j += width
            run_at(j)
            continue
        value.append(ch)
        j += 1
    tokens.append(Token("string", text[i : j + 1], i, line, column, "".join(value), tuple(runs)))
    return j + 1


def _escape(text: str, j: int) -> tuple[str, int]:
    """The character an escape sequence at ``j`` stands for, and its width in the source."""
    nxt = text[j + 1 : j + 2]
    if nxt in _SIMPLE_ESCAPES and nxt != "0":
        return _SIMPLE_ESCAPES[nxt], 2
    octal = re.match(r"[0-7]{1,3}", text[j + 1 : j + 4])
    if octal:
        return chr(int(octal.group(), 8)), 1 + len(octal.group())
    hexa = re.match(r"x([0-9A-Fa-f]+)", text[j + 1 : j + 12])
    if hexa:
        return chr(int(hexa.group(1), 16) % 0x110000), 1 + len(hexa.group())
    return nxt, 2


def position_in(token_runs: tuple[tuple[int, int, int], ...], index: int) -> tuple[int, int]:
    """The file (line, column) of character ``index`` of a string whose ``runs`` are given."""
    starts = [r[0] for r in token_runs]
    k = max(bisect.bisect_right(starts, index) - 1, 0)
    start, line, column = token_runs[k]
    return line, column + (index - start)
