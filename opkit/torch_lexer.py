"""The lexical rules of ``torch._C.parse_schema`` (torch/csrc/jit/frontend/lexer.h), for the torch.library dialect.

torch reads a schema with TorchScript's C++ lexer: ASCII only outside string literals, blanks are
C's ``isspace``, ``#`` starts a comment, newlines count only outside parentheses, Python keywords and a
few more are tokens (never names), numbers are what ``strtod`` reads, strings take C escapes.
``signature.parse._parse_torch_library`` applies these rules before the grammar; the differential tests in
tests/signature compare the result with torch itself. Pure string functions: no torch import.
"""

from __future__ import annotations

import re

# Multi-character tokens of the lexer that look like identifiers: never a name, a type or an overload.
KEYWORDS = frozenset(
    """def if else elif while return is True False None and or not global raise assert break continue
    del pass class import with as Ellipsis NoneType in for""".split()
)

# Device types c10::Device accepts in a ``Device d="..."`` default (its error message lists them), with
# "npu": on the machines opkit's ops run on, torch_npu names PrivateUse1 "npu" when it is imported.
DEVICE_TYPES = frozenset(
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu mtia privateuseone npu".split()
)

# Starts the message of each deliberate refusal of what torch accepts (docs/lint.md, "Schema dialects").
UNSUPPORTED = "unsupported by opkit"

_BLANKS = " \t\v\f\r"  # C isspace() without '\n'
# What strtod reads at the start of a token (the lexer's number), and a complex literal's 'j'.
NUMBER_RE = re.compile(r"(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?\d+)?|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)j?")
_INT64 = (-(2**63), 2**63 - 1)
_SKIPPED = re.compile(r"[#\\\n\t\v\f\r\"']")  # and quotes: a string literal must end (blank_out checks it)


class LexError(ValueError):
    """A lexical error at a 0-based index of the schema text."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.message = message
        self.index = index


def string_end(text: str, start: int) -> int:
    """Index just past the string literal starting at ``text[start]`` (a quote), or -1 (unterminated).

    One or three quotes; a backslash escapes the next character; a newline ends a one-quote string.
    """
    quote = text[start]
    width = 3 if text.startswith(quote * 3, start) else 1
    closing = quote * width
    i = start + width
    while i < len(text):
        if text.startswith(closing, i):
            return i + width
        if text[i] == "\n" and width == 1:
            return -1
        i += 2 if text[i] == "\\" else 1
    return -1


def blank_out(text: str) -> str:
    """``text`` with what the lexer skips (comments, line continuations, newlines inside parentheses,
    trailing blank lines) turned into spaces, same length; raises LexError where it would fail."""
    if text.isascii() and not _SKIPPED.search(text):
        return text  # the common case: one line, no comment, nothing the lexer skips but spaces
    out = list(text)
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            end = string_end(text, i)
            if end < 0:
                raise LexError("unterminated string literal", i)
            i = end
            continue
        if ch == "#" and not text.startswith("# type:", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if ch == "\\" and i + 1 < n and text[i + 1] == "\n":
            out[i] = out[i + 1] = " "
            i += 2
            continue
        if ch == "\n":
            if depth == 0 and text[i:].strip(_BLANKS + "\n"):
                rest = i + 1 + (len(text[i + 1 :]) - len(text[i + 1 :].lstrip(_BLANKS + "\n")))
                if not text.startswith("#", rest):
                    raise LexError("a schema is one declaration: nothing may follow a line break outside parentheses", rest)
            out[i] = " "
        elif ch in _BLANKS:
            out[i] = " "
        elif ord(ch) > 127:
            raise LexError(f"character {ch!r} (U+{ord(ch):04X}) is not allowed outside a string literal: torch's lexer reads ASCII", i)
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        i += 1
    return "".join(out)


def string_value(literal: str) -> str:
    """The value of a string literal as torch's ``parseStringLiteral`` reads it; ValueError if torch refuses it.

    torch keeps the bytes: a character as its UTF-8, an octal escape as one byte (``'\\303\\251'`` is ``é``)."""
    width = 3 if len(literal) >= 6 and literal[:3] == literal[0] * 3 else 1
    body = literal[width:-width]
    out = bytearray()
    i = 0
    simple = {"\\": "\\", "'": "'", '"': '"', "\n": "\n", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "v": "\v", "t": "\t"}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in simple and nxt:
            out += simple[nxt].encode()
            i += 2
        elif nxt in ("x", "u", "U"):
            raise ValueError(f"torch refuses the escape '\\{nxt}' in a string default")
        elif re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]) and int(body[i + 1 : i + 4], 8) < 256:
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            raise ValueError(f"torch refuses the escape '\\{nxt}' in a string default (ill-formed octal)")
    try:
        return out.decode()
    except UnicodeDecodeError:
        raise ValueError(f"{UNSUPPORTED}: the string default {literal} holds bytes that are not UTF-8 text (octal escapes), which Python cannot read from torch's schema") from None


def number_value(text: str, *, as_float: bool) -> int | float:
    """A number default (``-`` and one strtod number) as torch reads it; ValueError where torch fails or
    where its reading differs from what the text says (opkit refuses those rather than mean something else)."""
    body = text[1:] if text.startswith("-") else text
    if not NUMBER_RE.fullmatch(body):
        raise ValueError(f"default {text} is not a number, a string, True, False or None")
    if body.endswith("j"):
        raise ValueError(f"{UNSUPPORTED}: the complex default {text}: opkit has no complex arguments")
    if body[:2] in ("0x", "0X"):
        # torch reads a number token with '.' or 'e' with strtod, hexadecimal ones too (0x1e is 30.0, 0x1p3 is 0)
        reading = "a float" if as_float or "." in body or "e" in body else "its leading 0"
        raise ValueError(f"{UNSUPPORTED}: the hexadecimal default {text}, which torch reads as {reading}: write it in decimal")
    if as_float or "." in body or "e" in body:
        value = float(text)
        if value in (float("inf"), float("-inf")) or (value == 0 and re.search(r"[1-9]", body.split("e")[0].split("E")[0])):
            raise ValueError(f"default {text} is out of the range of a double")
        return value
    if "E" in body:
        raise ValueError(f"{UNSUPPORTED}: the integer default {text}, which torch reads only up to the 'E' ({text.split('E')[0]}): write {int(float(text))}")
    value = int(text, 10)
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"default {text} is out of the range of a 64-bit integer")
    return value


def device_problem(literal: str) -> str | None:
    """Why torch refuses a ``Device`` default (a string naming a device: ``"cpu"``, ``"cuda:0"``), or None."""
    if not literal or literal[0] not in "\"'":
        return f"a Device default is a string naming a device, e.g. \"cpu\", not {literal}"
    try:
        value = string_value(literal)
    except ValueError as exc:
        return str(exc)
    m = re.fullmatch(r"([a-z]+)(?::(0|[1-9][0-9]*))?", value)
    if m is None or m.group(1) not in DEVICE_TYPES:
        return f"{literal} is not a device torch knows (one of {', '.join(sorted(DEVICE_TYPES))}, with an optional :index)"
    return None
