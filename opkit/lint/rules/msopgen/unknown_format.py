"""J008 unknown-format."""

from __future__ import annotations

from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, kept_descriptors, where
from opkit.formats.msopgen_json import MsOpGenFile, strings


@rule("J008", "unknown-format", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["nd"]}\n'
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
def unknown_format(file: MsOpGenFile) -> Iterator[Violation]:
    """A format string msOpGen does not know (ND, NCHW, NHWC, NC1HWC0, FRACTAL_NZ, ...).

    msOpGen only warns and writes ``ge::FORMAT_<name>``, which does not exist: the C++ build breaks.
    """
    for op in file.ops:
        for key, d in kept_descriptors(op):
            unknown = [f for f in strings(d.value.get("format")) or [] if not (isinstance(f.value, str) and f.value in msopgen.FORMATS)]
            if unknown:
                yield Violation(f"{where(op)}: {described(key, d)} has unknown formats {', '.join(repr(f.value) for f in unknown)}; the generated C++ does not compile", line=unknown[0].line, op=op.op)
