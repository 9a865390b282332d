"""Inline suppression, as ruff and flake8 spell it: ``# noqa`` or ``# noqa: S102, Y0`` on the line
(``// noqa: O001`` in C++, which has no ``#`` comments)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CODES = r"(?::\s*(?P<codes>[A-Za-z0-9]+(?:[\s,]+[A-Za-z0-9]+)*))?"
_NOQA_RES = {marker: re.compile(re.escape(marker) + r"\s*noqa" + _CODES, re.IGNORECASE) for marker in ("#", "//")}


@dataclass(frozen=True)
class NoqaMap:
    """Line number → the codes (or prefixes) suppressed there; an empty set suppresses everything."""

    lines: dict[int, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str, *, comment: str = "#") -> NoqaMap:
        lines: dict[int, frozenset[str]] = {}
        noqa_re = _NOQA_RES[comment]
        if "noqa" not in text and "NOQA" not in text:
            return cls(lines)
        for number, line in enumerate(text.splitlines(), start=1):
            if comment not in line:
                continue
            m = noqa_re.search(line)
            if m:
                codes = m.group("codes")
                lines[number] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else frozenset()
        return cls(lines)

    def suppresses(self, line: int, code: str) -> bool:
        codes = self.lines.get(line)
        if codes is None:
            return False
        return not codes or any(code.upper().startswith(c) for c in codes)
