"""O106 opdef-input-name-differs."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example, operand_arguments, pairs
from opkit.lint.project import LintProject

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'


@rule("O106", "opdef-input-name-differs", severity=Severity.INFO, scope="project",
    example="# schema: my_op(Tensor x, Tensor bias_opt) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + '\n        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'),
    fixed="# schema: my_op(Tensor x, Tensor bias) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + '\n        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'),
)
def input_name_differs(project: LintProject) -> Iterator[Violation]:
    """A schema tensor and the OpDef input at its position have different names.

    aclnn passes arguments by position, so the call is right; a note, since names that agree let
    readers (and ``opkit new --from``) pair them. Inputs that are the schema's own names in another
    order are O103's, a different count O101's.
    """
    for file, op, sig in pairs(project):
        arguments = [a.name for a in operand_arguments(sig)]
        inputs = [t.name for t in op.inputs]
        if len(arguments) != len(inputs) or sorted(arguments) == sorted(inputs):
            continue
        for argument, t in zip(arguments, op.inputs):
            if argument != t.name:
                yield Violation(f"{op.op_type}: the schema's tensor '{argument}' is OpDef input '{t.name}' (same position: aclnn passes it by position)", line=t.line, path=file.path, op=op.op_type)
