"""J004 param-type-invalid."""

from __future__ import annotations

from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, located, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J004", "param-type-invalid", severity=Severity.WARNING, scope="msopgen",
    example=(
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "req", "type": ["fp16"], "format": ["ND"]}\n'
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
def param_type_invalid(file: MsOpGenFile) -> Iterator[Violation]:
    """A ``param_type`` is missing or invalid; msOpGen makes it ``required`` with a warning.

    Tensors take ``required``, ``optional`` or ``dynamic``; attrs ``required`` or ``optional``. An
    optional input or attr silently turned required changes the aclnn API every caller compiles against.
    """
    for op in file.ops:
        checks = [(key, d, msopgen.TENSOR_PARAM_TYPES) for key, d in op.descriptors] + [("attr", a, msopgen.ATTR_PARAM_TYPES) for a in op.attrs]
        for key, item, allowed in checks:
            value = item.value.get("param_type")
            if value is None or value.value not in allowed:
                found = "missing" if value is None else f"{value.value!r}"
                yield located(item, "param_type", f"{where(op)}: {described(key, item)} param_type is {found}; msOpGen uses 'required'", op, hint=f"one of {', '.join(allowed)}")
