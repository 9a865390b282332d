"""S106 duplicate-argument."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S106", "duplicate-argument", severity=Severity.ERROR, scope="schema",
    example='my_op(Tensor x, Tensor x) -> Tensor',
    fixed='my_op(Tensor x, Tensor y) -> Tensor',
)
def duplicate_argument(site: SchemaSite) -> Iterator[Violation]:
    """Two arguments share a name.

    torch's C++ parser accepts it, but Python keyword calls, the Meta function and the generated
    C++ (OpDef inputs, kernel parameters) cannot have two parameters of one name.
    """
    sig = site.signature
    if sig is None:
        return
    for name in [n for n, c in Counter(a.name for a in sig.arguments).items() if c > 1]:
        yield Violation(f"argument '{name}' is declared more than once")
