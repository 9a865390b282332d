"""Findings: what a rule reports, located in a file."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from opkit.formats.files import InputError, NotLinted


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


# Problems that stop a file being fully checked: stable codes, FATAL findings (exit code 2), listed by `opkit rules`.
INPUT_ERRORS = {
    "E001": ("unreadable-input", "The file cannot be read as text: missing, a directory, binary, not UTF-8, or too large."),
    "E002": ("syntax-error", "The file is not valid YAML, JSON or Python, as its extension says it should be."),
    "E003": ("unexpected-structure", "The file parses but is not shaped like the input it claims to be (a list where a mapping belongs, ...)."),
    "E004": ("unknown-input", "opkit cannot tell what kind of input the path is (use .yaml/.yml, .py or .json)."),
    "E005": ("internal-error", "A rule crashed on this input: a bug in opkit. The other rules and files are still checked; please report it with the input."),
}

# Inputs found but not linted: INFO findings, so a skipped file is visible yet never fails the run.
INPUT_NOTES = {
    "I001": ("input-skipped", "A file opkit recognised but does not lint (an empty yaml, autograd derivatives, a non-msOpGen JSON ...); the message says what it is."),
}


def input_error_finding(error: InputError, path: str) -> Finding:
    """A reader's located error as the FATAL finding that makes `opkit lint` exit 2."""
    return Finding(error.code, Severity.FATAL, error.message, path, error.line, error.column, hint=error.hint)


def not_linted_finding(skip: NotLinted, path: str) -> Finding:
    """A file a reader recognised but does not read, as an INFO finding."""
    return Finding("I001", Severity.INFO, f"not linted: {skip.reason}", path)
