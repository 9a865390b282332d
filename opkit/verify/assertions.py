"""``assert_enters_graph``: the one assertion the generated smoke tests and users' suites share."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify.report import GraphEntryReport


class GraphEntryError(AssertionError):
    """Raised with the full verdict; ``.report`` holds the typed report."""

    def __init__(self, report: GraphEntryReport):
        super().__init__("\n" + str(report))
        self.report = report


def assert_enters_graph(
    fn_or_op, args: Sequence = (), kwargs: dict | None = None, *, backend: str = "auto", device: str | None = None, **options
) -> GraphEntryReport:
    """Check graph entry and raise ``GraphEntryError`` (an AssertionError) unless it is one graph, no breaks,
    every target op captured and no failed check. Returns the report for further assertions."""
    from opkit.verify.check import check_graph_entry

    report = check_graph_entry(fn_or_op, args, kwargs, backend=backend, device=device, **options)
    if not report.ok:
        raise GraphEntryError(report)
    return report


def assert_project_enters_graph(project_dir, *, backend: str = "auto") -> GraphEntryReport:
    """``assert_enters_graph`` for a project ``opkit new`` wrote: the generated smoke test calls this."""
    from opkit.verify.project import verify_project

    report = verify_project(project_dir, backend=backend)
    if not report.ok:
        raise GraphEntryError(report)
    return report
