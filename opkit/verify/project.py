"""Verify a project ``opkit new`` wrote: register its op as torch_npu would, then check graph entry.

Off-NPU the ``npu`` namespace does not exist, so registration is emulated (graph-entry.md, "Off-NPU
emulation of the registration path"): the schema is defined from the project's yaml entry, exactly as
torch_npu's codegen would (``Library("npu", "FRAGMENT").define(func)``); the Meta file is imported
unchanged; the CPU kernel is the project's ``reference.py`` when it has one, else a stand-in derived
from the Meta function (and the report says numerics were not checked). On an NPU the op is already
built into torch_npu and only missing pieces are loaded.

Every registration made here is undone afterwards (unless ``keep_registered``), so that one process
can verify many projects; the device rename of the custom-op emulation is the one exception.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shlex
import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from opkit import naming
from opkit.generate.spec import SPEC_FILE
from opkit.generate.yaml_edit import FRAGMENT_PATH as YAML_FILE
from opkit.samples import SAMPLE_SHAPE
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema
from opkit.verify.report import GraphEntryReport, Problem, Stage

REFERENCE_FILE = "reference.py"


class ProjectError(ValueError):
    """The directory is not an opkit project, or its files cannot be read."""


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    namespace: str
    style: str  # "op-plugin", "custom-op" or "library"
    signature: OpSignature  # from the yaml entry when there is one: what torch_npu would register
    schema_source: str
    meta_file: Path
    reference_file: Path | None
    sample_shape: tuple[int, ...] = SAMPLE_SHAPE  # the spec's: as many dims as an output size rule reads
    cpp_meta: Any = None  # extension style: the .asc's own C++ Meta (cpp_meta.CppMeta), compiled when it can be
    examples: tuple[str, ...] = ()  # the spec's example calls (opkit.json "examples"), evaluated where torch is

    @property
    def qualname(self) -> str:
        return f"{self.namespace}::{self.name}"

    @property
    def overload_qualname(self) -> str:
        """``ns::name.overload`` (``ns::name`` for the default overload): what kernels register on."""
        overload = self.signature.overload
        return f"{self.qualname}.{overload}" if overload else self.qualname

    def overload(self, packet):
        """The project's overload of ``packet`` (``torch.ops.npu.npu_max.dim``, else ``.default``)."""
        return getattr(packet, self.signature.overload or "default")


def load_project(root: str | Path) -> Project:
    from opkit.generate.spec import SpecError, load_spec

    root = Path(root)
    if not (root / SPEC_FILE).is_file():
        raise ProjectError(f"{root} is not an opkit project: no {SPEC_FILE}")
    try:
        spec = load_spec(root)  # the one reader of opkit.json, validated as `opkit new` wrote it
    except SpecError as exc:
        raise ProjectError(str(exc)) from None
    name, style, namespace = spec.name, spec.style, spec.namespace
    func, source = _yaml_func(root / YAML_FILE, name)
    cpp_meta = None
    if style == "extension":  # the library defines the op: the schema is its m.def's, in csrc/
        func, source, namespace = _library_def(root, name, namespace)
        cpp_meta = _cpp_meta(root / source.rsplit(":", 1)[0], name)
    text = func or spec.schema
    try:
        signature = parse_schema(text, spec.dialect)
    except SchemaError:
        try:
            signature = parse_schema(text, Dialect.TORCH_LIBRARY)
        except SchemaError as exc:
            raise ProjectError(f"schema of {name!r} does not parse: {exc}") from None
    meta_dir = root / (f"{name}_ext" if style == "extension" else "meta")
    meta_file = meta_dir / f"{naming.meta_function_name(name)}.py"
    if style == "extension" and not meta_file.is_file() and cpp_meta is None:
        raise ProjectError(f"no Meta: expected {meta_file.relative_to(root)}, or a TORCH_LIBRARY_IMPL(..., Meta, m) in csrc/")
    if style != "extension" and not meta_file.is_file():
        candidates = sorted(p for p in (root / "meta").glob("*.py") if p.is_file()) if (root / "meta").is_dir() else []  # never a FIFO: importing one blocks
        if len(candidates) != 1:
            raise ProjectError(f"no Meta file: expected {meta_file.relative_to(root)}")
        meta_file = candidates[0]
    reference = root / REFERENCE_FILE
    return Project(
        root, name, namespace, style, signature, source if func else SPEC_FILE, meta_file, reference if reference.is_file() else None,
        spec.sample_shape, cpp_meta, spec.examples,
    )


def is_project(directory: str | Path) -> bool:
    return (Path(directory) / SPEC_FILE).is_file()


_NOT_SEARCHED = {"node_modules", "__pycache__", "build", "dist", "site-packages"}


def find_projects(paths) -> list[Path]:
    """The opkit projects (directories holding an opkit.json) at or under ``paths``, each once, in path order;
    hidden directories, virtualenvs and build outputs are not searched, nor a project's own subdirectories.
    ProjectError when there is none."""
    import os

    found: dict[Path, None] = {}
    for top in paths:
        if is_project(top):
            found[Path(top)] = None
            continue
        for directory, subdirs, _ in os.walk(top):  # never follows a symlinked directory
            here = Path(directory)
            if is_project(here):
                found[here] = None
                subdirs[:] = []
                continue
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in _NOT_SEARCHED and not (here / d / "pyvenv.cfg").is_file())
    if not found:
        raise ProjectError(f"no opkit project (a directory with {SPEC_FILE}) under {', '.join(map(str, paths))}")
    return list(found)


def _cpp_meta(path: Path, name: str):
    from opkit.formats.files import InputError, read_text
    from opkit.verify.cpp_meta import find_cpp_meta

    try:
        return find_cpp_meta(path, read_text(str(path)), name)
    except InputError:
        return None


def _library_def(root: Path, name: str, namespace: str) -> tuple[str, str, str]:
    """The ``m.def`` schema of op ``name`` in the project's ``csrc/`` (what loading the built library registers),
    where it is, and its namespace."""
    from opkit.formats.cpp_registrations import CppReadError, read_cpp_registrations
    from opkit.formats.files import InputError, read_text

    csrc = root / "csrc"
    sources = sorted(p for p in csrc.iterdir() if p.suffix in (".asc", ".cpp") and p.is_file()) if csrc.is_dir() else []
    for path in sources:
        try:
            registrations = read_cpp_registrations(str(path), read_text(str(path)))
        except InputError as exc:
            raise ProjectError(f"cannot read {path}: {exc.message}") from None
        except CppReadError as exc:
            raise ProjectError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
        for definition in registrations.defs:
            if definition.qualname.split(".", 1)[0] == name:
                return definition.schema, f"{path.relative_to(root)}:{definition.line}", definition.namespace or namespace
    raise ProjectError(f"no m.def of {name!r} in {csrc.relative_to(root)}/*.asc: the library would not define the op")


def _yaml_func(path: Path, name: str) -> tuple[str | None, str]:
    """The ``func:`` of the project's yaml entry for ``name`` (what torch_npu's codegen registers)."""
    if not path.is_file():
        return None, ""
    import yaml

    from opkit import yamlio
    from opkit.formats.files import InputError, read_text

    try:
        data = yamlio.load(read_text(str(path))) or {}
    except InputError as exc:
        raise ProjectError(f"cannot read {path}: {exc.message}") from None
    except yaml.YAMLError as exc:
        raise ProjectError(yamlio.describe_error(path, exc)) from None
    except yamlio.TooLarge as exc:
        raise ProjectError(f"{path}: {exc}") from None
    entries = data.get("custom", []) if isinstance(data, dict) else []
    for entry in entries if isinstance(entries, list) else []:
        func = entry.get("func") if isinstance(entry, dict) else None
        if isinstance(func, str) and func.split("(", 1)[0].split(".", 1)[0].strip() == name:
            return func, str(YAML_FILE)
    return None, ""


# ------------------------------------------------------------------------------------------------
# Sample inputs from the schema
# ------------------------------------------------------------------------------------------------


def sample_arguments(
    signature: OpSignature, *, dtype=None, device: str = "cpu", pass_defaults: bool = False, shape: tuple[int, ...] | None = None
) -> tuple[tuple, dict] | None:
    """The signature's sample call (``opkit.samples``, as the generated MRE makes it) with real tensors.

    ``pass_defaults``: the variant passing every defaulted argument a non-default value (None when the
    schema has no defaulted argument opkit can vary)."""
    import torch

    from opkit.samples import TENSOR_LIST_LENGTH, NoSample, sample_call, sample_call_passing_defaults
    from opkit.signature import DType

    dtype = dtype or torch.float32
    shape = shape or SAMPLE_SHAPE

    def tensor():
        return torch.randn(shape, dtype=dtype, device=device)

    try:
        samples = sample_call_passing_defaults(signature) if pass_defaults else sample_call(signature)
    except NoSample as exc:
        raise ProjectError(f"{exc} of {signature.name}; pass --example") from None
    if samples is None:
        return None
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for sample in samples:
        if sample.kind == "tensor":
            value: Any = tensor()
        elif sample.kind == "tensor_list":
            value = [tensor() for _ in range(TENSOR_LIST_LENGTH)]
        elif sample.kind == "dtype":
            value = dtype
        elif isinstance(sample.value, DType):  # a ScalarType default (``ScalarType d=39``): the torch dtype it names
            value = getattr(torch, sample.value.name)
        else:
            value = sample.value
        if sample.kwarg_only:
            kwargs[sample.name] = value
        else:
            args.append(value)
    return tuple(args), kwargs


def evaluate_example(expression: str, *, where: str = "--example") -> tuple[tuple, dict]:
    """The op's arguments from an example expression (torch in scope): a tuple is the positional arguments,
    a dict the keyword ones, anything else the one positional argument. The user's own text, evaluated as
    ``python -c`` would."""
    import torch

    try:
        value = eval(expression, {"torch": torch, "__builtins__": __builtins__})
    except Exception as exc:
        raise ProjectError(f"{where} {expression!r} does not evaluate: {type(exc).__name__}: {exc}") from None
    if isinstance(value, dict):
        return (), value
    return (value if isinstance(value, tuple) else (value,)), {}


def example_misfit(signature: OpSignature, args: tuple, kwargs: dict) -> str | None:
    """Why ``(args, kwargs)`` cannot be a call of the op (Python's binding rules over the schema), else None."""
    positional = signature.positional_arguments
    if len(args) > len(positional):
        return f"{len(args)} positional arguments, the schema takes {len(positional)}"
    given = {a.name for a in positional[: len(args)]}
    for name in kwargs:
        if signature.argument(name) is None:
            return f"the schema has no argument {name!r}"
        if name in given:
            return f"{name!r} is given twice"
    missing = [a.name for a in signature.arguments if a.default is None and a.name not in given and a.name not in kwargs]
    return f"no value for {', '.join(missing)}" if missing else None


# ------------------------------------------------------------------------------------------------
# Registration (emulated off-NPU) and undoing it
# ------------------------------------------------------------------------------------------------


class _Registrations:
    """Libraries and custom ops created while loading a project, destroyed on exit."""

    def __init__(self) -> None:
        self.libraries: list = []
        self.custom_ops: list = []
        self.modules: list[str] = []
        self.qualnames: list[str] = []  # ops whose torch.ops packets must be forgotten on undo
        self.paths: list[str] = []  # added to sys.path to import a module of a package
        self.packages: list[str] = []  # the user's packages imported with it: forgotten on undo

    def adopt_module_globals(self, module) -> None:
        import torch
        from torch._library.custom_ops import CustomOpDef

        for value in vars(module).values():
            if isinstance(value, torch.library.Library):
                self.libraries.append(value)
            elif isinstance(value, CustomOpDef):
                self.custom_ops.append(value)

    def undo(self) -> None:
        import torch._dynamo
        import torch.fx.operator_schemas
        from torch._library import custom_ops, simple_registry

        for opdef in self.custom_ops:
            opdef._lib._destroy()
            custom_ops.OPDEFS.pop(opdef._qualname, None)
            simple_registry.singleton._data.pop(opdef._qualname, None)
        for lib in reversed(self.libraries):
            lib._destroy()
        for name in self.modules:
            sys.modules.pop(name, None)
        for package in self.packages:
            for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
                sys.modules.pop(name, None)
        for directory in self.paths:
            with contextlib.suppress(ValueError):
                sys.path.remove(directory)
        for qualname in self.qualnames:
            # torch.ops caches each packet (and its overloads' schemas) as an attribute of the namespace:
            # a later op of the same name with another schema would otherwise see the stale one.
            namespace, name = qualname.split("::", 1)
            packets = getattr(torch.ops, namespace)
            if name in vars(packets):
                delattr(packets, name)
            if name in getattr(packets, "_dir", ()):
                packets._dir.remove(name)
            # torch.fx caches each op's Python signature by (name, overload) too (private, hence getattr).
            signatures = getattr(torch.fx.operator_schemas, "_SCHEMA_TO_SIGNATURE_CACHE", {})
            for key in [k for k in signatures if k[0] == qualname]:
                del signatures[key]
        torch._dynamo.reset()  # compiled code may hold the destroyed ops


def _import_file(path: Path, registrations: _Registrations, *, in_package: bool = False):
    """Import the user's Python file unchanged. ``in_package``: a module inside a package
    (``vllm_ascend/meta_registration.py``) is imported under its dotted name with the directory above its package
    on ``sys.path``, so that its imports of its own package resolve as they do for its users; all of it is undone
    with the registrations. (A project's own Meta is imported alone: its package's ``__init__`` loads the built
    library.)"""
    root = package_root(path) if in_package else None
    if root is not None:
        directory, package = root
        module_name = f"{package}.{path.stem}"
        if str(directory) not in sys.path:
            sys.path.insert(0, str(directory))
            registrations.paths.append(str(directory))
        registrations.packages.append(package.split(".", 1)[0])
    else:
        module_name = f"opkit_verify_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    registrations.modules.append(module_name)
    spec.loader.exec_module(module)
    registrations.adopt_module_globals(module)
    return module


def package_root(path: Path) -> tuple[Path, str] | None:
    """(the directory above the package, the package's dotted name) of a module inside a package, else None."""
    parts: list[str] = []
    directory = path.resolve().parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    return (directory, ".".join(parts)) if parts else None


def _derived_kernel(op, effects=None):
    """A CPU stand-in that runs the op's Meta function and allocates outputs of that shape (zeros), and does
    what the kernel-effects model (``effects``) says the real kernel does: it writes each argument the kernel
    writes (adds 1), declared or not, and returns the argument the kernel returns as-is, so the real compiler
    shows the consequence of a registration that says otherwise (a dropped call, a stale read)."""
    import torch
    from torch.utils._pytree import tree_leaves, tree_map_only

    from opkit.effects.model import Knowledge
    from opkit.verify.npugraph_ex.capture import unwatched

    schema_args = op._schema.arguments
    written = {a.name for a in effects.arguments if a.written is Knowledge.YES} if effects is not None else set()
    aliases = {r.index: r.aliases for r in effects.returns if r.known and r.aliases} if effects is not None else {}

    def kernel(*args, **kwargs):
        meta_args, meta_kwargs = tree_map_only(torch.Tensor, lambda t: t.to("meta"), (args, kwargs))
        out = op(*meta_args, **meta_kwargs)
        result = tree_map_only(torch.Tensor, lambda m: torch.empty_strided(m.shape, m.stride(), dtype=m.dtype).zero_(), out)
        values = {a.name: args[i] if i < len(args) else kwargs.get(a.name) for i, a in enumerate(schema_args)}
        for name in written:
            for t in tree_leaves(values.get(name)):
                if isinstance(t, torch.Tensor):
                    t.add_(1)
        if aliases:
            items = list(result) if isinstance(result, (tuple, list)) else [result]
            for index, name in aliases.items():
                if index < len(items) and isinstance(values.get(name), torch.Tensor):
                    items[index] = values[name]
            result = tuple(items) if isinstance(result, (tuple, list)) else items[0]
        return result

    return unwatched(kernel)


@contextlib.contextmanager
def registered(project: Project, *, keep: bool = False) -> Iterator[tuple[Any, list[str], bool]]:
    """Register the project's op; yield (op packet, notes, whether the kernel is real)."""
    import torch

    from opkit.verify.device import emulate_npu_device, npu_available

    notes: list[str] = []
    regs = _Registrations()
    regs.qualnames.append(project.qualname)
    on_npu = npu_available()
    stack = contextlib.ExitStack()
    try:
        ns = getattr(torch.ops, project.namespace)
        defined = hasattr(ns, project.name)
        if project.style == "custom-op":
            note = None if on_npu else emulate_npu_device()
            if note:
                notes.append(note)
        elif project.style in ("op-plugin", "extension") and not defined:  # the library style's Meta file defines the op itself
            lib = torch.library.Library(project.namespace, "FRAGMENT")
            regs.libraries.append(lib)
            lib.define(str(project.signature).split("::", 1)[-1])
            who = "torch_npu" if project.style == "op-plugin" else "the built library's TORCH_LIBRARY_FRAGMENT"
            notes.append(
                f"schema defined from {project.schema_source} as {who} would: "
                f"Library({project.namespace!r}, 'FRAGMENT').define({str(project.signature)!r})"
            )
        cpp_meta_loaded = False
        if project.cpp_meta is not None and not (defined and on_npu):
            cpp_meta_loaded = _register_cpp_meta(project, stack, notes)
        if not (defined and on_npu) and not cpp_meta_loaded:
            try:
                _import_file(project.meta_file, regs)
            except Exception as exc:
                raise _LoadFailure(
                    Problem(
                        Stage.REGISTRATION,
                        "meta_import",
                        f"{project.meta_file.name} fails to import: {type(exc).__name__}: {exc}",
                        "run `python " + str(project.meta_file) + "` and fix the error; the Meta file must import "
                        "after the schema is defined and before torch.compile runs",
                        project.qualname,
                        repr(exc),
                    ),
                    notes,
                ) from exc
            notes.append(f"Meta loaded unchanged from {project.meta_file.relative_to(project.root)}")
        packet = getattr(getattr(torch.ops, project.namespace), project.name, None)
        if packet is None:
            raise _LoadFailure(
                Problem(
                    Stage.REGISTRATION,
                    "undefined_op",
                    f"{project.qualname} is not registered after loading {project.meta_file.name}",
                    f"the custom_op name in {project.meta_file.name} must be {project.qualname!r}",
                    project.qualname,
                ),
                notes,
            )
        real_kernel = True
        if not on_npu:
            lib = torch.library.Library(project.namespace, "FRAGMENT")
            regs.libraries.append(lib)
            if project.reference_file is not None:
                from opkit.verify.npugraph_ex.capture import unwatched

                reference = getattr(_import_file(project.reference_file, regs), project.name, None)
                if reference is None:
                    raise _LoadFailure(
                        Problem(
                            Stage.REGISTRATION,
                            "reference",
                            f"{REFERENCE_FILE} defines no function named {project.name!r}",
                            f"name the CPU reference function {project.name} (same parameters as the schema)",
                            project.qualname,
                        ),
                        notes,
                    )
                torch.library.register_kernel(project.overload_qualname, "cpu", unwatched(reference), lib=lib)  # a reference, not the kernel: its syncs are not the op's
                notes.append(f"CPU kernel: {REFERENCE_FILE}:{project.name}")
            else:
                from opkit.verify import kernel_effects

                effects = kernel_effects.read_effects([str(project.root)], project.qualname)
                kernel_effects.stand_in_for(project.qualname, effects)
                stack.callback(kernel_effects.stand_in_for, project.qualname, None)
                torch.library.register_kernel(project.overload_qualname, "cpu", _derived_kernel(project.overload(packet), effects), lib=lib)
                real_kernel = False
                notes.append(f"CPU kernel: a stand-in derived from the Meta function (add {REFERENCE_FILE} to check numerics)")
                notes += kernel_effects.stand_in_notes(project.qualname, effects)
        yield packet, notes, real_kernel
    finally:
        if not keep:
            stack.close()
            regs.undo()


def _register_cpp_meta(project: Project, stack: contextlib.ExitStack, notes: list[str]) -> bool:
    """Compile the .asc's C++ Meta alone and register it (undone with ``stack``); False, with a note, where it
    cannot be: the project's Python Meta is used instead."""
    from opkit.verify.cpp_meta import CppMetaBuildError, build, registered_meta

    meta = project.cpp_meta
    where = f"{meta.function} ({meta.path.relative_to(project.root)}:{meta.line})"
    fallback = f"the Python Meta {project.meta_file.relative_to(project.root)} is used" if project.meta_file.is_file() else "no Python Meta to use instead"
    if meta.needs_torch_npu:
        notes.append(f"C++ Meta {where} uses torch_npu, ACL or a kernel launch, so it cannot run on the CPU: {fallback}")
        return False
    try:
        library = build(meta)
    except CppMetaBuildError as exc:
        notes.append(f"C++ Meta {where} does not compile alone against torch's headers ({exc}): {fallback}")
        return False
    stack.enter_context(registered_meta(library))
    notes.append(f"Meta: the C++ function {where}, compiled on the CPU against torch's headers and run on fake tensors")
    return True


class _LoadFailure(Exception):
    def __init__(self, problem: Problem, notes: list[str]):
        super().__init__(problem.message)
        self.problem = problem
        self.notes = notes


def verify_project(
    project_dir: str | Path,
    *,
    backend: str = "auto",
    example: tuple[tuple, dict] | None = None,
    keep_registered: bool = False,
    dynamic: bool = False,
    isolate: bool | None = None,
    timeout: float | None = None,
) -> GraphEntryReport:
    """Register the project's op (emulated off-NPU) and check that it enters one graph with no breaks.

    ``isolate``, ``timeout``: as ``check_graph_entry``'s; a child process loads the project too (its Meta
    file and reference run there). ``keep_registered`` leaves the op registered in this process, so it
    runs in-process."""
    from opkit.verify import isolation
    from opkit.verify.backends import resolve_backend

    project = load_project(project_dir)
    if isinstance(example, str):
        example = evaluate_example(example)
    if example is not None and (misfit := example_misfit(project.signature, *example)) is not None:
        raise ProjectError(f"--example does not fit {project.signature.name}({', '.join(map(str, project.signature.arguments))}): {misfit}")
    chosen = resolve_backend(backend)
    header = isolation.ReportHeader(project.qualname, chosen.name, chosen.device, chosen.emulated)
    check = functools.partial(_verify_loaded, project, chosen, backend=backend, example=example, keep_registered=keep_registered, dynamic=dynamic)
    return isolation.run_check(check, header, isolate=False if keep_registered else isolate, timeout=timeout, refusals=(ProjectError,))


def _recorded_example(project: Project, text: str) -> tuple[tuple, dict]:
    where = f"{project.root / SPEC_FILE}: example"
    example = evaluate_example(text, where=where)
    misfit = example_misfit(project.signature, *example)
    if misfit is not None:
        raise _LoadFailure(
            Problem(
                Stage.REGISTRATION, "example", f"{where} {text!r} does not fit {project.signature.name}: {misfit}",
                f"record one that does: opkit verify {shlex.quote(str(project.root))} --example '...' --save",
            ),
            [],
        )
    return example


def save_command(project: Project) -> str:
    """The command that records an example for ``project`` (the user fills in the arguments)."""
    arguments = ", ".join(f"<{a.name}>" for a in project.signature.positional_arguments if a.default is None)
    return f"opkit verify {shlex.quote(str(project.root))} --example {shlex.quote(arguments or '...')} --save"


_META_FACTS = re.compile(r"shape=\((?P<shape>[^)]*)\) dtype=torch\.(?P<dtype>\w+)")


def _with_output_rule_hint(report: GraphEntryReport, project: Project, args: tuple, kwargs: dict) -> GraphEntryReport:
    """A Meta that disagrees with the kernel on an output's size or dtype: in an opkit project the fix is the
    output rule in opkit.json, which regenerates Meta, yaml entry, OpDef and kernel together (M016 reports a
    Meta fixed alone). The rule is read off the call: the input the kernel's output is shaped like."""
    bad = {int(m.output[7:-1]): m.real for m in report.meta_checks if not m.ok and m.output.startswith("output[")}
    if not bad or project.style == "extension":
        return report
    rules = {}
    for index, real in bad.items():
        facts = _META_FACTS.search(real)
        names = project.signature.output_names
        if facts is None or index >= len(names):
            return report
        shape = tuple(int(d) for d in facts["shape"].replace(",", " ").split())
        rule = output_rule_for(project.signature, args, kwargs, shape, facts["dtype"])
        if rule is None:
            return report
        rules[names[index]] = rule
    command = output_rule_command(project, rules)
    if command is None:
        return report
    return _with_next_action(
        report,
        "fake_vs_real",
        f"the output rule in opkit.json gives the wrong size or dtype; change it where Meta, yaml entry, OpDef and kernel are "
        f"generated together: {command} (fixing {naming.meta_function_name(project.name)} alone leaves the yaml entry and "
        "the OpDef's InferShape as they are, which the NPU allocates by; opkit lint reports that as M016)",
    )


def _with_next_action(report: GraphEntryReport, check: str, next_action: str) -> GraphEntryReport:
    """The report with the next action of its ``check`` problems replaced: what a project makes of a generic hint."""
    return replace(report, problems=tuple(replace(p, next_action=next_action) if p.check == check else p for p in report.problems))


def output_rule_for(signature: OpSignature, args: tuple, kwargs: dict, shape: tuple[int, ...], dtype: str) -> str | None:
    """The ``--output`` rule text that gives an output ``shape`` and ``dtype`` on this call: ``like:ARG`` for an
    input of that shape (``,dtype:D`` where its dtype differs), else ``size:[ARG.N, ...]`` from the inputs' dims."""
    import torch

    bound = dict(zip((a.name for a in signature.positional_arguments), args)) | dict(kwargs)
    tensors = [(a.name, bound[a.name]) for a in signature.arguments if isinstance(bound.get(a.name), torch.Tensor)]
    if not tensors:
        return None
    same_shape = [(n, t) for n, t in tensors if tuple(t.shape) == shape]
    if same_shape:
        name, tensor = next(((n, t) for n, t in same_shape if str(t.dtype) == f"torch.{dtype}"), same_shape[0])
        return f"like:{name}" + ("" if str(tensor.dtype) == f"torch.{dtype}" else f",dtype:{dtype}")
    dims = []
    for i, size in enumerate(shape):
        found = next((f"{n}.{i}" for n, t in tensors if t.dim() > i and t.shape[i] == size), None)
        found = found or next((f"{n}.{j}" for n, t in tensors for j in range(t.dim()) if t.shape[j] == size), None)
        dims.append(found or str(size))
    first = tensors[0][1]
    return f"size:[{', '.join(dims)}]" + ("" if str(first.dtype) == f"torch.{dtype}" else f",dtype:{dtype}")


def output_rule_command(project: Project, rules: dict[str, str]) -> str | None:
    """``opkit new NAME --force --output ...`` with ``rules`` over the recorded ones, when opkit accepts it."""
    from opkit.generate.spec import SpecError, load_spec, make_spec, options_over

    try:
        recorded = load_spec(project.root)
        kept = [str(r) for r in recorded.outputs if r.name not in rules]
        outputs = [*kept, *(f"{name}={rule}" for name, rule in rules.items())]
        make_spec(recorded.name, **options_over(recorded, {"outputs": outputs}))
    except SpecError:
        return None
    here = Path.cwd() / recorded.name
    where = [] if here.exists() and here.resolve() == project.root.resolve() else ["-o", str(project.root)]
    words = ["opkit", "new", recorded.name, *where, "--force", *(w for o in outputs for w in ("--output", o))]
    return shlex.join(words)


def _with_example_hint(report: GraphEntryReport, project: Project) -> GraphEntryReport:
    """A reference.py that fails on the schema's sample inputs: the fix is a realistic example, recorded."""
    if project.reference_file is None:
        return report
    return _with_next_action(
        report,
        "eager_run",
        f"reference.py fails on the schema's sample inputs ({'x'.join(map(str, project.sample_shape))} tensors); "
        f"record a call it takes, checked and kept in opkit.json for verify and the generated test: {save_command(project)} "
        "(each <name> a Python expression with torch in scope, e.g. torch.randn(2, 8, 64))",
    )


def _verify_loaded(project: Project, chosen, *, backend: str, example, keep_registered: bool, dynamic: bool) -> GraphEntryReport:
    from opkit.verify.check import check_graph_entry

    try:
        with registered(project, keep=keep_registered) as (packet, notes, real_kernel):
            meta_samples: list = []
            if example is not None:
                notes = [*notes, "sample call: the example arguments given (--example), not the schema's sample inputs"]
            elif project.examples:
                # the recorded examples: the first is the call captured, every one is run through the Meta check
                recorded = [_recorded_example(project, text) for text in project.examples]
                example, meta_samples = recorded[0], recorded[1:]
                notes = [*notes, f"sample call: the project's recorded example{'s' if len(recorded) > 1 else ''} (opkit.json examples), not the schema's sample inputs"]
            args, kwargs = example or sample_arguments(project.signature, device=chosen.device, shape=project.sample_shape)
            if example is None:
                with_defaults = sample_arguments(project.signature, device=chosen.device, pass_defaults=True, shape=project.sample_shape)
                meta_samples = [with_defaults] if with_defaults else []
            report = check_graph_entry(
                project.overload(packet),
                args,
                kwargs,
                backend=backend,
                real_kernel=real_kernel,
                notes=notes,
                meta_samples=meta_samples,
                dynamic=dynamic,
                isolate=False,
            )
            report = _with_output_rule_hint(report, project, args, kwargs)
            return _with_example_hint(report, project) if example is None else report
    except _LoadFailure as failure:
        return GraphEntryReport.failed_before_capture(
            project.qualname, chosen.name, chosen.device, (failure.problem,), emulated=chosen.emulated, notes=tuple(failure.notes)
        )
