"""S203 attr-type-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S203", "attr-type-unsupported", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='my_op(Tensor x, Device? device=None) -> Tensor',
    fixed='my_op(Tensor x, int device_id=0) -> Tensor',
)
def attr_type_unsupported(site: SchemaSite) -> Iterator[Violation]:
    """An argument type has no faithful msOpGen equivalent; new ops only.

    msOpGen attrs are int, float, bool, string, type and their lists (``int?`` an optional attr,
    ``ScalarType`` a ``type`` attr); inputs are Tensor (required), Tensor? (optional), Tensor[] and
    Tensor[]? (dynamic) and Scalar (an input marked ``.Scalar()``). ``Generator``, ``Layout``,
    ``Device``, ``Dimname``, ``Tensor?[]`` ... cannot be declared in the prototype JSON, and TorchAir's
    automatic converter cannot map them: the op needs a hand-written converter or a different type.
    """
    sig = site.signature
    if sig is None:
        return
    for a in sig.arguments:
        if a.type.is_input:
            if a.type.elem_optional:
                yield Violation(f"'{a.name}: {a.type}' has no msOpGen input kind (required, optional, dynamic)", column=a.column or None)
        elif a.type.msopgen_attr_type is None and a.type.base != "Generator":  # a Generator is S204's
            yield Violation(f"'{a.name}: {a.type}' has no msOpGen attr type", column=a.column or None, hint="use int, float, bool, str, ScalarType, Scalar or a list of int/float/bool")
