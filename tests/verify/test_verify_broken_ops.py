"""Deliberately broken ops: each failure is reported at the right stage with a message that says why.

One Library per module (process-wide registration, unique namespace) keeps the cases independent.
"""

from __future__ import annotations

import pytest
import torch
from torch.library import Library, impl

from opkit.verify import Stage, check_graph_entry

pytestmark = pytest.mark.slow

NS = "opkit_t_broken"
_lib = Library(NS, "FRAGMENT")
for schema in (
    "no_meta(Tensor x) -> Tensor",
    "wrong_params(Tensor x, Tensor y, float alpha) -> Tensor",
    "wrong_shape(Tensor x) -> Tensor",
    "returns_mutated(Tensor(a!) x, Tensor y) -> Tensor(a!)",
    "undeclared(Tensor x) -> Tensor",
    "good(Tensor x) -> Tensor",
):
    _lib.define(schema)

_meta = Library(NS, "IMPL", "Meta")
_cpu = Library(NS, "IMPL", "CPU")


@impl(_meta, "wrong_params")
def wrong_params_meta(x, y):  # the schema has a third parameter, alpha
    return torch.empty_like(x)


@impl(_meta, "wrong_shape")
def wrong_shape_meta(x):
    return x.new_empty(x.shape[::-1])  # the kernel keeps the shape


@impl(_meta, "returns_mutated")
def returns_mutated_meta(x, y):
    return x


@impl(_meta, "undeclared")
def undeclared_meta(x):
    return torch.empty_like(x)


@impl(_meta, "good")
def good_meta(x):
    return torch.empty_like(x)


def _returns_mutated(x, y):
    x.add_(y)
    return x


def _undeclared(x):
    x.mul_(2)  # the schema says x is read-only
    return x + 1


_cpu.impl("no_meta", lambda x: x + 1)
_cpu.impl("wrong_params", lambda x, y, alpha: x + alpha * y)
_cpu.impl("wrong_shape", lambda x: x * 2)
_cpu.impl("returns_mutated", _returns_mutated)
_cpu.impl("undeclared", _undeclared)
_cpu.impl("good", lambda x: x.relu())

ops = getattr(torch.ops, NS)


def x23():
    return torch.randn(2, 3)


def test_no_meta_fails_at_registration():
    report = check_graph_entry(ops.no_meta, (x23(),))
    assert not report.ok
    assert report.failed_stage is Stage.REGISTRATION
    (problem,) = [p for p in report.problems if p.check == "missing_meta"]
    assert "no Meta/fake function is registered for opkit_t_broken::no_meta" in problem.message
    assert "register_fake" in problem.next_action
    assert report.graph_break_count >= 1


def test_meta_with_wrong_parameters_names_the_schema_parameters():
    report = check_graph_entry(ops.wrong_params, (x23(), x23(), 0.5))
    assert report.failed_stage is Stage.REGISTRATION
    (problem,) = [p for p in report.problems if p.check == "meta_signature"]
    assert "wrong_params_meta" in problem.message
    assert "takes 2 positional arguments but 3 were given" in problem.message
    assert "(x, y, alpha)" in problem.next_action
    assert report.graph_break_count >= 1
    assert "TypeError when making fake tensor call" in report.graph_breaks[0].reason


def test_wrong_meta_shape_compiles_but_fake_vs_real_catches_it():
    report = check_graph_entry(ops.wrong_shape, (x23(),))
    # The graph itself is fine: only comparing fake with real outputs finds the lie.
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert Stage.DYNAMO in report.passed_stages and Stage.NUMERICS in report.passed_stages
    assert not report.ok
    (problem,) = [p for p in report.problems if p.check == "fake_vs_real"]
    assert problem.stage is Stage.META
    assert "shape=(3, 2)" in problem.message and "shape=(2, 3)" in problem.message
    assert [m.ok for m in report.meta_checks] == [False]


def test_op_returning_its_mutated_input_fails_at_aot_although_dynamo_passes():
    report = check_graph_entry(ops.returns_mutated, (x23(), x23()))
    assert report.failed_stage is Stage.AOT_FUNCTIONALIZATION
    assert Stage.DYNAMO in report.passed_stages
    assert report.graph_count == 1 and report.graph_break_count == 0  # Dynamo alone is happy
    (problem,) = report.problems_at(Stage.AOT_FUNCTIONALIZATION)
    assert problem.check == "returns_mutated_input"
    assert "returns an input it mutates" in problem.message
    assert "'-> ()'" in problem.next_action
    # The Dynamo-only baseline does not see it: why the default runs AOTAutograd.
    assert check_graph_entry(ops.returns_mutated, (x23(), x23()), backend="eager", opcheck=False).graph_count == 1


def test_item_in_the_model_is_a_graph_break_with_its_reason():
    # torch 2.13 keeps `.item()` used only in arithmetic on the device; Python control flow on it cannot.
    def model(x):
        if x.sum().item() > 0:
            return torch.ops.opkit_t_broken.good(x)
        return -torch.ops.opkit_t_broken.good(x)

    report = check_graph_entry(model, (x23(),))
    assert report.failed_stage is Stage.DYNAMO
    (problem,) = report.problems_at(Stage.DYNAMO)
    assert problem.check == "data_dependent"
    assert report.graph_break_count >= 1
    assert any("item()" in b.reason for b in report.graph_breaks)
    assert any(b.location and "test_verify_broken_ops.py" in b.location for b in report.graph_breaks)


def test_data_dependent_shape_is_reported_as_uncapturable():
    def model(x):
        return torch.ops.opkit_t_broken.good(x)[x > 0]

    report = check_graph_entry(model, (x23(),))
    assert not report.ok
    # aot_eager lets it through to the graph; npugraph_ex's decompositions stop it earlier.
    assert report.failed_stage in (Stage.DYNAMO, Stage.AOT_FUNCTIONALIZATION, Stage.BACKEND, Stage.CAPTURE)
    if report.failed_stage is Stage.CAPTURE:
        assert any(u.kind == "data_dependent" for u in report.uncapturable_ops)


def test_random_op_in_the_model_is_named():
    def model(x):
        return torch.ops.opkit_t_broken.good(x) + torch.rand_like(x)

    report = check_graph_entry(model, (x23(),))
    assert not report.ok
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert report.failed_stage is Stage.CAPTURE
    assert [u.kind for u in report.uncapturable_ops] == ["random"]
    assert any("random" in p.next_action for p in report.problems_at(Stage.CAPTURE))
    assert any("random" in s.reason for s in report.skipped)  # numerics not compared, and said so


def test_mutation_the_schema_does_not_declare():
    report = check_graph_entry(ops.undeclared, (x23(),))
    assert report.failed_stage is Stage.REGISTRATION
    (problem,) = [p for p in report.problems if p.check == "undeclared_mutation"]
    assert "mutates argument 'x'" in problem.message
    assert "Tensor(a!) x" in problem.next_action
    (oc,) = report.opcheck
    assert dict(oc.results)["test_schema"] != "SUCCESS"


def test_undefined_op_is_a_registration_problem():
    report = check_graph_entry(lambda x: x, (x23(),), ops=["opkit_t_broken::nowhere"])
    assert report.failed_stage is Stage.REGISTRATION
    assert report.problems[0].check == "undefined_op"


def test_report_json_uses_dynamo_names():
    report = check_graph_entry(ops.returns_mutated, (x23(), x23()), opcheck=False)
    data = report.to_dict()
    assert data["graph_count"] == 1 and data["graph_break_count"] == 0
    assert data["failed_stage"] == "aot_functionalization"
    assert data["ok"] is False
    assert "FAIL" in str(report) and "AOT functionalization" in str(report)


def test_a_break_in_the_users_own_code_is_located_there_not_blamed_on_the_op():
    def model(x):
        y = torch.ops.opkit_t_broken.good(x)
        print("debugging", y.shape)  # the user's own graph break
        return y * 2

    report = check_graph_entry(model, (x23(),), opcheck=False)
    assert report.failed_stage is Stage.DYNAMO
    (problem,) = report.problems_at(Stage.DYNAMO)
    assert problem.op is None
    assert "test_verify_broken_ops.py" in problem.message and "in your code" in problem.next_action
