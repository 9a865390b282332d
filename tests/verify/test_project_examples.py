"""A project's recorded examples: kept in opkit.json (`opkit new --example`, `opkit verify --example --save`), used by
verify and by the generated test's assert_project_enters_graph; a reference.py that fails on the schema's sample
says to record one; a Meta whose output size disagrees with the kernel gets the `opkit new --force --output` fix."""

from __future__ import annotations

import json

import pytest

from opkit.generate import make_spec
from opkit.generate.project import generate_project
from opkit.verify import assert_project_enters_graph, verify_project
from opkit.verify.assertions import GraphEntryError

pytestmark = pytest.mark.slow

SCHEMA = "npu_pair(Tensor q, Tensor k) -> (Tensor, Tensor)"
# [tokens, heads, dim] only: the schema's 2-D sample fails here, as a realistic kernel's reference does
REFERENCE = '''
def npu_pair(q, k):
    if q.dim() != 3:
        raise ValueError(f"q is [tokens, heads, dim], got {tuple(q.shape)}")
    return q * 2, k * 2
'''
EXAMPLE = "torch.randn(2, 4, 8), torch.randn(2, 1, 8)"


def _project(tmp_path, **options):
    root = generate_project(make_spec("npu_pair", schema=SCHEMA, **options), tmp_path / "npu_pair", msopgen_mode="builtin").path
    (root / "reference.py").write_text(REFERENCE)
    return root


def test_a_failing_sample_says_to_record_an_example_and_the_saved_one_is_used(tmp_path, run_opkit):
    root = _project(tmp_path, outputs="out1=like:k")
    report = verify_project(root, isolate=False)
    assert not report.ok and report.failed_stage.name == "EAGER"
    (problem,) = [p for p in report.problems if p.check == "eager_run"]
    assert "reference.py fails on the schema's sample inputs" in problem.next_action
    assert f"opkit verify {root} --example '<q>, <k>' --save" in problem.next_action

    code, out = run_opkit("verify", str(root), "--example", EXAMPLE, "--save")
    assert code == 0, out
    assert f"saved the example in {root / 'opkit.json'}" in out
    recorded = json.loads((root / "opkit.json").read_text())["examples"]
    assert recorded == [EXAMPLE]
    assert json.loads((root / ".opkit" / "generated" / "opkit.json").read_text())["examples"] == recorded  # not a user edit

    report = verify_project(root, isolate=False)
    assert report.ok, str(report)
    assert any("the project's recorded example (opkit.json examples)" in note for note in report.notes)
    # what the generated test calls, with the recorded example and with one of its own
    assert assert_project_enters_graph(root).ok
    assert assert_project_enters_graph(root, example="torch.randn(3, 2, 8), torch.randn(3, 2, 8)").ok
    with pytest.raises(GraphEntryError, match="q is"):
        assert_project_enters_graph(root, example="torch.randn(3, 8), torch.randn(3, 8)")


def test_a_failing_check_saves_nothing(tmp_path, run_opkit):
    root = _project(tmp_path, examples=[EXAMPLE], outputs="out1=like:k")
    before = (root / "opkit.json").read_bytes()
    code, out = run_opkit("verify", str(root), "--example", "torch.randn(2, 8), torch.randn(2, 8)", "--save")
    assert code == 1 and "--example not saved: the check failed with it" in out
    assert (root / "opkit.json").read_bytes() == before


def test_a_wrong_output_size_suggests_the_output_rule(tmp_path):
    root = _project(tmp_path, examples=[EXAMPLE])  # out1 like q by default, but the kernel makes it like k
    report = verify_project(root, isolate=False)
    (problem,) = [p for p in report.problems if p.check == "fake_vs_real"]
    assert f"opkit new npu_pair -o {root} --force --output out1=like:k" in problem.next_action
    assert "opkit lint reports that as M016" in problem.next_action


def test_output_rule_for_reads_the_rule_off_the_call():
    import torch

    from opkit.signature import Dialect, parse_schema
    from opkit.verify.project import output_rule_for

    sig = parse_schema("my_op(Tensor q, Tensor k, int n) -> (Tensor, Tensor)", Dialect.OP_PLUGIN)
    q, k = torch.randn(2, 4, 8), torch.randn(2, 1, 8)
    assert output_rule_for(sig, (q, k, 3), {}, (2, 1, 8), "float32") == "like:k"
    assert output_rule_for(sig, (q, k, 3), {}, (2, 1, 8), "int32") == "like:k,dtype:int32"
    assert output_rule_for(sig, (q, k), {"n": 3}, (2, 4, 1, 5), "float32") == "size:[q.0, q.1, k.1, 5]"
