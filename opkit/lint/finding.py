"""Findings: what a rule reports, located in a file."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    """Ordered, so ``--fail-on`` compares. FATAL is unreadable input: exit code 2, never a rule."""

    INFO = 0
    WARNING = 1
    ERROR = 2
    FATAL = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; choose info, warning or error") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    path: str
    line: int = 1
    column: int = 1
    op: str | None = None  # ``name.overload`` concerned, when there is one
    hint: str | None = None

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "op": self.op,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class Violation:
    """What a rule yields: the engine adds the code, severity and, unless given, the location."""

    message: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    path: str | None = None
    op: str | None = None
