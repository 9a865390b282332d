"""Y010 exposed-not-version."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import spec_problems
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y010",
    "exposed-not-version",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    exposed: true'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    exposed: all_version'
    ),
)
def exposed_not_version(file: OpPluginFile) -> Iterator[Violation]:
    """``exposed`` is a bool: the codegen expects a version spec and crashes on ``true``.

    gen_op_plugin_functions.py expands ``exposed`` like every version field; a bool is neither a
    string nor a list, so the build stops. Write the versions in which the op is public in torch_npu.
    """
    yield from spec_problems(file, "Y010")
