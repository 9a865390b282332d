"""The verdicts of a run over many ops: one line per op and a summary, as text, JSON, GitHub annotations or JUnit XML.

Imports no torch. Each op's full report is ``report.format_report``'s; a run's text keeps one line per op (the
first problem of a failed one, with its next step) so that a run over 60 ops fits a CI log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from opkit.verify.report import GraphEntryReport, _short, format_github

_GREEN, _RED, _RESET = "\033[32m", "\033[31m", "\033[0m"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # what XML 1.0 cannot hold, even escaped


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def meta_used(report: GraphEntryReport) -> str | None:
    """The note naming the Meta the check used (``Meta: ...``), or why a Meta found was not used, if the report has one."""
    return next((n for n in report.notes if n.startswith(("Meta: ", "Meta loaded", "C++ Meta ", "no Meta for"))), None)


def verdict_line(report: GraphEntryReport, *, color: bool = False, where: str | None = None) -> str:
    """``PASS ns::op (Meta: ...)`` or ``FAIL ns::op: [stage] check: message`` with the next step on a second line.
    ``where``: the project the op is from."""
    verdict = "PASS" if report.ok else "FAIL"
    if color:
        verdict = f"{_GREEN if report.ok else _RED}{verdict}{_RESET}"
    seconds = f" {report.timings.total_s:.1f}s" if report.timings.total_s is not None else ""
    meta = meta_used(report)
    meta = f" ({_short(meta, 400)})" if meta else ""
    seconds = f" in {where}{seconds}" if where else seconds
    if report.ok:
        return f"{verdict} {report.target}{seconds}{meta}"
    first = report.problems[0] if report.problems else None
    if first is None:
        why = f"graph_count={report.graph_count} graph_break_count={report.graph_break_count}"
        return f"{verdict} {report.target}{seconds}: {why}{meta}"
    return f"{verdict} {report.target}{seconds}: [{first.stage.title}] {first.check}: {_short(first.message, 240)}{meta}\n    next: {_short(first.next_action, 240)}"


def summary_line(reports: Sequence[GraphEntryReport], wall_s: float) -> str:
    failed = sum(not r.ok for r in reports)
    return f"{len(reports)} op(s) checked in {wall_s:.1f}s: {len(reports) - failed} passed, {failed} failed"


def format_json(reports: Sequence[GraphEntryReport], wall_s: float) -> str:
    failed = sum(not r.ok for r in reports)
    data = {
        "summary": {"ops": len(reports), "passed": len(reports) - failed, "failed": failed, "wall_s": round(wall_s, 3), "ok": failed == 0},
        "reports": [r.to_dict() for r in reports],
    }
    return json.dumps(data, indent=2)


def format_github_run(reports: Sequence[GraphEntryReport], wall_s: float, files: Sequence[str | None]) -> str:
    """Each op's annotations (``format_github``, titled with the op), then a notice with the summary."""
    lines = [format_github(r, file=f, title=f"opkit verify {r.target}") for r, f in zip(reports, files, strict=True)]
    kind = "error" if any(not r.ok for r in reports) else "notice"
    lines.append(f"::{kind} title=opkit verify::{summary_line(reports, wall_s)}")
    return "\n".join(lines)


def format_junit(reports: Sequence[GraphEntryReport], wall_s: float) -> str:
    """JUnit XML (the schema CI systems read): a testsuite ``opkit verify``, a testcase per op, a failure with the
    op's first problem as its message and its whole report as its text. Every user string is escaped by ElementTree."""
    import xml.etree.ElementTree as ET

    from opkit.verify.report import format_report

    failed = sum(not r.ok for r in reports)
    suites = ET.Element("testsuites", name="opkit verify", tests=str(len(reports)), failures=str(failed), time=f"{wall_s:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="opkit verify", tests=str(len(reports)), failures=str(failed), errors="0", time=f"{wall_s:.3f}")
    for report in reports:
        namespace = report.target.split("::", 1)[0] if "::" in report.target else "opkit"
        case = ET.SubElement(suite, "testcase", classname=_xml(namespace), name=_xml(report.target), time=f"{report.timings.total_s or 0.0:.3f}")
        if not report.ok:
            first = report.problems[0] if report.problems else None
            message = f"[{first.stage.title}] {first.check}: {first.message}" if first else "not one graph with zero breaks"
            failure = ET.SubElement(case, "failure", message=_xml(_short(message, 500)), type=_xml(first.check if first else "graph_entry"))
            failure.text = _xml(format_report(report))
        else:
            ET.SubElement(case, "system-out").text = _xml(format_report(report))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")
