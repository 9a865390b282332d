"""Y006 malformed-version-spec."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import spec_problems
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y006",
    "malformed-version-spec",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        "    op_api: 'v2.6,v2.7'"
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: v2.6, v2.7'
    ),
)
def malformed_version_spec(file: OpPluginFile) -> Iterator[Violation]:
    """A version spec is not one of the four forms the codegen reads.

    The forms: ``all_version``; ``[start, end]`` (end may be ``newest``); ``v2.1``; ``'v2.1, v2.2'``.
    A comma list without the space (``'v2.6,v2.7'``) or with mixed separators is read as one unknown
    version; a list of 3 items is read as a range of its first two; a number (``2.1``), a mapping or
    an empty value is not a version at all. The codegen raises no error for any of them.
    """
    yield from spec_problems(file, "Y006")
