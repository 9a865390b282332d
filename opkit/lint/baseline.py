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

from opkit.lint.finding import Finding, Severity

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
        with open(baseline_path, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
            f.write("\n")
    except OSError as exc:
        raise BaselineError(f"{baseline_path}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(kept)


def read(baseline_path: str) -> Counter[Key]:
    try:
        with open(baseline_path, encoding="utf-8") as f:
            document = json.load(f)
    except FileNotFoundError:
        raise BaselineError(f"{baseline_path}: no such baseline file; create it with --write-baseline") from None
    except (OSError, ValueError) as exc:
        raise BaselineError(f"{baseline_path}: not a baseline file opkit can read: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(document.get("findings"), list):
        raise BaselineError(f"{baseline_path}: not an opkit lint baseline (format {FORMAT}); recreate it with --write-baseline")
    recorded: Counter[Key] = Counter()
    for row in document["findings"]:
        try:
            recorded[Key(str(row["code"]), str(row["path"]), str(row["op"]), str(row["fingerprint"]))] += int(row.get("count", 1))
        except (KeyError, TypeError, ValueError):
            raise BaselineError(f"{baseline_path}: malformed baseline entry {row!r}") from None
    return recorded


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
