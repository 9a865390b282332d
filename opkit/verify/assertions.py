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

    ``options`` are ``check_graph_entry``'s (``backend``, ``device``, ``ops``, ``dynamic``, ...), with its defaults,
    except that the check runs in a child process (``isolate``; ``OPKIT_VERIFY_ISOLATION=0`` turns it off): an op
    that exits, hangs or crashes fails its test, and the rest of the session still runs."""
    __tracebackhide__ = True
    from opkit.verify import isolation
    from opkit.verify.check import check_graph_entry

    options.setdefault("isolate", isolation.wanted(None, timeout=options.get("timeout"), default=True))
    report = check_graph_entry(fn_or_op, args, kwargs, **options)
    if not report.ok:
        raise GraphEntryError(report)
    return report


def assert_project_enters_graph(project_dir, example=None, *, backend: str = "auto", timeout: float | None = None) -> GraphEntryReport:
    """``assert_enters_graph`` for a project ``opkit new`` wrote: the generated smoke test calls this. The project
    loads and runs in a child process, as ``assert_enters_graph``'s check does.

    ``example``: the op's arguments, as an expression (``"torch.randn(2, 8), 2.0"``, torch in scope, as
    ``opkit verify --example`` takes it) or as ``(args, kwargs)``; default: the project's recorded examples
    (opkit.json ``examples``), else sample inputs from the schema."""
    __tracebackhide__ = True
    from opkit.verify import isolation
    from opkit.verify.project import verify_project

    report = verify_project(project_dir, example=example, backend=backend, timeout=timeout, isolate=isolation.wanted(None, timeout=timeout, default=True))
    if not report.ok:
        raise GraphEntryError(report)
    return report
