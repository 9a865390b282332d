"""How the conformance cases run a TorchAir case through opkit and read the report the way TorchAir's
assertions read npugraph_ex's logs and graphs."""

from __future__ import annotations

import tair_ops  # noqa: F401  (defines the tair:: ops)

from opkit.verify import GraphEntryReport, check_graph_entry

WRAPPERS = ("auto_functionalized", "auto_functionalized_v2")


def entry(fn, args, *, options: dict | None = None, dynamic: bool = False, **kwargs) -> GraphEntryReport:
    """``check_graph_entry`` on npugraph_ex (emulated off the NPU), as TorchAir's tests compile."""
    return check_graph_entry(fn, args, backend="npugraph_ex", options=options, dynamic=dynamic, **kwargs)


def after(report: GraphEntryReport) -> str:
    """The code of the graph npugraph_ex's passes left (what TorchAir's DEBUG logs print)."""
    assert report.npugraph_ex is not None, report
    return report.npugraph_ex.graph_after or ""


def checks(report: GraphEntryReport) -> set[str]:
    return {p.check for p in report.problems}


def assert_pass(report: GraphEntryReport) -> None:
    assert report.ok, f"opkit: {verdict(report)}\n{report}"


def verdict(report: GraphEntryReport) -> str:
    """One line: PASS, or FAIL with each problem's stage and check (for the suite's failure summary)."""
    if report.ok:
        return "PASS"
    return "FAIL " + ", ".join(f"{p.stage.value}:{p.check}" for p in report.problems) + f" graphs={report.graph_count}"


def assert_reinplaced(report: GraphEntryReport, *ops: str) -> None:
    """What TorchAir asserts of a re-inplaced graph: each op called directly, no functionalization wrapper left."""
    code = after(report)
    for wrapper in WRAPPERS:
        assert f"higher_order.{wrapper}" not in code, code
    for op in ops:
        assert f"torch.ops.{op}" in code, code
