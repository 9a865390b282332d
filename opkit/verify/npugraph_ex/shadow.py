"""A user's file that defines an op npugraph_ex's own package defines too: the user's is the one verified.

npugraph_ex (torch_npu's copy of TorchAir) defines ops of its own in its namespaces (``npugraph_ex::*``,
``npu_define::*``), each guarded by ``if not hasattr(getattr(torch.ops, ns), name)``. A user's file
written the same way (a TorchAir fork, an op under development) is skipped without a word when the
wheel's package already defined the name in this process, and the wheel's registration would be
verified instead: a bug in the user's Meta would go unseen.

So before the user's file runs, the wheel's ``Library`` holding such an op is destroyed (torch removes
a library's definitions and kernels together, never one op alone), the file runs and defines its ops,
and the wheel's modules that used that library run again with a fresh one: their guards now skip the
user's names and define the rest. A note says which registration ran and why.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator

PACKAGE = "npugraph_ex"


def _wheel_modules() -> list:
    return [m for name, m in list(sys.modules.items()) if m is not None and (name == PACKAGE or name.startswith(PACKAGE + "."))]


def _wheel_libraries() -> list:
    """The live ``torch.library.Library`` objects the wheel's modules hold."""
    import torch

    found: dict[int, object] = {}
    for module in _wheel_modules():
        for value in list(vars(module).values()):
            if isinstance(value, torch.library.Library) and value.m is not None:
                found[id(value)] = value
    return list(found.values())


def defined_names(path: str, source: str) -> set[str]:
    """``ns::name`` of every op the file defines (``Library.define`` strings, custom_ops), read with ``ast``."""
    from opkit.formats.files import InputError
    from opkit.formats.python_registrations import load_registration_file

    try:
        registrations = load_registration_file(path, source)
    except InputError:
        return set()  # the file's own import reports it
    names = set()
    for site in registrations.defined_schemas:
        sig = site.signature
        if sig is not None:
            names.add(f"{sig.namespace or site.namespace}::{sig.name}")
    names.update(f"{op.namespace}::{op.name}" for op in registrations.custom_ops)
    return names


@contextlib.contextmanager
def user_definitions_first(path: str, source: str) -> Iterator[list[str]]:
    """Around running the user's file ``path``: the wheel's same-named ops are out of the way while it
    runs, and the wheel's other ops are back after. Yields the notes the report gives."""
    notes: list[str] = []
    if PACKAGE not in sys.modules:
        yield notes
        return
    wanted = defined_names(path, source)
    clashing = []
    for lib in _wheel_libraries():
        taken = sorted(q for q in lib._op_defs if q.split(".", 1)[0] in wanted)
        if taken:
            clashing.append((lib, taken))
    if not clashing:
        yield notes
        return
    from opkit.verify import npugraph_ex

    libraries = [lib for lib, _ in clashing]
    users = [m for m in _wheel_modules() if any(v is lib for v in vars(m).values() for lib in libraries)]
    with npugraph_ex.load().scope.inside():
        for lib in libraries:
            lib._destroy()
    try:
        yield notes
    finally:
        # The modules that made a destroyed library first (a fresh one), then those that define through it.
        makers = [m for m in users if "Library(" in _source_of(m)]
        with npugraph_ex.load().scope.inside():
            for module in [*makers, *(m for m in users if m not in makers)]:
                with contextlib.suppress(Exception):  # a module that cannot run again keeps what it had
                    importlib.reload(module)
    for _, taken in clashing:
        for qualname in taken:
            notes.append(
                f"{qualname} is {path}'s registration: the torch-npu wheel's npugraph_ex defines an op of that name "
                f"too, so its definition was removed for this check (its other ops were defined again) and the "
                f"file's `if not hasattr(...)` block ran"
            )
    return


def _source_of(module) -> str:
    try:
        with open(module.__file__, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, TypeError):
        return ""
