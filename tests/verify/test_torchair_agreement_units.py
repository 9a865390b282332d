"""The smallest case of each disagreement TorchAir's own tests showed (tests/conformance/torchair/), one
test each: ``-> None`` returns, aliased arguments, views in the capture emulator, recompiles of opkit's own
sweep, stage labels of the backend's own failures, the backend's defects named, 0 captures said."""

from __future__ import annotations

import operator

import torch
from torch.library import Library

from opkit.verify import check_graph_entry, diagnose
from opkit.verify.backends import GraphCapture
from opkit.verify.npugraph_ex import capture, checks
from opkit.verify.npugraph_ex.observe import Observation
from opkit.verify.report import GraphEntryReport, NpugraphExRun, Stage, format_report
from opkit.verify.stages import meta
from opkit.verify.stages.calls import CompiledCall, CompileRun
from opkit.verify.stages.eager import run_recorded

NS = "opkit_agreement_units"
_LIB = Library(NS, "FRAGMENT")


def _op(schema: str, kernel, fake, composite: bool = False):
    name = schema.split("(", 1)[0]
    _LIB.define(schema)
    _LIB.impl(name, kernel, "CompositeExplicitAutograd" if composite else "CPU")
    _LIB.impl(name, fake, "Meta")
    return getattr(torch.ops, NS)


def _sin(x, result):
    result.copy_(x.sin())


_op("sin(Tensor x, Tensor(a!) result) -> None", _sin, lambda x, result: None)
_op("sin_wrong_meta(Tensor x, Tensor(a!) result) -> None", _sin, lambda x, result: torch.empty_like(x))
_op("sin_sneaky(Tensor x, Tensor(a!) result) -> None", lambda x, result: (result.copy_(x.sin()), x.zero_(), None)[2], lambda x, result: None)
OPS = getattr(torch.ops, NS)


# -- '-> None' is one return torch reads as nothing --------------------------------------------------------


def test_a_none_return_is_no_value():
    x = torch.ones(3)
    assert meta.check_meta_structure(OPS.sin.default, [((x, torch.ones(3)), {})]) == []
    # A Meta function returning a tensor there: torch itself refuses the call ("Cannot cast ... to None").
    problems = meta.check_meta_structure(OPS.sin_wrong_meta.default, [((x, torch.ones(3)), {})])
    assert [p.check for p in problems] == ["meta_call"] and "to None" in problems[0].message


# -- one tensor passed twice: the write the schema declares ------------------------------------------------


def test_an_argument_aliasing_a_declared_write_is_no_undeclared_mutation():
    def same_tensor_twice(out):
        OPS.sin(out, out)

    assert [c.undeclared_mutations for c in run_recorded(same_tensor_twice, (torch.ones(3),), {}).calls] == [[]]
    # A kernel that writes an argument the schema reads only is still caught, when it is other memory.
    sneaky = run_recorded(lambda x, out: OPS.sin_sneaky(x, out), (torch.ones(3), torch.ones(3)), {})
    assert [c.undeclared_mutations for c in sneaky.calls] == [["x"]]


# -- the capture emulator: a view of user memory is user memory -------------------------------------------


def test_a_write_through_a_view_of_an_input_is_undone_at_capture_and_done_once_per_replay():
    x = torch.tensor([0.3, 0.4])
    graph = capture.NPUGraph()
    with capture.graph(graph):
        x.select(0, 0).add_(2)  # a view kernel, then a write through its output
    assert torch.equal(x, torch.tensor([0.3, 0.4]))  # nothing ran on the device during capture
    graph.replay()
    assert torch.allclose(x, torch.tensor([2.3, 0.4]))
    graph.replay()
    assert torch.allclose(x, torch.tensor([4.3, 0.4]))
    capture.LOG.reset()


# -- recompiles of opkit's own sweep shapes ---------------------------------------------------------------


def test_recompiles_after_the_first_call_are_the_sweeps():
    calls = [CompiledCall("shape 1", ((), {}), compiled_graphs=1), CompiledCall("shape 2", ((), {}), compiled_graphs=1),
             CompiledCall("shape 3", ((), {}))]
    graphs = [torch.fx.symbolic_trace(lambda x: x + 1), torch.fx.symbolic_trace(lambda x: x - 1)]
    run = CompileRun(GraphCapture(dynamo_graphs=graphs), calls)
    assert (run.user_graphs, run.recompiles) == (1, [("shape 2", 1)])
    assert CompileRun(GraphCapture(dynamo_graphs=graphs * 2)).user_graphs == 4  # the first call failed: all


def test_a_duck_sized_sample_under_a_shape_sweep_is_one_graph():
    # [2, 2]: Dynamo gives both sizes one symbol; the sweep's [3, 2] breaks that guard and recompiles.
    report = check_graph_entry(lambda x: x + 1, (torch.randn(2, 2),), backend="aot_eager", dynamic=True, opcheck=False)
    assert report.ok, str(report)
    assert (report.graph_count, report.graph_break_count) == (1, 0)


# -- the backend's own failures: labelled and named --------------------------------------------------------


def _raised_in(path: str, exc: BaseException) -> BaseException:
    """``exc`` raised from code compiled as file ``path`` (its traceback then names that file)."""
    namespace: dict = {}
    exec(compile("def fail(exc):\n    raise exc\n", path, "exec"), namespace)
    try:
        namespace["fail"](exc)
    except BaseException as raised:
        return raised
    raise AssertionError("not raised")


_REFUSED = "Value 'test' (type: <class 'str'>) not in optional list [True, False] (type: <class 'bool'>)."


def test_an_option_the_backend_refuses_is_a_backend_failure_not_functionalization():
    args = dict(backend="npugraph_ex", reached_aot_graph=False, sees_aot_graph=True, sole_op=None)
    refused = _raised_in("/w/torch_npu/dynamo/npugraph_ex/configs/_option_base.py", ValueError(_REFUSED))
    problem = diagnose.compile_failure(refused, **args)
    assert (problem.stage, problem.check) == (Stage.BACKEND, "backend_option")
    assert "refused an option" in problem.message and "not in optional list" in problem.message
    # Raised inside AOTAutograd, the same text is AOT's; without a traceback, where it came from is unknown.
    in_aot = _raised_in("/w/torch/_functorch/aot_autograd.py", ValueError("boom"))
    assert diagnose.compile_failure(in_aot, **args).stage is Stage.AOT_FUNCTIONALIZATION
    assert diagnose.compile_failure(ValueError("boom"), **args).stage is Stage.AOT_FUNCTIONALIZATION


def test_npugraph_ex_unable_to_pickle_its_graph_is_its_defect():
    exc = RuntimeError("<pybind11_builtins.pybind11_detail_function_record object at 0x1> is not pickleable.")
    problem = diagnose.compile_failure(exc, backend="npugraph_ex", reached_aot_graph=True, sees_aot_graph=True, sole_op="ns::op")
    assert (problem.stage, problem.check) == (Stage.BACKEND, "backend_defect")
    assert "input_inplace_pass=False" in problem.message


def test_a_tuple_index_on_a_single_tensor_is_the_compilers_defect():
    _op("inplace3(Tensor x, Tensor(a!) a, Tensor(b!) b) -> Tensor", lambda x, a, b: x + 1, lambda x, a, b: torch.empty_like(x))
    _op("functional3(Tensor x, Tensor a, Tensor b) -> (Tensor, Tensor, Tensor)", lambda x, a, b: (x + 1, a, b),
        lambda x, a, b: (torch.empty_like(x),) * 3)

    def graph_with(target):
        g = torch.fx.Graph()
        x, a, b = (g.placeholder(n) for n in "xab")
        node = g.call_function(target, (x, a, b))
        g.output((g.call_function(operator.getitem, (node, 0)),))
        return g

    problems = checks.compiler_defects(graph_with(OPS.inplace3.default))
    assert [p.check for p in problems] == ["backend_defect"]
    assert f"a tuple index on {NS}::inplace3's single tensor" in problems[0].message
    assert checks.compiler_defects(graph_with(OPS.functional3.default)) == []


# -- what was not seen: 0 captures ------------------------------------------------------------------------


def test_zero_captures_are_said_next_to_the_verdict():
    def report(captures: int) -> GraphEntryReport:
        run = NpugraphExRun(emulated=True, source="s", captures=captures, calls=("capture", "replay"))
        return GraphEntryReport("f", "npugraph_ex", "cpu", 1, 0, npugraph_ex=run)

    assert format_report(report(0)).splitlines()[0].startswith("PASS (0 captures: nothing was captured or replayed): f")
    assert format_report(report(1)).splitlines()[0].startswith("PASS: f")
    assert "force_eager=True" in checks.no_capture_note(Observation(), {"force_eager": True})
    assert "without capturing" in checks.no_capture_note(Observation(), None)


# -- an op's own Functionalize kernel: its functional twin is what the graph holds ------------------------


def _twin_of_double(out):
    return out * 2


def _double_functionalize(out):
    torch._sync(out)
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Functionalize)):
        new = OPS.double_functional(torch._from_functional_tensor(out))
    torch._functionalize_replace(out, new)
    torch._functionalize_commit_update(out)
    torch._sync(out)


_op("double_functional(Tensor out) -> Tensor", _twin_of_double, lambda out: out.new_empty(out.shape[1:]), composite=True)
_op("double_(Tensor(a!) out) -> ()", lambda out: (out.mul_(2), None)[1], lambda out: None)
_LIB.impl("double_", _double_functionalize, "Functionalize")


def test_an_op_renamed_by_its_functionalize_kernel_is_in_the_graph_and_its_twins_meta_is_checked():
    report = check_graph_entry(lambda x: OPS.double_(x), (torch.ones(2, 3),), backend="aot_eager", opcheck=False)
    assert [(o.op, o.found, o.form) for o in report.ops_in_graph] == [(f"{NS}::double_", True, "functionalize_kernel")]
    assert [(p.check, p.op) for p in report.problems] == [("fake_vs_real", f"{NS}::double_functional")]
    assert any("Functionalize kernel" in n for n in report.notes)


def test_a_check_does_not_inherit_an_earlier_checks_dynamic_sizes():
    # Dynamo keeps automatic-dynamic state per (file, line, name) of a code object: every check's entry has
    # its own name, so the same sweep recompiles the same way in every check, whatever ran before it.
    from opkit.verify.stages.inputs import fresh_entry

    def graphs_of_a_sweep() -> int:
        compiled = []

        def backend(gm, example_inputs):
            compiled.append(gm)
            return gm.forward

        run = torch.compile(fresh_entry(lambda x: x + 1), backend=backend, dynamic=True, fullgraph=True)
        run(torch.randn(2, 2))
        run(torch.randn(3, 2))  # breaks the duck-sized first shape's guard
        return len(compiled)

    assert [graphs_of_a_sweep() for _ in range(2)] == [2, 2]
    assert fresh_entry(abs).__code__.co_name != fresh_entry(abs).__code__.co_name


def test_a_static_check_that_recompiles_says_why_it_fails():
    # The same shapes on every call, yet a new graph each time (the model reads a value that changes): the
    # verdict FAILs with a problem that says so, not with a bare graph count.
    calls = [0]

    def model(x):
        calls[0] += 1
        return x + 0 * calls[0]  # the value is baked into each graph; the output does not depend on it

    report = check_graph_entry(model, (torch.ones(2),), backend="aot_eager", opcheck=False)
    assert report.graph_count == 4 and not report.ok
    assert [(p.stage, p.check) for p in report.problems] == [(Stage.DYNAMO, "recompile")]
    assert "the replay, replay, inputs refilled in place, replay, new input tensors call(s)" in report.problems[0].message
