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
