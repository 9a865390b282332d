"""J013 attr-default-invalid."""

from __future__ import annotations

from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import described, located, where
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J013", "attr-default-invalid", severity=Severity.ERROR, scope="msopgen",
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
        '    {"name": "mode", "param_type": "optional", "type": "string", "default_value": "\\"mean\\""}\n'
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
        '    {"name": "mode", "param_type": "optional", "type": "string", "default_value": "mean"}\n'
        '  ]\n'
        '}]'
    ),
)
def attr_default_invalid(file: MsOpGenFile) -> Iterator[Violation]:
    """An attr's ``default_value`` cannot become valid C++: msOpGen rejects it or writes code that does not compile.

    msOpGen pastes ``default_value`` into the OpDef verbatim. It rejects a string containing
    ``; ' " ( )``, a newline, tab or backtick, or longer than 1024 characters. It accepts a JSON
    array, printed as a Python repr (``ListBool([True, False])``), which does not compile: write a
    list default as a string, ``"{1, 2}"``.
    """
    for op in file.ops:
        for a in op.attrs:
            node = a.value.get("default_value")
            if node is None:
                continue
            name = described("attr", a)
            if node.kind == "sequence":
                braces = "{" + ", ".join(str(v) for v in node.plain) + "}"
                yield located(a, "default_value", f"{where(op)}: {name} default_value is a JSON array, which msOpGen pastes into C++ as a Python list: it does not compile", op, hint=f'write the string "{braces}"')
                continue
            text = str(node.value)
            bad = sorted(set(text) & msopgen.FORBIDDEN_DEFAULT_CHARS)
            if bad:
                yield located(a, "default_value", f"{where(op)}: {name} default_value contains forbidden characters {', '.join(map(repr, bad))}", op)
            if len(text) > msopgen.MAX_DEFAULT_LENGTH:
                yield located(a, "default_value", f"{where(op)}: {name} default_value is {len(text)} characters, over {msopgen.MAX_DEFAULT_LENGTH}", op)
