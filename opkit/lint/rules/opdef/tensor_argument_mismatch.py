"""O101 opdef-tensor-argument-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example, operand_arguments, pairs
from opkit.lint.project import LintProject

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'
_W = 'this->Input("w").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'


@rule("O101", "opdef-tensor-argument-mismatch", severity=Severity.ERROR, scope="project",
    example="# schema: my_op(Tensor x, Tensor w) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X),
    fixed="# schema: my_op(Tensor x, Tensor w) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + "\n        " + _W),
)
def tensor_argument_mismatch(project: LintProject) -> Iterator[Violation]:
    """A tensor argument of the schema has no OpDef input of its name, or an OpDef input no argument.

    ``exec: aclnn<Op>`` passes the schema's tensors to the API the OpDef generates, by position: a
    tensor the OpDef does not declare, or an input the schema never passes, is a wrong call.
    """
    for file, op, sig in pairs(project):
        arguments = [a.name for a in operand_arguments(sig)]
        inputs = [t.name for t in op.inputs]
        missing = [n for n in arguments if n not in inputs]
        extra = [n for n in inputs if n not in arguments]
        if missing:
            yield Violation(f"{op.op_type}: tensor argument(s) {', '.join(missing)} of {sig.full_name} have no OpDef input", line=op.line, path=file.path, op=op.op_type)
        if extra:
            yield Violation(f"{op.op_type}: OpDef input(s) {', '.join(extra)} are no tensor argument of {sig.full_name}", line=next(t.line for t in op.inputs if t.name == extra[0]), path=file.path, op=op.op_type)
