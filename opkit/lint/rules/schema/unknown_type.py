"""S002 unknown-type."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import parse_error
from opkit.lint.sources import SchemaSite


@rule("S002", "unknown-type", severity=Severity.ERROR, scope="schema", example="max.names_dim(Tensor self, Dimname dim) -> Tensor")
def unknown_type(site: SchemaSite) -> Iterator[Violation]:
    """The schema uses a type the installed torch no longer parses (``Dimname`` on torch 2.13).

    The codegen stops on the first such entry, so the whole yaml file fails to build against that
    torch. Named-tensor overloads (``Dimname``, ``Dimname[]``) are the usual cause: remove them, or
    restrict their version range to the torch releases that still parse them.
    """
    error = parse_error(site)
    if error is not None and error.is_unknown_type:
        yield Violation(f"{error.message} ({error.dialect.value} dialect)", column=error.column, hint=error.hint)
