"""Y011 invalid-device-check."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, DEVICE_CHECKS
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y011",
    "invalid-device-check",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    device_check: NoChecks'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    device_check: NoCheck'
    ),
)
def invalid_device_check(file: OpPluginFile) -> Iterator[Violation]:
    """``device_check`` is neither ``NoCheck`` nor ``ExactSame`` (torchgen's DeviceCheckType).

    The value selects whether the generated wrapper checks that all tensors share a device; any
    other spelling is not a DeviceCheckType and fails to parse.
    """
    for fact in file_index(file).entries:
        node = fact.entry.get("device_check")
        if node is not None and node.value not in DEVICE_CHECKS:
            near = difflib.get_close_matches(str(node.value), DEVICE_CHECKS, n=1)
            yield Violation(f"device_check {node.plain!r} is not one of {', '.join(DEVICE_CHECKS)}", line=node.line, column=node.column, hint=f"did you mean '{near[0]}'?" if near else None, op=fact.op)
