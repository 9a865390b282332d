"""A pass npugraph_ex skips and logs ("Skipped fx_pass ...") is a warning with its reason when capture, replay
and numerics hold, as on the NPU (a performance note), and stays a failed stage while any of them fails."""

from __future__ import annotations

import pytest
import torch
from torch.library import Library, impl

from opkit.verify import check_graph_entry, stages
from opkit.verify.report import GraphEntryReport, Problem, Stage, format_github

NS = "opkit_skipped_pass"
_lib = Library(NS, "FRAGMENT")
# An in-place op kept in stream order with a Functionalize kernel that calls its functional twin, which
# returns nothing and has a side effect (TorchAir's record-a-stream ops are declared this way): npugraph_ex's
# re-inplacing pass meets a node without a tensor result and skips itself.
_lib.define("mark(Tensor input, str tag) -> ()")
_lib.define("mark_(Tensor(a!) input, str tag) -> ()")


def _nothing(input, tag):
    return None


impl(_lib, "mark", "CompositeExplicitAutograd")(_nothing)
impl(_lib, "mark_", "CompositeExplicitAutograd")(_nothing)
impl(_lib, "mark", "Meta")(_nothing)
impl(_lib, "mark_", "Meta")(_nothing)


@impl(_lib, "mark_", "Functionalize")
def _mark_functionalize(input, tag):
    getattr(torch.ops, NS).mark(input, tag)


torch.fx.node.has_side_effect(getattr(torch.ops, NS).mark.default)


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
def test_a_skipped_pass_on_a_graph_that_runs_right_is_a_warning_with_its_reason():
    report = check_graph_entry(getattr(torch.ops, NS).mark_.default, (torch.randn(4), "t"), backend="npugraph_ex", isolate=False)
    assert report.ok, str(report)
    assert report.problems == () and Stage.BACKEND in report.passed_stages
    (warning,) = report.warnings
    assert warning.check == "skipped_pass" and "Skipped fx_pass _reinplace_inplaceable_ops_pass" in warning.message
    assert "(the pass raised AttributeError:" in warning.message and warning.detail.startswith("AttributeError")
    assert report.npugraph_ex.captures >= 1 and all(c.ok for c in report.comparisons)
    text = str(report)
    assert text.startswith("PASS") and "  warning [backend passes] skipped_pass:" in text
    assert GraphEntryReport.from_dict(report.to_dict()) == report  # survives the trip back from a check's child
    assert "::warning title=opkit verify%3A backend passes%3A skipped_pass::" in format_github(report)


SKIPPED = Problem(Stage.BACKEND, "skipped_pass", "npugraph_ex skipped a pass and went on: Skipped fx_pass p", "n")
OTHER = Problem(Stage.BACKEND, "not_reinplaced", "m", "n")


@pytest.mark.parametrize(
    ("ran", "others", "warned"),
    [
        ([Stage.BACKEND, Stage.CAPTURE, Stage.REPLAY, Stage.NUMERICS], [OTHER], True),
        ([Stage.BACKEND, Stage.CAPTURE, Stage.REPLAY, Stage.NUMERICS], [Problem(Stage.NUMERICS, "output_mismatch", "m", "n")], False),
        ([Stage.BACKEND, Stage.CAPTURE, Stage.NUMERICS], [Problem(Stage.CAPTURE, "host_sync", "m", "n")], False),
        ([Stage.BACKEND], [], False),  # capture and numerics never ran: nothing shows the graph works
    ],
    ids=["it runs right", "numerics differ", "capture fails", "nothing ran after the passes"],
)
def test_warnings_apart(ran, others, warned):
    problems, warnings = stages.warnings_apart(ran, [SKIPPED, *others])
    assert (SKIPPED in warnings) is warned and (SKIPPED in problems) is not warned
    assert all(p in problems for p in others)  # only the skipped pass is ever moved
