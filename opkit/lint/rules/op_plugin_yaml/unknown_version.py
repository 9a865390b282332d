"""Y005 unknown-version."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import spec_problems
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y005",
    "unknown-version",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'all_version: [v2.1, v2.2]\n'
        'official: []\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: v9.9\n'
        'autograd: []\n'
        'symint: []\n'
        'quant: []'
    ),
    fixed=(
        'all_version: [v2.1, v2.2]\n'
        'official: []\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: v2.2\n'
        'autograd: []\n'
        'symint: []\n'
        'quant: []'
    ),
)
def unknown_version(file: OpPluginFile) -> Iterator[Violation]:
    """A version spec names a version that is not in ``all_version``.

    The codegen compares the build's torch version with the spec; a version it never builds
    (``v9.9``, ``v2.10`` misspelt ``v2.1O``) selects nothing, so the kernel silently vanishes. A range
    must start with a version in ``all_version``; its end may also be ``newest``. Not checked in fragments.
    """
    yield from spec_problems(file, "Y005")
