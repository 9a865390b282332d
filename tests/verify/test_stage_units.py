"""The stage units that need no compile (registration, eager, the Meta function, and the pipeline itself),
on small real ops (stage_ops.py) and a CheckContext made as check_graph_entry makes it. Expectations follow
graph-entry.md's stages: the exact problems found, and silence on a correct op."""

from __future__ import annotations

import pytest
import torch
from stage_ops import NS, OPS, context

from opkit.verify import stages
from opkit.verify.report import MetaCheck, Problem, SkippedCheck, Stage
from opkit.verify.stages import eager, meta, registration
from opkit.verify.backends import GraphCapture
from opkit.verify.stages.calls import CompileRun
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


@pytest.mark.parametrize("data", [torch.tensor([1.0, -1.0, 2.0])])
def test_meta_structure_accepts_a_data_dependent_size(data):
    outputs: list = []
    assert meta.check_meta_structure(OPS.pick.default, [((data,), {})], outputs) == []
    assert isinstance(outputs[0].shape[0], torch.SymInt)
