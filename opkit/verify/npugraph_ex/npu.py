"""The stand-in ``torch.npu`` / ``torch_npu.npu`` device module: no NPU, one host "device".

Registered as torch's ``npu`` device module when torch_npu is absent (``opkit.verify.device``), so that
``device_types="npu"`` custom ops import and Dynamo finds a device module. npugraph_ex reads the rest:
streams and events (single-stream no-ops), ``NPUGraph``/``graph`` (the capture emulator in
``capture``), the graph memory pool handle, device name and CANN version. Every name below is one the
torch-npu 2.13/2.14 ``npugraph_ex`` package reads (``runtime.READ_BY_NPUGRAPH_EX`` lists them).
"""

from __future__ import annotations

import contextlib
import itertools
import types

from opkit.verify.npugraph_ex.capture import NPUGraph, graph  # noqa: F401  (module attributes)

DEVICE_NAME = "opkit-emulated (no NPU)"
CANN_VERSION = "8.5.0"  # answers npugraph_ex's version gates as a current CANN would


def is_available() -> bool:
    return False  # honest: there is no NPU; the emulation runs on host memory


def device_count() -> int:
    return 0


def current_device() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _is_in_bad_fork() -> bool:
    return False


def manual_seed_all(seed: int) -> None:  # torch.manual_seed seeds every registered device module
    del seed


def synchronize(device=None) -> None:  # host execution is synchronous
    del device


def empty_cache() -> None:
    pass


def memory_snapshot() -> list:
    return []


def get_device_name(device=None) -> str:
    del device
    return DEVICE_NAME


def graph_pool_handle() -> tuple[int, int]:
    # npugraph_ex validates a pool handle as a pair of ints with one of them zero.
    return (0, next(_pool_ids))


_pool_ids = itertools.count(1)
_stream_ids = itertools.count(1)


class Event:
    """A no-op event: there is one stream and execution is synchronous."""

    def __init__(self, *args, **kwargs) -> None:
        del args, kwargs

    def record(self, stream=None) -> None:
        del stream

    def wait(self, stream=None) -> None:
        del stream

    def reset(self, stream=None) -> None:
        del stream

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True


ExternalEvent = Event


class Stream:
    """A stream id and nothing else: kernels run in program order on the host."""

    def __init__(self, stream_id: int | None = None, device_index: int = 0, device_type: int = 0, priority: int = 0, **kwargs) -> None:
        del kwargs
        self.stream_id = next(_stream_ids) if stream_id is None else int(stream_id)
        self.device_index = device_index
        self.device_type = device_type
        self.priority = priority

    def wait_event(self, event) -> None:
        del event

    def wait_stream(self, stream) -> None:
        del stream

    def record_event(self, event=None):
        return event or Event()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(self.stream_id)


_current = Stream(stream_id=0)


def current_stream(device=None) -> Stream:
    del device
    return _current


def default_stream(device=None) -> Stream:
    del device
    return _current


def set_stream(stream: Stream) -> None:
    global _current
    _current = stream


@contextlib.contextmanager
def stream(s: Stream | None):
    global _current
    saved = _current
    if s is not None:
        _current = s
    try:
        yield
    finally:
        _current = saved


_CORE_LIMIT = {"cube_core_num": 24, "vector_core_num": 48}


def get_stream_limit(stream=None) -> dict:
    del stream
    return dict(_CORE_LIMIT)


def set_stream_limit(stream, cube_num: int, vector_num: int) -> None:
    del stream, cube_num, vector_num


def get_device_limit(device=None) -> dict:
    del device
    return dict(_CORE_LIMIT)


_deterministic_level = 0


def _get_deterministic_level() -> int:
    return _deterministic_level


def set_deterministic_level(level: int) -> None:
    global _deterministic_level
    _deterministic_level = int(level)


def graph_task_group_begin(stream=None) -> None:
    del stream


def graph_task_group_end(stream=None):
    del stream
    return object()  # a task-group handle, only compared by identity


def graph_task_update_begin(stream, handle) -> None:
    del stream, handle


def graph_task_update_end(stream) -> None:
    del stream


def fake_record_stream(tensor, stream) -> None:
    del tensor, stream


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:3] if p.isdigit())


def _get_cann_version(module: str = "CANN") -> str:
    del module
    return CANN_VERSION


def _is_gte_cann_version(version: str, module: str = "CANN") -> bool:
    del module
    return _version_tuple(CANN_VERSION) >= _version_tuple(version)


utils = types.ModuleType(__name__ + ".utils", "torch_npu.npu.utils stand-in: CANN version queries")
utils.get_cann_version = _get_cann_version
utils._is_gte_cann_version = _is_gte_cann_version
