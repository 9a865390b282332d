"""Golden cases through npugraph_ex's own compiler from the torch-npu wheel, on CPU (the NPU runtime
stood in for). Each asserts the verdict and the evidence that decides it."""

from __future__ import annotations

import pytest
import torch
from oplib import OpLibrary

from opkit.verify import Stage, check_graph_entry, verify_project

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("npugraph_ex_wheel")]

NS = "opkit_t_ne"
op = OpLibrary(NS).op


def _scale_(x, s):
    x.mul_(s)


def _kv_update(cache, update):
    cache.add_(update)


def _returns_mutated(x, y):
    x.add_(y)
    return x


op("scaled(Tensor x, float s) -> Tensor", lambda x, s: x * s, lambda x, s: torch.empty_like(x))
op("scale_(Tensor(a!) x, float s) -> ()", _scale_, lambda x, s: None)
op("kv_update(Tensor(a!) cache, Tensor update) -> ()", _kv_update, lambda cache, update: None)
op("returns_mutated(Tensor(a!) x, Tensor y) -> Tensor(a!)", _returns_mutated, lambda x, y: x)
op("wrong_shape(Tensor x) -> Tensor", lambda x: x * 2, lambda x: x.new_empty(x.shape[::-1]))
op("wrong_alias(Tensor x) -> Tensor", lambda x: x * 2, lambda x: x)


@torch.library.custom_op(f"{NS}::positives", mutates_args=())
def positives(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()


@positives.register_fake
def _(x):
    return x.new_empty(torch.library.get_ctx().new_dynamic_size())


ops = getattr(torch.ops, NS)


def t(*shape):
    return torch.randn(*shape)


def test_functional_op_is_captured_and_replays_equal_to_eager():
    report = check_graph_entry(ops.scaled.default, (t(4, 8), 2.0), backend="npugraph_ex")
    assert report.ok, str(report)
    assert report.emulated and report.backend == "npugraph_ex"
    run = report.npugraph_ex
    assert run.captured_kernels == (f"{NS}::scaled",)
    assert run.mutated_user_inputs == () and run.captures == 1 and run.replays >= 3
    assert len({c.call for c in report.comparisons}) >= 3 and all(c.ok for c in report.comparisons)
    assert Stage.CAPTURE in report.passed_stages and Stage.REPLAY in report.passed_stages


def test_inplace_op_on_an_intermediate_is_captured_in_place():
    def model(x):
        y = x * 2
        ops.scale_(y, 3.0)
        return y

    report = check_graph_entry(model, (t(4, 8),), backend="npugraph_ex")
    assert report.ok, str(report)
    run = report.npugraph_ex
    assert "auto_functionalized" in run.graph_before
    assert "auto_functionalized" not in run.graph_after
    assert f"torch.ops.{NS}.scale_.default(" in run.graph_after
    assert f"{NS}::scale_" in run.captured_kernels


def test_kv_cache_inplace_op_on_a_graph_input_is_not_copied_back():
    report = check_graph_entry(ops.kv_update.default, (t(4, 8), t(4, 8)), backend="npugraph_ex")
    assert report.ok, str(report)
    run = report.npugraph_ex
    assert run.mutated_user_inputs == ("arg0_1",)
    assert "copy_" in run.graph_before and "copy_" not in run.graph_after
    assert run.recaptures_for_moved_inputs >= 1  # the new-tensors call moved the cache: npugraph_ex recaptured
    refilled = [c for c in report.comparisons if c.call == "replay, inputs refilled in place" and c.name == "input cache"]
    assert refilled and refilled[0].ok


def test_op_returning_its_mutated_input_fails_at_functionalization():
    report = check_graph_entry(ops.returns_mutated.default, (t(4, 8), t(4, 8)), backend="npugraph_ex", opcheck=False)
    assert report.failed_stage is Stage.AOT_FUNCTIONALIZATION
    assert report.problems_at(Stage.AOT_FUNCTIONALIZATION)[0].check == "returns_mutated_input"


def test_data_dependent_output_size_fails_with_that_reason():
    report = check_graph_entry(positives, (t(4, 8),), backend="npugraph_ex", opcheck=False)
    assert not report.ok
    (problem,) = [p for p in report.problems if p.check == "data_dependent"]
    assert problem.stage is Stage.BACKEND and "depends on the data" in problem.message
    assert "unbacked" in problem.message


def test_dynamic_shapes_past_capture_limit_fall_back_to_eager():
    report = check_graph_entry(ops.scaled.default, (t(4, 8), 2.0), backend="npugraph_ex", dynamic=True, options={"capture_limit": 2}, opcheck=False)
    assert not report.ok
    assert report.npugraph_ex.fell_back_to_eager and "capture_limit reached" in report.npugraph_ex.fell_back_to_eager
    # the float is specialised: the call plan's moved scalar compiles a second graph (2 graphs, 3 captures); the
    # graph the dynamic shapes recapture stops at its limit of 2
    assert report.graph_count == 2 and report.npugraph_ex.captures == 3
    (problem,) = [p for p in report.problems if p.check == "fallback_to_eager"]
    assert problem.stage is Stage.CAPTURE
    assert all(c.ok for c in report.comparisons)  # eager fallback still computes the right values


def test_random_op_is_flagged():
    def model(x):
        return ops.scaled(x, 2.0) + torch.rand_like(x)

    report = check_graph_entry(model, (t(4, 8),), backend="npugraph_ex", opcheck=False)
    assert not report.ok and report.failed_stage is Stage.CAPTURE
    assert any(p.check == "random" and p.op == "aten::rand_like" for p in report.problems)
    assert any(s.check == "numerics" and "random" in s.reason for s in report.skipped)


def test_meta_with_wrong_shape_fails_at_the_meta_stage():
    report = check_graph_entry(ops.wrong_shape.default, (t(2, 3),), backend="npugraph_ex")
    assert report.failed_stage is Stage.META
    assert any(p.check == "fake_vs_real" and "shape=(3, 2)" in p.message for p in report.problems)


def test_meta_returning_its_input_fails_at_the_meta_stage():
    report = check_graph_entry(ops.wrong_alias.default, (t(2, 3),), backend="npugraph_ex")
    assert report.failed_stage is Stage.META
    (problem,) = [p for p in report.problems if p.check == "meta_alias"]
    assert "returns an input" in problem.message


def test_meta_missing_a_defaulted_parameter_fails_when_the_default_is_passed(make_project):
    root = make_project(
        "axpy",
        name="axpy",
        schema="axpy(Tensor x, Tensor y, float alpha=1.0) -> Tensor",
        meta="""
        import torch
        from torch.library import Library, impl
        m = Library("npu", "IMPL", "Meta")
        @impl(m, "axpy")
        def axpy_meta(x, y):
            return torch.empty_like(x)
        """,
        reference="def axpy(x, y, alpha=1.0):\n    return x + alpha * y\n",
    )
    report = verify_project(root, backend="npugraph_ex")
    assert report.failed_stage is Stage.META
    (problem,) = [p for p in report.problems if p.check == "meta_call"]
    assert "alpha" in problem.message and "(x, y, alpha)" in problem.next_action
