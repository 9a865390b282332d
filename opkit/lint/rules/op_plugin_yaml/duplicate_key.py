"""Y004 duplicate-key."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, mapping_duplicates
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y004",
    "duplicate-key",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    op_api: [v2.6, newest]'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: [v2.6, newest]'
    ),
)
def duplicate_key(file: OpPluginFile) -> Iterator[Violation]:
    """A key is written twice in one mapping (an entry, a gen_opapi block, or the top level).

    ``yaml.safe_load``, which the codegen uses, keeps the last value and drops the first without a
    word, so half of what was written has no effect (a second ``custom:`` replaces the whole first one).
    """
    for dup in file.duplicate_keys:
        yield Violation(f"top-level key '{dup.key}' is written twice (first at line {dup.first_line}); the first is discarded", line=dup.line, column=dup.column)
    for fact in file_index(file).entries:
        for _, dup in mapping_duplicates(fact.entry.node):
            yield Violation(f"key '{dup.key}' is written twice (first at line {dup.first_line}); only the last value is used", line=dup.line, column=dup.column, op=fact.op)
