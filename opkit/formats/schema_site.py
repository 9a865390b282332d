"""A schema string and where it sits: the record every reader gives the schema rules."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema


@dataclass(frozen=True)
class SchemaSite:
    """One schema string and where it sits: the subject of ``schema`` rules."""

    text: str
    path: str
    line: int
    column: int  # column of the schema's first character in the file
    dialect: Dialect
    section: str | None = None  # op_plugin_functions.yaml section; None for a standalone schema
    tags: tuple[str, ...] = ()
    op_hint: str | None = None  # name to report when the schema does not parse
    # op_plugin_functions.yaml: the torch versions whose codegen builds the entry; None where unknown
    versions: frozenset[str] | None = None

    @property
    def is_custom(self) -> bool:
        """A new op being onboarded (custom: section, --schema, a custom_op): the graph-entry rules apply."""
        return self.section in (None, "custom")

    @functools.cached_property
    def parsed(self) -> OpSignature | SchemaError:
        try:
            return parse_schema(self.text, self.dialect)
        except SchemaError as exc:
            return exc.with_traceback(None)  # kept by the site: its frames would hold the project in a cycle

    @property
    def signature(self) -> OpSignature | None:
        p = self.parsed
        return p if isinstance(p, OpSignature) else None
