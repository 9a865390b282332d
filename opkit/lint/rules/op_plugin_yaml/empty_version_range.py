"""Y007 empty-version-range."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import spec_problems
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y007",
    "empty-version-range",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: [v2.7, v2.1]'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: [v2.1, v2.7]'
    ),
)
def empty_version_range(file: OpPluginFile) -> Iterator[Violation]:
    """A version range ends before it starts, so it selects no version: the op silently vanishes.

    ``[v2.7, v2.1]`` is read as "from v2.7 up to v2.1", which no torch version satisfies; the codegen
    raises nothing and the kernel is simply missing from every build. Versions are ordered as in
    ``all_version`` (in a fragment, by their numbers: v2.10 comes after v2.9).
    """
    yield from spec_problems(file, "Y007")
