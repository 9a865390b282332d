"""J011 duplicate-descriptor-name."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import where
from opkit.formats.msopgen_json import MsOpGenFile, text_of


@rule("J011", "duplicate-descriptor-name", severity=Severity.WARNING, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
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
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "w", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def duplicate_descriptor_name(file: MsOpGenFile) -> Iterator[Violation]:
    """Two inputs (or two outputs) share a name; msOpGen keeps the last one.

    An output named like an input is fine: that is how an in-place op is written.
    """
    for op in file.ops:
        for key, items in (("input_desc", op.inputs), ("output_desc", op.outputs)):
            seen: dict[str, int] = {}
            for d in items:
                name = text_of(d, "name")
                if name is None:
                    continue
                if name in seen:
                    yield Violation(f"{where(op)}: {key} declares '{name}' again (first at line {seen[name]}); msOpGen keeps the last", line=d.line, op=op.op)
                seen.setdefault(name, d.line)
