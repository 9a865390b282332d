"""opkit.verify.graphs on small real FX graphs (make_fx or torch.fx built by hand): no torch.compile here.

Expectations follow graph-entry.md: a target op is found in the functionalized (AOT) graph when there is
one, called directly or through auto_functionalized(_v2); random ops, host syncs, data-dependent sizes
and (for npugraph_ex) host tensor constants cannot be captured."""

from __future__ import annotations

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.library import Library

from opkit.verify import graphs
from opkit.verify.report import OpInGraph, UncapturableOp

_LIB = Library("opkit_graphs_units", "FRAGMENT")
_LIB.define("scale_(Tensor(a!) x, float s) -> ()")


@torch.library.custom_op("opkit_graphs_units::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def _traced(fn, *args, mode: str = "real") -> torch.fx.GraphModule:
    return make_fx(fn, tracing_mode=mode)(*args)


def _hand_graph(build, root: torch.nn.Module | None = None) -> torch.fx.GraphModule:
    """A GraphModule from ``build(graph, x)`` over one placeholder x; build returns the output node."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(build(graph, x))
    return torch.fx.GraphModule(root or torch.nn.Module(), graph)


def _functionalized(wrapper) -> torch.fx.GraphModule:
    """What AOTAutograd hands the backend for a mutating custom op: wrapper(op, x=..., s=...)."""
    op = torch.ops.opkit_graphs_units.scale_.default
    return _hand_graph(lambda g, x: g.call_function(wrapper, (op,), {"x": x, "s": 2.0}))


# -- op_qualname ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "want"),
    [
        (torch.ops.aten.add.Tensor, "aten::add"),  # OpOverload: its schema's name
        (torch.ops.aten.add, "aten::add"),  # OpOverloadPacket
        (twice, "opkit_graphs_units::twice"),  # CustomOpDef
        (torch.ops.opkit_graphs_units.twice.default, "opkit_graphs_units::twice"),
        (torch.add, None),
        (len, None),
        ("aten::add", None),
        (None, None),
    ],
)
def test_op_qualname(op, want):
    assert graphs.op_qualname(op) == want


def test_op_qualname_reads_no_non_string_name():
    class Odd:
        _qualname = 3
        _qualified_op_name = 4

    assert graphs.op_qualname(Odd()) is None


# -- find_ops ------------------------------------------------------------------------------------------


def test_find_ops_direct_call_in_the_aot_graph():
    gm = _traced(lambda x: torch.ops.opkit_graphs_units.twice(x) + 1, torch.ones(2))
    found = graphs.find_ops(["opkit_graphs_units::twice", "aten::mul"], [gm], [])
    assert found == (OpInGraph("opkit_graphs_units::twice", True, "direct", "aot"), OpInGraph("aten::mul", False))


@pytest.mark.parametrize(
    "wrapper",
    [torch.ops.higher_order.auto_functionalized, torch.ops.higher_order.auto_functionalized_v2],
    ids=["v1", "v2"],
)
def test_find_ops_through_auto_functionalized(wrapper):
    found = graphs.find_ops(["opkit_graphs_units::scale_"], [_functionalized(wrapper)], [])
    assert found == (OpInGraph("opkit_graphs_units::scale_", True, wrapper.__name__, "aot"),)


def test_find_ops_wrapper_without_args_is_not_the_op():
    gm = _hand_graph(lambda g, x: g.call_function(torch.ops.higher_order.auto_functionalized, (), {}))
    assert graphs.find_ops(["opkit_graphs_units::scale_"], [gm], []) == (OpInGraph("opkit_graphs_units::scale_", False),)


def test_find_ops_the_aot_graph_is_authoritative_when_there_is_one():
    aot = _traced(lambda x: x + 1, torch.ones(2))
    dynamo = _traced(lambda x: torch.ops.opkit_graphs_units.twice(x), torch.ones(2))
    assert graphs.find_ops(["opkit_graphs_units::twice"], [aot], [dynamo]) == (OpInGraph("opkit_graphs_units::twice", False),)
    assert graphs.find_ops(["opkit_graphs_units::twice"], [], [dynamo]) == (
        OpInGraph("opkit_graphs_units::twice", True, "direct", "dynamo"),
    )
    assert graphs.find_ops(["opkit_graphs_units::twice"], [], []) == (OpInGraph("opkit_graphs_units::twice", False),)


def test_find_ops_looks_in_every_graph_and_nested_ones():
    first = _traced(lambda x: x + 1, torch.ones(2))
    outer = _traced(lambda x: x - 1, torch.ones(2))
    outer.add_submodule("true_graph_0", _traced(lambda x: torch.ops.opkit_graphs_units.twice(x), torch.ones(2)))
    outer.add_submodule("plain", torch.nn.ReLU())  # a child without a graph is skipped
    assert graphs.find_ops(["opkit_graphs_units::twice", "aten::sub"], [first, outer], []) == (
        OpInGraph("opkit_graphs_units::twice", True, "direct", "aot"),
        OpInGraph("aten::sub", True, "direct", "aot"),
    )


def test_find_ops_ignores_nodes_that_call_no_function():
    # A get_attr and a call_method node named like the op are not calls of it.
    gm = _traced(lambda x: x + torch.tensor([1.0, 2.0]), torch.ones(2))
    x = next(iter(gm.graph.nodes))
    with gm.graph.inserting_after(x):
        gm.graph.call_method("add", (x, x))
    assert graphs.find_ops(["aten::add", "aten::lift_fresh_copy"], [gm], []) == (
        OpInGraph("aten::add", True, "direct", "aot"),
        OpInGraph("aten::lift_fresh_copy", True, "direct", "aot"),
    )
    gm2 = _hand_graph(lambda g, x: g.call_method("add", (x, x)))
    assert graphs.find_ops(["aten::add"], [gm2], []) == (OpInGraph("aten::add", False),)


# -- data_dependent_ops --------------------------------------------------------------------------------


def test_data_dependent_ops_names_ops_with_unbacked_sizes():
    gm = _traced(lambda x: torch.nonzero(x).sum() + x.sum(), torch.ones(3), mode="symbolic")
    assert graphs.data_dependent_ops([gm]) == ("aten::nonzero",)


def test_data_dependent_ops_silent_on_static_and_symbolic_sizes():
    assert graphs.data_dependent_ops([_traced(lambda x: torch.nonzero(x), torch.ones(3))]) == ()
    assert graphs.data_dependent_ops([_traced(lambda x: x * 2, torch.ones(3), mode="symbolic")]) == ()
    assert graphs.data_dependent_ops([]) == ()


def test_data_dependent_ops_once_per_op_and_by_target_when_not_an_op():
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(shape_env=ShapeEnv())
    with mode:
        unbacked = torch.empty(mode.shape_env.create_unbacked_symint())

    def build(g, x):
        a = g.call_function(torch.ops.aten.nonzero.default, (x,))
        b = g.call_function(torch.ops.aten.nonzero.default, (x,))
        c = g.call_function(torch.add, (a, b))
        for node in (a, b, c):
            node.meta["val"] = (unbacked, 3)  # leaves that are not tensors are skipped
        return c

    assert graphs.data_dependent_ops([_hand_graph(build)]) == ("aten::nonzero", str(torch.add))


# -- uncapturable_ops ----------------------------------------------------------------------------------


def _host_reads(g, x):
    """What make_fx(tracing_mode="symbolic") records for
    ``torch.rand(2) + x.sum().item() + x.to("cpu") + x.nonzero().sum()``, the copy to the host included."""
    a = g.call_function(torch.ops.aten.rand.default, ([2],), {"device": torch.device("cpu")})
    total = g.call_function(torch.ops.aten.sum.default, (x,))
    item = g.call_function(torch.ops.aten._local_scalar_dense.default, (total,))
    b = g.call_function(torch.ops.aten.add.Tensor, (a, item))
    c = g.call_function(torch.ops.aten._to_copy.default, (x,), {"device": torch.device("cpu")})
    d = g.call_function(torch.ops.aten.nonzero.default, (x,))
    e = g.call_function(torch.ops.aten.rand.default, ([2],))  # seen once
    return g.call_function(torch.ops.aten.add.Tensor, (g.call_function(torch.ops.aten.add.Tensor, (b, c)), g.call_function(torch.ops.aten.sum.default, (d,))), {"alpha": e})


def test_uncapturable_ops_kinds():
    gm = _hand_graph(_host_reads)
    assert graphs.uncapturable_ops([gm], device="npu") == (
        UncapturableOp("aten::rand", "random"),
        UncapturableOp("aten::_local_scalar_dense", "cpu_sync"),
        UncapturableOp("aten::_to_copy", "cpu_sync"),
        UncapturableOp("aten::nonzero", "data_dependent"),
    )
    # On the CPU a copy to the CPU is no device-to-host read.
    assert graphs.uncapturable_ops([gm], device="cpu") == (
        UncapturableOp("aten::rand", "random"),
        UncapturableOp("aten::_local_scalar_dense", "cpu_sync"),
        UncapturableOp("aten::nonzero", "data_dependent"),
    )


@pytest.mark.parametrize(
    ("op", "kind"),
    [
        (torch.ops.aten.bernoulli.default, "random"),
        (torch.ops.aten.item.default, "cpu_sync"),
        (torch.ops.aten.equal.default, "cpu_sync"),
        (torch.ops.aten.is_nonzero.default, "cpu_sync"),  # no data_dependent_output tag: by name
        (torch.ops.aten._assert_async.default, "cpu_sync"),  # by name
        (torch.ops.aten.allclose.default, "cpu_sync"),  # by its data_dependent_output tag
        (torch.ops.aten.masked_select.default, "data_dependent"),
        (torch.ops.aten.relu.default, None),
    ],
)
def test_uncapturable_ops_by_tag_and_name(op, kind):
    gm = _hand_graph(lambda g, x: g.call_function(op, (x,)))
    want = (UncapturableOp(op._schema.name, kind),) if kind else ()
    assert graphs.uncapturable_ops([gm], device="cpu") == want


@pytest.mark.parametrize(
    ("target", "kwargs", "device", "found"),
    [
        (torch.ops.aten._to_copy.default, {"device": torch.device("cpu")}, "npu", True),
        (torch.ops.aten._to_copy.default, {"device": "cpu"}, "cuda", True),
        (torch.ops.aten._to_copy.default, {"dtype": torch.float16}, "npu", False),
        (torch.ops.aten._to_copy.default, {"device": "npu"}, "npu", False),
        (torch.ops.aten.to.device, {"device": "cpu"}, "npu", True),
        (torch.ops.aten.copy_.default, {"device": "cpu"}, "npu", True),
        (torch.ops.aten.clone.default, {"device": "cpu"}, "npu", False),  # only the copies count
        (torch.ops.aten._to_copy.default, {"device": "cpu"}, "cpu", False),
    ],
)
def test_uncapturable_copy_to_host(target, kwargs, device, found):
    gm = _hand_graph(lambda g, x: g.call_function(target, (x,), kwargs))
    want = (UncapturableOp(target._schema.name, "cpu_sync"),) if found else ()
    assert graphs.uncapturable_ops([gm], device=device) == want


def test_uncapturable_ops_skips_calls_that_are_not_op_overloads():
    gm = _hand_graph(lambda g, x: g.call_function(torch.rand, (2,)))
    assert graphs.uncapturable_ops([gm], device="npu") == ()
    # ... and reads on past them.
    gm = _hand_graph(lambda g, x: g.call_function(torch.ops.aten.rand.default, (g.call_function(torch.rand, (2,)),)))
    assert graphs.uncapturable_ops([gm], device="npu") == (UncapturableOp("aten::rand", "random"),)


def test_uncapturable_host_constants_only_for_npugraph_ex():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(2))

        def forward(self, x):
            return x * self.weight + torch.tensor([1.0, 2.0])

    gm = make_fx(Model())(torch.ones(2))
    # make_fx lifts the parameter and the constant as get_attr nodes; only the plain host tensor counts.
    gm.graph.get_attr("missing")  # an attribute that is not there is no tensor
    kinds = [(n.op, str(n.target)) for n in gm.graph.nodes if n.op == "get_attr"]
    assert ("get_attr", "_tensor_constant0") in kinds
    assert graphs.uncapturable_ops([gm], device="npu", npu=True) == (UncapturableOp("tensor constant _tensor_constant0", "cpu_constant"),)
    assert graphs.uncapturable_ops([gm], device="npu") == ()
    assert graphs.uncapturable_ops([gm, gm], device="npu", npu=True) == (
        UncapturableOp("tensor constant _tensor_constant0", "cpu_constant"),
    )


def test_uncapturable_a_constant_on_the_meta_device_is_not_on_the_host():
    def with_constant(value):
        root = torch.nn.Module()
        root.register_buffer("c", value)
        return _hand_graph(lambda g, x: g.call_function(torch.ops.aten.add.Tensor, (x, g.get_attr("c"))), root)

    assert graphs.uncapturable_ops([with_constant(torch.ones(2, device="meta"))], device="npu", npu=True) == ()
    root = torch.nn.Module()
    root.register_buffer("c", torch.ones(2))
    root.register_buffer("d", torch.zeros(2))
    two = _hand_graph(lambda g, x: g.call_function(torch.ops.aten.add.Tensor, (g.get_attr("c"), g.get_attr("d"))), root)
    assert graphs.uncapturable_ops([two], device="npu", npu=True) == (
        UncapturableOp("tensor constant c", "cpu_constant"),
        UncapturableOp("tensor constant d", "cpu_constant"),
    )
    gm = with_constant(torch.ones(2))
    assert graphs.uncapturable_ops([gm], device="npu", npu=True) == (UncapturableOp("tensor constant c", "cpu_constant"),)


def test_uncapturable_a_constant_made_on_its_inputs_device_is_not_a_host_constant():
    # torch.tensor(v, device=x.device) (TorchAir aclgraph st, test_aclgraph_cache_tensor_constant): off the NPU
    # that device is the CPU, so the lifted constant is on the CPU, yet on an NPU it is on the device.
    def follows(x):
        return torch.maximum(x, torch.tensor(-1.0, device=x.device))

    def literal(x):
        return torch.maximum(x, torch.tensor(-1.0, device="cpu"))

    def default(x):
        return torch.maximum(x, torch.tensor(-1.0))

    def graphs_of(fn):
        seen = []

        def backend(gm, example_inputs):
            seen.append(gm)
            return gm.forward

        torch.compile(fn, backend=backend, fullgraph=True)(torch.ones(2))
        return seen, [make_fx(fn)(torch.ones(2))]

    dynamo, aot = graphs_of(follows)
    assert graphs.uncapturable_ops(aot, device="cpu", npu=True, dynamo_graphs=dynamo) == ()
    assert graphs.uncapturable_ops(aot, device="cpu", npu=True) == (UncapturableOp("tensor constant _tensor_constant0", "cpu_constant"),)
    for fn in (literal, default):
        dynamo, aot = graphs_of(fn)
        assert graphs.uncapturable_ops(aot, device="cpu", npu=True, dynamo_graphs=dynamo) == (
            UncapturableOp("tensor constant _tensor_constant0", "cpu_constant"),
        ), fn.__name__


# -- graph_code ----------------------------------------------------------------------------------------


def test_graph_code_prefers_the_aot_graphs():
    aot = _traced(lambda x: x + 1, torch.ones(2))
    dynamo = _traced(lambda x: x - 1, torch.ones(2))
    assert graphs.graph_code([aot, aot], [dynamo]) == aot.code.strip() + "\n" + aot.code.strip()
    assert "torch.ops.aten.add.Tensor(x_1, 1)" in graphs.graph_code([aot], [dynamo])
    assert graphs.graph_code([], [dynamo]) == dynamo.code.strip()
    assert graphs.graph_code([], []) is None


def test_find_ops_follows_an_op_its_functionalize_kernel_renamed():
    # TorchAir's multi-inplace ops register a Functionalize kernel that calls a functional twin: the
    # functionalized graph holds the twin, Dynamo's graph the op itself (torchair_st_stub_aclgraph_utils.py).
    lib = torch.library.Library("opkit_graphs_renamed", "FRAGMENT")
    lib.define("write_(Tensor(a!) x) -> ()")
    lib.define("plain_(Tensor(a!) x) -> ()")
    lib.impl("write_", lambda x: None, "Functionalize")
    aot = _traced(lambda x: x + 1, torch.ones(2))
    dynamo = _hand_graph(lambda g, x: g.call_function(torch.ops.opkit_graphs_renamed.write_.default, (x,)))
    assert graphs.find_ops(["opkit_graphs_renamed::write_"], [aot], [dynamo]) == (
        OpInGraph("opkit_graphs_renamed::write_", True, graphs.FUNCTIONALIZE_KERNEL_FORM, "dynamo"),
    )
    # Without a Functionalize kernel of its own, absence from the functionalized graph is absence.
    plain = _hand_graph(lambda g, x: g.call_function(torch.ops.opkit_graphs_renamed.plain_.default, (x,)))
    assert graphs.find_ops(["opkit_graphs_renamed::plain_"], [aot], [plain]) == (OpInGraph("opkit_graphs_renamed::plain_", False),)
    # Renamed but never traced: not in the graph.
    assert graphs.find_ops(["opkit_graphs_renamed::write_"], [aot], [aot]) == (OpInGraph("opkit_graphs_renamed::write_", False),)
    assert graphs.has_functionalize_kernel("opkit_graphs_renamed::nothing") is False
