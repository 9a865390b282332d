"""Facts and helpers the schema rules share."""

from __future__ import annotations

from opkit.formats.schema_site import SchemaSite
from opkit.signature import OpSignature, SchemaError, SchemaKind


def parse_error(site: SchemaSite) -> SchemaError | None:
    p = site.parsed
    return p if isinstance(p, SchemaError) else None


def canonical_from(error: SchemaError) -> str | None:
    """The accepted spelling of a schema rejected only for its spelling; only op-plugin's parse sets one."""
    return error.canonical


def is_out_convention(sig: OpSignature) -> bool:
    """An out= overload in ATen's convention: named ``out`` (or ``*_out``), it returns exactly its
    keyword-only ``Tensor(a!)`` out arguments. Other overloads that write a keyword-only tensor
    (``npu_scatter_pa_cache.value``) update state in place and have no functional twin."""
    if not (sig.overload == "out" or sig.overload.endswith("_out")):
        return False
    returned = sig.returned_mutated_arguments
    return bool(returned) and set(returned) == set(sig.out_arguments) and all(r.alias is not None for r in sig.returns)


def functional_twin(sig: OpSignature) -> str:
    """The functional op op-plugin's codegen pairs ``sig`` with (same torchgen ``signature()``), as a ``func:``."""
    text = sig.grouping_signature
    if sig.kind is not SchemaKind.INPLACE and not sig.overload:  # a mutable op keeps its name: the twin needs an overload
        name, rest = text.split("(", 1)
        text = f"{name}.functional({rest}"
    return text


def functionalization_remedies(site: SchemaSite) -> str:
    """The ways to keep an aliased return and still enter a graph, for where the schema is declared."""
    sig = site.signature
    if site.section is not None and sig is not None:
        return (f"or add its functional twin to custom: ({functional_twin(sig)}): op-plugin's codegen then "
                "generates a Functionalize kernel for it")
    return ("or tag it torch.Tag.inplace / torch.Tag.out (torch 2.13 accepts their aliased returns), or register a "
            "Functionalize kernel for it")
