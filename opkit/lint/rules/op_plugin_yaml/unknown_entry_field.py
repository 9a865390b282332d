"""Y002 unknown-entry-field."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, ENTRY_FIELDS
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y002",
    "unknown-entry-field",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_apl: all_version'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        ''
    ),
)
def unknown_entry_field(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has a field the codegen does not know; it is ignored without a word.

    A misspelt ``op_api`` or ``exposed`` therefore removes the kernel or the public binding with no
    error at build time. Known fields: func, op_api, acl_op, gen_opapi, exposed, internal_format_opapi,
    dvm, sparse, device_check, tags, dispatch, structured, structured_delegate,
    use_const_ref_for_mutable_tensors.
    """
    for fact in file_index(file).entries:
        node = fact.entry.node
        for key in node.value:
            if key not in ENTRY_FIELDS:
                near = difflib.get_close_matches(key, sorted(ENTRY_FIELDS), n=1)
                line, column = node.key_position(key)
                yield Violation(f"unknown entry field '{key}' is ignored by the codegen", line=line, column=column, hint=f"did you mean '{near[0]}'?" if near else None, op=fact.op)
