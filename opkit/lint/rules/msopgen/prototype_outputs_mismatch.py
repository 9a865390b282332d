"""J103 prototype-outputs-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import differs, pairs
from opkit.lint.project import LintProject
from opkit.formats.msopgen_json import text_of


@rule("J103", "prototype-outputs-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_inplace(Tensor(a!) x, Tensor y) -> Tensor z\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyInplace",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "z", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
    fixed=(
        '# schema: my_inplace(Tensor(a!) x, Tensor y) -> Tensor z\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyInplace",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "y", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "z", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def prototype_outputs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's outputs differ from the schema's: mutated inputs first (same names), then fresh returns.

    An in-place op must declare each ``Tensor(a!)`` input again as an output of the same name, or the
    kernel gets no ``<name>_ref`` to write; each returned tensor is an output named by the return
    (``out``, ``out0``, ``out1`` ... when unnamed).
    """
    for file, op, sig, proto in pairs(project):
        found = [text_of(d, "name") for d in op.outputs]
        problem = differs("output_desc names are", found, [o.name for o in proto.outputs])
        if problem:
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("output_desc"), path=file.path, op=op.op)
