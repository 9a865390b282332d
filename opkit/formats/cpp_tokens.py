"""C++ source as located tokens, over the project's one C++ lexer (``cpp_text``): what the C++
registration reader walks.

``cpp_text`` finds the comments (blanked) and the literals; this module cuts what is left into
identifiers, numbers and punctuation, makes each preprocessor line one ``directive`` token
(continuations joined), and gives each string literal its value and the file position of every
character it produces (``cpp_text.literal_runs``), so a message about a schema written as adjacent
literals over several lines points at the right column. No macro expansion (``cpp_registrations``
expands the few macros it needs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from opkit.formats.cpp_text import CppText, literal_runs, logical_line_end

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.']|)*")
_PUNCT = re.compile(r"::|->\*?|\.\.\.|<<=|>>=|\+\+|--|&&|\|\||[-+*/%&|^!=<>]=|##|<<|[\[\](){}<>;:,.?~!+\-*/%&|^=#]")
_BLANK = re.compile(r"[ \t\r\f\v\n]+|\\\n")
_NEXT = re.compile(f"(?P<blank>{_BLANK.pattern})|(?P<ident>{_IDENT.pattern})|(?P<number>{_NUMBER.pattern})|(?P<punct>{_PUNCT.pattern})")



class Token(NamedTuple):
    """One token, located (a named tuple: a tree lexes a million of them, and a tuple is made in half the time of
    a frozen dataclass)."""

    kind: str  # "ident", "number", "string", "char", "punct", "directive"
    text: str  # as written; a string's decoded value is ``value``
    offset: int
    line: int
    column: int
    value: str = ""  # string literals: the characters the program sees
    # string literals: (index in value, line, column) where each run of consecutive source columns starts
    runs: tuple[tuple[int, int, int], ...] = ()


def tokenize(text: str) -> list[Token]:
    """Every token of ``text`` in order; CppTextError for text that cannot be lexed."""
    return list(_tokens(CppText(text), directives=True))


def cached_tokens(path: str, text: str, cache: dict | None) -> list[Token] | None:
    """``tokenize(text)``, kept in ``cache`` under ``path`` when one is given (readers that follow code
    across files share it); None for text the lexer cannot read."""
    from opkit.formats.cpp_text import CppTextError

    if cache is not None and path in cache:
        return cache[path]
    try:
        tokens = tokenize(text)
    except CppTextError:
        tokens = None
    if cache is not None:
        cache[path] = tokens
    return tokens


def split_code(code: str) -> list[str]:
    """The token texts of code that holds no comments (a preprocessor line cpp_text already cleaned,
    a macro's body), cut as ``tokenize`` cuts them, ``#`` included (in a macro's body it stringifies)."""
    return [t.text for t in _tokens(CppText(code), directives=False)]


def _tokens(lexed: CppText, *, directives: bool) -> Iterator[Token]:
    text, code = lexed.text, lexed.code
    # One pattern for the blanks and the three token kinds (tried in that order, as alternatives are), and
    # the line followed forwards from token to token: a million tokens of a tree cost one match each.
    match, literal_end = _NEXT.match, lexed.literal_end
    line_starts = lexed.line_starts
    lines = len(line_starts)
    line, next_line = 1, line_starts[1] if lines > 1 else len(code) + 1
    i, n = 0, len(code)
    line_start = directives  # only blanks since the last newline: a '#' here opens a directive
    while i < n:
        m = match(code, i)
        kind = m.lastgroup if m is not None else None
        if kind == "blank":
            line_start = line_start or (directives and "\n" in m.group())
            i = m.end()
            continue
        while next_line <= i:
            line += 1
            next_line = line_starts[line] if line < lines else n + 1
        column = i - line_starts[line - 1] + 1
        if code[i] == "#" and line_start:
            end = logical_line_end(code, i)
            yield Token("directive", " ".join(code[i:end].replace("\\\n", " ").split()), i, line, column)
            i = end
            continue
        line_start = False
        end = literal_end(i)
        if end is not None:
            written = text[i:end]
            if written.endswith("'"):
                yield Token("char", written, i, line, column)
            else:
                value, runs = literal_runs(written, line, column)
                yield Token("string", written, i, line, column, value, runs)
            i = end
            continue
        end = m.end() if m is not None else i + 1
        yield Token(kind or "punct", code[i:end], i, line, column)
        i = end


def tokenize_span(text: str, start: int, end: int) -> list[Token]:
    """The tokens of ``text[start:end]`` located in the whole text (offset, line, column), for a span that
    starts outside comments and literals (a function's ``{``, a declaration's first character): a reader
    that needs one function of a large file lexes that function alone."""
    from opkit.formats.cpp_text import CppText

    base_line = text.count("\n", 0, start) + 1
    base_column = start - (text.rfind("\n", 0, start) + 1) + 1
    out = []
    for t in _tokens(CppText(text[start:end]), directives=True):
        column = t.column + base_column - 1 if t.line == 1 else t.column
        runs = tuple((i, line + base_line - 1, c + base_column - 1 if line == 1 else c) for i, line, c in t.runs)
        out.append(Token(t.kind, t.text, t.offset + start, t.line + base_line - 1, column, t.value, runs))
    return out
