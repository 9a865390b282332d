"""S003 not-canonical."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import parse_error, canonical_from
from opkit.formats.schema_site import SchemaSite


@rule("S003", "not-canonical", severity=Severity.ERROR, scope="schema",
    example='my_op(Tensor x,Tensor y)->Tensor',
    fixed='my_op(Tensor x, Tensor y) -> Tensor',
)
def not_canonical(site: SchemaSite) -> Iterator[Violation]:
    """An op-plugin ``func`` must be spelled exactly as torchgen prints it back.

    The codegen asserts ``str(FunctionSchema.parse(f)) == f``: one space after each comma, `` -> ``
    around the arrow, defaults without spaces. The message gives the canonical spelling to paste.
    """
    error = parse_error(site)
    canonical = canonical_from(error) if error is not None else None
    if canonical:
        yield Violation(f"not in torchgen's canonical spelling; write: {canonical}", column=error.column, hint="the codegen asserts str(parse(func)) == func")
