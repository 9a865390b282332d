"""The custom ops of TorchAir's graph-entry tests, as those tests define them, under opkit's own namespace.

TorchAir declares them with ``Library.define`` and a CPU kernel plus a Meta function (or, in its stub
module, ``CompositeExplicitAutograd``), every in-place one ``-> None``; one pair has a Functionalize
kernel that renames the in-place op to its functional twin and is registered with npugraph_ex as
re-inplaceable. The kernels here are written for these tests (deterministic: TorchAir's stubs draw
random numbers, because their capture and replay never run).

Sources (github:Ascend/torchair):
* ``tests/st/torchair_aclgraph_reinplace_st.py``: sin, sin_cos, boo, mutate_op (lines 62-100, 447-520)
* ``tests/st/torchair_st_stub_aclgraph_utils.py``: custom_infer(.out), sin_cos_inplace/_functional (400-574)
* ``tests/st/torchair_npugraph_ex_compile_st.py``: sin_inplace (1721-1746)
* ``docs/zh/custom_op_graph/in_place_op_cases.md`` / ``non_in_place_op_cases.md``: my_inplace, my_op
"""

from __future__ import annotations

import torch
from torch.library import Library

NS = "tair"

_lib = Library(NS, "FRAGMENT")


def _define(schema: str, cpu=None, meta=None, composite=None) -> None:
    name = schema.split("(", 1)[0]
    _lib.define(schema)
    if cpu is not None:
        _lib.impl(name, cpu, "CPU")
    if meta is not None:
        _lib.impl(name, meta, "Meta")
    if composite is not None:
        _lib.impl(name, composite, "CompositeExplicitAutograd")


# -- torchair_aclgraph_reinplace_st.py:62-100 -------------------------------------------------------
def _sin(x, result):
    result.copy_(x.sin())


def _sin_cos(x, out_sin, out_cos):
    out_sin.copy_(x.sin())
    out_cos.copy_(x.cos())


def _boo(x):
    x.sin_()


def _nothing(*args):
    del args  # an in-place op's Meta function: it returns nothing, the schema's '-> None'


_define("sin(Tensor x, Tensor(a!) result) -> None", _sin, _nothing)
_define("sin_cos(Tensor x, Tensor(a!) out_sin, Tensor(b!) out_cos) -> None", _sin_cos, _nothing)
_define("boo(Tensor(a!) x) -> None", _boo, _nothing)


# -- torchair_aclgraph_reinplace_st.py:447-520 (mutate_op, a list of mutated tensors) -----------------
def _mutate_list(y):
    y[0].add_(2)
    y[1].add_(3)


_define("mutate_op(Tensor(a!)[] y) -> None", _mutate_list, _nothing)


# -- torchair_st_stub_aclgraph_utils.py:400-574 -----------------------------------------------------
def _infer_shape(data):
    torch._check(data.dim() == 4, lambda: "data rank must be 4")
    return [(data.size(0) + 8) // 2, (data.size(1) * data.size(1)) // data.size(0), data.size(2) - 1, data.size(3)]


def _custom_infer_meta(data, other):
    return data.new_empty(_infer_shape(data))


def _custom_infer(data, other):
    out = data.new_empty(_infer_shape(data))
    out.fill_(float(other.sum()))
    return out


def _custom_infer_out_meta(data, other, *, out):
    return out


def _custom_infer_out(data, other, *, out):
    out.fill_(1)
    return out


_define("custom_infer(Tensor data, Tensor other) -> Tensor", meta=_custom_infer_meta, composite=_custom_infer)
_define(
    "custom_infer.out(Tensor data, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    meta=_custom_infer_out_meta,
    composite=_custom_infer_out,
)


def _sin_cos_inplace_meta(x, out_sin, out_cos):
    return torch.empty_like(x)


def _sin_cos_inplace(x, out_sin, out_cos):
    out_sin.sin_()
    out_cos.cos_()
    return x + 1


def _sin_cos_functional_meta(x, out_sin, out_cos):
    return torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)


def _sin_cos_functional(x, out_sin, out_cos):
    sin_copy, cos_copy = out_sin.clone(), out_cos.clone()
    result = torch.ops.tair.sin_cos_inplace(x, sin_copy, cos_copy)
    return result, sin_copy, cos_copy


_define("sin_cos_inplace(Tensor x, Tensor(a!) out_sin, Tensor(b!) out_cos) -> Tensor", meta=_sin_cos_inplace_meta, composite=_sin_cos_inplace)
_define(
    "sin_cos_functional(Tensor x, Tensor out_sin, Tensor out_cos) -> (Tensor, Tensor, Tensor)",
    meta=_sin_cos_functional_meta,
    composite=_sin_cos_functional,
)


def _sin_cos_inplace_functionalize(x, out_sin, out_cos):
    # What TorchAir's stub registers: under functionalization the in-place op becomes its functional
    # twin, whose fresh outputs replace the mutated arguments.
    for t in (x, out_sin, out_cos):
        torch._sync(t)
    unwrapped = [torch._from_functional_tensor(t) for t in (x, out_sin, out_cos)]
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Functionalize)):
        result, new_sin, new_cos = torch.ops.tair.sin_cos_functional(*unwrapped)
    for mutated, value in ((out_sin, new_sin), (out_cos, new_cos)):
        torch._functionalize_replace(mutated, value)
        torch._functionalize_commit_update(mutated)
        torch._sync(mutated)
    return result


_lib.impl("sin_cos_inplace", _sin_cos_inplace_functionalize, "Functionalize")


def register_sin_cos_reinplace(npugraph_ex_module) -> tuple:
    """Tell npugraph_ex that sin_cos_functional re-inplaces into sin_cos_inplace (arguments 1 and 2), as
    TorchAir's stub does (``inplaceable_npu_ops.update``). Returns (table, key) for the caller to undo."""
    graph_pass = npugraph_ex_module._acl_concrete_graph.graph_pass
    key = torch.ops.tair.sin_cos_functional.default
    graph_pass.inplaceable_npu_ops[key] = graph_pass.InplaceableNpuOp(
        inplace_op=torch.ops.tair.sin_cos_inplace.default,
        mutated_arg=[1, 2],
        extra_check=graph_pass.check_multi_stream_for_multi_reinplace,
    )
    return graph_pass.inplaceable_npu_ops, key


# -- torchair_npugraph_ex_compile_st.py:1721-1746 ---------------------------------------------------
_define("sin_inplace(Tensor x, Tensor(a!) result) -> None", _sin, _nothing)


# -- docs/zh/custom_op_graph/in_place_op_cases.md and non_in_place_op_cases.md (op-plugin style) --------
def _my_inplace(x, y):
    x.add_(y)
    return y * 2


def _my_inplace_meta(x, y):
    return torch.empty_like(y)


def _my_op(x, y, z, attr1, attr2):
    out = x * attr1 + attr2
    if y is not None:
        out = out + y
    for t in z:
        out = out + t
    return out


def _my_op_meta(x, y, z, attr1, attr2):
    return torch.empty_like(x)


_define("my_inplace(Tensor(a!) x, Tensor y) -> Tensor", _my_inplace, _my_inplace_meta)
_define("my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor", _my_op, _my_op_meta)
