"""The stand-in ``torch_npu`` that npugraph_ex imports off the NPU. Never the real one.

``install()`` puts a ``torch_npu`` package of plain modules into ``sys.modules`` and makes the ``npu``
device exist (PrivateUse1 renamed, the stand-in device module registered, ``Tensor.is_npu``). Host
memory plays device memory: ``is_npu`` is true for CPU tensors, so npugraph_ex treats the CPU tensors of
a check as device tensors (it gives captured inputs their own graph buffers, as it does on an NPU).
The modules and ``is_npu`` (``slots()``) are in force only inside an emulated check
(``opkit.verify.npugraph_ex.scope``); the rename and the device module stay, as torch allows one rename.

``READ_BY_NPUGRAPH_EX`` lists every ``torch_npu`` attribute the torch-npu 2.13/2.14 ``npugraph_ex``
package reads (found by reading the package; a test greps the unpacked wheel against it). Those
left out of the stand-in are read behind ``hasattr``/``ImportError`` guards for features a CPU check
never reaches (HCCL collectives, static kernels, data dumps, NPU formats).
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

STAND_IN_MARK = "__opkit_stand_in__"

READ_BY_NPUGRAPH_EX = {
    # torch_npu.npu / torch.npu: the device module (opkit.verify.npugraph_ex.npu)
    "npu.NPUGraph": "captured graph object",
    "npu.graph": "capture context",
    "npu.graph_pool_handle": "graph memory pool",
    "npu.current_device": "device index of the graph",
    "npu.get_device_name": "SoC gates (is_arch35)",
    "npu.synchronize": "warm-up and reset",
    "npu.empty_cache": "reset after capture_limit",
    "npu.memory_snapshot": "debug logs",
    "npu.Stream": "capture and update streams",
    "npu.Event": "update/replay ordering",
    "npu.ExternalEvent": "task update of ops with host-side params",
    "npu.current_stream": "capture stream, core limits",
    "npu.stream": "update stream context",
    "npu.set_stream": "stream scopes",
    "npu.get_stream_limit": "recapture on core-limit change",
    "npu.set_stream_limit": "core-limit scopes",
    "npu.get_device_limit": "core-limit scopes",
    "npu.graph_task_group_begin": "task groups of updatable ops",
    "npu.graph_task_group_end": "task groups of updatable ops",
    "npu.graph_task_update_begin": "parameter update on replay",
    "npu.graph_task_update_end": "parameter update on replay",
    "npu.fake_record_stream": "multi-stream memory",
    "npu._get_deterministic_level": "deterministic scopes",
    "npu.set_deterministic_level": "deterministic scopes",
    "npu.super_kernel_scope_begin": "super-kernel scopes (absent: not emulated)",
    "npu.super_kernel_scope_end": "super-kernel scopes (absent: not emulated)",
    "npu.utils.get_cann_version": "CANN version gates",
    "npu.utils._is_gte_cann_version": "CANN version gates",
    "npu._aclnn_reselect_static_kernel": "static kernels (absent: not emulated)",
    "npu._aclnn_reselect_static_kernel_with_path": "static kernels (absent: hasattr-guarded)",
    # torch_npu._C
    "_C._npu_getCheckpointState": "memory-pool state around captures",
    "_C._npu_setCheckpointPoolState": "memory-pool state around captures",
    "_C._construct_storage_from_data_pointer": "graph input/output buffers rebuilt from addresses",
    "_C._construct_NPU_Tensor_From_Storage_And_Metadata": "graph input/output buffers rebuilt from addresses",
    "_C._aclop_start_dump": "data dump (absent: not emulated)",
    "_C._aclop_stop_dump": "data dump (absent: not emulated)",
    # torch_npu
    "get_npu_format": "tensor metadata of device tensors",
    "utils._error_code.ErrCode": "error messages",
    "utils._error_code.pta_error": "error messages",
    "utils._error_code.graph_error": "error messages",
    "dynamo._deterministic_guard.install_npu_deterministic_level_guard": "deterministic-level guard (a no-op)",
    "distributed.all_gather_into_tensor_uneven": "collectives (absent: ImportError-guarded)",
    "distributed.reduce_scatter_tensor_uneven": "collectives (absent: ImportError-guarded)",
    "npu_fusion_attention": "pattern fusion of torch_npu ops (absent: patterns not matched)",
    "npu_rms_norm": "pattern fusion of torch_npu ops (absent: patterns not matched)",
    "npu_rotary_mul": "pattern fusion of torch_npu ops (absent: patterns not matched)",
}

NOT_EMULATED = (
    "syncs or host tiling inside the op's own C++ kernel (a Python kernel's host syncs are seen), memory-pool reuse between graphs, NZ formats, "
    "multi-stream and HCCL behaviour, static kernels, and torch_npu's pattern fusion of its own ops"
)


def _module(name: str, doc: str, package: bool = False) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
    if package:
        module.__path__ = []
    setattr(module, STAND_IN_MARK, True)
    return module


# -- torch_npu._C: the memory-pool and tensor-from-address functions ---------------------------------
_FORMAT_ND = 2


def _npu_getCheckpointState(device, pool):  # noqa: N802  (torch_npu's name)
    return ("checkpoint", device, pool)


def _npu_setCheckpointPoolState(device, state, stale_storages, storages_to_add_deleter):  # noqa: N802
    del device, state, stale_storages, storages_to_add_deleter


def _construct_storage_from_data_pointer(data_ptr: int, device, nbytes: int):
    """Host memory at an address as a new storage over it. When the address is graph-pool memory the new
    storage keeps that buffer alive (on the device the pool keeps the block reserved); any other address is
    memory its caller keeps alive (a user's tensor), as on the device."""
    import ctypes

    import torch

    from opkit.verify.npugraph_ex.capture import graph_memory

    if nbytes == 0:
        return torch.UntypedStorage(0)
    owner = graph_memory(data_ptr, nbytes)
    buffer = _HeldBytes.at(data_ptr, nbytes) if owner is not None else (ctypes.c_char * nbytes).from_address(data_ptr)
    if owner is not None:
        buffer.owner = owner  # torch.frombuffer keeps the buffer object, and so the owner, as long as the storage
    return torch.frombuffer(buffer, dtype=torch.uint8).untyped_storage()


class _HeldBytes:
    """Byte arrays at an address that can carry a reference to the memory's owner (a ctypes subclass has a __dict__)."""

    _types: dict[int, type] = {}

    @classmethod
    def at(cls, data_ptr: int, nbytes: int):
        import ctypes

        array = cls._types.get(nbytes)
        if array is None:
            array = cls._types[nbytes] = type(f"HeldBytes{nbytes}", (ctypes.c_char * nbytes,), {})
        return array.from_address(data_ptr)


def _construct_NPU_Tensor_From_Storage_And_Metadata(metadata: dict, storage):  # noqa: N802
    import torch
    from torch.utils._mode_utils import no_dispatch

    with no_dispatch():  # rebuilding a view of graph memory is not a kernel of the captured graph
        t = torch.empty(0, dtype=metadata["dtype"])
        t.set_(storage, metadata["storage_offset"], metadata["size"], metadata["stride"])
    return t


class ErrCode:
    """torch_npu.utils._error_code.ErrCode: only formatted into messages."""

    def __getattr__(self, name: str) -> str:
        return name


ErrCode = ErrCode()  # type: ignore[misc]  (used as a namespace of codes)


def _error(*args, **kwargs) -> str:
    del args, kwargs
    return ""


MODULE_NAMES = (
    "torch_npu",
    "torch_npu._C",
    "torch_npu.utils",
    "torch_npu.utils._error_code",
    "torch_npu.distributed",
    "torch_npu.dynamo",
    "torch_npu.dynamo._deterministic_guard",
    "torch_npu.npu",
    "torch_npu.npu.utils",
)


def slots() -> list:
    """What ``install()`` adds that the rest of the process must not see: the modules and ``Tensor.is_npu``."""
    import torch

    from opkit.verify.npugraph_ex.scope import Slot

    return [*(Slot(sys.modules, name) for name in MODULE_NAMES), Slot(torch.Tensor, "is_npu")]


def install() -> types.ModuleType:
    """The stand-in ``torch_npu`` (installed once). Raises RuntimeError when the real one is loaded."""
    existing = sys.modules.get("torch_npu")
    if existing is not None:
        if getattr(existing, STAND_IN_MARK, False):
            return existing
        raise RuntimeError("the real torch_npu is imported in this process: use backend npugraph_ex, not its emulation")
    from opkit.verify import device
    from opkit.verify.npugraph_ex import npu

    device.emulate_npu_device()
    import torch

    def is_npu(self) -> bool:
        return self.device.type in ("cpu", "npu")

    setattr(is_npu, STAND_IN_MARK, True)
    torch.Tensor.is_npu = property(is_npu)

    root = _module("torch_npu", "opkit's stand-in for torch_npu: enough for npugraph_ex's compiler off the NPU", package=True)
    c = _module("torch_npu._C", "stand-in torch_npu._C")
    for fn in (_npu_getCheckpointState, _npu_setCheckpointPoolState, _construct_storage_from_data_pointer, _construct_NPU_Tensor_From_Storage_And_Metadata):
        setattr(c, fn.__name__, fn)
    utils = _module("torch_npu.utils", "stand-in torch_npu.utils", package=True)
    error_code = _module("torch_npu.utils._error_code", "stand-in error codes")
    error_code.ErrCode, error_code.pta_error, error_code.graph_error = ErrCode, _error, _error
    utils._error_code = error_code
    distributed = _module("torch_npu.distributed", "stand-in: no collectives")
    dynamo = _module("torch_npu.dynamo", "stand-in: only the deterministic-level guard npugraph_ex installs", package=True)
    guard = _module("torch_npu.dynamo._deterministic_guard", "stand-in: deterministic levels are not emulated")
    guard.install_npu_deterministic_level_guard = lambda: None
    dynamo._deterministic_guard = guard
    root._C, root.utils, root.distributed, root.npu, root.dynamo = c, utils, distributed, npu, dynamo
    root.get_npu_format = lambda tensor: _FORMAT_ND
    root.__version__ = "stand-in"
    modules = (root, c, utils, error_code, distributed, dynamo, guard, npu, npu.utils)
    sys.modules.update(zip(MODULE_NAMES, modules))
    return root


def is_stand_in(module) -> bool:
    return bool(getattr(module, STAND_IN_MARK, False))
