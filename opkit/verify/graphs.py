"""Read captured FX graphs: where the target ops are, and what npugraph_ex could not capture."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from opkit.verify.report import OpInGraph, UncapturableOp

_FUNCTIONALIZE_WRAPPERS = ("auto_functionalized", "auto_functionalized_v2")
# Device-to-host reads: a sync on the NPU stream, which aclgraph capture forbids. Those torch tags
# data_dependent_output (item, _local_scalar_dense, equal, allclose) are found by the tag; these two carry none.
_CPU_SYNC_OPS = frozenset({"aten::_assert_async", "aten::is_nonzero"})


def op_qualname(op) -> str | None:
    """``ns::name`` for an OpOverload, OpOverloadPacket or CustomOpDef; None for anything else."""
    qualname = getattr(op, "_qualname", None)  # CustomOpDef
    if isinstance(qualname, str):
        return qualname
    schema = getattr(op, "_schema", None)
    if schema is not None:
        return schema.name
    qualified = getattr(op, "_qualified_op_name", None)  # OpOverloadPacket
    return qualified if isinstance(qualified, str) else None


def _call_nodes(graphs: Iterable) -> Iterator:
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op == "call_function":
                yield node
        for sub in gm.children():  # nested graphs of higher-order ops
            if hasattr(sub, "graph"):
                yield from _call_nodes([sub])


def _node_op(node) -> tuple[str | None, str]:
    """(qualified name of the op the node calls, the form it is called in)."""
    target = node.target
    name = getattr(target, "__name__", None)  # an OpOverload's, a function's, or a higher-order op's (auto_functionalized)
    if name in _FUNCTIONALIZE_WRAPPERS and node.args:
        return op_qualname(node.args[0]), name
    return op_qualname(target), "direct"


# The form of an op that Dynamo captured and its own Functionalize kernel replaced (by a functional twin)
# in the functionalized graph.
FUNCTIONALIZE_KERNEL_FORM = "functionalize_kernel"


def _find(op: str, graphs: list, label: str) -> OpInGraph | None:
    for node in _call_nodes(graphs):
        name, form = _node_op(node)
        if name == op:
            return OpInGraph(op, True, form, label)
    return None


def has_functionalize_kernel(op: str) -> bool:
    """The op registers its own Functionalize kernel (TorchAir's multi-inplace ops do): under AOTAutograd it
    becomes whatever that kernel calls, typically a functional twin that npugraph_ex turns back."""
    import torch

    for overload in _overload_names(op):
        try:
            if torch._C._dispatch_has_kernel_for_dispatch_key(overload, "Functionalize"):
                return True
        except RuntimeError:
            continue
    return False


def _overload_names(op: str) -> list[str]:
    import torch

    ns, _, name = op.partition("::")
    packet = getattr(getattr(torch.ops, ns, None), name, None)
    if packet is None:
        return []
    return [op if o == "default" else f"{op}.{o}" for o in packet.overloads()]


def find_ops(target_ops: Iterable[str], aot_graphs: list, dynamo_graphs: list) -> tuple[OpInGraph, ...]:
    """Each target op's presence, preferring the functionalized graph (what the backend really receives).
    An op absent there but captured by Dynamo is in the graph when its own Functionalize kernel renamed it."""
    found: list[OpInGraph] = []
    for op in target_ops:
        graphs = aot_graphs or dynamo_graphs  # the first graph kind that exists is authoritative
        hit = _find(op, graphs, "aot" if aot_graphs else "dynamo")
        if hit is None and aot_graphs and has_functionalize_kernel(op):
            traced = _find(op, dynamo_graphs, "dynamo")
            hit = OpInGraph(op, True, FUNCTIONALIZE_KERNEL_FORM, "dynamo") if traced is not None else None
        found.append(hit or OpInGraph(op, False))
    return tuple(found)


def data_dependent_ops(graphs: list) -> tuple[str, ...]:
    """Ops whose output size is an unbacked SymInt (data-dependent) in a functionalized graph."""
    import torch
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    from torch.utils._pytree import tree_leaves

    found: dict[str, None] = {}
    for node in _call_nodes(graphs):
        tensors = [t for t in tree_leaves(node.meta.get("val")) if isinstance(t, torch.Tensor)]
        if tensors and free_unbacked_symbols(tensors):
            name, _ = _node_op(node)
            found[name or str(node.target)] = None  # a dict keeps the first-seen order
    return tuple(found)


def _device_following_constants(dynamo_graphs: list) -> list:
    """The values of ``torch.tensor(data, device=<a tensor's device>)`` calls in Dynamo's graphs: Dynamo
    writes such a device as a ``torch.device`` object (``device=x.device``), a literal as the string the
    user wrote (``device="cpu"``), and no device at all for the host default."""
    import torch

    values = []
    for node in _call_nodes(dynamo_graphs):
        if node.target is torch.tensor and isinstance(node.kwargs.get("device"), torch.device) and node.args:
            try:
                values.append(torch.tensor(node.args[0]))
            except (TypeError, ValueError, RuntimeError):
                continue
    return values


def uncapturable_ops(graphs: list, *, device: str, npu: bool = False, dynamo_graphs: list = ()) -> tuple[UncapturableOp, ...]:
    """Random ops, data-dependent shapes, host syncs and (for npugraph_ex) host tensor constants: what
    aclgraph capture & replay cannot hold. A constant made on its inputs' device (``device=x.device``, found in
    ``dynamo_graphs`` by its value) is on the CPU only because the check runs there: on an NPU it is not."""
    import torch

    seen: dict[str, UncapturableOp] = {}
    if npu:
        following = _device_following_constants(list(dynamo_graphs))
        for gm in graphs:
            for node in gm.graph.nodes:
                if node.op == "get_attr" and isinstance(getattr(gm, str(node.target), None), torch.Tensor):
                    constant = getattr(gm, str(node.target))
                    if constant.device.type != "cpu" or isinstance(constant, torch.nn.Parameter):
                        continue
                    if any(v.shape == constant.shape and torch.equal(v.to(constant.dtype), constant) for v in following):
                        continue
                    seen.setdefault(str(node.target), UncapturableOp(f"tensor constant {node.target}", "cpu_constant"))
    for node in _call_nodes(graphs):
        target = node.target
        if not isinstance(target, torch._ops.OpOverload):
            continue
        name = target._schema.name
        tags = set(target.tags)
        if torch.Tag.nondeterministic_seeded in tags:
            kind = "random"
        elif name in _CPU_SYNC_OPS or torch.Tag.data_dependent_output in tags:
            kind = "cpu_sync"
        elif torch.Tag.dynamic_output_shape in tags:
            kind = "data_dependent"
        elif device != "cpu" and name in ("aten::_to_copy", "aten::to", "aten::copy_") and _to_cpu(node):
            kind = "cpu_sync"
        else:
            continue
        seen.setdefault(name, UncapturableOp(name, kind))
    return tuple(seen.values())


def _to_cpu(node) -> bool:
    device = node.kwargs.get("device")
    return device is not None and str(device) == "cpu"


def graph_code(aot_graphs: list, dynamo_graphs: list) -> str | None:
    graphs = aot_graphs or dynamo_graphs
    if not graphs:
        return None
    return "\n".join(gm.code.strip() for gm in graphs)
