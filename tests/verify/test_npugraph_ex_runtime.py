"""The pieces of npugraph_ex's emulation on their own: the wheel handling, the stand-in runtime against
what the real package reads, and the capture emulator's record/replay semantics."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from opkit import torch_npu_wheel as wheel


def test_unsupported_torch_npu_versions_are_refused_by_name():
    wheel.check_supported("2.13.0")
    wheel.check_supported("2.14.1")
    with pytest.raises(wheel.WheelUnavailable, match=r"torch-npu 2\.9\.0 is not emulated.*reduce-overhead"):
        wheel.check_supported("2.9.0")


def test_a_wheel_file_is_unpacked_into_the_cache_and_a_torchair_only_tree_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    whl = tmp_path / "torch_npu-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as archive:
        archive.writestr("torch_npu/dynamo/npugraph_ex/__init__.py", "")
        archive.writestr("torch_npu/_C.so", "binary, not unpacked")
        archive.writestr("torch_npu-2.14.0.dist-info/METADATA", "Name: torch_npu\nVersion: 2.14.0\n")
        archive.writestr("torch_npu-2.14.0.dist-info/RECORD", f"torch_npu/dynamo/npugraph_ex/__init__.py,{wheel._record_hash(b'')},0\n")
    got = wheel.obtain(str(whl))
    assert got.version == "2.14.0" and (got.dynamo_dir / "npugraph_ex" / "__init__.py").is_file()
    assert not (got.root / "torch_npu" / "_C.so").exists()  # only the pure-Python package is kept
    assert got.root.is_relative_to(tmp_path / "cache")

    old = tmp_path / "old" / "torch_npu" / "dynamo" / "torchair"
    old.mkdir(parents=True)
    with pytest.raises(wheel.WheelUnavailable, match="torchair but no npugraph_ex"):
        wheel.obtain(str(tmp_path / "old"))
    with pytest.raises(wheel.WheelUnavailable, match="no such wheel file or directory"):
        wheel.obtain(str(tmp_path / "nowhere.whl"))


# Names the package mentions without reading them from torch_npu (comments and docstrings).
_MENTIONED_ONLY = {"distributed.xxx", "dynamo.npugraph_ex", "npu.npugraph_ex.inference.cache_compile"}


@pytest.mark.usefixtures("npugraph_ex_wheel")
def test_the_stand_in_covers_every_torch_npu_name_the_package_reads():
    from opkit.verify.npugraph_ex.runtime import READ_BY_NPUGRAPH_EX

    package = wheel.obtain().dynamo_dir / "npugraph_ex"
    read: set[str] = set()
    for f in Path(package).rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        read |= {m.group(1)[1:] for m in re.finditer(r"\btorch_npu((?:\.[A-Za-z_]\w*)+)", text)}
        read |= {"npu." + m.group(1)[1:] for m in re.finditer(r"\btorch\.npu((?:\.[A-Za-z_]\w*)+)", text)}
        for m in re.finditer(r"from torch_npu((?:\.\w+)*) import ([\w, ]+)", text):
            read |= {(m.group(1)[1:] + "." if m.group(1) else "") + n.strip() for n in m.group(2).split(",")}
    uncovered = {n for n in read if not any(k == n or k.startswith(n + ".") for k in READ_BY_NPUGRAPH_EX)}
    assert len(read) >= 40
    assert uncovered <= _MENTIONED_ONLY, uncovered


def test_capture_records_kernels_replays_them_on_fixed_buffers_and_rejects_host_syncs():
    import torch

    from opkit.verify.npugraph_ex.capture import CaptureViolation, NPUGraph, graph

    x = torch.ones(3)
    g = NPUGraph()
    with graph(g):
        y = x * 2
        x.add_(1)  # capture leaves memory from before it as it was
    assert torch.equal(x, torch.ones(3)) and g.kernels == ["aten::mul", "aten::add_"]
    x.copy_(torch.tensor([1.0, 2.0, 3.0]))  # new data in the captured input buffer
    g.replay()
    assert torch.equal(y, torch.tensor([2.0, 4.0, 6.0])) and torch.equal(x, torch.tensor([2.0, 3.0, 4.0]))
    with pytest.raises(CaptureViolation, match="reads a device value on the host"):
        with graph(NPUGraph()):
            (x.sum() > 0).item()
