"""``assert_enters_graph``: the one assertion the generated smoke tests and users' suites share."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify.report import GraphEntryReport


class GraphEntryError(AssertionError):
    """Raised with the full verdict; ``.report`` holds the typed report."""

    def __init__(self, report: GraphEntryReport):
        # The first line is pytest's one-line failure summary: it must say what failed, not be empty.
        first = report.problems[0].message if report.problems else f"graph_count={report.graph_count}"
        stage = report.failed_stage.title if report.failed_stage else "graph entry"
        super().__init__(f"{report.target} does not enter one graph ({stage}): {first}\n{report}")
        self.report = report


def assert_enters_graph(fn_or_op, args: Sequence = (), kwargs: dict | None = None, **options) -> GraphEntryReport:
    """Check graph entry and raise ``GraphEntryError`` (an AssertionError) unless it is one graph, no breaks,
    every target op captured and no failed check. Returns the report for further assertions.

    ``options`` are ``check_graph_entry``'s (``backend``, ``device``, ``ops``, ``dynamic``, ...), with its defaults."""
    __tracebackhide__ = True
    from opkit.verify.check import check_graph_entry

    report = check_graph_entry(fn_or_op, args, kwargs, **options)
    if not report.ok:
        raise GraphEntryError(report)
    return report


def assert_project_enters_graph(project_dir, *, backend: str = "auto") -> GraphEntryReport:
    """``assert_enters_graph`` for a project ``opkit new`` wrote: the generated smoke test calls this."""
    __tracebackhide__ = True
    from opkit.verify.project import verify_project

    report = verify_project(project_dir, backend=backend)
    if not report.ok:
        raise GraphEntryError(report)
    return report
