"""JSON reading shared by the linter and `opkit new`/`verify`: strict where ``json.loads`` is lenient.

``json.loads`` accepts ``NaN`` and ``Infinity`` (not JSON, and no C++ literal), turns ``1e999`` into
infinity, keeps the last of two equal keys without a word, and raises a bare ``ValueError`` for an
integer over Python's 4300-digit limit. Here each is a ``JsonError`` with its position, and
duplicate keys are returned for the caller to report.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class JsonError(ValueError):
    """The text is not plain JSON; ``message`` says how (callers prefix "invalid JSON: "), at ``line``:``column``."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _position(text: str, pattern: str) -> tuple[int, int]:
    """(line, column), 1-based, of the first match of ``pattern`` outside string literals; (1, 1) if none."""
    masked = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    found = re.search(pattern, masked)
    if found is None:
        return 1, 1
    start = found.start()
    return masked.count("\n", 0, start) + 1, start - (masked.rfind("\n", 0, start) + 1) + 1


def loads(text: str, *, find_duplicates: bool = True) -> tuple[Any, tuple[str, ...]]:
    """(value, keys that an object repeats) of a JSON text; JsonError for anything that is not plain JSON.
    ``find_duplicates=False``: the same value and errors, no repeated keys looked for (then the objects
    are built by json's C scanner, not a Python hook per object: ~30% of the time of a large file)."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                duplicates.append(key)
            obj[key] = value  # the last wins, as json.load (and so msOpGen) reads it
        return obj

    def constant(name: str) -> float:
        raise JsonError(f"{name} (RFC 8259 JSON has no NaN or Infinity)", *_position(text, rf"(?<![\w-]){re.escape(name)}(?!\w)"))  # name: NaN, Infinity, -Infinity

    def number(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise JsonError(f"number {literal} is out of range (it reads as {value})", *_position(text, re.escape(literal)))
        return value

    try:
        value = json.loads(text, object_pairs_hook=pairs if find_duplicates else None, parse_constant=constant, parse_float=number)
    except JsonError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonError(exc.msg, exc.lineno, exc.colno) from None
    except ValueError:  # int() refusing a huge literal: the only other ValueError json raises
        limit = sys.get_int_max_str_digits()
        raise JsonError(f"integer with more than {limit} digits", *_position(text, r"\d{%d,}" % (limit + 1))) from None
    return value, tuple(duplicates)
