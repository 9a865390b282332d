"""S202 name-round-trip."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.schema_site import SchemaSite


@rule("S202", "name-round-trip", severity=Severity.WARNING, scope="schema", new_ops_only=True,
    example='rms_norm_2d(Tensor x) -> Tensor',
    fixed='rms_norm2d(Tensor x) -> Tensor',
)
def name_round_trip(site: SchemaSite) -> Iterator[Violation]:
    """msOpGen's snake_case of the UpperCamelCase op name is not the torch name; new ops only.

    ``rms_norm_2d`` becomes ``RmsNorm2d`` for msOpGen, whose files and kernel are then named
    ``rms_norm2d``: file names, the kernel symbol and TorchAir's converters no longer match the op.
    """
    sig = site.signature
    if sig is None or sig.name_round_trips:
        return
    yield Violation(
        f"'{sig.base_name}' → msOpGen op '{sig.op_type}' → files '{sig.kernel_name}': the name does not round-trip",
        hint=f"rename the op to '{sig.kernel_name}' (or another name that round-trips)",
    )
