"""opkit.verify.assertions: the error's text, when it is raised, and what it returns. The checks it runs
are the cheapest ones that decide: an undefined op fails at registration before anything compiles, a
project whose Meta file does not import fails while loading, and a one-op function on backend=eager
compiles in a second."""

from __future__ import annotations

import pytest
import torch

from opkit.verify.assertions import GraphEntryError, assert_enters_graph, assert_project_enters_graph
from opkit.verify.backends import resolve_backend
from opkit.verify.report import GraphEntryReport, OpInGraph, Problem, Stage


def _report(**kw) -> GraphEntryReport:
    base = dict(target="npu::my_op", backend="aot_eager", device="cpu", graph_count=1, graph_break_count=0)
    base.update(kw)
    return GraphEntryReport(**base)


def test_error_first_line_says_the_stage_and_the_first_problem():
    report = _report(
        problems=(
            Problem(Stage.REPLAY, "graph_run", "second", "n"),
            Problem(Stage.META, "fake_vs_real", "first of the report", "n"),
        )
    )
    error = GraphEntryError(report)
    assert isinstance(error, AssertionError) and error.report is report
    assert str(error) == f"npu::my_op does not enter one graph (Meta function): second\n{report}"


def test_error_without_problems_says_the_graph_count():
    report = _report(graph_count=2, ops_in_graph=(OpInGraph("npu::my_op", False),))
    assert str(GraphEntryError(report)).splitlines()[0] == "npu::my_op does not enter one graph (graph entry): graph_count=2"


def _hides_its_frame(exc: BaseException) -> bool:
    """pytest leaves out of a failure's traceback each frame whose locals set ``__tracebackhide__``: the
    assertion's own frame (under whatever name it runs) must."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.endswith("assertions.py") and frame.f_locals.get("__tracebackhide__") is True:
            return True
        tb = tb.tb_next
    return False


def test_assert_enters_graph_raises_with_the_report():
    # An op that is not registered fails at registration: nothing compiles. The default backend is auto's
    # choice (aot_eager, or the emulated npugraph_ex once an earlier test in this process loaded it).
    with pytest.raises(GraphEntryError) as caught:
        assert_enters_graph(lambda x: x, (torch.ones(1),), ops=["opkit_assertions_units::missing"])
    report = caught.value.report
    assert report.backend == resolve_backend("auto").name
    assert [(p.stage, p.check, p.op) for p in report.problems] == [
        (Stage.REGISTRATION, "undefined_op", "opkit_assertions_units::missing")
    ]
    assert _hides_its_frame(caught.value)


def test_assert_enters_graph_returns_the_passing_report():
    report = assert_enters_graph(lambda x, *, k: x * k, (torch.ones(2),), {"k": 3.0}, backend="eager", device="cpu")
    assert report.ok and (report.backend, report.device, report.graph_count) == ("eager", "cpu", 1)


def test_assert_enters_graph_passes_its_options_on():
    # ops= names a target: on backend=eager Dynamo's graph calls torch.relu, not the aten op.
    with pytest.raises(GraphEntryError) as caught:
        assert_enters_graph(torch.relu, (torch.ones(2),), backend="eager", ops=["aten::relu"])
    assert [p.check for p in caught.value.report.problems] == ["op_not_in_graph"]


def test_assert_project_enters_graph_raises_for_a_broken_project(make_project):
    project = make_project(name="my_op", schema="my_op(Tensor x) -> Tensor", meta="raise ImportError('no torch_npu here')\n")
    with pytest.raises(GraphEntryError) as caught:
        assert_project_enters_graph(project)  # the default backend
    report = caught.value.report
    assert [p.check for p in report.problems] == ["meta_import"] and report.backend == resolve_backend("auto").name
    assert _hides_its_frame(caught.value)


def test_assert_project_enters_graph_returns_the_passing_report(make_project):
    meta = """
    import torch
    from torch.library import Library, impl

    m = Library("npu", "IMPL", "Meta")

    @impl(m, "opkit_assert_twice")
    def opkit_assert_twice_meta(x):
        return torch.empty_like(x)
    """
    project = make_project(name="opkit_assert_twice", schema="opkit_assert_twice(Tensor x) -> Tensor", meta=meta)
    report = assert_project_enters_graph(project, backend="eager")
    assert report.ok and report.backend == "eager" and report.target == "npu::opkit_assert_twice"

