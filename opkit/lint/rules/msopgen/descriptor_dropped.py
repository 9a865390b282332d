"""J005 descriptor-dropped."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J005", "descriptor-dropped", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"]}\n'
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
def descriptor_dropped(file: MsOpGenFile) -> Iterator[Violation]:
    """An input or output has no ``type`` or no ``format``; msOpGen silently drops it.

    The generated OpDef and kernel then lack that tensor and every later parameter shifts.
    """
    for op in file.ops:
        for key, d in op.descriptors:
            missing = [k for k in ("type", "format") if k not in d.value]
            if missing:
                yield Violation(f"{where(op)}: {described(key, d)} has no {' or '.join(missing)}; msOpGen drops it silently", line=d.line, op=op.op)
