"""Y102 gen-opapi-unknown-reference."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import gen_opapi_blocks, IDENTIFIER, OUTPUT_FIELDS
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y102",
    "gen-opapi-unknown-reference",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out:\n'
        '        size: y\n'
        '        dtype: x\n'
        '      exec: aclnnMyOp'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out:\n'
        '        size: x\n'
        '        dtype: x\n'
        '      exec: aclnnMyOp'
    ),
)
def gen_opapi_unknown_reference(file: OpPluginFile) -> Iterator[Violation]:
    """A result's ``size``, ``dtype`` or ``name`` is a bare name that is neither an argument nor a new_params name.

    The codegen pastes the value into C++: an input Tensor's name becomes ``x.sizes()`` /
    ``x.scalar_type()``, anything else is used as written. A C++ expression (``at::kFloat``,
    ``self.scalar_type()``, a call, a ternary) is fine; a bare name that is not in scope does not compile.
    """
    for gen in gen_opapi_blocks(file):
        in_scope = {a.name for a in gen.signature.arguments} | gen.new_params
        for key, node in gen.outputs.items():
            if node.kind != "mapping":
                continue
            for name in OUTPUT_FIELDS:
                value = node.value.get(name)
                if value is None:
                    continue
                if not isinstance(value.value, str):
                    line, column = gen.where(value)
                    yield Violation(f"{key}.{name} is {value.plain!r}, not a name or C++ expression{gen.suffix}", line=line, column=column, op=gen.fact.op)
                elif IDENTIFIER.match(value.value) and value.value not in in_scope:
                    line, column = gen.where(value)
                    yield Violation(
                        f"{key}.{name} '{value.value}' is neither an argument of {gen.signature.full_name} nor a new_params name{gen.suffix}",
                        line=line,
                        column=column,
                        hint=f"arguments: {', '.join(a.name for a in gen.signature.arguments)}",
                        op=gen.fact.op,
                    )
