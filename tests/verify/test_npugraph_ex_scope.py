"""npugraph_ex's process-wide changes are in force only inside an emulated check (opkit.verify.npugraph_ex.scope):
before and after one, torch, logging, signals and sys.modules are as they were."""

from __future__ import annotations

import logging
import signal
import sys

import pytest
import torch
from oplib import OpLibrary
from torch._subclasses.fake_tensor import FakeTensorMode

from opkit.verify import check_graph_entry, npugraph_ex

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("npugraph_ex_wheel")]

NS = "opkit_t_scope"
op = OpLibrary(NS).op  # kept: the library unregisters its ops when collected
op("scaled(Tensor x, float s) -> Tensor", lambda x, s: x * s, lambda x, s: torch.empty_like(x))
aten = torch.ops.aten


def _fake_dropout_mask_dtype():
    """torch's Meta of native_dropout gives a bool mask; npugraph_ex's patch gives the NPU's packed uint8 one."""
    with FakeTensorMode() as mode:
        return aten.native_dropout.default(mode.from_tensor(torch.randn(4, 4)), 0.5, True)[1].dtype


def _process_state():
    return {
        "dropout mask": _fake_dropout_mask_dtype(),
        "Tensor.is_npu": "is_npu" in vars(torch.Tensor),
        "logger class": logging.getLoggerClass(),
        "torch_npu modules": sorted(n for n in sys.modules if n.split(".")[0] == "torch_npu"),
        "SIGINT handler": signal.getsignal(signal.SIGINT),
        "wheel on sys.path": [p for p in sys.path if "torch-npu" in p],
    }


def test_an_emulated_check_leaves_the_process_as_it_found_it():
    before = _process_state()
    report = check_graph_entry(getattr(torch.ops, NS).scaled.default, (torch.randn(4, 4), 2.0), backend="npugraph_ex", opcheck=False)
    assert report.ok and report.emulated, str(report)
    assert _process_state() == before
    assert before["dropout mask"] == torch.bool and before["logger class"] is logging.Logger
    assert not before["Tensor.is_npu"] and not before["torch_npu modules"]


def test_inside_a_check_npugraph_ex_sees_its_patches_and_the_stand_in():
    held = npugraph_ex.load().scope
    with held.inside():
        assert _fake_dropout_mask_dtype() == torch.uint8  # npugraph_ex's Meta of native_dropout
        assert torch.randn(2).is_npu  # host memory plays device memory
        assert sys.modules["torch_npu"].__opkit_stand_in__
    assert _fake_dropout_mask_dtype() == torch.bool
    assert not hasattr(torch.randn(2), "is_npu")
