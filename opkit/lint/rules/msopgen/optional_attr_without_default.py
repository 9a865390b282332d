"""J014 optional-attr-without-default."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, where
from opkit.formats.msopgen_json import MsOpGenFile, text_of


@rule("J014", "optional-attr-without-default", severity=Severity.WARNING, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "attr": [\n'
        '    {"name": "k", "param_type": "optional", "type": "int"}\n'
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
        '  ],\n'
        '  "attr": [\n'
        '    {"name": "k", "param_type": "optional", "type": "int", "default_value": "1"}\n'
        '  ]\n'
        '}]'
    ),
)
def optional_attr_without_default(file: MsOpGenFile) -> Iterator[Violation]:
    """An optional attr has no ``default_value``.

    The OpDef then declares ``AttrType(OPTIONAL)`` with no value to fall back on, and the PyTorch
    schema has nothing to write as the argument's default.
    """
    for op in file.ops:
        for a in op.attrs:
            if text_of(a, "param_type") == "optional" and "default_value" not in a.value:
                yield Violation(f"{where(op)}: optional {described('attr', a)} has no default_value", line=a.line, op=op.op)
