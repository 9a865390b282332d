"""J003 invalid-name."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import located, where
from opkit.formats.msopgen_json import MsOpGenFile, text_of
from opkit.naming import IDENTIFIER_RE


@rule("J003", "invalid-name", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "1x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
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
def invalid_name(file: MsOpGenFile) -> Iterator[Violation]:
    """An op, input, output or attr name is missing or not a C identifier (``^[A-Za-z_][A-Za-z0-9_]*$``).

    msOpGen rejects it: the names become C++ identifiers in the OpDef and the kernel signature.
    """
    for op in file.ops:
        if op.op and not IDENTIFIER_RE.match(op.op):
            yield Violation(f"op name '{op.op}' is not a C identifier", line=op.line_of("op"), op=op.op)
        for key, item in [*op.descriptors, *(("attr", a) for a in op.attrs)]:
            name = text_of(item, "name")
            if name is None or not IDENTIFIER_RE.match(name):
                shown = f"'{name}' is not a C identifier" if name is not None else "has no name"
                yield located(item, "name", f"{where(op)}: an item of {key} {shown}", op)
