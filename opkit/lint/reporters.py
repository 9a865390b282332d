"""Reporters: findings → text, JSON, SARIF 2.1.0 or GitHub Actions annotations."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from opkit import __version__
from opkit.escaping import github_escape, one_line
from opkit.lint.finding import Finding, Severity
from opkit.lint.registry import known_codes, load_rules
from opkit.lint.finding import INPUT_ERRORS, INPUT_NOTES

_COLOURS = {Severity.FATAL: "\033[1;31m", Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_RESET, _BOLD = "\033[0m", "\033[1m"


def printable(text: str) -> str:
    """``text`` that any UTF-8 stream can take: a lone surrogate (from a JSON ``"\\ud800"`` or an
    undecodable file name) is spelled as its ``\\udXXX`` escape instead of failing the write."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _location(f: Finding) -> str:
    return f"{one_line(f.path)}:{f.line}:{f.column}" if f.path else "<project>"


def format_text(findings: Sequence[Finding], *, colour: bool = False, files: int = 0, **_: object) -> str:
    """``path:line:col: CODE message``, one per finding, then a summary line."""
    lines = []
    for f in findings:
        code = f"{_COLOURS[f.severity]}{f.code}{_RESET}" if colour else f.code
        where = f"{_BOLD}{_location(f)}{_RESET}" if colour else _location(f)
        op = f" [{one_line(f.op)}]" if f.op else ""
        lines.append(f"{where}: {code} {one_line(f.message)}{op}")
        if f.hint:
            lines.append(f"    hint: {one_line(f.hint)}")
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    if findings:
        # "fatal" stays singular: "2 fatal, 1 error, 3 warnings"
        parts = [f"{counts[s]} {s}{'s' if counts[s] != 1 and s is not Severity.FATAL else ''}" for s in (Severity.FATAL, Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
        lines.append(f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''} ({', '.join(parts)}) in {files} file{'s' if files != 1 else ''}.")
    else:
        lines.append(f"All checks passed ({files} file{'s' if files != 1 else ''}).")
    return printable("\n".join(lines) + "\n")


def statistics(findings: Sequence[Finding]) -> list[dict]:
    """Findings per code, most frequent first: count, code, severity, name."""
    from collections import Counter

    names = known_codes()
    severity = {f.code: f.severity for f in findings}
    counts = Counter(f.code for f in findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"count": n, "code": code, "severity": str(severity[code]), "name": names.get(code, "")} for code, n in rows]


def format_statistics(findings: Sequence[Finding], *, fmt: str = "text", **_: object) -> str:
    """As ``ruff --statistics``: one line per code (count, code, severity, name), or the same rows as JSON."""
    rows = statistics(findings)
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    return "".join(f"{r['count']:>6}  {r['code']:<5} {r['severity']:<8} {r['name']}\n" for r in rows)


def format_json(findings: Sequence[Finding], **_: object) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


_SARIF_LEVEL = {Severity.FATAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif_document(findings: Sequence[Finding]) -> dict:
    """A SARIF 2.1.0 log with one run; rules carry their documentation."""
    used = sorted({f.code for f in findings})
    known = load_rules()
    rules = []
    for code in used:
        r = known.get(code)
        entry: dict = {"id": code}
        if code in INPUT_ERRORS or code in INPUT_NOTES:
            name, summary = (INPUT_ERRORS | INPUT_NOTES)[code]
            entry.update(name=name, shortDescription={"text": summary}, defaultConfiguration={"level": "error" if code in INPUT_ERRORS else "note"})
        elif r is not None:
            entry.update(
                name=r.name,
                shortDescription={"text": r.summary},
                fullDescription={"text": r.explanation or r.summary},
                defaultConfiguration={"level": _SARIF_LEVEL[r.severity]},
            )
        rules.append(entry)
    index = {code: i for i, code in enumerate(used)}
    results = []
    for f in findings:
        result: dict = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message + (f" (hint: {f.hint})" if f.hint else "")},
        }
        if f.path:
            result["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
                    }
                }
            ]
        if f.op:
            result["properties"] = {"op": f.op}
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "opkit", "version": __version__, "rules": rules}},
                "results": results,
            }
        ],
    }


def format_sarif(findings: Sequence[Finding], **_: object) -> str:
    return json.dumps(sarif_document(findings), indent=2) + "\n"


def format_github(findings: Sequence[Finding], **_: object) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=CODE::message``."""
    level = {Severity.FATAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for f in findings:
        props = [f"file={github_escape(f.path, property_value=True)}", f"line={f.line}", f"col={f.column}"] if f.path else []
        props.append(f"title={github_escape(f.code, property_value=True)}")
        message = f.message + (f" (hint: {f.hint})" if f.hint else "")
        out.append(f"::{level[f.severity]} {','.join(props)}::{github_escape(message)}")
    return printable("\n".join(out) + ("\n" if out else ""))


FORMATTERS: dict[str, Callable[..., str]] = {"text": format_text, "json": format_json, "sarif": format_sarif, "github": format_github}
