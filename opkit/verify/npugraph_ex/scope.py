"""What running npugraph_ex changes process-wide, held to the checks that run it.

Its ``get_npu_backend`` patches torch once per process (``add_npu_patch``, run once): Meta kernels and
decompositions of aten ops whose NPU outputs differ from torch's (native_dropout's packed mask, batch
norm's empty save_mean), FakeTensor's decomposition routing, Autograd kernels for PrivateUse1. Its
import remaps functional collectives. opkit's stand-in adds the ``torch_npu`` modules and
``Tensor.is_npu`` ("cpu or npu", so that host memory plays device memory). ``record`` notes the
watched slots before and after these changes are first made; ``Scope.inside()`` swaps the changed
values in for one check and back after it, so that the rest of the process (checks on other backends,
opcheck, the Meta checks, the user's own code) sees torch as it was. What its import does to the
process itself (logger class, signal handlers, an exit hook) is undone at once
(``import_side_effects_undone``).

Not undone, as with torch_npu's own import: the PrivateUse1 backend's rename to ``npu`` and the stand-in
``torch.npu`` device module (torch allows one rename per process), and the imported ``npugraph_ex``
package itself (its own ops live in its own namespaces).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

_ABSENT = object()


@dataclass(frozen=True)
class Slot:
    """One process-wide place: a dict's key or an object's own attribute."""

    holder: Any
    key: Any

    def read(self) -> Any:
        if isinstance(self.holder, dict):
            return self.holder.get(self.key, _ABSENT)
        return vars(self.holder).get(self.key, _ABSENT)  # own attribute only (a class's, not inherited)

    def write(self, value: Any) -> None:
        if isinstance(self.holder, dict):
            if value is _ABSENT:
                self.holder.pop(self.key, None)
            else:
                self.holder[self.key] = value
        elif value is _ABSENT:
            if self.key in vars(self.holder):
                delattr(self.holder, self.key)
        else:
            setattr(self.holder, self.key, value)

    def __hash__(self) -> int:
        return hash((id(self.holder), self.key))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Slot) and other.holder is self.holder and other.key == self.key


def record(dicts: Iterable[dict] = (), slots: Iterable[Slot] = ()) -> dict[Slot, Any]:
    """The value of every key of ``dicts`` and of each of ``slots``, now."""
    values = {s: s.read() for s in slots}
    for d in dicts:
        values.update({Slot(d, k): v for k, v in list(d.items())})
    return values


def _npugraph_ex_or_stand_in(value: Any) -> bool:
    """A value npugraph_ex or opkit's stand-in put there (or a removal), not one torch registered
    lazily meanwhile (an import that npugraph_ex triggered registers torch's own kernels, which stay)."""
    if value is _ABSENT or isinstance(value, property) or getattr(value, "__opkit_stand_in__", False):
        return True
    module = getattr(value, "__module__", None) or getattr(value, "__name__", "")
    return module.split(".")[0] in ("npugraph_ex", "torch_npu", "opkit")


def changed(before: dict[Slot, Any], after: dict[Slot, Any]) -> list[tuple[Slot, Any, Any]]:
    """(slot, value before, value after) for each slot npugraph_ex or the stand-in changed."""
    out = []
    for slot in {**before, **after}:
        old, new = before.get(slot, _ABSENT), after.get(slot, _ABSENT)
        if old is not new and _npugraph_ex_or_stand_in(new):
            out.append((slot, old, new))
    return out


def import_patch_points() -> list[dict]:
    """What importing npugraph_ex writes into torch: the functional-collective remaps (torch >= 2.3.1)."""
    try:
        from torch.distributed._functional_collectives import traceable_collective_remaps
    except ImportError:  # torch built without distributed: npugraph_ex skips the remaps too
        return []
    return [traceable_collective_remaps]


@contextlib.contextmanager
def import_side_effects_undone() -> Iterator[None]:
    """Around ``import npugraph_ex``: its logger class, signal handlers and exit hook are put back or
    dropped at once. It sets ``logging.setLoggerClass(_EventLogger)`` for every logger created later in
    the process; installs SIGINT/SIGTERM handlers that run its finaliser and re-raise; and registers
    that finaliser with atexit (``torch._dynamo.reset()`` and uninstalling static kernels, which the
    emulation never installs)."""
    import atexit
    import logging
    import signal
    import threading

    logger_class = logging.getLoggerClass()
    main = threading.current_thread() is threading.main_thread()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        yield
    finally:
        logging.setLoggerClass(logger_class)
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
        finalize = getattr(sys.modules.get("npugraph_ex"), "_finalize", None)
        if finalize is not None:
            atexit.unregister(finalize)


def op_overloads() -> list:
    """Every OpOverload materialised so far. One materialised later had no Python kernels (``py_kernels``)
    before it was first touched."""
    import torch
    from torch._ops import OpOverload, OpOverloadPacket

    overloads = []
    for namespace in list(vars(torch.ops).values()):
        if not isinstance(namespace, torch._ops._OpNamespace):
            continue
        for packet in list(vars(namespace).values()):
            if isinstance(packet, OpOverloadPacket):
                overloads.extend(o for o in list(vars(packet).values()) if isinstance(o, OpOverload))
    return overloads


def torch_patch_points() -> tuple[list[dict], list[Slot]]:
    """Where npugraph_ex's ``add_npu_patch`` writes: op kernel tables, the decomposition tables and
    FakeTensor's decomposition routing."""
    from torch._decomp import global_decomposition_table
    from torch._subclasses import fake_tensor

    routing = [Slot(fake_tensor, name) for name in ("torch_decomp_decompositions", "get_fast_op_impls")]
    return [o.py_kernels for o in op_overloads()] + list(global_decomposition_table.values()), routing


@dataclass
class Scope:
    """The changed slots with their values outside and inside an emulated check."""

    changes: list[tuple[Slot, Any, Any]] = field(default_factory=list)
    _depth: int = 0
    _patched_ops: list = field(default_factory=list)  # OpOverloads whose kernel tables change

    def add(self, changes: list[tuple[Slot, Any, Any]]) -> None:
        self.changes.extend(changes)
        tables = {id(slot.holder) for slot, _, _ in changes}
        self._patched_ops.extend(o for o in op_overloads() if id(o.py_kernels) in tables)

    def _put(self, inside: bool) -> None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        for slot, outside_value, inside_value in self.changes:
            slot.write(inside_value if inside else outside_value)
        # Dispatch decisions and fake outputs cached from the other side's kernels must not survive the swap.
        for op in self._patched_ops:
            op._dispatch_cache.clear()
        FakeTensorMode.cache_clear()

    def leave(self) -> None:
        """Put the outside values back (after recording what npugraph_ex's first compile changed)."""
        self._put(False)

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        """npugraph_ex's process-wide changes in force for the block, and undone after it."""
        self._depth += 1
        if self._depth == 1:
            self._put(True)
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._put(False)
