"""Facts and helpers the schema rules share."""

from __future__ import annotations

from opkit.formats.schema_site import SchemaSite
from opkit.signature import OpSignature, SchemaError


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
