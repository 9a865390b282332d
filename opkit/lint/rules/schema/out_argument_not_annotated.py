"""S105 out-argument-not-annotated."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S105", "out-argument-not-annotated", severity=Severity.ERROR, scope="schema",
    example='mylib::my_op.out(Tensor x, *, Tensor out) -> ()',
    fixed='mylib::my_op.out(Tensor x, *, Tensor(a!) out) -> ()',
)
def out_argument_not_annotated(site: SchemaSite) -> Iterator[Violation]:
    """A keyword-only tensor named like an out argument (``out``, ``out0``, ``*_out``) is not ``Tensor(a!)``.

    Out arguments are written by the kernel; without the write annotation functionalization treats
    them as read-only and the result never reaches the caller in graph mode.
    """
    sig = site.signature
    if sig is None:
        return
    for a in sig.kwarg_only_arguments:
        if a.is_tensor and not a.type.optional and not a.is_mutated and (a.name == "out" or a.name.startswith("out") and a.name[3:].isdigit() or a.name.endswith("_out")):
            yield Violation(f"keyword-only tensor '{a.name}' looks like an out argument but is not annotated Tensor(a!)", column=a.column or None)
