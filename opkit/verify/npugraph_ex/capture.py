"""The aclgraph capture emulator behind the stand-in ``NPUGraph`` and ``graph(...)``.

On an NPU, ``with torch_npu.npu.graph(g):`` records the kernels the FX forward launches without running
them, and ``g.replay()`` relaunches them on the same device addresses. Here a ``TorchDispatchMode`` is
active inside ``graph(...)``: each kernel is run once (so later kernels get real buffers to read) and
recorded with the very tensors it used; ``replay()`` re-runs the record on those buffers, so inputs copied
into them and outputs read from them behave as fixed graph memory does, and Python scalars are frozen at
their capture values. Capture leaves no trace on memory that existed before it: what a kernel writes
there is restored when the capture ends (on an NPU nothing runs during capture).

Memory allocated inside a capture is the graph's pool and stays reserved for the graph until it is
reset, as on the device: npugraph_ex drops its own references to the input buffers it allocates there
(``clone_input``) and later copies each call's inputs into views rebuilt from their addresses
(``graph_memory`` finds the owner). Were the pool not held, a graph whose kernels never read an input
(npugraph_ex's ``wait`` rewired onto a ``record``) would free that buffer and the copy would write freed
heap memory (glibc aborts the process).

What aclgraph capture cannot hold is recorded as a violation: a host sync (the capture aborts, as on the
device), an op whose output size depends on data (a sync too), and a random op (captured with frozen
state: replays repeat or drift from eager).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

# Allocations are graph memory, not kernels: replaying them would hand out new buffers.
_ALLOCATIONS = frozenset({"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided"})
# Device-to-host reads: on the NPU they synchronise the stream, which capture forbids.
_HOST_SYNCS = frozenset({"aten::_local_scalar_dense", "aten::item", "aten::equal", "aten::is_nonzero", "aten::_assert_async", "aten::allclose"})


class CaptureViolation(RuntimeError):
    """Raised inside capture for what aclgraph refuses (a host sync), as the device runtime would."""

    def __init__(self, kind: str, op: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.op = op


@dataclass(frozen=True)
class Violation:
    kind: str  # "cpu_sync", "data_dependent" or "random"
    op: str
    message: str


@dataclass
class _Kernel:
    func: Any
    args: tuple
    kwargs: dict
    out: Any


@dataclass
class CaptureLog:
    """What every capture in this process saw since the last ``reset``; read by the checks."""

    captures: int = 0  # captures that recorded at least one kernel (npugraph_ex warms the pool with an empty one)
    replays: int = 0
    kernels: list[str] = field(default_factory=list)  # ops of the latest non-empty capture, in order
    violations: list[Violation] = field(default_factory=list)

    def reset(self) -> None:
        self.captures = self.replays = 0
        self.kernels.clear()
        self.violations.clear()


LOG = CaptureLog()


def _classify(func, args: tuple, kwargs: dict) -> str | None:
    import torch

    name = func._schema.name
    tags = set(getattr(func, "tags", ()))
    if name in _HOST_SYNCS or torch.Tag.data_dependent_output in tags:
        return "cpu_sync"
    if torch.Tag.dynamic_output_shape in tags:
        return "data_dependent"
    if torch.Tag.nondeterministic_seeded in tags:
        return "random"
    if name == "aten::_to_copy" and str(kwargs.get("device", "")) == "cpu":
        return "cpu_sync"  # .cpu() of a device tensor: the copy waits for the stream
    return None


_MESSAGES = {
    "cpu_sync": "{op} reads a device value on the host while the graph is being captured (a stream sync aclgraph forbids)",
    "data_dependent": "{op} has an output size that depends on the data, which needs a host sync at capture",
    "random": "{op} draws random numbers inside the captured graph: each replay reuses the captured generator state",
}


class NPUGraph:
    """A captured graph: the recorded kernels and the buffers they hold."""

    def __init__(self) -> None:
        self._kernels: list[_Kernel] = []
        self._pool: dict[int, Any] = {}  # data_ptr -> storage allocated inside the capture: graph memory, held
        self._saved: dict[int, tuple[Any, Any]] = {}  # storages from before the capture that it wrote
        self.captured = False

    # -- capture ----------------------------------------------------------------------------------
    def capture_begin(self, *args, **kwargs) -> None:
        del args, kwargs
        self._kernels.clear()
        self._pool.clear()
        self._saved.clear()
        _GRAPHS.add(self)

    def capture_end(self) -> None:
        for storage, snapshot in self._saved.values():
            storage.copy_(snapshot)  # nothing runs during a device capture: undo what the host run wrote
        self._saved.clear()
        self.captured = True
        if self._kernels:
            LOG.captures += 1
            LOG.kernels[:] = self.kernels

    def on_kernel(self, func, args: tuple, kwargs: dict):
        """One kernel launched inside the capture: check it, run it, record it."""
        import torch
        from torch.utils._pytree import tree_leaves

        op = func._schema.name
        kind = _classify(func, args, kwargs)
        if kind is not None:
            violation = Violation(kind, op, _MESSAGES[kind].format(op=op))
            LOG.violations.append(violation)
            if kind != "random":
                raise CaptureViolation(kind, op, violation.message)
        if op in _ALLOCATIONS:
            out = func(*args, **kwargs)
            self._hold(out)
            return out.zero_()  # deterministic contents: a kernel reading it before replay cannot crash
        for i, arg in enumerate(func._schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            for t in tree_leaves(value):
                if isinstance(t, torch.Tensor):
                    storage = t.untyped_storage()
                    key = storage.data_ptr()
                    if key not in self._pool and key not in self._saved:
                        self._saved[key] = (storage, storage.clone())
        # A kernel's output is graph memory only when it is new memory: a view of an argument (select,
        # as_strided, an in-place op returning its input) is the argument's memory, a user's input included,
        # so a later write through it is undone at capture end like any write to that input.
        argument_memory = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        out = _run_watched(func, args, kwargs) if func.namespace not in _TORCH_NAMESPACES else func(*args, **kwargs)
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in argument_memory:
                self._hold(t)
        self._kernels.append(_Kernel(func, args, kwargs, out))
        return out

    def _hold(self, tensor) -> None:
        storage = tensor.untyped_storage()
        if storage.nbytes():  # a zero-byte storage has no address to hand out
            self._pool.setdefault(storage.data_ptr(), storage)

    # -- replay -----------------------------------------------------------------------------------
    def replay(self) -> None:
        import torch
        from torch.utils._pytree import tree_leaves

        LOG.replays += 1
        for k in self._kernels:
            result = k.func(*k.args, **k.kwargs)
            for out, new in zip(tree_leaves(k.out), tree_leaves(result)):
                if isinstance(out, torch.Tensor) and out is not new and not _same_memory(out, new):
                    out.copy_(new)

    def reset(self) -> None:
        self._kernels.clear()
        self._pool.clear()

    def debug_dump(self, path: str) -> str:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(self.kernels))
        return path

    def super_kernel_optimize(self, *args, **kwargs) -> None:
        del args, kwargs

    @property
    def kernels(self) -> list[str]:
        return [k.func._schema.name for k in self._kernels]


# ---------------------------------------------------------------------------------------------------
# A Python kernel inside the capture: its own host syncs
# ---------------------------------------------------------------------------------------------------

# Ops whose kernels are torch's own C++: what they call inside is not the user's code.
_TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "_c10d_functional", "c10d", "profiler"})
# Tensor methods that copy a device value to the host without an op a dispatch mode sees off the NPU (on a
# CPU tensor ``.cpu()`` returns itself, ``.tolist()`` and ``.numpy()`` read memory directly).
_SYNC_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
_UNWATCHED = threading.local()  # set while a kernel opkit stands in with runs (a CPU reference): not the real kernel
_TORCH_DIR = None


def unwatched(kernel):
    """``kernel``, run with the capture watch off: a CPU reference or a stand-in opkit registers is not the
    op's real kernel, and its syncs are not the op's."""

    def run(*args, **kwargs):
        depth = getattr(_UNWATCHED, "depth", 0)
        _UNWATCHED.depth = depth + 1
        try:
            return kernel(*args, **kwargs)
        finally:
            _UNWATCHED.depth = depth

    return run


def _user_frame():
    """The innermost frame of the user's code (not torch's, not opkit's): where the kernel made the call."""
    import os
    import sys

    import torch

    global _TORCH_DIR
    if _TORCH_DIR is None:
        _TORCH_DIR = os.path.dirname(torch.__file__)
    here = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))  # the opkit package
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith((_TORCH_DIR, here)) and not name.startswith("<"):
            return frame
        frame = frame.f_back
    return None


def _where(frame) -> str:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "an unknown line"


def _kernel_sync(op: str, what: str, where: str) -> CaptureViolation:
    message = (
        f"the kernel of {op} calls {what} at {where} while the graph is being captured: aclgraph refuses "
        "it (\"the current capture mode does not support this operation\")"
    )
    violation = Violation("cpu_sync", op, message)
    LOG.violations.append(violation)
    return CaptureViolation("cpu_sync", op, message)


def _run_watched(func, args: tuple, kwargs: dict):
    """Run a custom op's kernel inside the capture, watching what its Python code does: a host sync there
    (``.item()``, ``.cpu()``, ``bool(t)``, ...) fails the capture at its line, as it does on the NPU."""
    import sys

    from torch.utils._python_dispatch import TorchDispatchMode

    if getattr(_UNWATCHED, "depth", 0):
        return func(*args, **kwargs)
    op = func._schema.name
    seen: list = []

    class _Watch(TorchDispatchMode):
        def __torch_dispatch__(self, inner, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if not getattr(_UNWATCHED, "depth", 0) and _classify(inner, args, kwargs) == "cpu_sync":
                raise _kernel_sync(op, f"{inner._schema.name} (a host read)", _where(_user_frame()))
            return inner(*args, **kwargs)

    def profile(frame, event, arg):
        if event == "c_call" and not seen and not getattr(_UNWATCHED, "depth", 0) and getattr(arg, "__name__", None) in _SYNC_METHODS:
            owner = getattr(arg, "__self__", None)
            import torch

            if isinstance(owner, torch.Tensor):
                # the line now: the frame runs on, and its f_lineno with it
                seen.append((f".{arg.__name__}()", _where(frame if _user_frame_of(frame) else _user_frame())))
        if previous is not None:
            previous(frame, event, arg)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        with _Watch():
            out = func(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    if seen:
        raise _kernel_sync(op, *seen[0])
    return out


def _user_frame_of(frame) -> bool:
    import os

    import torch

    name = frame.f_code.co_filename
    return not name.startswith((os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(os.path.dirname(__file__))))) and not name.startswith("<")


_GRAPHS: weakref.WeakSet = weakref.WeakSet()  # every NPUGraph that captured, while it lives


def graph_memory(data_ptr: int, nbytes: int):
    """The storage of a live graph's pool that starts at ``data_ptr`` and holds ``nbytes``, else None."""
    for npu_graph in list(_GRAPHS):
        storage = npu_graph._pool.get(data_ptr)
        if storage is not None and storage.nbytes() >= nbytes:
            return storage
    return None


def _same_memory(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.storage_offset() == b.storage_offset()


@contextlib.contextmanager
def graph(npu_graph: NPUGraph, pool=None, stream=None, capture_error_mode: str = "global"):
    """``torch_npu.npu.graph``: kernels launched inside are captured into ``npu_graph``."""
    from torch.utils._python_dispatch import TorchDispatchMode

    del pool, stream, capture_error_mode

    class Capturing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return npu_graph.on_kernel(func, args, kwargs or {})

    npu_graph.capture_begin()
    try:
        with Capturing():
            yield npu_graph
    finally:
        npu_graph.capture_end()
