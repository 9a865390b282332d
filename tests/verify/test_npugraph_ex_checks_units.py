"""opkit.verify.npugraph_ex.checks on an Observation built from small FX graphs and npugraph_ex's own log
lines (quoted from torch-npu 2.13.0's graph_pass.py and acl_graph.py): no wheel, no torch.compile."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters
from torch.library import Library

from opkit.verify.npugraph_ex import capture, checks
from opkit.verify.npugraph_ex.observe import CompiledGraph, Observation
from opkit.verify.report import NpugraphExRun, Problem, Stage

_LIB = Library("opkit_checks_units", "FRAGMENT")
_LIB.define("scale_(Tensor(a!) x, float s) -> ()")
_LIB.define("other_(Tensor(a!) x) -> ()")
_SCALE = torch.ops.opkit_checks_units.scale_.default

_SKIPPED = (
    "Skipped fx_pass _reinplace_inplaceable_ops_pass for unsupported fx graph 140233.Reinplace_with_multi_stream_check "
    "is not supported."
)
_LIMIT = (
    "The capture_limit reached when capturing fx_graph graph_1 with graph key (2,), we will fall back to eager for "
    "all subsequent executions. Excessive recapture can degrade performance"
)


@pytest.fixture(autouse=True)
def clean_log():
    capture.LOG.reset()
    counters["npugraph_ex"].clear()
    yield
    capture.LOG.reset()
    counters["npugraph_ex"].clear()


def _graph(build) -> torch.fx.GraphModule:
    """A GraphModule over placeholders x and y; ``build(graph, x, y)`` returns the output node."""
    graph = torch.fx.Graph()
    x, y = graph.placeholder("x"), graph.placeholder("y")
    graph.output(build(graph, x, y))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _wrapped(wrapper, op=_SCALE):
    return _graph(lambda g, x, y: g.call_function(wrapper, (op,) if op else (), {"x": x, "s": 2.0} if op else {}))


def _copy_back(into: str):
    def build(g, x, y):
        t = g.call_function(torch.ops.aten.mul.Tensor, (x, y))
        target = {"x": x, "y": y, "t": t}[into]
        return g.call_function(torch.ops.aten.copy_.default, (target, t))

    return _graph(build)


_PLAIN = _graph(lambda g, x, y: g.call_function(torch.ops.aten.add.Tensor, (x, y)))


# -- run_record ----------------------------------------------------------------------------------------


def test_run_record_reads_the_observation_and_the_capture_log():
    before = _PLAIN
    after = _copy_back("x")
    observation = Observation(
        [
            CompiledGraph(before, after, ("x",), "graph_1"),
            CompiledGraph(before, None, (), "graph_2"),
            CompiledGraph(before, after, ("y", "z"), "graph_3"),
        ],
        ["a warning", _LIMIT, _SKIPPED],
    )
    capture.LOG.captures, capture.LOG.replays = 3, 5
    capture.LOG.kernels[:] = ["aten::mul", "aten::copy_"]
    counters["npugraph_ex"]["recapture_due_to_mutated_input_change_graph_1"] = 2
    counters["npugraph_ex"]["recapture_due_to_mutated_input_change_graph_3"] = 1
    counters["npugraph_ex"]["recapture_due_to_mutated_input_change_graph_9"] = 7  # not this check's graph
    counters["npugraph_ex"]["captured_graph_1"] = 4
    run = checks.run_record(observation, source="torch-npu 2.13.0 (cache)", calls=iter(["capture", "replay"]))
    code_before, code_after = before.code.strip(), after.code.strip()
    assert run == NpugraphExRun(
        emulated=True,
        source="torch-npu 2.13.0 (cache)",
        graph_before="\n".join([code_before] * 3),
        graph_after="\n".join([code_after] * 2),
        mutated_user_inputs=("x", "y", "z"),
        captures=3,
        recaptures_for_moved_inputs=3,
        replays=5,
        calls=("capture", "replay"),
        fell_back_to_eager=_LIMIT,
        skipped_passes=(_SKIPPED,),
        captured_kernels=("aten::mul", "aten::copy_"),
    )
    assert "copy_" in run.graph_after and "copy_" not in run.graph_before


def test_run_record_of_nothing_observed():
    run = checks.run_record(Observation(), source="s", calls=[], emulated=False)
    assert run == NpugraphExRun(emulated=False, source="s")
    failed = checks.run_record(Observation([CompiledGraph(_PLAIN)]), source="s", calls=[])
    assert failed.graph_before == _PLAIN.code.strip() and failed.graph_after is None


# -- passes_problems -----------------------------------------------------------------------------------

_NOT_REINPLACED_ACTION = (
    "make the mutated argument a graph input or a fresh intermediate, not a view of one "
    "(npugraph_ex does not re-inplace through views)"
)


@pytest.mark.parametrize(
    "wrapper",
    [torch.ops.higher_order.auto_functionalized, torch.ops.higher_order.auto_functionalized_v2],
    ids=["v1", "v2"],
)
def test_a_target_op_left_functionalized(wrapper):
    observation = Observation([CompiledGraph(_PLAIN, _wrapped(wrapper), ("x",))])
    assert checks.passes_problems(observation, ["opkit_checks_units::scale_"]) == [
        Problem(
            Stage.BACKEND,
            "not_reinplaced",
            f"opkit_checks_units::scale_ is still wrapped in {wrapper.__name__} after npugraph_ex's passes: "
            "the capture copies its mutated argument instead of writing it in place",
            _NOT_REINPLACED_ACTION,
            "opkit_checks_units::scale_",
        )
    ]
    # Only the ops under check count.
    assert checks.passes_problems(observation, ["opkit_checks_units::other_"]) == []


def test_a_wrapper_without_its_op():
    observation = Observation([CompiledGraph(_PLAIN, _wrapped(torch.ops.higher_order.auto_functionalized, None))])
    assert checks.passes_problems(observation, ["?"])[0].message.startswith("? is still wrapped in auto_functionalized")
    assert checks.passes_problems(observation, ["opkit_checks_units::scale_"]) == []


def test_copy_back_into_a_mutated_graph_input():
    observation = Observation([CompiledGraph(_PLAIN, _copy_back("x"), ("x",))])
    assert checks.passes_problems(observation, ["aten::mul"]) == [
        Problem(
            Stage.BACKEND,
            "copy_back",
            "npugraph_ex left a copy_ into graph input x after its passes",
            "the in-place op was not re-inplaced on the input: check its schema annotates the "
            "argument Tensor(a!) and the model passes the input itself, not a view",
        )
    ]


@pytest.mark.parametrize(
    ("into", "mutated"),
    [("y", ("x",)), ("x", ()), ("t", ("t",))],
    ids=["input-not-mutated", "nothing-mutated", "not-a-graph-input"],
)
def test_copies_that_are_no_copy_back(into, mutated):
    assert checks.passes_problems(Observation([CompiledGraph(_PLAIN, _copy_back(into), mutated)]), ["aten::mul"]) == []


def test_a_copy_back_is_of_what_a_target_op_wrote():
    # copy_(x, mul(x, y)) with mul not under check: the compiler's own epilogue, not the op's copy-back.
    assert checks.passes_problems(Observation([CompiledGraph(_PLAIN, _copy_back("x"), ("x",))]), []) == []
    # A value computed from an argument the target op was handed counts (the op wrote it in place).
    def build(g, x, y):
        t = g.call_function(torch.ops.aten.clone.default, (y,))
        g.call_function(_SCALE, (t, 2.0))
        return g.call_function(torch.ops.aten.copy_.default, (x, g.call_function(torch.ops.aten.neg.default, (t,))))

    observation = Observation([CompiledGraph(_PLAIN, _graph(build), ("x",))])
    assert [p.check for p in checks.passes_problems(observation, ["opkit_checks_units::scale_"])] == ["copy_back"]


def test_a_self_copy_is_no_copy_back():
    # copy_(x, x): what npugraph_ex keeps for a user's x.copy_(x) (TorchAir reinplace st, test_self_copy_no_crash)
    self_copy = _graph(lambda g, x, y: g.call_function(torch.ops.aten.copy_.default, (x, x)))
    assert checks.passes_problems(Observation([CompiledGraph(_PLAIN, self_copy, ("x",))]), ["aten::copy_"]) == []


def test_a_copy_without_args_and_a_graph_that_failed_to_compile():
    empty_copy = _graph(lambda g, x, y: g.call_function(torch.ops.aten.copy_.default, ()))
    observation = Observation([CompiledGraph(_PLAIN, empty_copy, ("x",)), CompiledGraph(_wrapped(torch.ops.higher_order.auto_functionalized))])
    assert checks.passes_problems(observation, ["opkit_checks_units::scale_"]) == []
    # A graph that failed to compile comes first: the later ones are still read.
    observation = Observation([CompiledGraph(_PLAIN), CompiledGraph(_PLAIN, _copy_back("x"), ("x",))])
    assert [p.check for p in checks.passes_problems(observation, ["aten::mul"])] == ["copy_back"]


def test_swallowed_pass_failures_and_silence_on_a_clean_graph():
    observation = Observation([CompiledGraph(_PLAIN, _PLAIN, ("x",))], ["other warning", "  " + _SKIPPED + "\n"])
    assert checks.passes_problems(observation, ["aten::add"]) == [
        Problem(
            Stage.BACKEND,
            "skipped_pass",
            f"npugraph_ex skipped a pass and went on: {_SKIPPED}",
            "the graph runs without that optimisation (e.g. in-place ops stay copies): it costs memory "
            "and time on the NPU, not correctness; rerun with TORCH_COMPILE_DEBUG=1 to see the exception it swallowed",
        )
    ]
    # The exception the pass swallowed, when opkit saw it, is the reason given.
    seen = Observation([CompiledGraph(_PLAIN, _PLAIN, ("x",))], [_SKIPPED], ["AttributeError: 'NoneType' object has no attribute 'numel'"])
    (problem,) = checks.passes_problems(seen, ["aten::add"])
    assert problem.message.endswith("(the pass raised AttributeError: 'NoneType' object has no attribute 'numel')")
    assert problem.detail == "AttributeError: 'NoneType' object has no attribute 'numel'" and "TORCH_COMPILE_DEBUG" not in problem.next_action
    assert checks.passes_problems(Observation([CompiledGraph(_PLAIN, _PLAIN, ("x",))]), ["aten::add"]) == []


# -- capture_problems ----------------------------------------------------------------------------------


def test_capture_violations_once_each_with_their_action():
    sync = capture.Violation("cpu_sync", "aten::_local_scalar_dense", "aten::_local_scalar_dense reads a device value on the host")
    shape = capture.Violation("data_dependent", "aten::nonzero", "aten::nonzero has a data-dependent size")
    rand = capture.Violation("random", "aten::rand", "aten::rand draws random numbers")
    capture.LOG.violations[:] = [sync, shape, sync, rand]
    assert checks.capture_problems(Observation()) == [
        Problem(
            Stage.CAPTURE,
            "cpu_sync",
            "aten::_local_scalar_dense reads a device value on the host (seen by the capture emulator)",
            "keep the value on the device as a tensor: no .item(), .tolist(), .cpu() or Python branching on it in the graph",
            "aten::_local_scalar_dense",
        ),
        Problem(
            Stage.CAPTURE,
            "data_dependent",
            "aten::nonzero has a data-dependent size (seen by the capture emulator)",
            "npugraph_ex needs static shapes: use a fixed-shape form (masking with torch.where, a padded output)",
            "aten::nonzero",
        ),
        Problem(
            Stage.CAPTURE,
            "random",
            "aten::rand draws random numbers (seen by the capture emulator)",
            "generate the random tensor outside the compiled region and pass it in as an input",
            "aten::rand",
        ),
    ]


def test_capture_limit_falls_back_to_eager():
    assert checks.capture_problems(Observation(logged=["x", _LIMIT])) == [
        Problem(
            Stage.CAPTURE,
            "fallback_to_eager",
            "npugraph_ex reached capture_limit and now runs this graph eagerly for good: The capture_limit reached when "
            "capturing fx_graph graph_1 with graph key (2,), we will fall back to eager for all subsequent executions",
            "each new shape (dynamic=True) or moved mutated input is a new capture: keep shapes static "
            "(dynamic=False, pad to buckets) or raise options={'capture_limit': N}",
        )
    ]
    assert checks.capture_problems(Observation(logged=["x"])) == []
