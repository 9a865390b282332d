"""S102 alias-set-reused."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite
from opkit.signature import iter_alias_letters


@rule("S102", "alias-set-reused", severity=Severity.ERROR, scope="schema",
    example='my_op(Tensor(a!) x, Tensor(a!) y) -> ()',
    fixed='my_op(Tensor(a!) x, Tensor(b!) y) -> ()',
)
def alias_set_reused(site: SchemaSite) -> Iterator[Violation]:
    """Two arguments share an alias set, and at least one of them is written.

    Each mutated argument needs its own letter (``Tensor(a!) x, Tensor(b!) y``); a shared letter tells
    functionalization the two arguments are the same memory, and the copy-back is then wrong.
    """
    sig = site.signature
    if sig is None:
        return
    owners: dict[str, list] = {}
    for letter, a in iter_alias_letters(sig):
        owners.setdefault(letter, []).append(a)
    for letter, args in owners.items():
        if len(args) > 1 and any(a.is_mutated for a in args):
            names = ", ".join(a.name for a in args)
            yield Violation(f"alias set '{letter}' is shared by arguments {names}", column=args[1].column or None, hint="give each mutated argument its own letter: Tensor(a!), Tensor(b!), ...")
