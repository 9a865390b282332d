"""What the build and the other registrations do for a declared op, beyond its schema: the facts that decide
whether an op returning a mutated input reaches automatic functionalization (S101, S108), and whether an op
is torch_npu's own (re-declared by a test stand-in) rather than a new one (kernel-effects.md, "Tags" and
"op-plugin's codegen").

- op-plugin's codegen (Ascend/pytorch ``torchnpugen/gen_backend_stubs.py``, ``gen_functionalization_type.py``)
  groups the ``custom:`` entries by torchgen's ``signature()`` and, for every group holding a functional op,
  generates a ``Functionalize`` kernel for each in-place, out= and mutable member; none for a group with an
  out= member of several out arguments.
- A ``Functionalize`` kernel registered in a linted Python or C++ file serves its op the same way.
- On torch 2.13, automatic functionalization accepts the aliased returns of ops tagged ``torch.Tag.inplace``
  or ``torch.Tag.out``.
- torch_npu's own ``npu::`` ops are listed in the wheel's ``npu_native_functions_by_codegen.yaml``
  (``opkit.torch_npu_ops``: read from ``OPKIT_TORCH_NPU`` or a tree in opkit's cache, never downloaded here).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from collections.abc import Sequence

from opkit import torch_npu_ops as torch_npu_ops_list
from opkit.formats.schema_site import SchemaSite
from opkit.signature import OpSignature, SchemaKind

# Tags with which torch 2.13's can_auto_functionalize accepts aliased returns (torch._library.utils.is_inplace/is_out)
ALIAS_ACCEPTING_TAGS = ("inplace", "out")
TORCH_NPU_NAMESPACE = "npu"
_CODEGEN_SECTIONS = ("custom", "custom_autograd")


def annotate(project, sites: Sequence[SchemaSite]) -> list[SchemaSite]:
    """``sites`` with ``functionalized`` and ``defined_by`` set where the project (or torch_npu) says so.
    Only the few sites concerned are parsed and copied: the rest are returned as they are."""
    notes: dict[int, dict[str, str]] = {i: {"functionalized": why} for i, why in _codegen_functionalized(sites).items()}
    kernels = _functionalize_kernels(project)
    torch_npu = None
    for i, site in enumerate(sites):
        if site.section is not None and not site.tags and not kernels:
            continue  # a yaml entry: only its tags or a registered kernel (or the codegen, above) can say more
        why = _functionalized_here(site, kernels) if i not in notes else ""
        if why:
            notes.setdefault(i, {})["functionalized"] = why
        if site.section is None and _namespace(site) == TORCH_NPU_NAMESPACE and site.path != "<schema>":
            if torch_npu is None:
                torch_npu = torch_npu_ops()
            if _full_name(site) in torch_npu:
                notes.setdefault(i, {})["defined_by"] = "torch_npu"
    return [dataclasses.replace(site, **notes[i]) if i in notes else site for i, site in enumerate(sites)]


def _functionalized_here(site: SchemaSite, kernels: dict[tuple[str, str], str]) -> str:
    """Why the project keeps the op from automatic functionalization's refusal: a tag, a registered kernel."""
    tag = next((t for t in site.tags if t in ALIAS_ACCEPTING_TAGS), None)
    if tag is not None:
        return f"it is tagged torch.Tag.{tag}, whose aliased returns torch 2.13's automatic functionalization accepts"
    where = kernels.get((_namespace(site), _full_name(site))) or kernels.get(("", _full_name(site))) if kernels else None
    return f"a Functionalize kernel is registered for it ({where})" if where else ""


def _full_name(site: SchemaSite) -> str:
    """``name`` / ``name.overload`` as the schema text spells it (no parse needed)."""
    return site.text.split("(", 1)[0].strip().rsplit("::", 1)[-1].strip()


def _namespace(site: SchemaSite) -> str:
    head = site.text.split("(", 1)[0]
    if "::" in head:
        return head.split("::", 1)[0].strip()
    return TORCH_NPU_NAMESPACE if site.section is not None else site.namespace


def _textual_base(text: str) -> str:
    """The op name without namespace, overload, in-place ``_`` or ``_functional``: a cheap key that puts the
    members of one torchgen signature group together before anything is parsed."""
    name = text.split("(", 1)[0].split(".", 1)[0].strip().rsplit("::", 1)[-1]
    if not (name.startswith("__") and name.endswith("__")):
        name = name.rstrip("_") if name.endswith("_") else name
    return name.removesuffix("_functional")


def _codegen_functionalized(sites: Sequence[SchemaSite]) -> dict[int, str]:
    """Index of each yaml ``custom:`` site for which op-plugin's codegen generates a Functionalize kernel → why."""
    by_base: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, site in enumerate(sites):
        if site.section in _CODEGEN_SECTIONS:
            by_base[(site.path, _textual_base(site.text))].append(i)
    found: dict[int, str] = {}
    for members in by_base.values():
        if len(members) < 2 or not any("!" in sites[i].text for i in members):
            continue
        groups: dict[str, list[tuple[int, OpSignature]]] = defaultdict(list)
        for i in members:
            sig = sites[i].signature
            if sig is not None:
                groups[sig.grouping_signature].append((i, sig))
        for group in groups.values():
            if any(len(sig.out_arguments) > 1 for _, sig in group):
                continue  # gen_functionalization_registration emits nothing for such a group
            functional = [(i, sig) for i, sig in group if sig.kind is SchemaKind.FUNCTIONAL]
            for i, sig in group:
                if not sig.mutated_arguments or sig.kind is SchemaKind.FUNCTIONAL:
                    continue
                twin = next(((j, f) for j, f in functional if _covers(sites[j], sites[i])), None)
                if twin is not None:
                    found[i] = f"op-plugin's codegen generates a Functionalize kernel for it from its functional twin {twin[1].full_name} (line {sites[twin[0]].line})"
    return found


def _covers(twin: SchemaSite, op: SchemaSite) -> bool:
    """The functional twin is built for every torch version the op is (the codegen runs per version)."""
    return twin.versions is None or op.versions is None or op.versions <= twin.versions


def _functionalize_kernels(project) -> dict[tuple[str, str], str]:
    """(namespace, op) → where a linted file registers a Functionalize kernel for it."""
    kernels: dict[tuple[str, str], str] = {}
    for file in project.python_files:
        for namespace, op, line, _ in getattr(file, "functionalize_kernels", ()):
            kernels.setdefault((namespace, op), f"{file.path}:{line}")
    for file in project.cpp_files:
        for impl in file.impls:
            if impl.dispatch_key == "Functionalize":
                kernels.setdefault((impl.namespace, impl.op), f"{file.path}:{impl.line}")
    return kernels


@functools.lru_cache(maxsize=4)
def _read_torch_npu_ops(where) -> frozenset[str]:
    text = torch_npu_ops_list.read(where)
    return torch_npu_ops_list.declared_ops(text) if text is not None else frozenset()


def torch_npu_ops() -> frozenset[str]:
    """The names of torch_npu's own ``npu::`` ops, or an empty set when no torch-npu wheel is at hand."""
    where = torch_npu_ops_list.location()
    return _read_torch_npu_ops(where) if where is not None else frozenset()
