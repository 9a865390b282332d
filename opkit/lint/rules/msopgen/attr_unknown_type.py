"""J012 attr-unknown-type."""

from __future__ import annotations

from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import INI_ATTR_TYPES, described, located, where
from opkit.formats.msopgen_json import MsOpGenFile, text_of


@rule("J012", "attr-unknown-type", severity=Severity.ERROR, scope="msopgen",
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
        '    {"name": "k", "param_type": "required", "type": "listInt"}\n'
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
        '    {"name": "k", "param_type": "required", "type": "list_int"}\n'
        '  ]\n'
        '}]'
    ),
)
def attr_unknown_type(file: MsOpGenFile) -> Iterator[Violation]:
    """An attr's ``type`` is missing or not an msOpGen attr type; msOpGen silently drops the attr.

    JSON attr types: int, float, bool, string, list_int, list_float, list_bool, list_list_int.
    ``listInt``, ``str`` ... are the .ini spellings.
    """
    for op in file.ops:
        for a in op.attrs:
            attr_type = text_of(a, "type")
            if attr_type in msopgen.ATTR_METHODS:
                continue
            hint = f"write '{INI_ATTR_TYPES[attr_type]}' (the JSON spelling)" if attr_type in INI_ATTR_TYPES else f"one of {', '.join(msopgen.ATTR_METHODS)}"
            found = f"type {attr_type!r}" if "type" in a.value else "no type"
            yield located(a, "type", f"{where(op)}: {described('attr', a)} has {found}; msOpGen drops it silently", op, hint=hint)
