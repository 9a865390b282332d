"""S201 tensor-after-attribute."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S201", "tensor-after-attribute", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='my_op(Tensor x, int k, Tensor y) -> Tensor',
    fixed='my_op(Tensor x, Tensor y, int k) -> Tensor',
)
def tensor_after_attribute(site: SchemaSite) -> Iterator[Violation]:
    """A tensor argument follows a non-tensor one; new ops only.

    msOpGen lists inputs before attrs and the aclnn API takes them in that order, while
    ``exec: aclnn<Op>`` passes the schema's arguments in schema order: put every tensor first. A schema
    inferred from a Python function (custom_op, ``direct_register_custom_op``) is that function's own
    order and is not checked.
    """
    sig = site.signature
    if sig is None or site.inferred:  # a Python function's own order (custom_op, a helper): no aclnn call reads it
        return
    seen_attr = None
    for a in sig.positional_arguments:
        if not a.is_tensor:
            seen_attr = seen_attr or a
        elif seen_attr is not None:
            yield Violation(f"tensor '{a.name}' comes after non-tensor '{seen_attr.name}'", column=a.column or None, hint="tensor arguments first, attributes after")
            return
