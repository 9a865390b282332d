"""Facts and helpers the schema rules share."""

from __future__ import annotations

from opkit.lint.sources import SchemaSite
from opkit.signature import Dialect, SchemaError


def parse_error(site: SchemaSite) -> SchemaError | None:
    p = site.parsed
    return p if isinstance(p, SchemaError) else None


def canonical_from(error: SchemaError) -> str | None:
    return error.canonical if error.dialect is Dialect.OP_PLUGIN else None
