"""S204 not-capturable."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S204", "not-capturable", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='my_dropout(Tensor x, float p, Generator? gen=None) -> Tensor',
    fixed='my_dropout(Tensor x, float p, int seed=0) -> Tensor',
)
def not_capturable(site: SchemaSite) -> Iterator[Violation]:
    """The op draws random numbers (a ``Generator`` argument or the ``nondeterministic_seeded`` tag).

    npugraph_ex captures a graph once and replays it; random-number ops cannot be captured, so a model
    calling this op breaks out of the aclgraph (or replays the same numbers).
    """
    sig = site.signature
    if sig is None:
        return
    reasons = []
    if sig.has_generator:
        reasons.append("takes a Generator")
    if "nondeterministic_seeded" in site.tags:
        reasons.append("is tagged nondeterministic_seeded")
    if reasons:
        yield Violation(f"op {' and '.join(reasons)}: npugraph_ex cannot capture random-number ops")
