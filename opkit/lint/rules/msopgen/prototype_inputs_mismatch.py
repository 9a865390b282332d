"""J101 prototype-inputs-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import differs, pairs
from opkit.lint.project import LintProject
from opkit.formats.msopgen_json import text_of


@rule("J101", "prototype-inputs-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x, Tensor? y) -> Tensor\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "y", "param_type": "optional", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "out", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
    fixed=(
        '# schema: my_op(Tensor x, Tensor? y) -> Tensor\n'
        '# file: my_op.json\n'
        '[{\n'
        '  "op": "MyOp",\n'
        '  "input_desc": [\n'
        '    {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]},\n'
        '    {"name": "y", "param_type": "optional", "type": ["fp16"], "format": ["ND"]}\n'
        '  ],\n'
        '  "output_desc": [\n'
        '    {"name": "out", "param_type": "required", "type": ["fp16"], "format": ["ND"]}\n'
        '  ]\n'
        '}]'
    ),
)
def prototype_inputs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's inputs differ from the schema's tensor arguments in name, order or param_type.

    ``exec: aclnn<Op>`` passes the schema's arguments in order to the API msOpGen generated from the
    JSON: a different order or kind is a wrong call or a build failure. ``Tensor`` → required,
    ``Tensor?`` → optional, ``Tensor[]`` → dynamic.
    """
    for file, op, sig, proto in pairs(project):
        found = [(text_of(d, "name"), text_of(d, "param_type") or "required") for d in op.inputs]
        problem = differs("input_desc (name, param_type) is", found, [(i.name, i.param_type) for i in proto.inputs])
        if problem:
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("input_desc"), path=file.path, op=op.op)
