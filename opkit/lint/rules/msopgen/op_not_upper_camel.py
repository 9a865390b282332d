"""J002 op-not-upper-camel."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import UPPER_CAMEL_RE
from opkit.formats.msopgen_json import MsOpGenFile
from opkit.naming import IDENTIFIER_RE, upper_camel


@rule("J002", "op-not-upper-camel", severity=Severity.WARNING, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "my_op",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
    fixed=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def op_not_upper_camel(file: MsOpGenFile) -> Iterator[Violation]:
    """The ``op`` name is not UpperCamelCase.

    msOpGen only warns, but file names, the kernel symbol and the aclnn name are derived from it, and
    TorchAir maps ``my_op`` to ``MyOp``: any other spelling breaks that mapping.
    """
    for op in file.ops:
        if op.op and IDENTIFIER_RE.match(op.op) and not UPPER_CAMEL_RE.match(op.op):
            yield Violation(f"op name '{op.op}' is not UpperCamelCase", line=op.line_of("op"), hint=f"write '{upper_camel(op.op)}'", op=op.op)
