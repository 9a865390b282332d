"""Baselines: adopt `opkit lint` on an existing repository by recording today's findings.

``opkit lint --baseline FILE --write-baseline`` records every finding; later runs with ``--baseline
FILE`` report only findings not recorded there. A finding is matched by its code, file, op and a
fingerprint of its content (the source line it sits on and its message, with line numbers taken
out), never by its line number: entries added above it, or a file reordered, do not break the
match, while a changed entry (or a second finding of the same kind) is reported. Paths are stored
relative to the baseline file, so the file can be committed. Unreadable input (exit status 2) is
never baselined.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from opkit import jsonio
from opkit.atomic_write import WriteFailed, replace_file
from opkit.lint.finding import Finding, Severity
from opkit.formats.files import InputError, read_text

FORMAT = 1
_LINE_NUMBER = re.compile(r"\b(line|lines|at) \d+\b")


class BaselineError(ValueError):
    """A baseline file that cannot be read or written: one message naming the file."""


@dataclass(frozen=True)
class Key:
    code: str
    path: str  # relative to the baseline file's directory
    op: str
    fingerprint: str


def _line_text(path: str, line: int, lines_of: dict[str, list[str]]) -> str:
    if path not in lines_of:
        try:
            with open(path, encoding="utf-8-sig", errors="replace") as f:
                lines_of[path] = f.read().splitlines()
        except OSError:
            lines_of[path] = []
    lines = lines_of[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def fingerprint(finding: Finding, line_text: str) -> str:
    message = _LINE_NUMBER.sub(r"\1 N", finding.message)
    return hashlib.sha256(f"{finding.code}\0{line_text}\0{message}".encode()).hexdigest()[:16]


def _relative(path: str, base: str) -> str:
    if not path or path.startswith("<"):
        return path
    try:
        return os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return path


def keys(findings: Iterable[Finding], baseline_path: str) -> list[Key]:
    base = os.path.dirname(os.path.abspath(baseline_path))
    lines_of: dict[str, list[str]] = {}
    return [Key(f.code, _relative(f.path, base), f.op or "", fingerprint(f, _line_text(f.path, f.line, lines_of) if f.path else "")) for f in findings]


def write(findings: Sequence[Finding], baseline_path: str) -> int:
    """Record the findings (fatal ones excepted); returns how many were written."""
    kept = [f for f in findings if f.severity is not Severity.FATAL]
    rows = sorted({(k.path, k.code, k.op, k.fingerprint): n for k, n in Counter(keys(kept, baseline_path)).items()}.items())
    document = {
        "format": FORMAT,
        "tool": "opkit lint",
        "findings": [{"path": p, "code": c, "op": o, "fingerprint": fp, "count": n} for (p, c, o, fp), n in rows],
    }
    try:
        replace_file(baseline_path, (json.dumps(document, indent=1) + "\n").encode("utf-8"))
    except WriteFailed as exc:
        raise BaselineError(f"{baseline_path}: cannot write the baseline ({exc}); the old baseline is kept") from None
    return len(kept)


def read(baseline_path: str) -> Counter[Key]:
    """The recorded findings; BaselineError naming the file (and the place) for anything else: a FIFO or
    device (never opened for a blocking read), a file over the size limit, invalid or too deeply nested JSON."""
    if not os.path.lexists(baseline_path):
        raise BaselineError(f"{baseline_path}: no such baseline file; create it with --write-baseline")
    try:
        document, _ = jsonio.loads(read_text(baseline_path))
    except InputError as exc:
        raise BaselineError(f"{baseline_path}: cannot read the baseline: {exc.message}") from None
    except jsonio.JsonError as exc:
        raise BaselineError(f"{baseline_path}:{exc.line}:{exc.column}: not a baseline file opkit can read: invalid JSON: {exc.message}") from None
    except RecursionError:
        raise BaselineError(f"{baseline_path}: not a baseline file opkit can read: nested too deeply") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(document.get("findings"), list):
        raise BaselineError(f"{baseline_path}: not an opkit lint baseline (format {FORMAT}); recreate it with --write-baseline")
    recorded: Counter[Key] = Counter()
    for row in document["findings"]:
        fields = [row.get(name) for name in ("code", "path", "op", "fingerprint")] if isinstance(row, dict) else [None]
        count = row.get("count", 1) if isinstance(row, dict) else None
        if not all(isinstance(v, str) for v in fields) or type(count) is not int or count < 1:
            raise BaselineError(f"{baseline_path}: malformed baseline entry {_shown(row)} (expected code, path, op and fingerprint strings and a count of at least 1)")
        recorded[Key(*fields)] += count
    return recorded


def _shown(row: object) -> str:
    text = repr(row)
    return text if len(text) <= 200 else text[:200] + "..."


def filter_new(findings: Sequence[Finding], baseline_path: str) -> tuple[list[Finding], int]:
    """(findings not in the baseline, how many the baseline suppressed)."""
    remaining = read(baseline_path)
    new: list[Finding] = []
    suppressed = 0
    for finding, key in zip(findings, keys(findings, baseline_path)):
        if finding.severity is not Severity.FATAL and remaining[key] > 0:
            remaining[key] -= 1
            suppressed += 1
        else:
            new.append(finding)
    return new, suppressed
