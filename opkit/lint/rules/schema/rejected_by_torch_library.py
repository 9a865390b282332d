"""S004 rejected-by-torch-library."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite
from opkit.signature import check_schema, Dialect


@rule("S004", "rejected-by-torch-library", severity=Severity.ERROR, scope="schema", new_ops_only=True,
    example='my_op(Tensor x, int[] k=1) -> Tensor',
    fixed='my_op(Tensor x, int[] k=[1]) -> Tensor',
)
def rejected_by_torch_library(site: SchemaSite) -> Iterator[Violation]:
    """torchgen accepts the ``func`` but torch's C++ schema parser rejects it; new ops only.

    torch_npu registers every ``custom:`` entry with ``m.def(schema)``, which runs the C++ parser
    (``torch._C.parse_schema``) at import time. It enforces what torchgen does not: "no positional
    argument without a default after one with a default" (lists excepted), and defaults that suit
    their types (``int[] k=1``, ``Tensor x=0`` and ``float eps=inf`` are rejected). Such an entry
    builds, then ``import torch_npu`` fails.
    """
    sig = site.signature
    if site.dialect is not Dialect.OP_PLUGIN or sig is None:
        return
    problem = check_schema(sig.arguments, sig.text)
    if problem is not None:
        yield Violation(f"torch_npu's m.def() would reject it: {problem.message}", column=problem.column, hint=problem.hint)
