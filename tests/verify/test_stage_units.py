"""The stage units (registration, eager, the Meta function, and the pipeline itself; the later stages on a
compile's evidence given as it would be recorded), on small real ops (stage_ops.py) and a CheckContext made as
check_graph_entry makes it; the compile's own plumbing (calls.py) on real torch.compile calls with Dynamo-only
backends. Expectations follow graph-entry.md's stages: the exact problems found, and silence on a correct op."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from stage_ops import COUNTED_META_CALLS, NS, OPS, context

import opkit
from opkit.verify import check_graph_entry, stages
from opkit.verify.backends import BACKENDS, EMULATED_NPUGRAPH_EX, Backend, GraphCapture
from opkit.verify.check import backend_notes
from opkit.verify.npugraph_ex import Emulation
from opkit.verify.npugraph_ex.capture import CaptureViolation
from opkit.verify.npugraph_ex.observe import CompiledGraph, Observation
from opkit.torch_npu_wheel import Wheel
from opkit.verify.report import Comparison, GraphBreak, MetaCheck, OpcheckResult, OpInGraph, Problem, SkippedCheck, Stage, UncapturableOp
from opkit.verify.stages import aot, calls, capture, dynamo, eager, meta, numerics, opcheck, passes, registration, replay
from opkit.verify.stages.calls import CompiledCall, CompileRun
from opkit.verify.stages.context import as_target, has_fake_impl, signature_of
from opkit.verify.stages.inputs import clone_tree, fresh_entry, to_device
from opkit.verify.stages.eager import EagerRun, OpCall

X = torch.arange(6.0).reshape(2, 3)


def _calls(fn, *args, **kwargs) -> list[OpCall]:
    run = eager.run_eager(context(fn, *args, **kwargs))
    assert run.ok, run.error
    return run.calls


# -- the pipeline --------------------------------------------------------------------------------------


def test_units_in_pipeline_order_with_their_stage_and_summary():
    units = stages.units()
    assert [(u.name, u.stage) for u in units] == [
        ("registration", Stage.REGISTRATION),
        ("eager", Stage.EAGER),
        ("meta", Stage.META),
        ("dynamo", Stage.DYNAMO),
        ("aot", Stage.AOT_FUNCTIONALIZATION),
        ("passes", Stage.BACKEND),
        ("capture", Stage.CAPTURE),
        ("replay", Stage.REPLAY),
        ("numerics", Stage.NUMERICS),
        ("opcheck", Stage.REGISTRATION),
    ]
    assert units[0].summary == "Each target op is registered with the dispatcher and has a Meta/fake function."
    assert units[0].check is registration.registration


def test_stage_unit_registers_the_first_docstring_line():
    before = list(stages.UNITS)
    try:

        @stages.stage_unit("numerics", Stage.NUMERICS)
        def extra(ctx):
            """  First line.

            More."""
            return []

        assert stages.UNITS[-1] == stages.StageUnit("numerics", Stage.NUMERICS, "First line.", extra)

        @stages.stage_unit("numerics", Stage.NUMERICS)
        def bare(ctx):
            return []

        assert stages.UNITS[-1].summary == ""
    finally:
        stages.UNITS[:] = before


def test_run_an_undefined_op_stops_at_registration():
    ctx = context(lambda x: x, X, ops=[f"{NS}::missing"])
    ran = stages.run(ctx)
    assert ran == [Stage.REGISTRATION]
    assert [(p.stage, p.check) for p in ctx.problems] == [(Stage.REGISTRATION, "undefined_op")]
    assert ctx.skipped == [SkippedCheck("opcheck", "turned off by the caller (opcheck=False)")]
    assert stages.passed_stages(ran, ctx.problems) == ()
    # A unit that could not run is skipped, and the later ones still run: here the compile (preset: Dynamo
    # produced no graph, no error) lets only the Dynamo unit say something.
    ctx = context(lambda x: torch.relu(x), X)
    ctx.__dict__["compiled"] = CompileRun(GraphCapture())
    assert stages.run(ctx) == [Stage.REGISTRATION, Stage.EAGER, Stage.DYNAMO] and ctx.problems == []
    ctx.problems.append(Problem(Stage.EAGER, "eager_run", "m", "n"))
    stages.run(ctx)
    assert [p.check for p in ctx.problems] == ["eager_run"]  # accumulated, not replaced


def test_passed_stages_in_stage_order_without_failed_ones():
    ran = [Stage.NUMERICS, Stage.REGISTRATION, Stage.EAGER, Stage.DYNAMO]
    problems = [Problem(Stage.DYNAMO, "graph_break", "m", "n"), Problem(Stage.CAPTURE, "random", "m", "n")]
    assert stages.passed_stages(ran, problems) == (Stage.REGISTRATION, Stage.EAGER, Stage.NUMERICS)
    assert stages.passed_stages([], []) == ()


# -- registration --------------------------------------------------------------------------------------


def test_check_registration():
    # aten::add has TorchScript-only overloads (add.t) the dispatcher does not know: no crash on them.
    assert registration.check_registration([f"{NS}::add_one", "aten::add", f"{NS}::bump_", f"{NS}::two"]) == []
    assert registration.check_registration([f"{NS}::missing", f"{NS}::no_meta", "opkit_no_such_namespace::op"]) == [
        Problem(
            Stage.REGISTRATION,
            "undefined_op",
            f"{NS}::missing is not registered with the dispatcher",
            "define the schema first: torch_npu does it from op_plugin_functions.yaml; off-NPU "
            '`Library(ns, "FRAGMENT").define(func)` or torch.library.custom_op',
            f"{NS}::missing",
        ),
        Problem(
            Stage.REGISTRATION,
            "missing_meta",
            f"no Meta/fake function is registered for {NS}::no_meta, so Dynamo cannot trace it with fake tensors",
            f'register `@impl(Library("{NS}", "IMPL", "Meta"), "no_meta")` (op-plugin) or `@no_meta.register_fake` '
            "(custom_op) before torch.compile runs",
            f"{NS}::no_meta",
        ),
        Problem(
            Stage.REGISTRATION,
            "undefined_op",
            "opkit_no_such_namespace::op is not registered with the dispatcher",
            "define the schema first: torch_npu does it from op_plugin_functions.yaml; off-NPU "
            '`Library(ns, "FRAGMENT").define(func)` or torch.library.custom_op',
            "opkit_no_such_namespace::op",
        ),
    ]


def test_has_fake_impl():
    # register_fake (two) registers a Meta kernel; a decomposing op needs none; every overload counts.
    assert [has_fake_impl(f"{NS}::{n}") for n in ("add_one", "two", "composite", "no_meta", "twice")] == [True, True, True, False, False]
    assert has_fake_impl("aten::add")  # its TorchScript-only overloads (add.t) are not the dispatcher's


def test_registration_unit_checks_the_target_ops():
    assert [p.check for p in registration.registration(context(OPS.no_meta, X))] == ["missing_meta"]
    assert registration.registration(context(OPS.add_one, X)) == []


# -- eager ---------------------------------------------------------------------------------------------


def _model(x, y):
    a = OPS.add_one(x)
    b = OPS.sneaky(a, y)
    OPS.bump_(b)
    return OPS.sneaky(b, y=y) + torch.relu(a)


def test_run_eager_records_custom_op_calls_and_undeclared_mutations():
    x, y = X.clone(), torch.zeros(2, 3)
    run = eager.run_eager(context(_model, x, y))
    assert run.ok and run.error is None and run.seconds >= 0
    assert [c.op._schema.name for c in run.calls] == [f"{NS}::add_one", f"{NS}::sneaky", f"{NS}::bump_", f"{NS}::sneaky"]
    assert [c.undeclared_mutations for c in run.calls] == [[], ["y"], [], ["y"]]
    # Inputs as they were before the call, outputs as returned; the caller's tensors untouched.
    assert torch.equal(run.calls[0].args[0], X) and torch.equal(run.calls[0].outputs, X + 1)
    assert torch.equal(run.calls[1].args[1], torch.zeros(2, 3))
    assert torch.equal(run.calls[3].args[1], torch.ones(2, 3))
    assert torch.equal(y, torch.zeros(2, 3)) and torch.equal(x, X)


def _keywords(x, y):
    OPS.bump_both_(x, y)
    return OPS.sneaky_kw(torch.add(x, x, alpha=2), y=y)


def test_run_eager_keyword_only_arguments_and_a_declared_write_before_an_undeclared_one():
    start = time.perf_counter()
    run = eager.run_eager(context(_keywords, X.clone(), y=torch.zeros(2, 3)))  # the model's own keyword too
    assert 0 <= run.seconds <= time.perf_counter() - start
    assert run.ok and [(c.op._schema.name, c.undeclared_mutations) for c in run.calls] == [
        (f"{NS}::bump_both_", ["y"]),
        (f"{NS}::sneaky_kw", ["y"]),
    ]
    # A keyword-only argument reaches the kernel as a keyword; aten's keywords (alpha=2) are passed on too.
    (x,), kwargs = run.calls[1].args, run.calls[1].kwargs
    assert torch.equal(x, (X + 1) * 3) and list(kwargs) == ["y"] and torch.equal(kwargs["y"], torch.ones(2, 3))
    assert torch.equal(run.calls[1].outputs, (X + 1) * 6)


def test_run_eager_nan_values_compare_equal():
    run = eager.run_eager(context(lambda x: OPS.add_one(x), torch.tensor([float("nan"), 1.0])))
    assert run.calls[0].undeclared_mutations == []


def test_run_eager_keeps_the_error():
    run = eager.run_eager(context(lambda x: OPS.add_one(x) + torch.ones(5), X))
    assert not run.ok and run.seconds is None and isinstance(run.error, RuntimeError)
    assert [c.op._schema.name for c in run.calls] == [f"{NS}::add_one"]


def test_check_mutations_once_per_op_and_argument():
    calls = _calls(_model, X, torch.zeros(2, 3))
    assert eager.check_mutations(calls) == [
        Problem(
            Stage.REGISTRATION,
            "undeclared_mutation",
            f"the kernel of {NS}::sneaky mutates argument 'y', which the schema does not declare mutable",
            "declare it 'Tensor(a!) y' in the schema (custom_op: mutates_args=(\"y\",)), or make the kernel write a "
            "fresh tensor; an undeclared mutation is silently dropped or reordered in a graph",
            f"{NS}::sneaky",
        )
    ]


def test_check_mutations_a_new_argument_after_one_already_reported():
    seen_once = OpCall(OPS.sneaky.default, (), {}, None, ["y"])
    then_another = OpCall(OPS.sneaky.default, (), {}, None, ["y", "x"])
    assert [p.message for p in eager.check_mutations([seen_once, then_another])] == [
        f"the kernel of {NS}::sneaky mutates argument 'y', which the schema does not declare mutable",
        f"the kernel of {NS}::sneaky mutates argument 'x', which the schema does not declare mutable",
    ]


def test_eager_unit_fills_the_target_ops_of_a_function():
    ctx = context(_model, X, torch.zeros(2, 3))
    assert [p.check for p in eager.eager(ctx)] == ["undeclared_mutation"]
    assert ctx.op_names == [f"{NS}::add_one", f"{NS}::bump_", f"{NS}::sneaky"]
    named = context(_model, X, torch.zeros(2, 3), ops=[f"{NS}::add_one"])
    eager.eager(named)
    assert named.op_names == [f"{NS}::add_one"]


def test_eager_unit_reports_a_failing_model():
    ctx = context(lambda x: OPS.add_one(x) + torch.ones(5), X, ops=[f"{NS}::add_one"])
    (problem,) = eager.eager(ctx)
    assert problem == Problem(
        Stage.EAGER,
        "eager_run",
        "the model fails outside torch.compile: RuntimeError: The size of tensor a (3) must match the size of tensor b "
        "(5) at non-singleton dimension 1",
        "fix eager first (graph-entry stage 1): the op needs a kernel for this device; off-NPU "
        "give the project a reference.py",
        f"{NS}::add_one",
        str(ctx.eager.error),
    )
    assert ctx.op_names == [f"{NS}::add_one"]


def test_eager_unit_leaves_a_failure_to_the_stage_that_explains_it():
    # A stand-in kernel runs the Meta function: a broken Meta is the Meta stage's.
    stand_in = context(OPS.meta_fails.default, X, real_kernel=False)
    stand_in.__dict__["eager"] = EagerRun(error=RuntimeError("meta broke"))
    assert eager.eager(stand_in) == []
    # The same failure with a real kernel is eager's.
    real = context(OPS.meta_fails.default, X)
    real.__dict__["eager"] = EagerRun(error=RuntimeError("meta broke"))
    assert [p.check for p in eager.eager(real)] == ["eager_run"]
    # A stand-in whose Meta function is fine: its failure is eager's too.
    fine = context(OPS.add_one.default, X, real_kernel=False)
    fine.__dict__["eager"] = EagerRun(error=RuntimeError("device lost"))
    assert [p.check for p in eager.eager(fine)] == ["eager_run"]
    # Without a Meta function, a "fake" failure is registration's (missing_meta).
    missing = context(OPS.no_meta, X)
    missing.problems.extend(registration.registration(missing))
    missing.__dict__["eager"] = EagerRun(error=RuntimeError("no fake impl registered"))
    assert eager.eager(missing) == []
    missing.__dict__["eager"] = EagerRun(error=RuntimeError("device lost"))
    assert [p.check for p in eager.eager(missing)] == ["eager_run"]
    unrelated = context(OPS.add_one, X)
    unrelated.__dict__["eager"] = EagerRun(error=RuntimeError("Fake tensor mismatch"))
    assert [p.check for p in eager.eager(unrelated)] == ["eager_run"]


def test_eager_unit_skips_an_undefined_op():
    ctx = context(lambda x: x, X, ops=[f"{NS}::missing"])
    ctx.problems.extend(registration.registration(ctx))
    assert eager.eager(ctx) is None


def test_eager_unit_of_a_string_target_keeps_its_ops():
    ctx = context(lambda x: torch.relu(x), X)
    ctx.fn_or_op = "named by the caller"
    assert eager.eager(ctx) == [] and ctx.op_names == []


# -- the Meta function ---------------------------------------------------------------------------------


def test_fake_vs_real_agrees_on_a_correct_meta():
    calls = _calls(lambda x: OPS.add_one(OPS.add_one(x)), X)
    checks, problems = meta.check_fake_vs_real(calls)
    assert problems == []
    assert checks == [
        MetaCheck(
            f"{NS}::add_one",
            "output[0]",
            "shape=(2, 3) dtype=torch.float32 stride=(3, 1)",
            "shape=(2, 3) dtype=torch.float32 stride=(3, 1)",
            True,
        )
    ]


def test_fake_vs_real_shape_dtype_and_strides():
    checks, problems = meta.check_fake_vs_real(_calls(lambda x: OPS.col_sum(x) + OPS.transposed(x).sum(), X))
    assert [c.ok for c in checks] == [False, False]
    assert problems == [
        Problem(
            Stage.META,
            "fake_vs_real",
            f"the Meta function of {NS}::col_sum disagrees with its kernel on output[0]: Meta gives shape=(2, 3) "
            "dtype=torch.float32 stride=(3, 1), the kernel gives shape=(3,) dtype=torch.float64 stride=(1,)",
            "fix col_sum_meta to infer the kernel's output shape, dtype and strides; a wrong Meta still compiles, and "
            "the graph then plans memory for the wrong tensor",
            f"{NS}::col_sum",
        ),
        Problem(
            Stage.META,
            "fake_vs_real",
            f"the Meta function of {NS}::transposed disagrees with its kernel on output[0]: Meta gives shape=(2, 3) "
            "dtype=torch.float32 stride=(3, 1), the kernel gives shape=(2, 3) dtype=torch.float32 stride=(1, 2)",
            "fix transposed_meta to infer the kernel's output shape, dtype and strides; a wrong Meta still compiles, "
            "and the graph then plans memory for the wrong tensor",
            f"{NS}::transposed",
        ),
    ]


def test_fake_vs_real_counts_and_non_tensor_outputs():
    checks, problems = meta.check_fake_vs_real(_calls(lambda x: OPS.two(x)[0] + OPS.with_count(x)[0], X))
    assert [(c.op, c.output, c.ok) for c in checks] == [
        (f"{NS}::two", "output[0]", True),
        (f"{NS}::with_count", "output[0]", True),
    ]
    assert problems == [
        Problem(
            Stage.META,
            "fake_vs_real",
            f"the Meta function of {NS}::two returns 1 values, the kernel 2",
            "return exactly what the schema's returns declare",
            f"{NS}::two",
        )
    ]


def test_fake_vs_real_a_non_tensor_where_the_kernel_gives_a_tensor():
    (call,) = _calls(OPS.add_one, X)
    checks, problems = meta.check_fake_vs_real([call], {f"{NS}::add_one": 7})
    assert checks == [MetaCheck(f"{NS}::add_one", "output[0]", "7", "shape=(2, 3) dtype=torch.float32 stride=(3, 1)", False)]
    assert [p.message for p in problems] == [
        f"the Meta function of {NS}::add_one disagrees with its kernel on output[0]: Meta gives 7, the kernel gives "
        "shape=(2, 3) dtype=torch.float32 stride=(3, 1)"
    ]


def test_fake_vs_real_uses_the_meta_outputs_given():
    (call,) = _calls(OPS.add_one, X)
    checks, _ = meta.check_fake_vs_real([call], {f"{NS}::add_one": torch.empty(4)})
    assert checks[0].fake == "shape=(4,) dtype=torch.float32 stride=(1,)" and not checks[0].ok
    checks, _ = meta.check_fake_vs_real([call], {f"{NS}::other": torch.empty(4)})
    assert checks[0].ok


def test_fake_vs_real_skips_what_it_cannot_compare():
    # A Meta function that raises is the Dynamo stage's to report; a data-dependent size has no hint.
    assert meta.check_fake_vs_real(_calls(lambda x: OPS.meta_fails(x) + OPS.pick(x).sum(), X)) == ([], [])


def test_fake_vs_real_goes_on_after_what_it_skips():
    # A Meta function that raises, then a data-dependent size (the structure check's output), then a number
    # before a tensor: each is passed over, and what follows is still compared.
    data = torch.tensor([1.0, -1.0, 2.0])
    outputs: list = []
    meta.check_meta_structure(OPS.pick.default, [((data,), {})], outputs)
    calls = _calls(lambda x: OPS.meta_fails(x) + OPS.pick(x).sum() + OPS.count_first(x)[1] + OPS.mul_kw(x, y=x), data)
    checks, problems = meta.check_fake_vs_real(calls, {f"{NS}::pick": outputs[0]})
    assert [(c.op, c.output, c.ok) for c in checks] == [(f"{NS}::count_first", "output[1]", True), (f"{NS}::mul_kw", "output[0]", True)]
    assert problems == []


def test_meta_structure_silent_on_a_correct_meta_and_collects_its_outputs():
    outputs: list = []
    assert meta.check_meta_structure(OPS.add_one.default, [((X,), {}), ((torch.ones(4),), {})], outputs) == []
    assert [tuple(o.shape) for o in outputs] == [(2, 3), (4,)]
    assert meta.check_meta_structure(OPS.bump_.default, [((X,), {})]) == []
    assert meta.check_meta_structure(OPS.two.default, [((X,), {})], None)[0].check == "meta_returns"
    assert meta.check_meta_structure(OPS.add_one.default, [((X,), {})], None) == []


def test_meta_structure_a_call_the_meta_function_refuses():
    outputs: list = []
    problems = meta.check_meta_structure(OPS.takes_k.default, [((X,), {}), ((X,), {"k": 2}), ((X, 3), {})], outputs)
    assert outputs[0] is not None and outputs[1:] == [None, None]
    assert [p.message for p in problems] == [
        f"the Meta function of {NS}::takes_k fails when called with (k, x): TypeError: <lambda>() takes 1 positional "
        "argument but 2 were given",
        f"the Meta function of {NS}::takes_k fails when called with (x, k): TypeError: <lambda>() takes 1 positional "
        "argument but 2 were given",
    ]
    assert problems[0] == Problem(
        Stage.META,
        "meta_call",
        problems[0].message,
        "make takes_k_meta take every schema parameter, defaulted ones included (x, k), in schema order",
        f"{NS}::takes_k",
        "<lambda>() takes 1 positional argument but 2 were given",
    )


def test_meta_structure_every_sample_and_every_return():
    assert meta.check_meta_structure(OPS.with_count.default, [((X,), {})]) == []  # a correct tuple of two
    assert [p.check for p in meta.check_meta_structure(OPS.two.default, [((X,), {}), ((X,), {})])] == ["meta_returns"] * 2
    # The returns are the schema's, after its last " -> " (a default may hold one).
    assert [p.message for p in meta.check_meta_structure(OPS.arrow.default, [((X,), {})])] == [
        f"the Meta function of {NS}::arrow returns 1 value(s), the schema declares 2 ((Tensor, Tensor))"
    ]
    # An aliasing return (Tensor(a)) is allowed; the fresh one after it is still checked.
    assert [p.message for p in meta.check_meta_structure(OPS.view_pair.default, [((X,), {})])] == [
        f"the Meta function of {NS}::view_pair returns an input (or a view of one) as output 1, but the schema's "
        "return is a fresh tensor"
    ]


def test_meta_unit_runs_the_meta_function_once_on_the_checked_call():
    COUNTED_META_CALLS.clear()
    ctx = context(OPS.counted.default, X)
    assert meta.meta(ctx) == [] and [c.ok for c in ctx.meta_checks] == [True]
    assert COUNTED_META_CALLS == [(2, 3)]  # the structure check's output serves fake-vs-real too


def test_meta_unit_without_a_meta_function_or_with_one_op_called():
    ctx = context(OPS.no_meta.default, X)  # registration reports it; nothing to compare here
    assert meta.meta(ctx) == [] and ctx.meta_checks == [] and ctx.meta_outputs == []
    ctx = context(lambda x: OPS.add_one(x), X, ops=[f"{NS}::add_one"])
    assert meta.meta(ctx) == [] and [c.ok for c in ctx.meta_checks] == [True]


def test_meta_structure_returns_and_aliases():
    assert meta.check_meta_structure(OPS.two.default, [((X,), {})]) == [
        Problem(
            Stage.META,
            "meta_returns",
            f"the Meta function of {NS}::two returns 1 value(s), the schema declares 2 ((Tensor, Tensor))",
            "return exactly the schema's returns: None for '-> ()', one tensor for '-> Tensor', a tuple for several",
            f"{NS}::two",
        )
    ]
    assert meta.check_meta_structure(OPS.alias_meta.default, [((X,), {}), ((X,), {})]) == [
        Problem(
            Stage.META,
            "meta_alias",
            f"the Meta function of {NS}::alias_meta returns an input (or a view of one) as output 0, but the schema's "
            "return is a fresh tensor",
            "allocate the output (torch.empty_like(x), x.new_empty(shape)); only a return annotated Tensor(a) may "
            "alias its input",
            f"{NS}::alias_meta",
        )
    ] * 2


def test_first_call_per_op():
    calls = _calls(_model, X, torch.zeros(2, 3))
    assert [(c.op._schema.name, len(c.kwargs)) for c in meta.first_call_per_op(calls)] == [
        (f"{NS}::add_one", 0),
        (f"{NS}::sneaky", 0),
        (f"{NS}::bump_", 0),
    ]


def test_meta_unit_on_an_op():
    ctx = context(OPS.col_sum.default, X)
    problems = meta.meta(ctx)
    assert [p.check for p in problems] == ["fake_vs_real"]
    assert [c.ok for c in ctx.meta_checks] == [False] and len(ctx.meta_outputs) == 1


def test_meta_unit_on_a_function_checks_each_op_called():
    ctx = context(lambda x: OPS.alias_meta(x) + OPS.add_one(x), X)
    assert [(p.check, p.op) for p in meta.meta(ctx)] == [("meta_alias", f"{NS}::alias_meta")]
    assert [c.ok for c in ctx.meta_checks] == [True, True]


def test_meta_unit_with_a_stand_in_kernel_skips_fake_vs_real():
    ctx = context(OPS.col_sum.default, X, real_kernel=False)
    assert meta.meta(ctx) == [] and ctx.meta_checks == []
    assert ctx.skipped == [SkippedCheck("fake vs real", "a stand-in kernel agrees with the Meta function by construction")]


def test_meta_unit_without_calls():
    assert meta.meta(context(lambda x: torch.relu(x), X)) is None
    undefined = context(lambda x: OPS.add_one(x), X, ops=[f"{NS}::missing"])
    undefined.problems.extend(registration.registration(undefined))
    assert meta.meta(undefined) is None
    # An op target is checked even when eager recorded nothing.
    op = context(OPS.add_one.default, X)
    op.__dict__["eager"] = EagerRun()
    assert meta.meta(op) == []


def test_meta_unit_a_data_dependent_size_is_not_compared():
    ctx = context(OPS.pick.default, torch.tensor([1.0, -1.0, 2.0]))
    assert meta.meta(ctx) == [] and ctx.meta_checks == []
    assert ctx.meta_outputs[0].shape[0].node.hint is None  # unbacked: no size to compare with the kernel's


@pytest.mark.parametrize("data", [torch.tensor([1.0, -1.0, 2.0])])
def test_meta_structure_accepts_a_data_dependent_size(data):
    outputs: list = []
    assert meta.check_meta_structure(OPS.pick.default, [((data,), {})], outputs) == []
    assert isinstance(outputs[0].shape[0], torch.SymInt)


# -- replay and numerics -------------------------------------------------------------------------------


def _bump_twice(x, k=1.0):
    """Mutates x, returns a tensor and a Python number."""
    x.add_(k)
    return x * 2, 7


def _call(label, x, out, x_after, kwargs=None):
    return CompiledCall(label, ((x.clone(),), dict(kwargs or {})), ((x_after,), dict(kwargs or {})), out)


def _run(*calls, error=None, error_call=None) -> CompileRun:
    return CompileRun(GraphCapture(), list(calls), error, error_call)


_ACTION = (
    "rerun with backend='aot_eager': if it differs there too, the Meta function or the schema's mutation "
    "annotations mislead the graph; if only npugraph_ex differs, a replay reuses something captured once "
    "(a Python scalar, an input address, state outside the graph)"
)


def test_compare_numerics_every_output_and_mutated_input():
    x = torch.ones(2)
    good = _call("capture", x, (x * 4, 7), x + 1)
    wrong_out = _call("replay", x, (x * 3, 7), x + 1)
    not_mutated = _call("replay, inputs refilled in place", x, (x * 4, 7), x.clone())
    wrong_number = _call("replay, new input tensors", x, (x * 4, 8), x + 1)
    comparisons, problems = replay.compare_numerics(
        _bump_twice, _run(good, wrong_out, not_mutated, wrong_number), ["x"], atol=None, rtol=None
    )
    assert [(c.name, c.call, c.ok) for c in comparisons] == [
        ("output[0]", "capture", True),
        ("output[1]", "capture", True),
        ("input x", "capture", True),
        ("output[0]", "replay", False),
        ("output[1]", "replay", True),
        ("input x", "replay", True),
        ("output[0]", "replay, inputs refilled in place", True),
        ("output[1]", "replay, inputs refilled in place", True),
        ("input x", "replay, inputs refilled in place", False),
        ("output[0]", "replay, new input tensors", True),
        ("output[1]", "replay, new input tensors", False),
        ("input x", "replay, new input tensors", True),
    ]
    assert comparisons[3].detail.startswith("Tensor-likes are not close! Mismatched elements: 2 / 2 (100.0%)")
    assert "\n" not in comparisons[3].detail and comparisons[0].detail is None and comparisons[1].detail is None
    assert comparisons[10].detail == "8 != 7"
    assert problems == [
        Problem(Stage.REPLAY, "compiled_vs_eager", f"output[0] on the replay call differs from eager: {comparisons[3].detail}", _ACTION),
        Problem(
            Stage.REPLAY,
            "compiled_vs_eager",
            f"input x on the replay, inputs refilled in place call differs from eager: {comparisons[8].detail}",
            _ACTION,
        ),
        Problem(Stage.REPLAY, "compiled_vs_eager", "output[1] on the replay, new input tensors call differs from eager: 8 != 7", _ACTION),
    ]


def test_compare_numerics_the_first_call_is_numerics_and_only_three_problems_are_filed():
    x = torch.ones(2)
    bad = _call("capture", x, (x, 8), x)
    comparisons, problems = replay.compare_numerics(_bump_twice, _run(bad, bad), None, atol=None, rtol=None)
    assert [c.ok for c in comparisons] == [False] * 6
    assert [(p.stage, p.message.split(":")[0]) for p in problems] == [
        (Stage.NUMERICS, "output[0] on the capture call differs from eager"),
        (Stage.NUMERICS, "output[1] on the capture call differs from eager"),
        (Stage.NUMERICS, "[0][0] on the capture call differs from eager"),  # no input names: the tree path
    ]


def test_compare_numerics_names_inputs_by_schema_and_keeps_other_paths():
    x = torch.ones(2)
    call = _call("capture", x, (x * 4, 7), x + 1, kwargs={"k": 1.0})
    comparisons, _ = replay.compare_numerics(_bump_twice, _run(call), ["x", "k"], atol=None, rtol=None)
    assert [c.name for c in comparisons] == ["output[0]", "output[1]", "input x", "[1]['k']"]
    comparisons, _ = replay.compare_numerics(_bump_twice, _run(call), [], atol=None, rtol=None)
    assert [c.name for c in comparisons][2:] == ["[0][0]", "[1]['k']"]
    # A keyword reaches eager too (k=2.0: the compiled call's values are right only with it).
    call = _call("capture", x, (x * 6, 7), x + 2, kwargs={"k": 2.0})
    assert [c.ok for c in replay.compare_numerics(_bump_twice, _run(call), ["x", "k"], atol=None, rtol=None)[0]] == [True] * 4
    # A list argument: its items named under the argument.
    pair = [torch.ones(2), torch.zeros(2)]
    call = CompiledCall("capture", ((pair,), {}), (([t.clone() for t in pair],), {}), pair[0] + pair[1])
    comparisons, _ = replay.compare_numerics(lambda xs: xs[0] + xs[1], _run(call), ["xs"], atol=None, rtol=None)
    assert [(c.name, c.ok) for c in comparisons] == [("output", True), ("input xs[0]", True), ("input xs[1]", True)]


def test_compare_numerics_tolerances_dtype_and_a_tensor_against_a_number():
    x = torch.ones(2)
    near = _call("capture", x, (x * 4 + 1e-3, 7), x + 1)
    assert [(c.name, c.call, c.ok) for c in replay.compare_numerics(_bump_twice, _run(near), None, atol=1e-2, rtol=0.0)[0]] == [
        ("output[0]", "capture", True),  # close, not identical: assert_close's verdict
        ("output[1]", "capture", True),
        ("[0][0]", "capture", True),
    ]
    assert [c.ok for c in replay.compare_numerics(_bump_twice, _run(near), None, atol=None, rtol=None)[0]] == [False, True, True]
    other_dtype = _call("capture", x, ((x * 4).double(), 7), x + 1)
    comparisons, _ = replay.compare_numerics(_bump_twice, _run(other_dtype), None, atol=None, rtol=None)
    assert [c.ok for c in comparisons] == [False, True, True] and "dtype" in comparisons[0].detail
    nan = _call("capture", torch.tensor([float("nan")]), (torch.tensor([float("nan")]), 7), torch.tensor([float("nan")]))
    assert [c.ok for c in replay.compare_numerics(_bump_twice, _run(nan), None, atol=None, rtol=None)[0]] == [True] * 3
    # A number against a tensor compares by value.
    number = _call("capture", x, (x * 4, torch.tensor(7)), x + 1)
    assert [c.ok for c in replay.compare_numerics(_bump_twice, _run(number), None, atol=None, rtol=None)[0]] == [True] * 3
    number = _call("capture", x, (x * 4, torch.tensor(8)), x + 1)
    comparisons = replay.compare_numerics(_bump_twice, _run(number), None, atol=None, rtol=None)[0]
    assert [c.ok for c in comparisons] == [True, False, True] and comparisons[1].detail == "tensor(8) != 7"


def test_identical_needs_the_same_metadata_and_values():
    a = torch.ones(2, 3)
    assert replay._identical(a.clone(), a)
    assert not replay._identical(a.double(), a)
    assert not replay._identical(a.reshape(3, 2), a)
    assert not replay._identical(a * 2, a)
    assert not replay._identical(a.to_sparse(), a.to_sparse())
    assert not replay._identical(torch.ones(2, 3, device="meta"), a)


def _numerics_context(*calls, **kw) -> object:
    ctx = context(_bump_twice, torch.ones(2), **kw)
    ctx.__dict__["compiled"] = _run(*calls)
    ctx.__dict__["eager"] = EagerRun()
    return ctx


def test_compare_calls_and_the_units():
    x = torch.ones(2)
    good = _call("capture", x, (x * 4, 7), x + 1)
    bad = _call("replay", x, (x * 3, 7), x + 1)
    ctx = _numerics_context(good, bad)
    result = replay.compare_calls(ctx)
    assert ctx.comparisons == result[0] and len(result[0]) == 6
    assert [p.stage for p in result[1]] == [Stage.REPLAY]
    assert numerics.numerics(ctx) == []
    assert [p.check for p in replay.replay(ctx)] == ["compiled_vs_eager"]
    first_bad = _numerics_context(bad)
    assert [p.stage for p in numerics.numerics(first_bad)] == [Stage.NUMERICS]
    assert replay.replay(first_bad) is None  # one call: nothing replayed


def test_compare_calls_passes_the_schema_names_and_tolerances():
    x = torch.ones(2)
    ctx = context(OPS.add_one.default, x)
    ctx.__dict__["compiled"] = _run(CompiledCall("capture", ((x,), {}), ((x.clone(),), {}), x + 1 + 1e-3))
    ctx.__dict__["eager"] = EagerRun()
    ctx.atol, ctx.rtol = 1e-2, 0.0
    comparisons, problems = replay.compare_calls(ctx)
    assert [(c.name, c.ok) for c in comparisons] == [("output", True), ("input x", True)] and problems == []


def test_compare_calls_skips_what_proves_nothing():
    x = torch.ones(2)
    good = _call("capture", x, (x * 4, 7), x + 1)
    random = _numerics_context(good, good)
    random.uncapturable = [UncapturableOp("aten::rand", "random")]
    assert replay.replay(random) == [] and random.compared is None
    assert random.skipped == [SkippedCheck("numerics", "the graph draws random numbers")]
    filed = _numerics_context(good)
    filed.problems.append(Problem(Stage.CAPTURE, "random", "m", "n"))
    assert replay.compare_calls(filed) is None and filed.skipped == [SkippedCheck("numerics", "the graph draws random numbers")]
    other = _numerics_context(good)
    other.uncapturable = [UncapturableOp("aten::item", "cpu_sync")]
    other.problems.append(Problem(Stage.CAPTURE, "cpu_sync", "m", "n"))
    assert replay.compare_calls(other) is not None
    stand_in = _numerics_context(good, real_kernel=False)
    assert numerics.numerics(stand_in) is None
    assert stand_in.skipped == [
        SkippedCheck("numerics", "the kernel is a stand-in derived from the Meta function (add reference.py)")
    ]
    failed_eager = _numerics_context(good)
    failed_eager.__dict__["eager"] = EagerRun(error=RuntimeError("x"))
    assert replay.compare_calls(failed_eager) is None and failed_eager.skipped == []
    nothing = _numerics_context()
    assert replay.compare_calls(nothing) is None and replay.replay(nothing) is None
    uncompiled = _numerics_context(good)
    uncompiled.__dict__["compiled"] = None
    assert replay.compare_calls(uncompiled) is None and replay.replay(uncompiled) is None
    undefined = _numerics_context(good, ops=[f"{NS}::missing"])
    undefined.problems.extend(registration.registration(undefined))
    assert replay.compare_calls(undefined) is None


def test_replay_unit_reports_a_call_that_failed():
    x = torch.ones(2)
    good = _call("capture", x, (x * 4, 7), x + 1)
    ctx = _numerics_context(good, ops=[f"{NS}::add_one"])
    ctx.__dict__["compiled"] = _run(good, error=RuntimeError("replay broke"), error_call="replay")
    (problem,) = replay.replay(ctx)
    assert (problem.stage, problem.check, problem.message, problem.op) == (
        Stage.REPLAY,
        "graph_run",
        "the graph compiled by aot_eager failed on the replay call: RuntimeError: replay broke",
        f"{NS}::add_one",
    )
    ctx = _numerics_context(good, good)
    ctx.__dict__["compiled"] = _run(good, good, error=RuntimeError("third broke"), error_call="replay, new input tensors")
    assert [p.check for p in replay.replay(ctx)] == ["graph_run"]


# -- opcheck -------------------------------------------------------------------------------------------


def test_mutates_or_aliases():
    (plain,) = _calls(OPS.add_one, X)
    (written,) = _calls(lambda x: OPS.bump_(x), X.clone())
    (sneaky,) = _calls(lambda x, y: OPS.sneaky(x, y), X, X.clone())
    assert [opcheck.mutates_or_aliases(c) for c in (plain, written, sneaky)] == [False, True, True]
    view = OpCall(torch.ops.aten.view.default, (X, [6]), {}, None)  # its return aliases x: 'Tensor(a)'
    assert opcheck.mutates_or_aliases(view)


def test_run_opcheck_every_test_in_order():
    calls = _calls(lambda x: OPS.col_sum(x).sum() + OPS.add_one(x).sum() + OPS.add_one(x + 1).sum(), X)
    results = opcheck.run_opcheck(calls, opcheck.OPCHECK_ALL)
    assert [r.op for r in results] == [f"{NS}::col_sum", f"{NS}::add_one"]
    assert results[1].results == tuple((t, "SUCCESS") for t in opcheck.OPCHECK_ALL)
    assert [t for t, _ in results[0].results] == list(opcheck.OPCHECK_ALL)
    assert dict(results[0].results)["test_faketensor"].startswith(
        f"MetadataMismatchError: When comparing the output of {NS}.col_sum.default on FakeTensor and concrete Tensors"
    )
    assert X.equal(torch.arange(6.0).reshape(2, 3))  # the calls' inputs are cloned, never written


def test_run_opcheck_aot_dispatch_directly_or_through_opcheck():
    (failing,) = _calls(OPS.meta_fails, X)
    (result,) = opcheck.run_opcheck([failing], ("test_aot_dispatch_dynamic",))
    assert result.results == (("test_aot_dispatch_dynamic", "RuntimeError: meta broke"),)
    assert opcheck._aot_dispatch_dynamic(failing).args == ("meta broke",)
    (good,) = _calls(OPS.add_one, X)
    assert opcheck._aot_dispatch_dynamic(good) == "SUCCESS"
    # A mutating op goes through opcheck, which clones its inputs first.
    (written,) = _calls(lambda x: OPS.bump_(x), X.clone())
    (result,) = opcheck.run_opcheck([written], ("test_schema", "test_aot_dispatch_dynamic"))
    assert result.results == (("test_schema", "SUCCESS"), ("test_aot_dispatch_dynamic", "SUCCESS"))
    assert opcheck.run_opcheck([good], ("test_schema",))[0].results == (("test_schema", "SUCCESS"),)


def test_run_opcheck_aot_dispatch_is_dynamic_and_a_mutating_op_gets_fresh_inputs():
    (static,) = _calls(OPS.static_meta, X)  # its Meta function refuses symbolic sizes
    assert opcheck.run_opcheck([static], ("test_aot_dispatch_dynamic",))[0].results == (
        ("test_aot_dispatch_dynamic", "TypeError: static sizes only"),
    )
    # accumulate_ answers differently when called twice on the same inputs: opcheck clones them for each call.
    (written,) = _calls(lambda acc, x: OPS.accumulate_(acc, x), X.clone(), X)
    assert opcheck.run_opcheck([written], ("test_aot_dispatch_dynamic",))[0].results == (("test_aot_dispatch_dynamic", "SUCCESS"),)


def test_run_opcheck_keyword_arguments_and_the_callers_order():
    (call,) = _calls(lambda x, y: OPS.mul_kw(x, y=y), X, X)
    assert opcheck.run_opcheck([call], opcheck.OPCHECK_ALL)[0].results == tuple((t, "SUCCESS") for t in opcheck.OPCHECK_ALL)
    assert opcheck.run_opcheck([call], ("test_aot_dispatch_dynamic", "test_schema"))[0].results == (
        ("test_aot_dispatch_dynamic", "SUCCESS"),
        ("test_schema", "SUCCESS"),
    )


def test_run_opcheck_when_opcheck_itself_fails():
    (good,) = _calls(OPS.add_one, X)
    (result,) = opcheck.run_opcheck([good], ("test_bogus",))
    assert [k for k, _ in result.results] == ["opcheck"]
    assert result.results[0][1].startswith("ValueError: ") and "test_bogus" in result.results[0][1]


def test_opcheck_problems_filed_under_the_stage_of_each_test():
    results = [
        OpcheckResult(f"{NS}::b", (("test_schema", "SUCCESS"),)),  # passed: the next op is still read
        OpcheckResult(
            f"{NS}::a",
            (
                ("test_schema", "SUCCESS"),
                ("test_autograd_registration", "AssertionError: no autograd\nmore"),
                ("test_faketensor", "MetadataMismatchError: shapes"),
                ("test_aot_dispatch_dynamic", "RuntimeError: aot"),
                ("opcheck", "ValueError: odd"),
            ),
        ),
        OpcheckResult(f"{NS}::c", (("test_schema", "RuntimeError: explained"),)),
    ]
    explained = [Problem(Stage.META, "fake_vs_real", "m", "n", f"{NS}::c")]
    problems = opcheck.opcheck_problems(results, explained)
    assert [(p.stage, p.check) for p in problems] == [
        (Stage.REGISTRATION, "opcheck.test_autograd_registration"),
        (Stage.META, "opcheck.test_faketensor"),
        (Stage.AOT_FUNCTIONALIZATION, "opcheck.test_aot_dispatch_dynamic"),
        (Stage.REGISTRATION, "opcheck.opcheck"),
    ]
    assert problems[0] == Problem(
        Stage.REGISTRATION,
        "opcheck.test_autograd_registration",
        f"torch.library.opcheck's test_autograd_registration fails for {NS}::a: AssertionError: no autograd",
        f"run torch.library.opcheck(torch.ops.{NS}.a, args, test_utils=('test_autograd_registration',)) and fix what "
        "it reports",
        f"{NS}::a",
        "AssertionError: no autograd\nmore",
    )
    schema = [OpcheckResult(f"{NS}::c", (("test_schema", "RuntimeError: x"),))]
    assert opcheck.opcheck_problems(schema, [])[0].stage is Stage.REGISTRATION


def test_opcheck_unit():
    off = context(OPS.add_one.default, X)
    assert opcheck.opcheck(off) is None
    assert off.skipped == [SkippedCheck("opcheck", "turned off by the caller (opcheck=False)")]
    ctx = context(OPS.col_sum.default, X, opcheck_tests=opcheck.OPCHECK_ALL)
    assert [p.check for p in opcheck.opcheck(ctx)] == ["opcheck.test_faketensor"]
    assert [r.op for r in ctx.opcheck] == [f"{NS}::col_sum"] and ctx.skipped == []
    # Explained already by a more specific check of the same op.
    ctx = context(OPS.col_sum.default, X, opcheck_tests=opcheck.OPCHECK_ALL)
    ctx.problems.append(Problem(Stage.META, "fake_vs_real", "m", "n", f"{NS}::col_sum"))
    assert opcheck.opcheck(ctx) == [] and not ctx.opcheck[0].ok
    stand_in = context(OPS.col_sum.default, X, real_kernel=False, opcheck_tests=opcheck.OPCHECK_ALL)
    assert opcheck.opcheck(stand_in) == []
    assert [t for t, _ in stand_in.opcheck[0].results] == ["test_schema", "test_autograd_registration", "test_aot_dispatch_dynamic"]
    assert stand_in.skipped == [
        SkippedCheck("opcheck.test_faketensor", "a stand-in kernel agrees with the Meta function by construction")
    ]
    assert opcheck.opcheck(context(lambda x: torch.relu(x), X, opcheck_tests=opcheck.OPCHECK_ALL)) is None
    undefined = context(lambda x: OPS.add_one(x), X, ops=[f"{NS}::missing"], opcheck_tests=opcheck.OPCHECK_ALL)
    undefined.problems.extend(registration.registration(undefined))
    assert opcheck.opcheck(undefined) is None and undefined.opcheck == []


# -- Dynamo, AOT, backend passes and capture, on a compile's evidence given as it would be recorded -----


def _fx(*targets) -> torch.fx.GraphModule:
    """A graph calling each target on its input in turn (only read, never run)."""
    graph = torch.fx.Graph()
    node = graph.placeholder("x")
    for target in targets:
        node = graph.call_function(target, (node,))
    graph.output(node)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _compiled(dynamo=(), aot=(), compiled=None, calls=(), error=None, error_call=None, observation=None) -> CompileRun:
    capture = GraphCapture(list(dynamo), list(aot), compiled=len(dynamo) if compiled is None else compiled, observation=observation)
    return CompileRun(capture, list(calls), error, error_call)


def _with(ctx, compiled, **cached):
    ctx.__dict__["compiled"] = compiled
    ctx.__dict__.update(cached)
    return ctx


def _broken(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


def test_dynamo_unit_a_tracing_failure_with_breaks_explained():
    exc = RuntimeError("Graph break due to unsupported builtin\n  Developer debug context: graph_break")
    ctx = _with(context(_broken, X), _compiled(error=exc, compiled=0))
    (problem,) = dynamo.dynamo(ctx)
    assert (problem.stage, problem.check) == (Stage.DYNAMO, "graph_break") and problem.op is None  # user code
    assert ctx.graph_count == 2
    assert [(b.reason.splitlines()[0], b.location.rpartition(" in ")[2]) for b in ctx.graph_breaks] == [
        ("Call to `torch._dynamo.graph_break()`", "_broken")
    ]
    assert ctx.graph_breaks[0].location.startswith(__file__ + ":")


def test_dynamo_unit_a_tracing_failure_explain_cannot_redo():
    exc = RuntimeError("The size of tensor a (3) must match the size of tensor b (5)")
    ctx = _with(context(lambda x: x + torch.ones(5), X), _compiled(error=exc, compiled=0))
    assert [p.check for p in dynamo.dynamo(ctx)] == ["graph_break"]
    assert ctx.graph_count == 0 and ctx.graph_breaks == [GraphBreak("The size of tensor a (3) must match the size of tensor b (5)")]


def test_dynamo_unit_an_op_failure_names_the_schema_parameters():
    exc = _raised_from(RuntimeError("failed while attempting to run meta for opkit_stage_units.takes_k.default"), TypeError("bad"))
    ctx = _with(context(OPS.takes_k.default, X), _compiled(error=exc, compiled=0))
    ctx.target.fn = lambda x, k=1: x * k  # explain traces this instead: one graph, no break
    (problem,) = dynamo.dynamo(ctx)
    assert problem.check == "meta_signature" and problem.next_action.endswith("in schema order (x, k)")
    assert ctx.graph_count == 1 and [b.reason for b in ctx.graph_breaks] == ["failed while attempting to run meta for opkit_stage_units.takes_k.default"]


def _raised_from(exc, cause):
    try:
        raise exc from cause
    except RuntimeError as caught:
        return caught


def test_dynamo_unit_breaks_without_fullgraph_and_ops_in_the_graph():
    gm = _fx(torch.ops.aten.relu.default)
    ctx = _with(context(_broken, X, ops=["aten::relu", f"{NS}::add_one"]), _compiled([gm, gm], [gm]))
    ctx.fullgraph = False
    assert dynamo.dynamo(ctx) == [
        Problem(
            Stage.DYNAMO,
            "op_not_in_graph",
            f"{NS}::add_one ran eagerly but is not in the captured graph",
            "call it as torch.ops.<ns>.<name>(...) inside the compiled function; a wrapper Dynamo "
            "skips (torch._dynamo.disable, allow_in_graph misuse) keeps it out",
            f"{NS}::add_one",
        )
    ]
    assert ctx.graph_count == 2 and len(ctx.graph_breaks) == 1
    assert [(o.op, o.found, o.graph) for o in ctx.ops_in_graph] == [("aten::relu", True, "aot"), (f"{NS}::add_one", False, None)]


def test_dynamo_unit_silent_cases():
    gm = _fx(torch.ops.aten.relu.default)
    assert dynamo.dynamo(_with(context(_broken, X), None)) is None
    # fullgraph: more graphs are not explained again; a compile that failed leaves its missing ops to others.
    ctx = _with(context(_broken, X, ops=[f"{NS}::add_one"]), _compiled([gm, gm], compiled=0))
    assert dynamo.dynamo(ctx) == [] and ctx.graph_breaks == [] and ctx.graph_count == 2
    ctx = _with(context(_broken, X), _compiled([gm, gm], error=RuntimeError("backend")))
    ctx.fullgraph = False
    assert dynamo.dynamo(ctx) == [] and ctx.graph_breaks == []
    ctx = _with(context(_broken, X), _compiled([gm]))
    ctx.fullgraph = False
    assert dynamo.dynamo(ctx) == [] and ctx.graph_breaks == [] and ctx.graph_count == 1


def test_explain_breaks():
    graph_count, breaks = dynamo.explain_breaks(_broken, (X,), {})
    assert graph_count == 2 and len(breaks) == 1
    assert breaks[0].reason == breaks[0].reason.strip() and breaks[0].location.endswith(" in _broken")
    assert dynamo.explain_breaks(lambda x: x + torch.ones(5), (X,), {}) is None
    assert dynamo.explain_breaks(lambda x, *, k: x * k, (X,), {"k": 2.0}) == (1, [])


def test_located_names_the_innermost_frame():
    import traceback

    stack = [traceback.FrameSummary("model.py", 3, "forward"), traceback.FrameSummary("layers.py", 12, "inner")]
    assert dynamo._located(stack) == "layers.py:12 in inner"
    assert dynamo._located([]) is None and dynamo._located(None) is None


def test_dynamo_unit_names_the_op_of_an_op_target_only():
    # The failure text names no op: the target op is blamed when it is the target, not when the user's code calls it.
    exc = RuntimeError("Operator does not support running with fake tensors")
    op = _with(context(OPS.add_one.default, X), _compiled(error=exc, compiled=0))
    op.target.fn = lambda x: x + torch.ones(5)  # explain cannot redo it: the failure is the only break
    assert [(p.check, p.op) for p in dynamo.dynamo(op)] == [("missing_meta", f"{NS}::add_one")]
    user = _with(context(lambda x: x + torch.ones(5), X, ops=[f"{NS}::add_one"]), _compiled(error=exc, compiled=0))
    assert [(p.check, p.op) for p in dynamo.dynamo(user)] == [("missing_meta", None)]


def test_dynamo_unit_more_graphs_explain_cannot_redo():
    gm = _fx(torch.ops.aten.relu.default)
    ctx = _with(context(lambda x: x + torch.ones(5), X), _compiled([gm, gm]))
    ctx.fullgraph = False
    assert dynamo.dynamo(ctx) == [] and ctx.graph_breaks == [] and ctx.graph_count == 2


def test_aot_and_passes_units_file_the_compile_failure_by_stage():
    gm = _fx(torch.ops.aten.relu.default)
    aot_failure = Problem(Stage.AOT_FUNCTIONALIZATION, "functionalization", "m", "n")
    backend_failure = Problem(Stage.BACKEND, "backend_compile", "m", "n")
    ctx = _with(context(_broken, X), _compiled([gm], compiled=0), compile_failure=aot_failure)
    assert aot.aot(ctx) == [aot_failure] and passes.passes(ctx) == []
    ctx = _with(context(_broken, X), _compiled([gm], [gm], compiled=0), compile_failure=backend_failure)
    assert aot.aot(ctx) == [] and passes.passes(ctx) == [backend_failure]
    # The backend's own code failed before AOTAutograd produced its graph (a module it imports is missing):
    # AOT was not checked, so it neither passed nor failed.
    ctx = _with(context(_broken, X), _compiled([gm], compiled=0), compile_failure=backend_failure)
    assert aot.aot(ctx) is None and passes.passes(ctx) == [backend_failure]
    ctx = _with(context(_broken, X), _compiled([gm]), compile_failure=None)
    assert aot.aot(ctx) == [] and passes.passes(ctx) == []
    # Nothing to say without a Dynamo graph, or (aot) when the backend hides the functionalized graph.
    for compiled in (None, _compiled()):
        ctx = _with(context(_broken, X), compiled, compile_failure=aot_failure)
        assert aot.aot(ctx) is None and passes.passes(ctx) is None
    hidden = _with(context(_broken, X, backend=BACKENDS["eager"]), _compiled([gm]), compile_failure=aot_failure)
    assert aot.aot(hidden) is None


def test_passes_unit_reads_npugraph_ex_observation():
    gm = _fx(torch.ops.aten.relu.default)
    wrapped = torch.fx.Graph()
    x = wrapped.placeholder("x")
    wrapped.output(wrapped.call_function(torch.ops.higher_order.auto_functionalized, (OPS.bump_.default,), {"x": x}))
    after = torch.fx.GraphModule(torch.nn.Module(), wrapped)
    observation = Observation([CompiledGraph(gm, after, ("x",))], ["Skipped fx_pass p for unsupported fx graph 1."])
    ctx = _with(context(OPS.bump_.default, X.clone()), _compiled([gm], observation=observation), compile_failure=None)
    assert [p.check for p in passes.passes(ctx)] == ["skipped_pass", "not_reinplaced"]
    empty = _with(context(OPS.bump_.default, X.clone()), _compiled([gm], observation=Observation(logged=["Skipped fx_pass p"])), compile_failure=None)
    assert passes.passes(empty) == []  # no graph compiled: its log is not read
    # The backend's own compile failure and npugraph_ex's findings, both.
    backend_failure = Problem(Stage.BACKEND, "backend_compile", "m", "n")
    both = _with(context(OPS.bump_.default, X.clone()), _compiled([gm], observation=observation), compile_failure=backend_failure)
    assert [p.check for p in passes.passes(both)] == ["backend_compile", "skipped_pass", "not_reinplaced"]


def test_capture_unit_uncapturable_ops():
    rand = _fx(torch.ops.aten.rand_like.default, torch.ops.aten._local_scalar_dense.default, torch.ops.aten.nonzero.default)
    ctx = _with(context(_broken, X, ops=[f"{NS}::noisy", f"{NS}::add_one"]), _compiled([_fx()], [rand], calls=[CompiledCall("capture", ((), {}))]))
    assert capture.capture(ctx) == [
        Problem(
            Stage.CAPTURE,
            "random",
            "aten::rand_like is in the graph and npugraph_ex cannot capture it (random)",
            "npugraph_ex cannot capture random-number ops: generate the random tensor outside the compiled region "
            "and pass it in as an input",
            "aten::rand_like",
        ),
        Problem(
            Stage.CAPTURE,
            "cpu_sync",
            "aten::_local_scalar_dense is in the graph and npugraph_ex cannot capture it (cpu sync)",
            "npugraph_ex cannot capture a device-to-host read: keep the value on the device as a tensor",
            "aten::_local_scalar_dense",
        ),
        Problem(
            Stage.CAPTURE,
            "data_dependent",
            "aten::nonzero is in the graph and npugraph_ex cannot capture it (data dependent)",
            "npugraph_ex needs static shapes: replace the op with a fixed-shape form (masking with torch.where)",
            "aten::nonzero",
        ),
        Problem(
            Stage.CAPTURE,
            "random",
            f"{NS}::noisy is in the graph and npugraph_ex cannot capture it (random)",
            "npugraph_ex cannot capture random-number ops: generate the random tensor outside the compiled region "
            "and pass it in as an input",
            f"{NS}::noisy",
        ),
    ]
    assert [u.op for u in ctx.uncapturable] == ["aten::rand_like", "aten::_local_scalar_dense", "aten::nonzero", f"{NS}::noisy"]


def test_capture_unit_reads_the_dynamo_graph_without_an_aot_one_and_host_constants_for_npugraph_ex():
    root = torch.nn.Module()
    root.register_buffer("c", torch.ones(2))
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.ops.aten.add.Tensor, (x, graph.get_attr("c"))))
    gm = torch.fx.GraphModule(root, graph)
    emulated = BACKENDS["npugraph_ex"].__class__("npugraph_ex", BACKENDS["aot_eager"].make, "cpu", True)
    ctx = _with(context(_broken, X, backend=emulated), _compiled([gm], calls=[CompiledCall("capture", ((), {}))]))
    assert [(p.check, p.message) for p in capture.capture(ctx)] == [
        (
            "cpu_constant",
            "tensor constant c is in the graph and npugraph_ex cannot capture it (cpu constant)",
        )
    ]
    assert capture.capture(_with(context(_broken, X), _compiled([gm], calls=[CompiledCall("capture", ((), {}))]))) == []


def test_capture_unit_a_copy_to_the_host_syncs_only_off_the_cpu():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.ops.aten._to_copy.default, (x,), {"device": torch.device("cpu")}))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    ran = [CompiledCall("capture", ((), {}))]
    assert capture.capture(_with(context(_broken, X), _compiled([gm], calls=ran))) == []
    on_npu = _with(context(_broken, X, device="npu"), _compiled([gm], calls=ran))
    assert [(p.check, p.op) for p in capture.capture(on_npu)] == [("cpu_sync", "aten::_to_copy")]


def test_capture_unit_records_the_emulated_run():
    from opkit.verify.npugraph_ex.capture import LOG

    LOG.reset()  # the process-wide capture log: an earlier capture in this process (a test's own) must not count here
    gm = _fx(torch.ops.aten.relu.default, torch.ops.aten.rand_like.default)
    observation = Observation([CompiledGraph(gm, gm, (), "graph_1")], ["The capture_limit reached when capturing. More"])
    calls = [CompiledCall("capture", ((), {})), CompiledCall("replay", ((), {}))]
    ctx = _with(context(_broken, X), _compiled([gm], calls=calls, error=RuntimeError("x"), error_call="replay, new input tensors", observation=observation))
    ctx.emulation = Emulation(Wheel("2.13.0", Path("/nowhere"), "cache"), None, None)
    assert [p.check for p in capture.capture(ctx)] == ["random", "fallback_to_eager"]
    assert ctx.npugraph_ex.source == "torch-npu 2.13.0 (cache)"
    assert ctx.npugraph_ex.calls == ("capture", "replay", "replay, new input tensors (failed)")
    assert ctx.npugraph_ex.fell_back_to_eager == "The capture_limit reached when capturing. More"
    ok = _with(context(_broken, X), _compiled([gm], calls=calls, observation=observation))
    ok.emulation = ctx.emulation
    capture.capture(ok)
    assert ok.npugraph_ex.calls == ("capture", "replay")
    unemulated = _with(context(_broken, X), _compiled([gm], calls=calls, observation=observation))
    assert [p.check for p in capture.capture(unemulated)] == ["random"] and unemulated.npugraph_ex is None


def test_capture_unit_a_first_call_that_fails():
    gm = _fx(torch.ops.aten.relu.default)
    failed = _with(context(_broken, X, ops=[f"{NS}::add_one"]), _compiled([gm], error=RuntimeError("aclgraph refused"), error_call="capture"), eager=EagerRun())
    assert capture.capture(failed) == [
        Problem(
            Stage.CAPTURE,
            "graph_run",
            "the graph compiled by aot_eager failed on the capture call: RuntimeError: aclgraph refused",
            "compare with eager: if eager passes, the kernel sees different inputs in the graph (check Meta strides and "
            "dtypes, and that mutated inputs are declared Tensor(a!))",
            f"{NS}::add_one",
            "aclgraph refused",
        )
    ]
    # Not capture's: eager fails too, the violation is already filed, or the backend never compiled.
    for ctx in (
        _with(context(_broken, X), _compiled([gm], error=RuntimeError("x"), error_call="capture"), eager=EagerRun(error=RuntimeError("e"))),
        _with(context(_broken, X), _compiled([gm], error=CaptureViolation("cpu_sync", "aten::item", "m"), error_call="capture"), eager=EagerRun()),
        _with(context(_broken, X), _compiled([gm, gm], compiled=1, error=RuntimeError("x")), eager=EagerRun()),
    ):
        assert capture.capture(ctx) is None
    later = _with(context(_broken, X), _compiled([gm], calls=[CompiledCall("capture", ((), {}))], error=RuntimeError("x"), error_call="replay"), eager=EagerRun())
    assert capture.capture(later) == []
    assert capture.capture(_with(context(_broken, X), None)) is None
    assert capture.capture(_with(context(_broken, X), _compiled())) is None


# -- the calls a check makes, and the context's helpers --------------------------------------------------


def test_fresh_redraws_floating_tensors_and_keeps_the_others():
    x = torch.zeros(2, 3, dtype=torch.float64)
    on_meta = torch.zeros(2, device="meta")
    index, scalar, count = torch.tensor([1, 0]), torch.tensor(0.5), torch.tensor(3)
    (fx, fm, five), kw = calls._fresh(((x, on_meta, 5), {"i": index, "s": scalar, "n": count}))
    assert five == 5 and (fx.shape, fx.dtype) == ((2, 3), torch.float64) and not torch.equal(fx, x)
    assert (fm.shape, fm.device.type) == ((2,), "meta")
    assert torch.equal(kw["i"], index) and kw["i"].data_ptr() != index.data_ptr()
    assert kw["s"].shape == () and kw["s"].item() != 0.5 and torch.equal(kw["n"], count)
    # dynamic=True's sweep: dim 0 grows; integer tensors become zeros of the new shape, 0-dim ones stay.
    (fx, fm, _), kw = calls._fresh(((x, on_meta, 5), {"i": index, "s": scalar, "n": count}), grow=2)
    assert (fx.shape, fx.dtype, fm.shape) == ((4, 3), torch.float64, (4,))
    assert torch.equal(kw["i"], torch.zeros(4, dtype=torch.int64)) and kw["s"].shape == () and torch.equal(kw["n"], count)


def test_refill_redraws_floating_tensors_in_place():
    x, index = torch.zeros(2, 3), torch.tensor([1, 0])
    tree = ((x, 5), {"i": index})
    calls._refill(tree)
    assert tree[0][0] is x and not torch.equal(x, torch.zeros(2, 3)) and torch.equal(index, torch.tensor([1, 0]))


def test_call_plan_static_and_dynamic():
    x, index = torch.zeros(2, 3), torch.tensor([1, 0])
    plan = calls.call_plan((x,), {"i": index}, dynamic=False)
    assert [label for label, _ in plan] == ["capture", "replay", "replay, inputs refilled in place", "replay, new input tensors"]
    first = plan[0][1](None)  # the given inputs, cloned
    assert torch.equal(first[0][0], x) and first[0][0] is not x and torch.equal(first[1]["i"], index)
    second = plan[1][1](first)  # fresh data
    assert second[0][0].shape == (2, 3) and not torch.equal(second[0][0], x) and torch.equal(second[1]["i"], index)
    kept = second[0][0].clone()
    assert plan[2][1](second) is second and not torch.equal(second[0][0], kept)  # the same tensors, refilled
    fourth = plan[3][1](second)  # new tensors again
    assert fourth[0][0] is not second[0][0] and not torch.equal(fourth[0][0], second[0][0])
    assert torch.equal(x, torch.zeros(2, 3))  # the caller's inputs untouched
    plan = calls.call_plan((x,), {"i": index}, dynamic=True)
    assert [label for label, _ in plan] == ["shape 1", "shape 2", "shape 3", "shape 4"]
    assert [tuple(make(None)[0][0].shape) for _, make in plan] == [(2, 3), (3, 3), (4, 3), (5, 3)]
    # Python scalars vary between calls when asked (a dynamic check): moved by one, then back; bools never
    plan = calls.call_plan((x, 4, True), {"scale": 0.5, "i": index}, dynamic=True, vary_scalars=True)
    assert [label for label, _ in plan] == ["shape 1", "shape 1, scalars moved by one", "shape 1, scalars as at first", "shape 2", "shape 3", "shape 4"]
    assert [(made[0][1:], made[1]["scale"]) for made in (make(None) for _, make in plan[:3])] == [((4, True), 0.5), ((5, True), 1.5), ((4, True), 0.5)]
    assert calls.varied_scalars((x, True), {"i": index}) is None
    assert [label for label, _ in calls.call_plan((x,), {}, dynamic=True, vary_scalars=True)] == ["shape 1", "shape 2", "shape 3", "shape 4"]


def test_scalars_vary_only_where_the_model_still_runs():
    assert calls._runs_with_scalars_moved(lambda t, s: t + s, (torch.zeros(2), 4), {})
    assert not calls._runs_with_scalars_moved(lambda t, dim: t.sum(dim), (torch.zeros(2), 0), {})  # dim 1 of a 1-d tensor
    assert not calls._runs_with_scalars_moved(lambda t: t + 1, (torch.zeros(2),), {})  # nothing to vary


def _add_into(x, y):
    y.add_(x)
    return x * 2


def test_run_compiled_keeps_each_call():
    x, y = X.clone(), torch.zeros(2, 3)
    start = time.perf_counter()
    run = calls.run_compiled(_add_into, (x,), {"y": y}, BACKENDS["eager"], fullgraph=True, dynamic=False, options=None)
    took = time.perf_counter() - start
    assert run.error is None and run.error_call is None
    assert [c.label for c in run.calls] == ["capture", "replay", "replay, inputs refilled in place", "replay, new input tensors"]
    assert (len(run.capture.dynamo_graphs), run.capture.compiled) == (1, 1)
    assert 0 < run.first_call_s <= took and 0 < run.replay_s <= took
    # Each call's inputs before, its output, and its inputs after (y written in place), as copies.
    for call in run.calls:
        (bx,), bkw = call.before
        (ax,), akw = call.after
        assert list(bkw) == list(akw) == ["y"]
        assert torch.equal(call.out, bx * 2) and torch.equal(ax, bx) and torch.equal(akw["y"], bkw["y"] + bx)
    assert torch.equal(run.calls[0].before[0][0], X) and torch.equal(run.calls[0].before[1]["y"], torch.zeros(2, 3))
    assert not torch.equal(run.calls[1].before[0][0], X)
    assert torch.equal(x, X) and torch.equal(y, torch.zeros(2, 3))
    run = calls.run_compiled(lambda x: x.sum(0), (X,), {}, BACKENDS["eager"], fullgraph=True, dynamic=True, options=None)
    assert [(c.label, tuple(c.before[0][0].shape), tuple(c.out.shape)) for c in run.calls] == [
        ("shape 1", (2, 3), (3,)),
        ("shape 2", (3, 3), (3,)),
        ("shape 3", (4, 3), (3,)),
        ("shape 4", (5, 3), (3,)),
    ]
    assert len(run.capture.dynamo_graphs) == 1  # dynamic=True reached Dynamo: one graph for every shape


def _probe(seen: list, fail_after: int | None = None) -> Backend:
    """A Dynamo backend that records the keyword arguments torch.compile gives it and runs the graph,
    raising once it has run ``fail_after`` times."""

    def make(capture):
        def compile_fn(gm, example_inputs, **kwargs):
            seen.append(kwargs)
            runs = []

            def run(*args):
                if fail_after is not None and len(runs) >= fail_after:
                    raise RuntimeError("replay broke")
                runs.append(1)
                return gm.forward(*args)

            return run

        return capture.timed(compile_fn)

    return Backend("probe", make, "cpu", False)


def test_run_compiled_options_and_failures():
    seen: list = []
    run = calls.run_compiled(lambda x: x + 1, (X,), {}, _probe(seen), fullgraph=True, dynamic=False, options={"k": 1})
    run2 = calls.run_compiled(lambda x: x + 1, (X,), {}, _probe(seen), fullgraph=True, dynamic=False, options=None)
    assert seen == [{"options": {"k": 1}}, {}] and len(run.calls) == len(run2.calls) == 4
    # A call that fails ends the run: the calls before it kept, the failing one named.
    run = calls.run_compiled(lambda x: x + 1, (X,), {}, _probe([], fail_after=1), fullgraph=True, dynamic=False, options=None)
    assert [c.label for c in run.calls] == ["capture"] and run.error_call == "replay" and str(run.error) == "replay broke"
    assert run.first_call_s > 0 and run.replay_s is None
    run = calls.run_compiled(lambda x: x + 1, (X,), {}, _probe([], fail_after=2), fullgraph=True, dynamic=False, options=None)
    assert run.error_call == "replay, inputs refilled in place" and run.first_call_s > 0 and run.replay_s > 0
    # A device backend synchronizes after each call: here, with no GPU, the synchronize fails as torch says
    # (a CPU-only build: not compiled with CUDA; a CUDA build: no NVIDIA driver), and that ends the run.
    try:
        torch.cuda.synchronize()
    except (AssertionError, RuntimeError) as exc:
        no_gpu = str(exc)
    else:
        pytest.skip("a GPU is present: synchronizing succeeds")
    run = calls.run_compiled(lambda x: x + 1, (X,), {}, Backend("probe", _probe([]).make, "cuda", False), fullgraph=True, dynamic=False, options=None)
    assert run.calls == [] and run.error_call == "capture" and str(run.error) == no_gpu


def test_run_compiled_inside_the_backends_session():
    events: list = []

    @contextlib.contextmanager
    def session(capture):
        events.append(("enter", capture))
        yield
        events.append(("exit", len(capture.dynamo_graphs)))

    def make(capture):
        events.append("make")
        return capture.timed(lambda gm, example_inputs: gm.forward)

    run = calls.run_compiled(lambda x: x + 1, (X,), {}, Backend("probe", make, "cpu", False, session=session), fullgraph=True, dynamic=False, options=None)
    assert events == [("enter", run.capture), "make", ("exit", 1)] and events[0][1] is run.capture and len(run.calls) == 4


def test_fresh_entry_is_a_new_function_per_check():
    def fn(a, b=1):
        return (a, b)

    first, second = fresh_entry(fn), fresh_entry(fn)
    assert first(1) == (1, 1) and first(1, b=3) == (1, 3) and second(2, 4) == (2, 4)
    assert first.__name__ == "opkit_graph_entry" and first.__code__ is not second.__code__ and first.__defaults__ is None


def test_clone_tree_and_to_device():
    t = torch.ones(2, requires_grad=True)
    (c, n), kw = clone_tree(((t, 3), {"k": t}))
    assert torch.equal(c, t) and c.data_ptr() != t.data_ptr() and not c.requires_grad and n == 3 and kw["k"] is not t
    tree = ([X], {"k": 2})
    assert to_device(tree, "cpu") is tree
    (moved,), kw = to_device(tree, "meta")
    assert (moved.device.type, moved.shape, kw) == ("meta", (2, 3), {"k": 2}) and X.device.type == "cpu"


@torch.library.custom_op(f"{NS}::scaled", mutates_args=())
def _scaled(x: torch.Tensor, k: int = 2) -> torch.Tensor:
    return x * k


def test_as_target_of_each_kind():
    for op in (OPS.takes_k, OPS.takes_k.default, _scaled):
        target = as_target(op, ["aten::relu"])  # one op: ops= is not read
        name = f"{NS}::scaled" if op is _scaled else f"{NS}::takes_k"
        assert (target.label, target.op_names, target.input_names) == (name, [name], ["x", "k"])
        assert torch.equal(target.fn(X, 3), X * 3) and torch.equal(target.fn(X, k=4), X * 4)
    # A packet without a default overload (aten::pow: Tensor_Tensor, Tensor_Scalar, ...): no one schema to name inputs by.
    target = as_target(torch.ops.aten.pow, None)
    assert (target.label, target.op_names, target.input_names) == ("aten::pow", ["aten::pow"], None)
    module = torch.nn.ReLU()
    target = as_target(module, ["aten::relu", OPS.add_one.default, OPS.two, len])  # len is no op: dropped
    assert (target.fn, target.label, target.op_names, target.input_names) == (module, "ReLU", ["aten::relu", f"{NS}::add_one", f"{NS}::two"], None)
    target = as_target(_add_into, None)
    assert (target.fn, target.label, target.op_names) == (_add_into, "_add_into", [])
    with pytest.raises(TypeError, match="^expected an op, a module or a function, got int$"):
        as_target(3, None)


def test_signature_of():
    assert signature_of(f"{NS}::takes_k").text == f"{NS}::takes_k(Tensor x, int k=1) -> Tensor"
    add = signature_of("aten::add")  # the first overload torch lists
    assert (add.namespace, add.name, add.overload) == ("aten", "add", "Tensor")
    assert signature_of(f"{NS}::missing") is None
    # A TorchScript class argument: torch.library accepts it, opkit's model does not.
    assert signature_of("aten::quantized_gru") is None


# -- check_graph_entry: what it hands the stages and what the report says ---------------------------------

NO_AOT = "backend eager does not run AOTAutograd: functionalization was not checked"
OPCHECK_OFF = SkippedCheck("opcheck", "turned off by the caller (opcheck=False)")


def _labels(report) -> list[str]:
    return list(dict.fromkeys(c.call for c in report.comparisons))


def test_check_graph_entry_report_of_a_correct_op_on_aot_eager():
    report = check_graph_entry(OPS.add_one, (X,), backend="aot_eager", opcheck=False)
    assert (report.target, report.backend, report.device) == (f"{NS}::add_one", "aot_eager", "cpu")
    assert (report.graph_count, report.graph_break_count, report.problems, report.graph_breaks) == (1, 0, (), ())
    assert report.ops_in_graph == (OpInGraph(f"{NS}::add_one", True, "direct", "aot"),)
    assert report.comparisons == tuple(
        Comparison(name, call, True) for call in ("capture", "replay", "replay, inputs refilled in place", "replay, new input tensors")
        for name in ("output", "input x")
    )
    assert [m.ok for m in report.meta_checks] == [True] and report.opcheck == ()
    assert report.notes == () and report.skipped == (OPCHECK_OFF,)  # aot_eager runs AOTAutograd: nothing to say
    # The functionalized graph, not Dynamo's (whose placeholders are named after the arguments).
    assert report.graph_code == (
        "def forward(self, arg0_1):\n"
        f"    add_one = torch.ops.{NS}.add_one.default(arg0_1);  arg0_1 = None\n"
        "    return (add_one,)"
    )
    assert report.passed_stages == (Stage.REGISTRATION, Stage.EAGER, Stage.META, Stage.DYNAMO, Stage.AOT_FUNCTIONALIZATION,
                                     Stage.BACKEND, Stage.CAPTURE, Stage.REPLAY, Stage.NUMERICS)  # fmt: skip
    assert (report.emulated, report.npugraph_ex) == (False, None)
    t = report.timings
    assert all(isinstance(s, float) and s > 0 for s in (t.eager_s, t.first_call_s, t.backend_compile_s, t.replay_s, t.total_s))
    assert t.total_s < 60 and t.first_call_s <= t.total_s and t.eager_s <= t.total_s


def test_check_graph_entry_on_dynamo_only_says_functionalization_was_not_checked():
    report = check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=False, notes=("first", "again", "first"))
    assert report.notes == ("first", "again", NO_AOT)  # the caller's notes first, each once
    assert report.ops_in_graph == (OpInGraph(f"{NS}::add_one", True, "direct", "dynamo"),)
    assert report.graph_code == (
        "def forward(self, L_args_0_ : torch.Tensor):\n"
        "    l_args_0_ = L_args_0_\n"
        f"    add_one = torch.ops.{NS}.add_one(l_args_0_);  l_args_0_ = None\n"
        "    return (add_one,)"
    )
    assert Stage.AOT_FUNCTIONALIZATION not in report.passed_stages and report.ok


def test_check_graph_entry_of_an_undefined_op_times_nothing_but_the_whole():
    report = check_graph_entry(lambda x: x, (X,), backend="eager", opcheck=False, ops=[f"{NS}::nowhere"])
    assert [p.check for p in report.problems] == ["undefined_op"]
    assert (report.graph_count, report.graph_break_count, report.graph_code, report.passed_stages) == (0, 0, None, ())
    t = report.timings
    assert (t.eager_s, t.first_call_s, t.backend_compile_s, t.replay_s) == (None, None, None, None)
    assert isinstance(t.total_s, float) and 0 < t.total_s < 60


def test_check_graph_entry_static_by_default_a_shape_sweep_when_dynamic():
    assert _labels(check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=False)) == [
        "capture", "replay", "replay, inputs refilled in place", "replay, new input tensors"]  # fmt: skip
    report = check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=False, dynamic=True)
    assert _labels(report) == ["shape 1", "shape 2", "shape 3", "shape 4"]
    assert report.ok and report.graph_count == 1


def test_check_graph_entry_fullgraph_false_counts_the_break():
    def model(x):
        y = OPS.add_one(x)
        print("a break")
        return y * 2

    report = check_graph_entry(model, (X,), backend="eager", opcheck=False, fullgraph=False)
    assert (report.graph_count, report.graph_break_count, len(report.graph_breaks)) == (2, 1, 1)
    assert "print" in report.graph_breaks[0].reason and report.problems == ()


def test_check_graph_entry_counts_recompiles_as_breaks_when_no_break_is_explained():
    calls = [0]

    def model(x):  # each call guards on a new Python int: Dynamo compiles a graph per call
        calls[0] += 1
        return OPS.add_one(x) * calls[0]

    report = check_graph_entry(model, (X,), backend="eager", opcheck=False)
    assert (report.graph_count, report.graph_break_count, report.graph_breaks) == (4, 3, ())


def test_check_graph_entry_a_failed_compile_counts_no_breaks():
    def model(x):
        y = OPS.add_one(x)
        print("a break")
        return OPS.returns_mutated_(y)  # the second graph fails in AOTAutograd

    report = check_graph_entry(model, (X,), backend="aot_eager", opcheck=False, fullgraph=False)
    assert (report.graph_count, report.graph_break_count, report.graph_breaks) == (2, 0, ())
    assert [(p.stage, p.check) for p in report.problems] == [
        (Stage.DYNAMO, "op_not_in_graph"),  # looked for in the functionalized graphs, which the failed one never reached
        (Stage.AOT_FUNCTIONALIZATION, "returns_mutated_input"),
    ]


def test_check_graph_entry_hands_on_tolerances_meta_samples_and_opcheck_tests():
    # Outputs that differ by noise below 1e-3: close within atol=1e-2 (assert_close takes both or neither).
    report = check_graph_entry(OPS.jitter, (X,), backend="eager", opcheck=False, atol=1e-2, rtol=0.0)
    assert report.ok and len(report.comparisons) == 8 and all(c.ok for c in report.comparisons)
    assert not check_graph_entry(OPS.jitter, (X,), backend="eager", opcheck=False).ok  # default tolerances: float32's
    report = check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=["test_schema"])
    assert report.opcheck == (OpcheckResult(f"{NS}::add_one", (("test_schema", "SUCCESS"),)),) and report.skipped == ()
    report = check_graph_entry(OPS.takes_k.default, (X,), backend="eager", opcheck=False, meta_samples=[((X,), {"k": 2})])
    assert [(p.check, p.detail) for p in report.problems] == [("meta_call", "<lambda>() takes 1 positional argument but 2 were given")]


def test_check_graph_entry_a_stand_in_kernel_skips_what_it_cannot_prove():
    report = check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=False, real_kernel=False)
    assert report.comparisons == () and report.meta_checks == ()
    assert [s.check for s in report.skipped] == ["fake vs real", "numerics", "opcheck"]


def test_check_graph_entry_moves_the_inputs_to_the_device():
    report = check_graph_entry(OPS.add_one, (X,), backend="eager", opcheck=False, device="meta")
    assert report.device == "meta"
    (problem,) = report.problems
    assert problem.check == "eager_run" and "with Meta tensors" in problem.message


def test_check_graph_entry_a_copy_to_the_host_on_the_cpu_is_no_sync():
    report = check_graph_entry(lambda x: OPS.add_one(x).to("cpu", copy=True), (X,), backend="aot_eager", opcheck=False)
    assert "torch.ops.aten._to_copy.default" in report.graph_code
    assert (report.uncapturable_ops, report.problems) == ((), ())


def test_check_graph_entry_emulated_npugraph_ex_says_so_and_takes_options():
    report = check_graph_entry(OPS.add_one, (X,), backend="npugraph_ex", opcheck=False)
    assert (report.backend, report.emulated, report.npugraph_ex.emulated) == ("npugraph_ex", True, True)
    (note,) = report.notes
    assert note.startswith("npugraph_ex ran emulated: the compiler of torch-npu ")
    assert report.ok and report.npugraph_ex.captures == 1
    report = check_graph_entry(OPS.add_one, (X,), backend="npugraph_ex", opcheck=False, options={"bogus": 1})
    (problem,) = report.problems
    assert "Invalid option 'bogus'" in problem.message


def test_backend_notes_of_each_backend():
    why = "backend auto ran aot_eager: no wheel"
    assert backend_notes("auto", BACKENDS["aot_eager"], why) == [why]
    assert backend_notes("auto", BACKENDS["aot_eager"], None) == []
    assert backend_notes("aot_eager", BACKENDS["aot_eager"], why) == []  # asked for by name: no fallback to explain
    assert backend_notes("auto", EMULATED_NPUGRAPH_EX, why) == []  # sees the functionalized graph; its note is the emulation's
    assert backend_notes("auto", BACKENDS["npugraph_ex"], None) == [
        "backend npugraph_ex runs AOTAutograd out of reach: only Dynamo's graph was inspected"
    ]
    assert backend_notes("eager", BACKENDS["eager"], why) == [NO_AOT]
    assert backend_notes("inductor", BACKENDS["inductor"], None) == []


def test_auto_without_a_wheel_runs_aot_eager_and_the_report_says_why(tmp_path):
    """Where the emulation cannot load (OPKIT_TORCH_NPU names no wheel), ``auto`` falls back to aot_eager and the
    report's notes say why. A fresh process: the wheel is looked up once per process."""
    # Run in-process as well: mutation testing runs a test against the mutants of the functions it calls here.
    assert check_graph_entry(torch.ops.aten.relu.default, (X,), backend="eager", opcheck=False).backend == "eager"
    missing = tmp_path / "no-such-wheel.whl"
    script = (
        "import json, torch\n"
        "from opkit.verify import check_graph_entry\n"
        "r = check_graph_entry(torch.ops.aten.relu.default, (torch.ones(2, 3),), opcheck=False)\n"
        "print(json.dumps([r.backend, r.ok, list(r.notes)]))\n"
    )
    root = os.path.dirname(os.path.dirname(opkit.__file__))  # the opkit this process runs (mutated under mutation testing)
    env = {**os.environ, "OPKIT_TORCH_NPU": str(missing), "OPKIT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    backend, ok, notes = json.loads(out.splitlines()[-1])
    assert (backend, ok) == ("aot_eager", True)
    assert notes[0] == f"backend auto ran aot_eager: npugraph_ex cannot be emulated: OPKIT_TORCH_NPU={missing}: no such wheel file or directory"
