"""`opkit verify --from FILE`: an op defined in C++ (``TORCH_LIBRARY``), checked without compiling the C++.

The schema is defined as the C++ ``m.def`` would define it (the same schema parser, through
``Library(ns, "FRAGMENT").define``), the Python Meta/fake files given with ``--meta`` are loaded unchanged,
and the CPU kernel is a stand-in derived from the Meta (zeros of the Meta's shapes): graph entry is proved,
numerics are not. A C++ Meta kernel cannot run here; the report says so and asks for its Python twin.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from opkit.formats.cpp_registrations import CppReadError, find_def, read_with_includes
from opkit.verify.project import _derived_kernel, _import_file, _Registrations


@contextlib.contextmanager
def defined_from_cpp(path: str, op: str | None, meta_files: Sequence[str] = ()) -> Iterator[tuple[object, list[str]]]:
    """Define the op of ``path`` that ``op`` names, load ``meta_files``; yield (its OpOverload, notes).
    ValueError (one message with the location) for a file or schema that cannot be used."""
    import torch

    from opkit.formats.files import InputError, read_text

    try:
        records = read_with_includes(path, read_text(path), read_text)
        chosen, notes = find_def(records, op)
    except InputError as exc:
        raise ValueError(f"--from {path}: {exc.message}") from None
    except CppReadError as exc:
        raise ValueError(f"--from {path}:{exc.line}:{exc.column}: {exc.message}") from None
    except ValueError as exc:
        raise ValueError(f"--from {path}: {exc}") from None
    head, sep, rest = chosen.schema.strip().partition("(")
    qualname = head.strip().rsplit("::", 1)[-1]
    name, _, overload = qualname.partition(".")
    namespace = chosen.namespace
    regs = _Registrations()
    regs.qualnames.append(f"{namespace}::{name}")
    try:
        if hasattr(getattr(torch.ops, namespace), name):
            raise ValueError(f"--from {path}: {namespace}::{name} is already registered in this process")
        lib = torch.library.Library(namespace, "FRAGMENT")
        regs.libraries.append(lib)
        try:
            lib.define(qualname + sep + rest)
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()[0]
            raise ValueError(f"--from {path}:{chosen.line}:{chosen.column}: torch refuses the schema of {qualname}: {first}") from None
        notes.append(f"schema defined from {path}:{chosen.line} as its m.def would: Library({namespace!r}, 'FRAGMENT').define({qualname + sep + rest!r})")
        for meta in meta_files:
            try:
                _import_file(Path(meta), regs)
            except Exception as exc:
                raise ValueError(f"--meta {meta} fails to import: {type(exc).__name__}: {exc}") from None
            notes.append(f"Meta/fake loaded unchanged from {meta}")
        packet = getattr(getattr(torch.ops, namespace), name)
        target = getattr(packet, overload or "default")
        full = f"{namespace}::{qualname}"
        if torch._C._dispatch_has_kernel_for_dispatch_key(full, "Meta"):
            from opkit.verify import kernel_effects

            effects = kernel_effects.read_effects([str(path)], f"{namespace}::{name}")
            kernel_effects.stand_in_for(f"{namespace}::{name}", effects)
            torch.library.register_kernel(full, "cpu", _derived_kernel(target, effects), lib=lib)
            notes.append("CPU kernel: a stand-in derived from the Meta function (the C++ kernel is not compiled here)")
            notes += kernel_effects.stand_in_notes(f"{namespace}::{name}", effects)
        else:
            cpp_metas = [i for i in records.impls if i.dispatch_key == "Meta" and i.op == qualname]
            if cpp_metas:
                notes.append(
                    f"line {cpp_metas[0].line}: the C++ Meta kernel {cpp_metas[0].kernel.name or '(a lambda)'} is not compiled here; "
                    "give a Python twin (torch.library.register_fake) with --meta to check graph entry off the NPU"
                )
        yield target, notes
    finally:
        from opkit.verify import kernel_effects

        kernel_effects.stand_in_for(f"{namespace}::{name}", None)
        regs.undo()
