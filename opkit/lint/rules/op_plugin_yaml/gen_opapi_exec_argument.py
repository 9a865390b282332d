"""Y103 gen-opapi-exec-argument."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import exec_parts, gen_opapi_blocks
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y103",
    "gen-opapi-exec-argument",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x, float alpha) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOp, x, beta, out'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x, float alpha) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOp, x, alpha, out'
    ),
)
def gen_opapi_exec_argument(file: OpPluginFile) -> Iterator[Violation]:
    """An explicit ``exec`` argument is not a schema argument, a new_params name or a result name.

    ``exec: aclnnX, a, b, out`` lists the aclnn call's arguments; the codegen raises "exec
    configuration field contains invalid parameters" for anything else (an expression belongs in
    ``new_params``).
    """
    for gen in gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        parts = exec_parts(node) if node is not None else None
        if not parts or len(parts) < 2:
            continue
        valid = {a.name for a in gen.signature.arguments} | gen.new_params | gen.result_names
        for part in parts[1:]:
            if part not in valid:
                line, column = gen.where(node)
                shown = f"'{part}'" if part else "an empty argument"
                yield Violation(
                    f"exec passes {shown}, which is not an argument, a new_params name or a result{gen.suffix}",
                    line=line,
                    column=column,
                    hint=f"valid: {', '.join(sorted(valid))}; define expressions under new_params",
                    op=gen.fact.op,
                )
