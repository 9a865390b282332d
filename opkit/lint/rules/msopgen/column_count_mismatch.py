"""J010 column-count-mismatch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import column_count, described, kept_descriptors, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J010", "column-count-mismatch", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]},\n'
        '    {"name": "w", "param_type": "required", "type": ["fp16", "float", "bf16"], "format": ["ND", "ND", "ND"]}\n'
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
        '    {"name": "x", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]},\n'
        '    {"name": "w", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16", "float"], "format": ["ND", "ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def column_count_mismatch(file: MsOpGenFile) -> Iterator[Violation]:
    """Descriptors of one op expand to different numbers of dtype/format columns.

    Column *i* of every input and output together is one supported dtype combination of the op, so
    every list must expand to the same length; msOpGen rejects the op otherwise. Descriptors that
    differ from the count most of them share are reported.
    """
    for op in file.ops:
        counts = [(key, d, n) for key, d in kept_descriptors(op) if (n := column_count(d)) is not None]
        if not counts:
            continue
        # The count most descriptors share is the op's; the others are the ones to fix.
        majority = Counter(n for _, _, n in counts).most_common(1)[0][0]
        ref_key, ref, _ = next(c for c in counts if c[2] == majority)
        for key, d, count in counts:
            if count != majority:
                yield Violation(
                    f"{where(op)}: {described(key, d)} has {count} dtype/format columns but {described(ref_key, ref)} has {majority}",
                    line=d.line, op=op.op,
                )  # fmt: skip
