"""Y003 missing-func."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y003",
    "missing-func",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - op_api: all_version'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        ''
    ),
)
def missing_func(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has no ``func``, or its ``func`` is not a string.

    The codegen reads ``e['func']`` for every entry (KeyError) and parses it as a schema string
    (``TypeError: not a str``), so the whole build stops.
    """
    for fact in file_index(file).entries:
        entry = fact.entry
        node = entry.get("func")
        if node is None:
            yield Violation(f"entry {entry.index} of '{entry.section}' has no 'func'", line=entry.line, column=entry.column)
        elif not isinstance(node.value, str):
            yield Violation(f"func is {'empty' if node.value is None else 'a ' + node.kind if node.kind != 'scalar' else repr(node.value)}, not a schema string", line=node.line, column=node.column)
