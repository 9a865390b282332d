"""Inline suppression, as ruff and flake8 spell it: ``# noqa`` or ``# noqa: S102, Y0`` on the line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9]+(?:[\s,]+[A-Za-z0-9]+)*))?", re.IGNORECASE)


@dataclass(frozen=True)
class NoqaMap:
    """Line number → the codes (or prefixes) suppressed there; an empty set suppresses everything."""

    lines: dict[int, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str, *, comment: str = "#") -> NoqaMap:
        lines: dict[int, frozenset[str]] = {}
        if "noqa" not in text and "NOQA" not in text:
            return cls(lines)
        for number, line in enumerate(text.splitlines(), start=1):
            if comment not in line:
                continue
            m = _NOQA_RE.search(line)
            if m:
                codes = m.group("codes")
                lines[number] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else frozenset()
        return cls(lines)

    def suppresses(self, line: int, code: str) -> bool:
        codes = self.lines.get(line)
        if codes is None:
            return False
        return not codes or any(code.upper().startswith(c) for c in codes)
