"""`opkit verify --from FILE`: ops defined in C++ (``TORCH_LIBRARY``), checked without compiling the op's kernel.

Each schema is defined as the C++ ``m.def`` would define it (the same schema parser, through
``Library(ns, "FRAGMENT").define``): every op of the file, so that a Meta file registering several of them
imports. The Meta is, in this order: a Python file given with ``--meta`` (``register_fake`` or
``Library(ns, "IMPL", "Meta")``, imported unchanged), else a C++ Meta (``TORCH_LIBRARY_IMPL(ns, Meta, m)``)
found in a C++ file given with ``--meta`` or, when no Python Meta file is given, in the C++ files beside
``FILE`` (vllm-ascend keeps ``torch_binding_meta.cpp`` beside ``torch_binding.cpp``). A C++ Meta is compiled
on the CPU against torch's headers, once per run for all the ops (``opkit.verify.cpp_meta``); one that needs
torch_npu or does not compile alone is reported with its reason. The CPU kernel is a stand-in derived from
the Meta (zeros of the Meta's shapes): graph entry is proved, numerics are not.

``read_cpp_ops`` and ``compile_cpp_metas`` run in the parent (reading and compiling, no user code);
``defined_from_cpp`` runs in the check's process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opkit.formats.files import CPP_EXTENSIONS, CPP_HEADER_EXTENSIONS
from opkit.formats.cpp_registrations import CppDef, CppReadError, find_def, read_with_includes
from opkit.verify.project import _derived_kernel, _import_file, _Registrations, package_root
from opkit.verify.report import Problem, Stage

PYTHON_EXTENSIONS = (".py",)


@dataclass
class CppOps:
    """The ops a C++ file defines, and the Metas found for them."""

    path: str
    defs: list[CppDef]  # one per op (the first def of each name, as find_def adopts), in the file's order
    checked: list[CppDef]  # the ops to check: the one --op names, or all
    notes: list[str]  # find_def's, for the one op named
    python_metas: tuple[str, ...] = ()
    cpp_metas: dict = field(default_factory=dict)  # (namespace, op) -> CppMeta
    searched: tuple[str, ...] = ()  # the C++ files searched for Metas
    library: object = None  # cpp_meta.CppMetaLibrary of the compiled ones
    not_compiled: dict = field(default_factory=dict)  # CppMeta -> why it cannot run here
    compile_s: float = 0.0  # the C++ build's wall time
    effects: dict = field(default_factory=dict)  # "ns::op" -> OpEffects, read once for every op's stand-in kernel
    kernels_from: tuple[str, ...] = ()  # where those kernels were read

    def compiled_summary(self) -> str | None:
        """One line on the C++ Metas this run built, or None when it built none."""
        if self.library is None and not self.not_compiled:
            return None
        built = len(self.library.metas) if self.library is not None else 0
        return f"C++ Metas: {built} compiled on the CPU in {self.compile_s:.1f}s, {len(self.not_compiled)} cannot run here (from {', '.join(self.searched)})"

    def qualname(self, definition: CppDef) -> str:
        return f"{definition.namespace}::{definition.qualname}"

    def schema(self, definition: CppDef) -> str:
        """The def's schema as ``Library(ns, "FRAGMENT").define`` takes it: without a ``ns::`` prefix."""
        head, sep, rest = definition.schema.strip().partition("(")
        return head.strip().rsplit("::", 1)[-1] + sep + rest

    def cpp_meta(self, definition: CppDef):
        return self.cpp_metas.get((definition.namespace, definition.qualname)) or self.cpp_metas.get(
            (definition.namespace, definition.qualname.split(".", 1)[0])
        )


def read_cpp_ops(path: str, op: str | None, meta_files: Sequence[str] = ()) -> CppOps:
    """The file's defs (all of them, or the one ``op`` names) and the C++ Metas of ``meta_files`` and of the files
    beside ``path``. ValueError (one message with the location) for a file that cannot be used."""
    from opkit.formats.files import InputError, read_text
    from opkit.verify.cpp_meta import find_cpp_metas

    try:
        records = read_with_includes(path, read_text(path), read_text)
        chosen, notes = find_def(records, op) if op is not None else (None, [])
        if op is None and not records.defs:
            find_def(records, None)  # its message for a file without defs
    except InputError as exc:
        raise ValueError(f"--from {path}: {exc.message}") from None
    except CppReadError as exc:
        raise ValueError(f"--from {path}:{exc.line}:{exc.column}: {exc.message}") from None
    except ValueError as exc:
        raise ValueError(f"--from {path}: {exc}") from None
    defs: dict[str, CppDef] = {}
    for definition in records.defs:
        defs.setdefault(f"{definition.namespace}::{definition.qualname}", definition)
    python, cpp = [], []
    for meta in meta_files:
        suffix = Path(meta).suffix.lower()
        if suffix in PYTHON_EXTENSIONS:
            python.append(meta)
        elif suffix in CPP_EXTENSIONS:
            cpp.append(meta)
        else:
            raise ValueError(f"--meta {meta}: neither a Python file ({', '.join(PYTHON_EXTENSIONS)}) nor C++ ({', '.join(CPP_EXTENSIONS)})")
    if not python:  # an explicit Python Meta wins: the files beside are searched only without one
        cpp += [str(p) for p in _beside(Path(path)) if str(p) not in cpp]
    metas: dict = {}
    for source in cpp:
        try:
            text = read_text(source)
        except InputError as exc:
            raise ValueError(f"--meta {source}: {exc.message}") from None
        for meta in find_cpp_metas(Path(source), text):
            metas.setdefault((meta.namespace, meta.op), meta)
    checked = [chosen] if chosen is not None else list(defs.values())
    from opkit.verify import kernel_effects

    sources = kernel_effects.kernel_sources(path)  # read here, once: each op's check runs in a process of its own
    effects = kernel_effects.read_all(sources)
    return CppOps(path, list(defs.values()), checked, notes, tuple(python), metas, tuple(cpp), effects=effects, kernels_from=tuple(sources))


def _beside(path: Path) -> list[Path]:
    """The C++ source files in ``path``'s directory (itself included: a file may register its own Meta)."""
    directory = path.parent
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.suffix.lower() in CPP_EXTENSIONS and p.suffix.lower() not in CPP_HEADER_EXTENSIONS and p.is_file()]


def compile_cpp_metas(ops: CppOps) -> None:
    """Compile the C++ Metas of the checked ops (one build for all of them); note those that cannot run here."""
    from opkit.verify.cpp_meta import build_all

    wanted = []
    for definition in ops.checked:
        meta = ops.cpp_meta(definition)
        if meta is None or meta in wanted:
            continue
        if meta.needs_torch_npu:
            ops.not_compiled[meta] = "it uses torch_npu, ACL or a kernel launch, which do not run on the CPU"
        else:
            wanted.append(meta)
    if wanted:
        import time

        started = time.perf_counter()
        ops.library, failed = build_all(wanted)
        ops.compile_s = time.perf_counter() - started
        ops.not_compiled.update({m: f"it does not compile alone against torch's headers: {why}" for m, why in failed.items()})


class MetaImportError(Exception):
    """A Python Meta file that does not import: ``problem`` says which import failed and how to supply it."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


def import_failure(path: str, exc: BaseException, qualname: str | None = None, defined: Sequence[str] = (), source: str = "") -> Problem:
    """The problem of a Meta file that fails to import: the line of the file that failed, the module that is
    missing and how to supply it (a repository's own Meta module needs its package and what that imports), or
    the op it registers that ``source`` does not define (``defined``: the ops it does)."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == os.path.abspath(path)]
    where = f"{path}:{frames[-1].lineno}" if frames else path
    statement = f": `{frames[-1].line.strip()}`" if frames and frames[-1].line else ""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".", 1)[0]
        root = package_root(Path(path))
        owner = f" (it belongs to the package {root[1]}, imported from {root[0]})" if root else ""
        message = f"{where}: the Meta file does not import{statement}: no module named {exc.name!r}{owner}"
        next_action = (
            f"install the package that provides {top!r} in this environment (e.g. `pip install {top}`, or the repository's "
            f"requirements), or put its directory on PYTHONPATH; or give --meta a file that imports only torch"
        )
    elif "does not exist" in str(exc) or "not found" in str(exc):  # torch's words for an op nobody defined
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        listed = ", ".join(defined[:8]) + (", ..." if len(defined) > 8 else "")
        message = f"{where}: the Meta file registers an op {source} does not define{statement}: {first} ({source} defines {listed or 'no op'})"
        next_action = "give --from the C++ file that defines that op, or --load a file that defines it, or leave the registration out"
    else:
        message = f"{where}: the Meta file does not import{statement}: {type(exc).__name__}: {exc}"
        next_action = f"run `python {path}` and fix the error: the Meta file must import once the schemas are defined"
    return Problem(Stage.REGISTRATION, "meta_import", message, next_action, qualname, repr(exc))


@contextlib.contextmanager
def defined_from_cpp(ops: CppOps, chosen: CppDef) -> Iterator[tuple[object, list[str]]]:
    """Define every op of the file, load the Python Metas and the chosen op's C++ Meta; yield (the chosen
    OpOverload, notes). ValueError for the chosen op's schema torch refuses; MetaImportError for a Meta file
    that does not import."""
    import torch

    from opkit.verify.stages.context import has_fake_impl

    path = ops.path
    notes = list(ops.notes) if len(ops.checked) == 1 else []
    qualname = chosen.qualname
    name, _, overload = qualname.partition(".")
    namespace = chosen.namespace
    full_name = f"{namespace}::{name}"
    regs = _Registrations()
    stack = contextlib.ExitStack()
    try:
        for definition in ops.defs:
            op_name = definition.qualname.split(".", 1)[0]
            if hasattr(getattr(torch.ops, definition.namespace), op_name) and f"{definition.namespace}::{op_name}" not in regs.qualnames:
                if definition is chosen:
                    raise ValueError(f"--from {path}: {full_name} is already registered in this process")
                continue
            regs.qualnames.append(f"{definition.namespace}::{op_name}")
            lib = torch.library.Library(definition.namespace, "FRAGMENT")
            regs.libraries.append(lib)
            schema = ops.schema(definition)
            try:
                lib.define(schema)
            except RuntimeError as exc:
                if definition is chosen:
                    first = str(exc).strip().splitlines()[0]
                    raise ValueError(f"--from {path}:{chosen.line}:{chosen.column}: torch refuses the schema of {qualname}: {first}") from None
                continue  # another op's bad schema is that op's verdict
            if definition is chosen:
                notes.append(f"schema defined from {path}:{chosen.line} as its m.def would: Library({namespace!r}, 'FRAGMENT').define({schema!r})")
        meta_used = None
        for meta in ops.python_metas:
            try:
                _import_file(Path(meta), regs, in_package=True)
            except Exception as exc:
                raise MetaImportError(import_failure(meta, exc, full_name, [ops.qualname(d) for d in ops.defs], path)) from None
            if meta_used is None and has_fake_impl(full_name):
                meta_used = f"Meta: the Python Meta in {meta} (loaded unchanged)"
        cpp = ops.cpp_meta(chosen)
        if meta_used is None and cpp is not None:
            if cpp in ops.not_compiled:
                notes.append(f"C++ Meta {cpp.where} not used: {ops.not_compiled[cpp]}; give a Python twin (torch.library.register_fake) with --meta")
            elif ops.library is not None and cpp in ops.library.metas:
                from opkit.verify.cpp_meta import registered_meta

                stack.enter_context(registered_meta(ops.library, cpp))
                meta_used = f"Meta: the C++ function {cpp.where}, compiled on the CPU against torch's headers"
        if meta_used is None:
            searched = ", ".join([*ops.python_metas, *ops.searched]) or "no file"
            notes.append(f"no Meta for {full_name} in {searched}")
        else:
            notes.append(meta_used)
        packet = getattr(getattr(torch.ops, namespace), name)
        target = getattr(packet, overload or "default")
        full = f"{namespace}::{qualname}"
        if torch._C._dispatch_has_kernel_for_dispatch_key(full, "Meta"):
            from opkit.verify import kernel_effects

            effects = kernel_effects.effects_of(ops.effects, full_name)
            kernel_effects.stand_in_for(full_name, effects)
            lib = torch.library.Library(namespace, "FRAGMENT")
            regs.libraries.append(lib)
            torch.library.register_kernel(full, "cpu", _derived_kernel(target, effects), lib=lib)
            notes.append("CPU kernel: a stand-in derived from the Meta function (the C++ kernel is not compiled here)")
            notes += kernel_effects.stand_in_notes(full_name, effects)
        yield target, notes
    finally:
        from opkit.verify import kernel_effects

        kernel_effects.stand_in_for(full_name, None)
        stack.close()
        regs.undo()
