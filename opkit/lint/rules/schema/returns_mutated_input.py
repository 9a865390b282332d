"""S101 returns-mutated-input."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import functionalization_remedies, is_out_convention
from opkit.formats.schema_site import SchemaSite


@rule("S101", "returns-mutated-input", severity=Severity.ERROR, scope="schema", new_ops_only=True,
    example='mylib::my_op_(Tensor(a!) x) -> Tensor(a!)',
    fixed='mylib::my_op_(Tensor(a!) x) -> ()',
)
def returns_mutated_input(site: SchemaSite) -> Iterator[Violation]:
    """A new op returns an alias of an input (``-> Tensor(a!)``); new ops only.

    PyTorch's automatic functionalization (2.6+), which TorchAir relies on to put in-place custom ops
    into a graph, rejects custom ops whose outputs carry alias annotations ("Found a custom (non-ATen)
    operator whose output has alias annotations"). ``torch._dynamo.explain`` still reports one graph,
    so the failure only shows at AOT compile time. Return ``()`` or fresh tensors instead. An out=
    overload in ATen's convention (``*, Tensor(a!) out) -> Tensor(a!)``) is S108 instead.

    Silent where the op never reaches automatic functionalization or it accepts the alias: op-plugin's
    codegen generates a ``Functionalize`` kernel for a ``custom:`` in-place/out=/mutable entry whose
    functional twin (same torchgen ``signature()``, e.g. ``my_op_(Tensor(a!) self) -> Tensor(a!)`` beside
    ``my_op(Tensor self) -> Tensor``) is in the file; a linted file registers a ``Functionalize`` kernel
    for it; or it is tagged ``torch.Tag.inplace`` / ``torch.Tag.out`` (torch 2.13).
    """
    sig = site.signature
    if sig is None or not sig.returns_alias or is_out_convention(sig) or site.functionalized:
        return
    known = {s for a in sig.arguments if a.alias is not None for s in a.alias.sets}
    if not any(r.alias is not None and known.intersection(r.alias.sets) for r in sig.returns):
        return  # the return's alias names no argument: a typo, S103 reports it
    aliased = ", ".join(a.name for a in sig.returned_mutated_arguments) or "an input"
    yield Violation(
        f"custom op returns {aliased} through an alias annotation; automatic functionalization rejects it, so it cannot enter an npugraph_ex graph",
        hint=f"return () (or fresh tensors) and keep Tensor(a!) on the mutated argument; {functionalization_remedies(site)}",
    )
