"""S107 default-before-required."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S107", "default-before-required", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='my_op(Tensor x, int k=1, int[] dims) -> Tensor',
    fixed='my_op(Tensor x, int[] dims, int k=1) -> Tensor',
)
def default_before_required(site: SchemaSite) -> Iterator[Violation]:
    """A positional argument with a default comes before one without; new ops only.

    torch's schema parser allows it when the later argument is a list, but the default can never be
    used (PyTorch only omits trailing defaults, so the argument is always passed), and Python-side
    tooling that builds a signature from the schema fails on it: ``torch.library.opcheck``'s
    ``test_schema`` reports "non-default argument follows default argument". Move the defaulted
    argument after the required ones, or make the later ones keyword-only.
    """
    sig = site.signature
    if sig is None:
        return
    positional = sig.positional_arguments
    for i, a in enumerate(positional):
        if a.default is not None:
            required = next((later for later in positional[i + 1 :] if later.default is None), None)
            if required is not None:
                yield Violation(
                    f"'{a.name}' has a default but '{required.name}' after it has none: the default is never used",
                    column=a.column or None,
                    hint="put arguments with defaults after the required ones, or make the later ones keyword-only",
                )
                return
