"""Y012 gen-opapi-ignored-section."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, GEN_OPAPI_SECTIONS
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y012",
    "gen-opapi-ignored-section",
    severity=Severity.WARNING,
    scope="yaml",
    example=(
        'symint:\n'
        '  - func: my_op(Tensor x, SymInt n) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      exec: aclnnMyOp'
    ),
    fixed=(
        'symint:\n'
        '  - func: my_op(Tensor x, SymInt n) -> Tensor\n'
        '    op_api: all_version'
    ),
)
def gen_opapi_ignored_section(file: OpPluginFile) -> Iterator[Violation]:
    """``gen_opapi`` in a section the kernel generator never reads (only official and custom).

    struct_codegen.py's ``USED_KEYS`` are ``official`` and ``custom``: a block under ``symint``,
    ``autograd`` or ``quant`` has no effect; put it on the op's official or custom entry.
    """
    for fact in file_index(file).entries:
        if fact.entry.section not in GEN_OPAPI_SECTIONS and fact.entry.get("gen_opapi") is not None:
            line, column = fact.entry.node.key_position("gen_opapi")
            yield Violation(f"gen_opapi under '{fact.entry.section}' is never read by the codegen", line=line, column=column, op=fact.op)
