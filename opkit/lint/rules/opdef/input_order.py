"""O103 opdef-input-order."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example, operand_arguments, pairs
from opkit.lint.project import LintProject

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'
_W = 'this->Input("w").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'


@rule("O103", "opdef-input-order", severity=Severity.ERROR, scope="project",
    example="# schema: my_op(Tensor x, Tensor w) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_W + "\n        " + _X),
    fixed="# schema: my_op(Tensor x, Tensor w) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + "\n        " + _W),
)
def input_order(project: LintProject) -> Iterator[Violation]:
    """The OpDef declares the schema's tensor inputs in another order.

    The aclnn API takes its inputs in the OpDef's order and ``exec: aclnn<Op>`` passes the schema's
    arguments in theirs: swapped inputs are swapped at run time, silently when their dtypes agree.
    """
    for file, op, sig in pairs(project):
        arguments = [a.name for a in operand_arguments(sig)]
        declared = [t.name for t in op.inputs if t.name in arguments]
        if sorted(declared) == sorted(arguments) and declared != arguments:
            yield Violation(f"{op.op_type}: OpDef inputs are in the order {', '.join(declared)}; {sig.full_name} passes {', '.join(arguments)}", line=op.inputs[0].line, path=file.path, op=op.op_type)
