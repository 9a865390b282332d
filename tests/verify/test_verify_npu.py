"""The real npugraph_ex path. Runs only on an Ascend NPU with torch_npu (benchmarks/npu_smoke.sh);
elsewhere the `npu` marker skips it and says why."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.npu, pytest.mark.slow]


def test_inplace_custom_op_enters_one_npugraph_ex_graph(assert_enters_graph):
    import torch

    @torch.library.custom_op("opkit_t_npu::scale_", mutates_args=("x",), device_types="npu")
    def scale_(x: torch.Tensor, s: float) -> None:
        x.mul_(s)

    @scale_.register_fake
    def _(x, s):
        return None

    report = assert_enters_graph(scale_, (torch.randn(8, 16), 2.0), backend="npugraph_ex", device="npu")
    assert report.backend == "npugraph_ex" and report.device == "npu"
    assert report.ops_in_graph[0].found and report.timings.replay_s is not None


def test_auto_picks_npugraph_ex_on_an_npu():
    from opkit.verify.backends import resolve_backend

    assert resolve_backend("auto").name == "npugraph_ex"
