"""J102 prototype-attrs-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import default_as_value, differs, pairs
from opkit.lint.project import LintProject
from opkit.formats.msopgen_json import text_of


@rule("J102", "prototype-attrs-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x, int k=1) -> Tensor\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "out", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "attr": [\n'
        '    {"name": "k", "param_type": "required", "type": "float"}\n'
        '  ]\n'
        '}]'
    ),
    fixed=(
        '# schema: my_op(Tensor x, int k=1) -> Tensor\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "out", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "attr": [\n'
        '    {"name": "k", "param_type": "optional", "type": "int", "default_value": "1"}\n'
        '  ]\n'
        '}]'
    ),
)
def prototype_attrs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's attrs differ from the schema's non-tensor arguments in name, type, optional-ness or default.

    ``int`` → int, ``float`` → float, ``bool`` → bool, ``str`` → string, ``int[]`` → list_int ...; an
    argument with a default is an optional attr carrying that default. A mismatch makes the aclnn
    API take another C++ type than op-plugin passes.
    """

    def compared(rows: list[tuple]) -> list[tuple]:
        return [(*row[:3], default_as_value(row[3])) for row in rows]

    for file, op, sig, proto in pairs(project):
        found = [(text_of(a, "name"), text_of(a, "type"), text_of(a, "param_type") or "required", a.plain.get("default_value")) for a in op.attrs]
        expected = [(a.name, a.type, a.param_type, a.default_value) for a in proto.attrs]
        if compared(found) != compared(expected):
            problem = differs("attr (name, type, param_type, default) is", found, expected)
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("attr"), path=file.path, op=op.op)
