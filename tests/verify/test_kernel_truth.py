"""verify does what the kernel does: a Python kernel's host sync fails the emulated capture at its line, and
an undeclared write of an op ``-> ()`` shows its consequence under the real compiler (the call is removed)."""

from __future__ import annotations

import inspect

import pytest
import torch

from opkit.verify import check_graph_entry
from kernel_truth_ops import OPS, scale_sync, to_host




def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn._init_fn)
    return start + next(i for i, line in enumerate(lines) if text in line and "def " not in line)


def _problems(report, kind: str):
    return [p for p in report.problems if p.check == kind]


@pytest.mark.parametrize("op, fn, call", [("scale_sync", scale_sync, ".item()"), ("to_host", to_host, ".cpu()")])
def test_a_host_sync_in_a_python_kernel_fails_the_capture_at_its_line(op, fn, call):
    report = check_graph_entry(getattr(OPS, op).default, (torch.randn(8) + 3,), backend="npugraph_ex")
    syncs = _problems(report, "cpu_sync")
    assert not report.ok and syncs, report
    message = syncs[0].message
    assert f"kernel_truth_ops.py:{_line_of(fn, call)}" in message
    assert "the current capture mode does not support this operation" in message
    assert syncs[0].stage.name == "CAPTURE"


def test_the_twin_without_the_sync_passes():
    report = check_graph_entry(OPS.scale.default, (torch.randn(8) + 3,), backend="npugraph_ex")
    assert report.ok, report


def test_an_undeclared_write_of_a_void_op_shows_the_removed_call():
    report = check_graph_entry(OPS.store.default, (torch.zeros(4), torch.ones(4)), backend="aot_eager")
    (removed,) = _problems(report, "call_removed")
    assert "the call was removed: its write to 'cache' is lost" in removed.message
    assert "kernel_truth_ops.py:" in removed.message and "cache.copy_(...)" in removed.message
    assert 'mutates_args=("cache",)' in removed.next_action
    assert not _problems(report, "op_not_in_graph")  # no blame on "a wrapper Dynamo skips"


def test_the_declared_twin_keeps_its_call():
    report = check_graph_entry(OPS.store_declared.default, (torch.zeros(4), torch.ones(4)), backend="aot_eager")
    assert report.ok, report


def test_where_the_model_does_not_know_verify_says_so():
    report = check_graph_entry(OPS.store_hidden.default, (torch.zeros(4), torch.ones(4)), backend="aot_eager")
    (removed,) = _problems(report, "call_removed")
    # Neither the eager run nor the model saw a write, and the model could not follow _hidden: no guess either way.
    assert "opkit did not know whether the kernel writes an argument" in removed.message
    assert "_hidden(...) is not followed" in removed.message
    assert "is lost" not in removed.message


def test_an_op_that_writes_nothing_is_dropped_and_verify_says_the_kernel_writes_nothing():
    report = check_graph_entry(OPS.noop.default, (torch.zeros(4), torch.ones(4)), backend="aot_eager")
    removed = _problems(report, "call_removed")
    assert removed and "writes none of its arguments" in removed[0].message


_CPP = """\
#include <torch/library.h>

void store_kv(const at::Tensor &x, const at::Tensor &kCache)
{
    kCache.copy_(x);
}

TORCH_LIBRARY(NS, m) { m.def("store_kv(Tensor x, SCHEMA kCache) -> ()"); }
TORCH_LIBRARY_IMPL(NS, PrivateUse1, m) { m.impl("store_kv", TORCH_FN(store_kv)); }
"""
_FAKE = 'import torch\n\n@torch.library.register_fake("NS::store_kv")\ndef _(x, kCache):\n    return None\n'


@pytest.mark.parametrize("annotation, ns", [("Tensor", "opkit_truth_cpp_bad"), ("Tensor(a!)", "opkit_truth_cpp_ok")])
def test_a_cpp_kernel_stand_in_writes_what_the_kernel_writes(tmp_path, annotation, ns):
    """verify --from: the stand-in of a C++ kernel follows the effects model, so the real compiler drops the
    unannotated op and says the write is lost; the annotated twin passes."""
    from opkit.verify.from_cpp import defined_from_cpp, read_cpp_ops

    cpp = tmp_path / "my_ops.cpp"
    cpp.write_text(_CPP.replace("NS", ns).replace("SCHEMA", annotation))
    fake = tmp_path / "fake.py"
    fake.write_text(_FAKE.replace("NS", ns))
    ops = read_cpp_ops(str(cpp), None, [str(fake)])
    with defined_from_cpp(ops, ops.checked[0]) as (op, notes):
        assert any("the stand-in writes what the kernel writes: kCache" in n for n in notes), notes
        report = check_graph_entry(op, (torch.ones(4), torch.zeros(4)), backend="aot_eager", real_kernel=False, notes=notes, isolate=False)
    removed = _problems(report, "call_removed")
    if annotation == "Tensor":
        assert removed and "the call was removed: its write to 'kCache' is lost" in removed[0].message
        assert "my_ops.cpp:5:" in removed[0].message
    else:
        assert report.ok, report


_BINDING = """\
#include <torch/library.h>
#include "ops/store_adapter.h"

TORCH_LIBRARY(NS, m) { m.def("store_kv(Tensor x, Tensor kCache) -> ()"); }
TORCH_LIBRARY_IMPL(NS, PrivateUse1, m) { m.impl("store_kv", TORCH_FN(store_kv)); }
"""
_ADAPTER = """\
#pragma once
void store_kv(const at::Tensor &x, const at::Tensor &kCache)
{
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    store_kernel<<<8, nullptr, stream>>>((GM_ADDR)x.data_ptr(), (GM_ADDR)kCache.data_ptr());
}
"""
_DEVICE = """\
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void store_kernel(GM_ADDR x, GM_ADDR cache)
{
    AscendC::GlobalTensor<half> xGm, cacheGm;
    xGm.SetGlobalBuffer((__gm__ half *)x);
    cacheGm.SetGlobalBuffer((__gm__ half *)cache);
    AscendC::DataCopy(cacheGm[0], local, 16);
}
"""


def test_verify_from_a_binding_reads_the_kernels_in_the_tree_around_it(tmp_path):
    """vllm-ascend's layout: the binding includes the host kernel from a header, and the device kernel it launches
    lies in another directory; verify --from reads the tree around the file, as lint does, once for every op."""
    from opkit.verify.from_cpp import defined_from_cpp, read_cpp_ops

    ns = "opkit_truth_tree"
    (tmp_path / "ops").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "binding.cpp").write_text(_BINDING.replace("NS", ns))
    (tmp_path / "ops" / "store_adapter.h").write_text(_ADAPTER)
    (tmp_path / "kernels" / "store_kernel.asc").write_text(_DEVICE)
    fake = tmp_path / "fake.py"
    fake.write_text(_FAKE.replace("NS", ns))
    ops = read_cpp_ops(str(tmp_path / "binding.cpp"), None, [str(fake)])
    assert ops.kernels_from == (str(tmp_path),)
    with defined_from_cpp(ops, ops.checked[0]) as (op, notes):
        report = check_graph_entry(op, (torch.ones(4), torch.zeros(4)), backend="aot_eager", real_kernel=False, notes=notes, isolate=False)
    (removed,) = _problems(report, "call_removed")
    assert "the call was removed: its write to 'kCache' is lost" in removed.message
    assert "store_kernel.asc:7:" in removed.message


def test_a_file_in_a_large_directory_has_its_kernels_read_from_itself_alone(tmp_path, monkeypatch):
    from opkit.verify import kernel_effects

    for i in range(4):
        (tmp_path / f"other_{i}.cpp").write_text("int x;\n")
    (tmp_path / "binding.cpp").write_text("int y;\n")
    monkeypatch.setattr(kernel_effects, "MAX_SOURCE_FILES", 3)
    assert kernel_effects.kernel_sources(str(tmp_path / "binding.cpp")) == [str(tmp_path / "binding.cpp")]
    monkeypatch.setattr(kernel_effects, "MAX_SOURCE_FILES", 10)
    assert kernel_effects.kernel_sources(str(tmp_path / "binding.cpp")) == [str(tmp_path)]
