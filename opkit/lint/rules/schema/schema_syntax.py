"""S001 schema-syntax."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import parse_error, canonical_from
from opkit.formats.schema_site import SchemaSite


@rule("S001", "schema-syntax", severity=Severity.ERROR, scope="schema",
    example='my_op(Tensor x, Tensor y -> Tensor',
    fixed='my_op(Tensor x, Tensor y) -> Tensor',
)
def schema_syntax(site: SchemaSite) -> Iterator[Violation]:
    """The schema string does not parse in its dialect.

    op_plugin_functions.yaml ``func`` strings are parsed by op-plugin's codegen with
    ``torchgen.model.FunctionSchema.parse``, which also enforces ATen naming conventions (a name ending
    in ``_`` must mutate and return ``self``). ``torch.library`` schemas (``Library.define``,
    ``custom_op``) follow ``torch._C.parse_schema``. The message names the dialect and points at the
    column where parsing failed.
    """
    error = parse_error(site)
    if error is None or error.is_unknown_type or canonical_from(error):
        return
    yield Violation(f"{error.message} ({error.dialect.value} dialect: {error.dialect.parser})", column=error.column, hint=error.hint)
