"""J009 type-format-length."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import column_count, described, kept_descriptors, where
from opkit.formats.msopgen_json import MsOpGenFile, strings


@rule("J009", "type-format-length", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16", "float", "bf16"], "format": ["ND", "ND"]}\n'
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
        '    {"name": "x", "param_type": "required", "type": ["fp16", "float", "bf16"], "format": ["ND", "ND", "ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16", "float", "bf16"], "format": ["ND", "ND", "ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def type_format_length(file: MsOpGenFile) -> Iterator[Violation]:
    """Inside one descriptor ``type`` and ``format`` have different lengths, neither of them 1.

    Column *i* of ``type`` and ``format`` together is one supported combination; only a length-1
    list broadcasts. msOpGen rejects the descriptor.
    """
    for op in file.ops:
        for key, d in kept_descriptors(op):
            if column_count(d) is None:
                types, formats = strings(d.value["type"]), strings(d.value["format"])
                yield Violation(f"{where(op)}: {described(key, d)} has {len(types)} types but {len(formats)} formats", line=d.line, op=op.op)
