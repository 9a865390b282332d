"""Y104 gen-opapi-missing-exec."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, exec_parts, gen_opapi_blocks, GEN_OPAPI_SECTIONS
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y104",
    "gen-opapi-missing-exec",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOp'
    ),
)
def gen_opapi_missing_exec(file: OpPluginFile) -> Iterator[Violation]:
    """A gen_opapi block has no ``exec`` (or a non-string one) and no ``structured_inherit``, or is no mapping.

    ``exec`` names the aclnn function the generated kernel calls; the codegen splits it as a string
    and crashes on a missing one.
    """
    for fact in file_index(file).entries:
        node = fact.entry.get("gen_opapi")
        if node is not None and node.kind != "mapping" and fact.entry.section in GEN_OPAPI_SECTIONS:
            yield Violation(f"gen_opapi must be a mapping with exec (and results), found {node.plain!r}", line=node.line, column=node.column, op=fact.op)
    for gen in gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        if node is None:
            line, column = gen.anchor
            yield Violation(f"gen_opapi has no exec{gen.suffix}", line=line, column=column, hint=f"add exec: {gen.signature.aclnn_name}", op=gen.fact.op)
        elif exec_parts(node) is None or not exec_parts(node)[0]:
            line, column = gen.where(node)
            yield Violation(f"exec must be a string 'aclnnName[, arg, ...]', found {node.plain!r}{gen.suffix}", line=line, column=column, op=gen.fact.op)
