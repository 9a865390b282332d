"""Is there a real NPU here, and if not, the off-NPU emulation of torch_npu's device naming.

Never imports torch_npu unless it is installed: installing it without CANN breaks ``import torch``
(graph-entry.md), so a plain ``find_spec`` decides first.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import types

EMULATION_NOTE = (
    "torch_npu is absent: the PrivateUse1 backend was renamed to 'npu' and a stub torch.npu device module "
    "(is_available() -> False) was registered, process-wide and irreversibly, so that device_types='npu' "
    "custom ops import unchanged; tensors stay on CPU"
)


def torch_npu_installed() -> bool:
    return importlib.util.find_spec("torch_npu") is not None


@functools.lru_cache(maxsize=1)
def npu_unavailable_reason() -> str | None:
    """None when torch_npu imports and an NPU is visible; otherwise why not, in one sentence."""
    if not torch_npu_installed():
        return "torch_npu is not installed (pip install 'opkit[npu]' on an Ascend machine with CANN)"
    if is_emulated():
        return "the npu device is opkit's off-NPU emulation, not torch_npu"
    try:
        import torch
        import torch_npu  # noqa: F401  (registers torch.npu and the npugraph_ex Dynamo backend)
    except Exception as exc:  # CANN missing or mismatched: anything can be raised here
        return f"torch_npu is installed but does not import: {type(exc).__name__}: {exc}"
    try:
        count = torch.npu.device_count() if torch.npu.is_available() else 0
    except Exception as exc:
        return f"torch.npu cannot query devices: {type(exc).__name__}: {exc}"
    if count == 0:
        visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
        extra = f" (ASCEND_RT_VISIBLE_DEVICES={visible})" if visible is not None else ""
        return f"torch_npu imports but no NPU is visible{extra}"
    return None


def npu_available() -> bool:
    return npu_unavailable_reason() is None


_STUB_NAME = "opkit.verify._npu_device_stub"


def is_emulated() -> bool:
    return _STUB_NAME in sys.modules


def emulate_npu_device() -> str | None:
    """Make ``torch.library.custom_op(..., device_types="npu")`` importable without torch_npu.

    Returns the note to put in the report, or None when nothing had to be done (real torch_npu, or
    already emulated). Dynamo looks the device module up by the backend's name, so a stub module that
    says "no devices" is registered alongside the rename (graph-entry.md records both failures).
    """
    import torch

    if torch_npu_installed() or is_emulated():
        return None
    if torch._C._get_privateuse1_backend_name() != "privateuseone":
        return None  # someone else already named PrivateUse1: leave their device alone
    stub = types.ModuleType(_STUB_NAME)
    stub.is_available = lambda: False
    stub.device_count = lambda: 0
    stub.current_device = lambda: 0
    stub.is_initialized = lambda: False
    # torch.manual_seed seeds every registered device module; answer as a device-less backend would.
    stub._is_in_bad_fork = lambda: False
    stub.manual_seed_all = lambda seed: None
    torch.utils.rename_privateuse1_backend("npu")
    torch._register_device_module("npu", stub)
    sys.modules[_STUB_NAME] = stub
    return EMULATION_NOTE
