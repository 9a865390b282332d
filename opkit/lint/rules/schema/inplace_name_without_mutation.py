"""S104 inplace-name-without-mutation."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S104", "inplace-name-without-mutation", severity=Severity.WARNING, scope="schema",
    example='mylib::scale_(Tensor x, float s) -> ()',
    fixed='mylib::scale_(Tensor(a!) x, float s) -> ()',
)
def inplace_name_without_mutation(site: SchemaSite) -> Iterator[Violation]:
    """The name ends in ``_`` (in-place by convention) but no argument is annotated ``(a!)``.

    Either the op writes an input that the schema does not declare (a silent correctness bug under
    functionalization: the write is lost in the graph), or the trailing underscore misleads readers.
    """
    sig = site.signature
    if sig is not None and sig.is_inplace_name and not sig.mutated_arguments:
        yield Violation(
            f"'{sig.name}' ends in '_' but mutates nothing",
            hint="annotate the written argument Tensor(a!), or drop the trailing '_'",
        )
