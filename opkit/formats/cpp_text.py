"""C++ source text for the readers that read C++ without compiling it (OpDefs, C++ op registrations).

``CppText(text)`` lexes a file once, in one pass: comments are blanked (newlines kept, so every offset
keeps its line and column), string, character and raw string literals are kept as written and
skipped over, and every bracket is matched. After that each question is cheap: where an offset is
(``position``), where a bracket closes (``closing``), the top-level statements of a block
(``statements``) or the top-level items of a list (``items``), and the value of a string literal
(``string_value``). Nothing rescans text already lexed, so reading a file stays linear in its size.

It is a lexer, not a C++ parser: preprocessor directives are read as ordinary text (except that a
directive line outside brackets is a statement of its own, ``#ifdef X`` is never glued to the statement
after it), and ``<``/``>`` are not brackets (a comma inside template arguments splits an item list).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
# What the lexer stops at (everything between is copied as it is), then the structure it marks.
_COMMENT_OR_LITERAL = re.compile(r"//|/\*|[\"']")
_STRUCTURE = re.compile(r"[()\[\]{};,]")
_BLOCK_KEYWORD = re.compile(r"(?:^|[^\w])(?:else|do|try)$")
# A preprocessor directive line (with its backslash continuations).
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_STRING_REST = re.compile(r'(?:[^"\\\n]|\\[\s\S])*"')
_CHAR_REST = re.compile(r"(?:[^'\\\n]|\\[\s\S])*'")
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
_ENCODING_PREFIXES = ("u8", "u", "U", "L")
_RAW_DELIMITER = re.compile(r'[^\s()\\"]{0,16}\(')
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NUMBER_CHARS = _WORD_CHARS | {".", "'"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?", "\n": ""}


class CppTextError(ValueError):
    """C++ text the lexer cannot read: one message and its line and column (1-based)."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}:{column}: {message}")
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Literal:
    """A string or character literal as written: ``text[start:end]``, its encoding prefix included."""

    start: int
    end: int
    kind: str  # "string", "raw string" or "character"


class CppText:
    """One C++ file, lexed once. ``code`` is the text with comments blanked; offsets index both."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.literals: list[Literal] = []
        self._closing: dict[int, int] = {}  # opening bracket's offset → its closing bracket's offset
        self._unclosed: dict[int, CppTextError] = {}  # opening bracket left open → why
        self._stray: list[int] = []  # closing brackets that close nothing (sorted)
        self._broken: list[int] = []  # opening brackets a wrong closing bracket left open (sorted once lexed)
        self._marks: list[int] = []  # offsets of every bracket, ';' and ',' outside comments and literals
        self.code = self._lex(text)
        self._broken.sort()
        self._literal_end = {lit.start: lit.end for lit in self.literals}

    # -- positions ----------------------------------------------------------------------------------

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column), both 1-based, of an offset."""
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    @property
    def line_starts(self) -> list[int]:
        """The offset where each line starts (line ``k`` at index ``k - 1``)."""
        return self._line_starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def error(self, message: str, offset: int) -> CppTextError:
        return CppTextError(message, *self.position(offset))

    # -- structure ----------------------------------------------------------------------------------

    def closing(self, offset: int) -> int:
        """The offset of the bracket closing the one at ``offset``; CppTextError if it is never closed or a
        bracket between them closes nothing."""
        end = self._closing.get(offset)
        if end is None:
            if offset in self._unclosed:
                raise self._unclosed[offset]
            raise ValueError(f"no opening bracket at offset {offset}")
        if self._stray:
            stray = bisect.bisect_right(self._stray, offset)
            if stray < len(self._stray) and self._stray[stray] < end:
                raise self.error(f"unbalanced {self.code[self._stray[stray]]!r}", self._stray[stray])
        if self._broken:
            broken = bisect.bisect_right(self._broken, offset)
            if broken < len(self._broken) and self._broken[broken] < end:
                raise self._unclosed[self._broken[broken]]
        return end

    def statements(self, start: int, end: int) -> list[tuple[int, int]]:
        """The top-level ``;``-separated statements of ``code[start:end]`` as (start, end) offsets, blanks
        around them trimmed and empty ones left out. A directive line outside brackets (``#ifdef X``,
        ``#endif``) is a statement of its own, starting with ``#``."""
        pieces = []
        for piece in self._pieces(start, end, ";"):
            pieces.extend(self._split_at_directives(*piece))
        return pieces

    def _split_at_directives(self, start: int, end: int) -> list[tuple[int, int]]:
        if "#" not in self.code[start:end]:
            return [(start, end)]
        pieces, at = [], start
        line_start = self.code.rfind("\n", 0, start) + 1  # where '^' can match: a piece starts after blanks
        for m in _DIRECTIVE.finditer(self.code, line_start, end):
            if self._inside_brackets(at, m.start()):
                continue  # a directive inside an argument list: left to the statement it sits in
            pieces += [self.trimmed(at, max(m.start(), at)), self.trimmed(max(m.start(), at), m.end())]
            at = m.end()
        pieces.append(self.trimmed(at, end))
        return [p for p in pieces if p[0] < p[1]]

    def _inside_brackets(self, start: int, offset: int) -> bool:
        """Whether a bracket opened in ``code[start:offset]`` is still open at ``offset``."""
        marks = self._marks
        k = bisect.bisect_left(marks, start)
        while k < len(marks) and marks[k] < offset:
            if self.code[marks[k]] in _OPENERS:
                close = self.closing(marks[k])
                if close > offset:
                    return True
                k = bisect.bisect_right(marks, close, k)
                continue
            k += 1
        return False

    def items(self, start: int, end: int) -> list[tuple[int, int]]:
        """The top-level ``,``-separated items of ``code[start:end]`` (an argument or initializer list)."""
        return self._pieces(start, end, ",")

    def _pieces(self, start: int, end: int, separator: str) -> list[tuple[int, int]]:
        pieces, piece_start = [], start
        marks, code = self._marks, self.code
        k = bisect.bisect_left(marks, start)
        while k < len(marks) and marks[k] < end:
            at = marks[k]
            c = code[at]
            if c in _OPENERS:
                close = self.closing(at)
                if close >= end:
                    raise self.error(f"{c!r} is never closed", at)
                k = bisect.bisect_right(marks, close, k)
                if c == "{" and separator == ";" and self._opens_block(piece_start, at):
                    pieces.append(self.trimmed(piece_start, close + 1))  # if (...) {...}: a statement of its own
                    piece_start = close + 1
                continue
            if c in _CLOSERS:
                raise self.error(f"unbalanced {c!r}", at)
            if c == separator:
                pieces.append(self.trimmed(piece_start, at))
                piece_start = at + 1
            k += 1
        pieces.append(self.trimmed(piece_start, end))
        return [p for p in pieces if p[0] < p[1]]

    def _opens_block(self, start: int, brace: int) -> bool:
        """Whether the ``{`` at ``brace`` opens a compound statement (``for (...) {``, ``else {``, a bare
        block), which ends its statement, rather than an initializer or a lambda's body."""
        before = self.code[start:brace].rstrip()
        return not before or before.endswith(")") or _BLOCK_KEYWORD.search(before) is not None

    def trimmed(self, start: int, end: int) -> tuple[int, int]:
        """(start, end) moved inwards past blanks (spaces, newlines, blanked comments)."""
        piece = self.code[start:end]
        left = piece.lstrip()
        if not left:
            return end, end
        return start + len(piece) - len(left), start + len(piece.rstrip())

    def literal_end(self, start: int) -> int | None:
        """The end of the literal starting at ``start``, or None when none starts there."""
        return self._literal_end.get(start)

    def string_value(self, start: int, end: int) -> str | None:
        """The value of ``code[start:end]`` when it is one string literal or adjacent ones (``"a" "b"``,
        raw strings included), else None."""
        parts = []
        at = self.trimmed(start, end)[0]
        while at < end:
            lit_end = self._literal_end.get(at)
            if lit_end is None or lit_end > end:
                return None
            lit = self.text[at:lit_end]
            if lit.endswith("'"):
                return None
            parts.append(literal_value(lit))
            at = self.trimmed(lit_end, end)[0]
        return "".join(parts) if parts else None

    # -- the one pass -------------------------------------------------------------------------------

    def _lex(self, text: str) -> str:
        # Comments and literals first: ``code`` blanks the comments, ``masked`` the literals too, so the
        # brackets and separators are then found in ``masked`` by one regex scan.
        code: list[str] = []
        masked: list[str] = []
        copied = at = 0  # text[:copied] is in code and masked
        while True:
            m = _COMMENT_OR_LITERAL.search(text, at)
            if m is None:
                break
            i, token = m.start(), m.group()
            if token == "//":
                end = logical_line_end(text, i)
                blank = " " * (end - i)
                code += (text[copied:i], blank)
                masked += (text[copied:i], blank)
            elif token == "/*":
                close = text.find("*/", i + 2)
                if close < 0:
                    raise self.error("unterminated /* comment", i)
                end = close + 2
                blank = re.sub(r"[^\n]", " ", text[i:end])
                code += (text[copied:i], blank)
                masked += (text[copied:i], blank)
            else:
                end = self._string(text, i) if token == '"' else self._character(text, i)
                if end == i + 1 and token == "'":  # a digit separator
                    at = end
                    continue
                start = self.literals[-1].start
                code.append(text[copied:end])
                masked += (text[copied:start], re.sub(r"[^\n]", " ", text[start:end]))
            copied = at = end
        code.append(text[copied:])
        masked.append(text[copied:])
        structure = "".join(masked)
        self._marks = [m.start() for m in _STRUCTURE.finditer(structure)]
        openers: list[int] = []
        for i in self._marks:
            c = structure[i]
            if c in _OPENERS:
                openers.append(i)
            elif c in _CLOSERS:
                self._close(openers, i, c)
        for i in openers:
            self._unclosed[i] = self.error(f"{text[i]!r} is never closed", i)
        return "".join(code)

    def _close(self, openers: list[int], i: int, token: str) -> None:
        wanted = _CLOSERS[token]
        if openers and self.text[openers[-1]] == wanted:
            self._closing[openers.pop()] = i
            return
        if any(self.text[o] == wanted for o in openers):
            # the brackets opened since the one this closes are never closed: each says where it went wrong
            while self.text[openers[-1]] != wanted:
                broken = openers.pop()
                self._unclosed[broken] = self.error(f"unbalanced {token!r}", i)
                self._broken.append(broken)
            self._closing[openers.pop()] = i
            return
        self._stray.append(i)

    def _prefix_start(self, text: str, i: int) -> int:
        k = i
        while k > 0 and text[k - 1] in _WORD_CHARS:
            k -= 1
        return k

    def _string(self, text: str, i: int) -> int:
        start = self._prefix_start(text, i)
        prefix = text[start:i]
        if prefix in _RAW_PREFIXES:
            delimiter = _RAW_DELIMITER.match(text, i + 1)
            if delimiter is None:
                raise self.error("raw string literal without a valid delimiter", start)
            closing = ")" + delimiter.group()[:-1] + '"'
            close = text.find(closing, delimiter.end())
            if close < 0:
                raise self.error("unterminated raw string literal", start)
            end = close + len(closing)
            self.literals.append(Literal(start, end, "raw string"))
            return end
        if prefix not in _ENCODING_PREFIXES:
            start = i  # a macro or identifier written against the quote, not a prefix
        rest = _STRING_REST.match(text, i + 1)
        if rest is None:
            raise self.error("unterminated string literal", i)
        self.literals.append(Literal(start, rest.end(), "string"))
        return rest.end()

    def _character(self, text: str, i: int) -> int:
        start = self._prefix_start(text, i)
        if _in_number(text, i):
            return i + 1  # a digit separator: 1'000'000
        if text[start:i] not in _ENCODING_PREFIXES:
            start = i
        rest = _CHAR_REST.match(text, i + 1)
        if rest is None:
            raise self.error("unterminated character literal", i)
        self.literals.append(Literal(start, rest.end(), "character"))
        return rest.end()


def _in_number(text: str, i: int) -> bool:
    """Whether the quote at ``i`` sits inside a number (``0x1'00``): what precedes it, back to the
    start of the token, begins with a digit."""
    k = i
    while k > 0 and text[k - 1] in _NUMBER_CHARS:
        k -= 1
    return k < i and text[k].isdigit()


def logical_line_end(text: str, i: int) -> int:
    """The end of the line that ``i`` is on, or of a later one when a backslash continues it: where a
    ``//`` comment or a preprocessor directive ends."""
    while True:
        end = text.find("\n", i)
        if end < 0:
            return len(text)
        if text.endswith("\\", 0, end) or text.endswith("\\\r", 0, end):
            i = end + 1
            continue
        return end


def literal_runs(literal: str, line: int, column: int) -> tuple[str, tuple[tuple[int, int, int], ...]]:
    """A string literal's value and where its characters sit: ``runs`` holds (index in the value, line,
    column) wherever a run of consecutive source columns starts (after an escape, at each new line of a
    raw string), for a literal that starts at (``line``, ``column``) of its file."""
    value = literal_value(literal)
    quote = literal.find('"')
    runs: list[tuple[int, int, int]] = []
    if literal[:quote].endswith("R"):
        open_paren = literal.index("(", quote)
        at_line, at_column = line, column + open_paren + 1
        runs.append((0, at_line, at_column))
        for k, c in enumerate(value):
            if c == "\n":
                at_line += 1
                runs.append((k + 1, at_line, 1))
        return value, tuple(runs)
    body = literal[quote + 1 : -1]
    at_line, at_column = line, column + quote + 1
    runs.append((0, at_line, at_column))
    produced, i = 0, 0
    while i < len(body):
        if body[i] != "\\" or i + 1 >= len(body):
            produced += 1
            i += 1
            at_column += 1
            continue
        width = len(body[i:]) - len(_escape_rest(body[i:]))
        piece = literal_value('"' + body[i : i + width] + '"')
        produced += len(piece)
        if body[i + 1] == "\n":  # a continuation: the literal goes on at the next line's start
            at_line, at_column = at_line + 1, 1
        else:
            at_column += width
        i += width
        runs.append((produced, at_line, at_column))
    return value, tuple(runs)


def _escape_rest(text: str) -> str:
    """``text`` (starting with a backslash) after its first escape sequence."""
    e = text[1]
    if e == "x":
        digits = re.match(r"[0-9A-Fa-f]*", text[2:]).group()
        return text[2 + len(digits) :]
    if e in "uU" and re.fullmatch(r"[0-9A-Fa-f]+", text[2 : 2 + (4 if e == "u" else 8)] or "-"):
        return text[2 + (4 if e == "u" else 8) :]
    if e in "01234567":
        return text[1 + len(re.match(r"[0-7]{1,3}", text[1:]).group()) :]
    return text[2:]


def literal_value(literal: str) -> str:
    """The characters a C++ string or character literal denotes (its prefix dropped, escapes read)."""
    quote = literal.find('"') if '"' in literal else literal.find("'")
    prefix, body = literal[:quote], literal[quote:]
    if prefix.endswith("R"):
        open_paren = body.index("(")
        return body[open_paren + 1 : len(body) - open_paren - 1]
    inner = body[1:-1]
    if "\\" not in inner:
        return inner
    out, i = [], 0
    while i < len(inner):
        c = inner[i]
        if c != "\\" or i + 1 >= len(inner):
            out.append(c)
            i += 1
            continue
        e = inner[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e == "x":
            digits = re.match(r"[0-9A-Fa-f]+", inner[i + 2 :])
            out.append(chr(min(int(digits.group(), 16), 0x10FFFF)) if digits else "x")
            i += 2 + (len(digits.group()) if digits else 0)
        elif e in "uU" and re.fullmatch(r"[0-9A-Fa-f]+", inner[i + 2 : i + 2 + (4 if e == "u" else 8)] or "-"):
            width = 4 if e == "u" else 8
            out.append(chr(min(int(inner[i + 2 : i + 2 + width], 16), 0x10FFFF)))
            i += 2 + width
        elif e in "01234567":
            digits = re.match(r"[0-7]{1,3}", inner[i + 1 :]).group()
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        else:
            out.append(e)
            i += 2
    return "".join(out)
