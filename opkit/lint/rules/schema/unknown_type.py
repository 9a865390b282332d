"""S002 unknown-type."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.schema.common import parse_error
from opkit.formats.schema_site import SchemaSite
from opkit.lint.torchgen_versions import REMOVED_TYPES, installed_torch_version, rejecting_versions

_TYPE_NAME = re.compile(r"unknown type '([^']*)'")


def _known_types() -> list[str]:
    from torchgen.model import BaseTy  # loaded already: the schema did not parse with it

    return [t.name for t in BaseTy]


@rule("S002", "unknown-type", severity=Severity.ERROR, scope="schema",
    example='my_op(Tensr x) -> Tensor',
    fixed='my_op(Tensor x) -> Tensor',
)
def unknown_type(site: SchemaSite) -> Iterator[Violation]:
    """The schema uses a type the parser does not know: a typo, or a type torchgen has since dropped.

    The codegen stops on the first such entry, so the whole yaml file fails to build. A type older
    torchgens parsed (``Dimname`` up to torch 2.12) is checked by version: an op_plugin_functions.yaml
    entry whose ``op_api``/``acl_op``/``sparse`` versions all predate the change is never parsed by a
    torchgen that rejects it, and is not reported. Otherwise the message names the versions that fail.
    """
    error = parse_error(site)
    if error is None or not error.is_unknown_type:
        return
    # Both parsers write the name as repr() of a type text without quotes (a quote breaks the argument layout first).
    name = _TYPE_NAME.match(error.message).group(1)
    removed = REMOVED_TYPES.get(name)
    if removed is None:
        near = difflib.get_close_matches(name, _known_types(), n=1, cutoff=0.6)
        hint = f"did you mean '{near[0]}'?" if near else error.hint
        yield Violation(f"unknown type '{name}' ({error.dialect.value} dialect)", column=error.column, hint=hint)
        return
    installed = installed_torch_version() or "the installed torch"
    if site.versions is None:
        yield Violation(
            f"type '{name}' is not parsed by torchgen after {removed.last} ({removed.why}); installed: {installed}",
            column=error.column,
            hint=f"drop the overload, or give the entry a version range ending at {removed.last}",
        )
        return
    failing = rejecting_versions(removed, site.versions)
    if failing:
        yield Violation(
            f"type '{name}' is not parsed by torchgen after {removed.last}, but the entry is active in {', '.join(failing)}",
            column=error.column,
            hint=f"end its op_api/acl_op range at {removed.last} ({removed.why})",
        )
