"""J007 dtypes-some-unknown."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, kept_descriptors, unknown_dtypes, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J007", "dtypes-some-unknown", severity=Severity.WARNING, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16", "FP32"], "format": ["ND", "ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]}\n'
        '  ]\n'
        '}]'
    ),
    fixed=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def dtypes_some_unknown(file: MsOpGenFile) -> Iterator[Violation]:
    """Some dtypes of a descriptor are unknown; msOpGen drops them.

    The dropped columns disappear from the supported combinations, and the remaining lists no longer
    line up with the other descriptors' columns.
    """
    for op in file.ops:
        for key, d in kept_descriptors(op):
            items, unknown = unknown_dtypes(d)
            if unknown and len(unknown) < len(items):
                yield Violation(f"{where(op)}: {described(key, d)} has unknown dtypes {', '.join(repr(t.value) for t in unknown)}; msOpGen drops them", line=unknown[0].line, op=op.op)
