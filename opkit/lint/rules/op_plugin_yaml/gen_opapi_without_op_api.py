"""Y008 gen-opapi-without-op-api."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y008",
    "gen-opapi-without-op-api",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    acl_op: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOp'
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
def gen_opapi_without_op_api(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has ``gen_opapi`` but no ``op_api``: the codegen drops the block without a word.

    struct_codegen.py only generates kernels for entries whose ``op_api`` covers the torch version
    being built, so the op_api kernel the block describes is never written.
    """
    for fact in file_index(file).entries:
        gen = fact.entry.get("gen_opapi")
        if gen is not None and fact.entry.get("op_api") is None:
            line, column = fact.entry.node.key_position("gen_opapi")
            yield Violation("gen_opapi without op_api: the codegen never generates this kernel", line=line, column=column, hint="add op_api with the versions the generated kernel serves", op=fact.op)
