"""The report model alone: verdict rules, text and JSON. No torch.compile here."""

from __future__ import annotations

import json

from opkit.verify.report import GraphBreak, GraphEntryReport, OpcheckResult, OpInGraph, Problem, Stage


def _report(**kw) -> GraphEntryReport:
    base = dict(target="npu::my_op", backend="aot_eager", device="cpu", graph_count=1, graph_break_count=0)
    base.update(kw)
    return GraphEntryReport(**base)


def test_ok_needs_one_graph_no_breaks_no_problems_and_every_op_found():
    assert _report().ok
    assert not _report(graph_count=2).ok
    assert not _report(graph_break_count=1).ok
    assert not _report(ops_in_graph=(OpInGraph("npu::my_op", False),)).ok
    assert not _report(problems=(Problem(Stage.NUMERICS, "compiled_vs_eager", "m", "n"),)).ok


def test_failed_stage_is_the_earliest():
    r = _report(
        problems=(
            Problem(Stage.BACKEND, "random", "m", "n"),
            Problem(Stage.AOT_FUNCTIONALIZATION, "returns_mutated_input", "m", "n"),
        )
    )
    assert r.failed_stage is Stage.AOT_FUNCTIONALIZATION


def test_json_uses_dynamo_names_and_plain_values():
    r = _report(
        graph_breaks=(GraphBreak("Tensor.item()", "m.py:3 in f"),),
        graph_break_count=1,
        opcheck=(OpcheckResult("npu::my_op", (("test_schema", "SUCCESS"),)),),
        problems=(Problem(Stage.DYNAMO, "data_dependent", "msg", "next"),),
    )
    data = json.loads(r.to_json())
    assert data["graph_count"] == 1 and data["graph_break_count"] == 1
    assert data["failed_stage"] == "dynamo" and data["ok"] is False
    assert data["problems"][0]["stage"] == "dynamo"
    assert data["opcheck"][0]["results"] == {"test_schema": "SUCCESS"} and data["opcheck"][0]["ok"]


def test_text_verdict_names_stage_and_next_action():
    r = _report(problems=(Problem(Stage.REGISTRATION, "missing_meta", "no Meta", "register it", "npu::my_op"),))
    text = str(r)
    assert text.startswith("FAIL: npu::my_op on backend=aot_eager device=cpu: graph_count=1 graph_break_count=0")
    assert "failed at stage: registration" in text
    assert "next: register it" in text


# -- the whole text, JSON and GitHub annotations, written out literally -----------------------------------------------

from opkit.verify.report import (  # noqa: E402
    Comparison,
    MetaCheck,
    NpugraphExRun,
    SkippedCheck,
    Timings,
    UncapturableOp,
    format_github,
    format_report,
)


def _passing() -> GraphEntryReport:
    """An emulated npugraph_ex pass with everything a pass can carry."""
    return _report(
        target="npu::scale_",
        backend="npugraph_ex",
        emulated=True,
        passed_stages=(Stage.REGISTRATION, Stage.META, Stage.DYNAMO, Stage.AOT_FUNCTIONALIZATION, Stage.BACKEND),
        ops_in_graph=(OpInGraph("npu::scale_", True, "auto_functionalized_v2", "aot"),),
        comparisons=(Comparison("output[0]", "capture", True), Comparison("mutated input x", "replay", True)),
        meta_checks=(MetaCheck("npu::scale_", "output[0]", "shape=(4,)", "shape=(4,)", True),),
        opcheck=(OpcheckResult("npu::scale_", (("test_schema", "SUCCESS"), ("test_faketensor", "SUCCESS"))),),
        skipped=(SkippedCheck("numerics", "the kernel is a stand-in derived from the Meta function"),),
        npugraph_ex=NpugraphExRun(
            emulated=True,
            source="torch-npu 2.13.0 (cache)",
            graph_before="def forward(self, x):\n    return x\n",
            graph_after="\ndef forward(self, x):\n    scale_ = torch.ops.npu.scale_.default(x)\n    return x\n\n",
            mutated_user_inputs=("x", "y"),
            captures=2,
            recaptures_for_moved_inputs=1,
            replays=3,
            calls=("capture", "replay", "replay", "recapture"),
            captured_kernels=("npu::scale_", "aten::add"),
        ),
        timings=Timings(eager_s=0.0123, first_call_s=1.5, backend_compile_s=0.25, replay_s=0.0004, total_s=2.0),
        notes=("npugraph_ex ran emulated: its compiler, not the NPU", "HCCL not checked"),
        graph_code="def forward(self, arg0):\n    return (arg0,)",
    )


PASSING_TEXT = """\
PASS: npu::scale_ on backend=npugraph_ex (emulated) device=cpu: graph_count=1 graph_break_count=0
  skipped: numerics: the kernel is a stand-in derived from the Meta function
  passed: registration, Meta function, Dynamo, AOT functionalization, backend passes
  op npu::scale_: as auto_functionalized_v2 in the aot graph
  compiled vs eager: 2/2 values equal
  fake vs real: 1/1 tensors agree
  opcheck npu::scale_: test_schema=ok, test_faketensor=ok
  npugraph_ex (torch-npu 2.13.0 (cache)): captures=2 recaptures_for_moved_inputs=1 replays=3 over 4 calls
    mutated_user_inputs: x, y
    captured kernels: npu::scale_, aten::add
  timings: eager=12.3ms first_call=1500.0ms backend_compile=250.0ms replay=0.4ms total=2000.0ms
  note: npugraph_ex ran emulated: its compiler, not the NPU
  note: HCCL not checked"""

PASSING_AFTER = """
    graph after npugraph_ex's passes:
      def forward(self, x):
          scale_ = torch.ops.npu.scale_.default(x)
          return x"""
PASSING_CAPTURED = """
  captured graph:
    def forward(self, arg0):
        return (arg0,)"""


def test_format_report_of_a_pass_with_everything_a_pass_carries():
    r = _passing()
    assert r.ok and r.failed_stage is None
    assert format_report(r) == PASSING_TEXT
    assert str(r) == PASSING_TEXT


def test_format_report_shows_the_graphs_only_when_asked():
    before, after = PASSING_TEXT.split("\n  timings: ")
    assert format_report(_passing(), show_graph=True) == before + PASSING_AFTER + "\n  timings: " + after + PASSING_CAPTURED


def test_format_report_shows_no_graph_section_when_there_is_no_graph():
    r = _report(npugraph_ex=NpugraphExRun(emulated=True, source="s"))
    assert format_report(r, show_graph=True) == (
        "PASS: npu::my_op on backend=aot_eager device=cpu: graph_count=1 graph_break_count=0\n"
        "  npugraph_ex (s): captures=0 recaptures_for_moved_inputs=0 replays=0 over 0 calls\n"
        "    mutated_user_inputs: none"
    )


def test_format_report_of_a_bare_pass_is_one_line_and_color_wraps_only_the_verdict():
    assert format_report(_report()) == "PASS: npu::my_op on backend=aot_eager device=cpu: graph_count=1 graph_break_count=0"
    assert format_report(_report(), color=True) == (
        "\033[32mPASS\033[0m: npu::my_op on backend=aot_eager device=cpu: graph_count=1 graph_break_count=0"
    )
    assert format_report(_report(graph_count=0), color=True) == (
        "\033[31mFAIL\033[0m: npu::my_op on backend=aot_eager device=cpu: graph_count=0 graph_break_count=0"
    )


def _failing() -> GraphEntryReport:
    """Breaks, problems of several stages, uncapturable ops, unequal values, a failed opcheck, a fallback."""
    return _report(
        target="my_fn",
        graph_count=2,
        graph_break_count=2,
        graph_breaks=(
            GraphBreak("Tensor.item()\n  from user code", "m.py:3 in f"),
            GraphBreak("r" * 201),
        ),
        problems=(
            Problem(Stage.NUMERICS, "compiled_vs_eager", "output[0] differs", "compare the kernel with eager"),
            Problem(Stage.DYNAMO, "graph_break", "2 graph breaks", "remove the .item() call", "npu::my_op", "a  b\n\tc"),
            Problem(Stage.CAPTURE, "random", "random op in the graph", "move it out", None, "d" * 301),
        ),
        ops_in_graph=(OpInGraph("npu::my_op", True, "direct", "dynamo"), OpInGraph("npu::other", False)),
        uncapturable_ops=(UncapturableOp("aten::bernoulli", "random"), UncapturableOp("aten::nonzero", "data_dependent")),
        comparisons=(
            Comparison("output[0]", "capture", False, "max abs diff 0.5"),
            Comparison("output[1]", "capture", True),
            Comparison("mutated input x", "replay", False),
        ),
        meta_checks=(
            MetaCheck("npu::my_op", "output[0]", "shape=(2, 3)", "shape=(3, 2)", False),
            MetaCheck("npu::my_op", "output[1]", "shape=(2,)", "shape=(2,)", True),
            MetaCheck("npu::my_op", "output[2]", "shape=(1,)", "shape=(2,)", False),
        ),
        opcheck=(
            OpcheckResult("npu::my_op", (("test_schema", "SUCCESS"), ("test_autograd_registration", "boom"))),
            OpcheckResult("npu::other", ()),
        ),
        npugraph_ex=NpugraphExRun(
            emulated=True,
            source="torch-npu 2.14.0",
            calls=("capture",),
            captures=1,
            fell_back_to_eager="capture_limit\nreached: " + "e" * 200,
            skipped_passes=("Skipped fx_pass reinplace", "Skipped fx_pass " + "p" * 190),
        ),
        timings=Timings(total_s=0.5),
    )


FAILING_TEXT = (
    "FAIL: my_fn on backend=aot_eager device=cpu: graph_count=2 graph_break_count=2\n"
    "  failed at stage: Dynamo\n"
    "  op npu::my_op: as direct in the dynamo graph\n"
    "  op npu::other: NOT in the captured graph\n"
    "  [numerics] compiled_vs_eager: output[0] differs\n"
    "      next: compare the kernel with eager\n"
    "  [Dynamo] graph_break [npu::my_op]: 2 graph breaks\n"
    "      next: remove the .item() call\n"
    "      detail: a b c\n"
    "  [capture] random: random op in the graph\n"
    "      next: move it out\n"
    "      detail: " + "d" * 299 + "…\n"
    "  graph break at m.py:3 in f: Tensor.item() from user code\n"
    "  graph break: " + "r" * 199 + "…\n"
    "  not capturable by npugraph_ex (random): aten::bernoulli\n"
    "  not capturable by npugraph_ex (data_dependent): aten::nonzero\n"
    "  compiled vs eager: 1/3 values equal\n"
    "      output[0] (capture) differs: max abs diff 0.5\n"
    "      mutated input x (replay) differs\n"
    "  fake vs real: 1/3 tensors agree\n"
    "  opcheck npu::my_op: test_schema=ok, test_autograd_registration=FAILED\n"
    "  opcheck npu::other: \n"
    "  npugraph_ex (torch-npu 2.14.0): captures=1 recaptures_for_moved_inputs=0 replays=0 over 1 calls\n"
    "    mutated_user_inputs: none\n"
    "    fell back to eager: capture_limit reached: " + "e" * 176 + "…\n"
    "    swallowed pass failure: Skipped fx_pass reinplace\n"
    "    swallowed pass failure: Skipped fx_pass " + "p" * 183 + "…\n"
    "  timings: total=500.0ms"
)


def test_format_report_of_a_failure_names_the_earliest_stage_then_every_problem_in_order():
    r = _failing()
    assert r.failed_stage is Stage.DYNAMO
    assert format_report(r) == FAILING_TEXT
    assert format_report(r, show_graph=True) == FAILING_TEXT  # no graph to show


def test_short_keeps_exactly_the_limit_and_cuts_one_more():
    keep = _report(problems=(Problem(Stage.EAGER, "c", "m", "n", detail="k" * 300),), graph_breaks=(GraphBreak("b" * 200),))
    assert format_report(keep).splitlines()[4:] == ["      detail: " + "k" * 300, "  graph break: " + "b" * 200]


def test_a_differing_value_is_cut_at_200_characters():
    r = _report(comparisons=(Comparison("output[0]", "capture", False, "v" * 200), Comparison("output[1]", "replay", False, "w" * 201)))
    assert format_report(r).splitlines()[1:] == [
        "  compiled vs eager: 0/2 values equal",
        "      output[0] (capture) differs: " + "v" * 200,
        "      output[1] (replay) differs: " + "w" * 199 + "…",
    ]


def test_json_of_an_opcheck_that_ran_no_test_is_still_a_mapping():
    r = _report(opcheck=(OpcheckResult("npu::my_op", ()),))
    assert r.to_dict()["opcheck"] == [{"op": "npu::my_op", "results": {}, "ok": True}]


def test_problems_at_selects_one_stage_in_order():
    r = _failing()
    assert r.problems_at(Stage.CAPTURE) == (r.problems[2],)
    assert r.problems_at(Stage.REPLAY) == ()
    two = _report(problems=(Problem(Stage.META, "a", "m", "n"), Problem(Stage.EAGER, "b", "m", "n"), Problem(Stage.META, "c", "m", "n")))
    assert [p.check for p in two.problems_at(Stage.META)] == ["a", "c"]


NO_FIELDS_DICT = {
    "target": "npu::my_op",
    "backend": "aot_eager",
    "device": "cpu",
    "graph_count": 1,
    "graph_break_count": 0,
    "problems": [],
    "graph_breaks": [],
    "ops_in_graph": [],
    "uncapturable_ops": [],
    "comparisons": [],
    "meta_checks": [],
    "opcheck": [],
    "timings": {"eager_s": None, "first_call_s": None, "backend_compile_s": None, "replay_s": None, "total_s": None},
    "notes": [],
    "graph_code": None,
    "passed_stages": [],
    "emulated": False,
    "npugraph_ex": None,
    "skipped": [],
    "warnings": [],
    "ok": True,
    "failed_stage": None,
}


def test_to_dict_and_to_json_of_a_bare_pass():
    r = _report()
    assert r.to_dict() == NO_FIELDS_DICT
    assert r.to_json() == json.dumps(NO_FIELDS_DICT, indent=2)
    assert r.to_json(indent=None) == json.dumps(NO_FIELDS_DICT)
    assert r.to_json(sort_keys=True, indent=1) == json.dumps(NO_FIELDS_DICT, sort_keys=True, indent=1)


def test_to_dict_of_a_failure_is_plain_data_with_every_field():
    r = _report(
        graph_break_count=1,
        problems=(Problem(Stage.REPLAY, "moved_input", "m", "n", "npu::my_op", "d"),),
        graph_breaks=(GraphBreak("Tensor.item()", "m.py:3 in f"),),
        ops_in_graph=(OpInGraph("npu::my_op", True, "direct", "aot"),),
        uncapturable_ops=(UncapturableOp("aten::nonzero", "data_dependent"),),
        comparisons=(Comparison("output[0]", "replay", False, "diff"),),
        meta_checks=(MetaCheck("npu::my_op", "output[0]", "f", "r", False),),
        opcheck=(OpcheckResult("npu::my_op", (("test_schema", "SUCCESS"), ("test_faketensor", "bad"))),),
        timings=Timings(eager_s=0.5, total_s=1.25),
        notes=("n1",),
        graph_code="g",
        passed_stages=(Stage.REGISTRATION, Stage.EAGER),
        emulated=True,
        npugraph_ex=NpugraphExRun(True, "src", "gb", "ga", ("x",), 2, 1, 1, ("c1", "c2"), "fb", ("sp",), ("k",)),
        skipped=(SkippedCheck("numerics", "why"),),
    )
    assert r.to_dict() == {
        "target": "npu::my_op",
        "backend": "aot_eager",
        "device": "cpu",
        "graph_count": 1,
        "graph_break_count": 1,
        "problems": [
            {"stage": "replay", "check": "moved_input", "message": "m", "next_action": "n", "op": "npu::my_op", "detail": "d"}
        ],
        "graph_breaks": [{"reason": "Tensor.item()", "location": "m.py:3 in f"}],
        "ops_in_graph": [{"op": "npu::my_op", "found": True, "form": "direct", "graph": "aot"}],
        "uncapturable_ops": [{"op": "aten::nonzero", "kind": "data_dependent"}],
        "comparisons": [{"name": "output[0]", "call": "replay", "ok": False, "detail": "diff"}],
        "meta_checks": [{"op": "npu::my_op", "output": "output[0]", "fake": "f", "real": "r", "ok": False}],
        "opcheck": [{"op": "npu::my_op", "results": {"test_schema": "SUCCESS", "test_faketensor": "bad"}, "ok": False}],
        "timings": {"eager_s": 0.5, "first_call_s": None, "backend_compile_s": None, "replay_s": None, "total_s": 1.25},
        "notes": ["n1"],
        "graph_code": "g",
        "passed_stages": ["registration", "eager"],
        "emulated": True,
        "npugraph_ex": {
            "emulated": True,
            "source": "src",
            "graph_before": "gb",
            "graph_after": "ga",
            "mutated_user_inputs": ["x"],
            "captures": 2,
            "recaptures_for_moved_inputs": 1,
            "replays": 1,
            "calls": ["c1", "c2"],
            "fell_back_to_eager": "fb",
            "skipped_passes": ["sp"],
            "captured_kernels": ["k"],
        },
        "skipped": [{"check": "numerics", "reason": "why"}],
        "warnings": [],
        "ok": False,
        "failed_stage": "replay",
    }


def test_format_github_notice_for_a_pass_with_and_without_a_file():
    line = "PASS: npu::my_op on backend=aot_eager device=cpu: graph_count=1 graph_break_count=0"
    assert format_github(_report()) == f"::notice title=opkit verify::{line}"
    assert format_github(_report(), file="my_op") == f"::notice file=my_op,title=opkit verify::{line}"


def test_format_github_a_newline_in_the_directory_name_injects_no_workflow_command():
    """The property values are escaped as GitHub's toolkit escapes them (':' and ',' too), so no `::` line starts inside them."""
    out = format_github(_report(), file="proj\n::error title=forged::PASS,x\x1b]0;t\x07")
    assert out.count("\n") == 0 and out.startswith("::notice file=proj%0A%3A%3Aerror title=forged%3A%3APASS%2Cx\\x1b]0;t\\x07,title=opkit verify::")


def test_format_report_spells_terminal_escapes_and_line_breaks_in_values():
    r = _report(problems=(Problem(Stage.META, "fake_vs_real", "bad\x1b[2J\nPASS: forged", "fix"),))
    text = format_report(r)
    assert "\x1b" not in text and "\\x1b[2J\\nPASS: forged" in text
    assert not any(line.startswith("PASS") for line in text.splitlines())
    coloured = format_report(r, color=True)
    assert coloured.startswith("\033[31mFAIL\033[0m") and coloured.count("\x1b") == 2


def test_format_github_one_error_per_problem_with_newlines_and_percent_escaped():
    r = _report(
        problems=(
            Problem(Stage.META, "fake_vs_real", "50% off\r\nsecond line", "fix\nit"),
            Problem(Stage.AOT_FUNCTIONALIZATION, "returns_mutated_input", "m", "n"),
        )
    )
    assert format_github(r, file="p") == (
        "::error file=p,title=opkit verify%3A Meta function%3A fake_vs_real::50%25 off%0D%0Asecond line Next: fix%0Ait\n"
        "::error file=p,title=opkit verify%3A AOT functionalization%3A returns_mutated_input::m Next: n"
    )


def test_format_github_failure_without_problems_is_one_error_with_the_verdict():
    r = _report(graph_count=2, graph_breaks=(GraphBreak("x"),))
    assert format_github(r) == "::error title=opkit verify::FAIL: npu::my_op on backend=aot_eager device=cpu: graph_count=2 graph_break_count=0"
