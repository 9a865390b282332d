"""J006 dtypes-all-unknown."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, kept_descriptors, located, unknown_dtypes, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J006", "dtypes-all-unknown", severity=Severity.ERROR, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["FP16", "float64"], "format": ["ND", "ND"]}\n'
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
def dtypes_all_unknown(file: MsOpGenFile) -> Iterator[Violation]:
    """No dtype of a descriptor is one msOpGen knows; msOpGen stops with an error.

    dtype strings are case-sensitive: ``fp16``/``float16``/``half``, ``float``/``fp32``/``float32``,
    ``bf16``/``bfloat16``, ``int8`` ... ``uint64``, ``bool``, ``double``, ``complex64``/``128``.
    ``FP16``, ``float64`` and ``int4`` are unknown.
    """
    for op in file.ops:
        for key, d in kept_descriptors(op):
            items, unknown = unknown_dtypes(d)
            if len(unknown) == len(items):
                shown = ", ".join(repr(t.value) for t in unknown) or "an empty list"
                yield located(d, "type", f"{where(op)}: {described(key, d)} has no known dtype ({shown})", op)
