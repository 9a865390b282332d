"""S103 return-alias-unknown."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S103", "return-alias-unknown", severity=Severity.ERROR, scope="schema",
    example='mylib::my_op(Tensor x) -> Tensor(b)',
    fixed='mylib::my_op(Tensor x) -> Tensor',
)
def return_alias_unknown(site: SchemaSite) -> Iterator[Violation]:
    """A return carries an alias set that no argument has.

    An alias annotation on a return says which argument it aliases; a letter no argument carries is a
    typo that makes aliasing analysis (and functionalization) wrong.
    """
    sig = site.signature
    if sig is None:
        return
    known = {s for a in sig.arguments if a.alias is not None for s in a.alias.sets}
    for r in sig.returns:
        if r.alias is not None:
            missing = [s for s in r.alias.sets if s not in known]
            if missing:
                yield Violation(f"return alias set '{'|'.join(missing)}' matches no argument")
