"""Cases of github:Ascend/torchair docs/zh/custom_op_graph/ and docs/zh/npugraph_ex/basic/: the docs'
examples of custom ops entering npugraph_ex and of its options, run on the emulated npugraph_ex."""

from __future__ import annotations

import pytest
import torch
from tair_check import assert_pass, entry

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("npugraph_ex_wheel")]

tair = torch.ops.tair


def test_in_place_op_case():
    # docs/zh/custom_op_graph/in_place_op_cases.md:275: my_inplace(Tensor(a!) x, Tensor y) -> Tensor
    report = entry(lambda x, y: tair.my_inplace(x, y), (torch.ones(4, 8), torch.ones(4, 8)))
    assert_pass(report)
    assert report.npugraph_ex.mutated_user_inputs


def test_non_in_place_op_case():
    # docs/zh/custom_op_graph/non_in_place_op_cases.md:281: my_op(x, None, [z0, z1], attr1, attr2)
    def f(x, z0, z1):
        return tair.my_op(x, None, [z0, z1], 1.5, 2)

    report = entry(f, (torch.ones(4, 8), torch.ones(4, 8), torch.ones(4, 8)))
    assert_pass(report)


def test_force_eager():
    # docs/zh/npugraph_ex/basic/force_eager.md:21: force_eager runs the FX graph eagerly: no capture
    # and no replay, and the report says so next to its PASS
    report = entry(torch.nn.Linear(4, 4), (torch.randn(2, 4),), options={"force_eager": True})
    assert_pass(report)
    assert report.npugraph_ex.captures == 0
    assert any("0 captures" in n or "no aclgraph was captured" in n for n in report.notes), report.notes
    assert "captured nothing" in str(report).splitlines()[0] or "0 captures" in str(report).splitlines()[0]


def test_capture_limit():
    # docs/zh/npugraph_ex/basic/capture_limit.md:21: capture_limit=64, fullgraph, dynamic=False
    report = entry(torch.nn.Linear(4, 4), (torch.randn(2, 4),), options={"capture_limit": 64})
    assert_pass(report)
    assert report.npugraph_ex.captures >= 1


def test_inplace_pass():
    # docs/zh/npugraph_ex/basic/inplace_pass.md:20: inplace_pass and input_inplace_pass on a mutating model
    def f(x):
        x.mul_(2)
        return x + 1

    report = entry(f, (torch.randn(3, 4),), options={"inplace_pass": True, "input_inplace_pass": True})
    assert_pass(report)


def test_remove_noop_ops():
    # docs/zh/npugraph_ex/basic/remove_noop_ops.md:42
    report = entry(lambda x: x[:] * 2, (torch.randn(3, 4),), options={"remove_noop_ops": True})
    assert_pass(report)
    assert "aten.slice" not in (report.npugraph_ex.graph_after or "")


def test_frozen_parameter():
    # docs/zh/npugraph_ex/basic/frozen_parameter.md:44: torch.add(x, y*z) with x a Parameter, z int
    class Model(torch.nn.Module):
        def forward(self, x, y, z):
            return torch.add(x, y * z)

    args = (torch.nn.Parameter(torch.randn(4, 1)), torch.randn(4, 4), torch.randn(4, 4).int())
    report = entry(Model(), args, options={"frozen_parameter": True})
    assert_pass(report)
