"""S108 out-overload-returns-alias."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import is_out_convention
from opkit.formats.schema_site import SchemaSite


@rule("S108", "out-overload-returns-alias", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)',
    fixed='mylib::my_op.out(Tensor x, *, Tensor(a!) out) -> ()',
)
def out_overload_returns_alias(site: SchemaSite) -> Iterator[Violation]:
    """A new op's out= overload returns its out argument (ATen's out= convention); new ops only.

    Automatic functionalization rejects custom ops whose outputs carry alias annotations, so this
    overload cannot enter an npugraph_ex graph. That is ATen's convention for ``.out`` overloads and
    not the graph-entry path: graph code calls the functional overload, which functionalization
    pairs with the out= one. Make sure a functional overload exists and is the one models call.
    Silent where a ``Functionalize`` kernel serves the overload (op-plugin's codegen generates one when
    its functional twin is in ``custom:``; or a linted file registers one) or it is tagged ``torch.Tag.out``:
    then it can enter a graph itself.
    """
    sig = site.signature
    if sig is None or not is_out_convention(sig) or site.functionalized:
        return
    outs = ", ".join(a.name for a in sig.out_arguments)
    yield Violation(
        f"out= overload returns {outs} through an alias annotation: it cannot enter a graph itself",
        hint=f"call the functional overload {sig.name}(...) in graphs",
    )
