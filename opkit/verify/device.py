"""Is there a real NPU here, and if not, the off-NPU emulation of torch_npu's device naming.

Never imports torch_npu unless it is installed: installing it without CANN breaks ``import torch``
(graph-entry.md), so a plain ``find_spec`` decides first.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

EMULATION_NOTE = (
    "torch_npu is absent: the PrivateUse1 backend was renamed to 'npu' and opkit's stand-in torch.npu device "
    "module (is_available() -> False) was registered, process-wide and irreversibly, so that device_types='npu' "
    "custom ops import unchanged; tensors stay on CPU"
)


def torch_npu_installed() -> bool:
    """The real torch_npu, not opkit's stand-in (``opkit.verify.npugraph_ex.runtime``)."""
    loaded = sys.modules.get("torch_npu")
    if loaded is not None:
        return not getattr(loaded, "__opkit_stand_in__", False)
    return importlib.util.find_spec("torch_npu") is not None


@functools.lru_cache(maxsize=1)
def npu_unavailable_reason() -> str | None:
    """None when torch_npu imports and an NPU is visible; otherwise why not, in one sentence."""
    if not torch_npu_installed():
        return "torch_npu is not installed (on an Ascend machine with CANN: pip install torch-npu==<your torch's version>)"
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


_DEVICE_MODULE = "opkit.verify.npugraph_ex.npu"  # the stand-in device module, shared with npugraph_ex's emulation


def is_emulated() -> bool:
    import torch

    stand_in = sys.modules.get(_DEVICE_MODULE)
    return stand_in is not None and getattr(torch, "npu", None) is stand_in


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
    from opkit.verify.npugraph_ex import npu  # is_available() -> False, device_count() -> 0

    torch.utils.rename_privateuse1_backend("npu")
    torch._register_device_module("npu", npu)
    return EMULATION_NOTE
