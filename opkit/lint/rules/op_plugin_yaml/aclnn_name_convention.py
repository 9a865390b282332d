"""Y106 aclnn-name-convention."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import exec_parts, gen_opapi_blocks
from opkit.lint.sources.op_plugin_yaml import OpPluginFile


@rule(
    "Y106",
    "aclnn-name-convention",
    severity=Severity.INFO,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        gen_opapi:
          out: {size: x, dtype: x}
          exec: aclnnMyOperator
    """,
)
def aclnn_name_convention(file: OpPluginFile) -> Iterator[Violation]:
    """``exec`` calls an aclnn function not named ``aclnn`` + UpperCamelCase(op base name).

    A note, not a fault: existing ops use suffixes (``V2``), ``Inplace`` prefixes and other names.
    New ops (and everything opkit generates) follow the convention, so a mismatch there is often a typo.
    """
    for gen in gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        parts = exec_parts(node) if node is not None and gen.inherited_from is None else None
        if parts and parts[0] and parts[0] != gen.signature.aclnn_name:
            yield Violation(f"exec calls '{parts[0]}'; the convention for '{gen.signature.base_name}' is '{gen.signature.aclnn_name}'", line=node.line, column=node.column, op=gen.fact.op)
