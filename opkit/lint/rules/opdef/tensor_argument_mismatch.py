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
    """The schema passes another number of tensors than the OpDef declares inputs.

    ``exec: aclnn<Op>`` passes the schema's tensors to the API the OpDef generates, by position: a
    tensor the OpDef does not declare, or an input the schema never passes, is a wrong call. Names
    alone do not matter to the call (``bias_opt`` beside ``bias`` is the same operand): O106 notes them.
    """
    for file, op, sig in pairs(project):
        arguments = [a.name for a in operand_arguments(sig)]
        inputs = [t.name for t in op.inputs]
        if len(arguments) == len(inputs):
            continue
        missing = [n for n in arguments if n not in inputs]
        extra = [n for n in inputs if n not in arguments]
        counts = f"{sig.full_name} passes {len(arguments)} tensor(s) ({', '.join(arguments) or 'none'}), the OpDef declares {len(inputs)} input(s) ({', '.join(inputs) or 'none'})"
        if len(arguments) > len(inputs):
            named = f": {', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no OpDef input" if missing else ""
            yield Violation(f"{op.op_type}: {counts}{named}", line=op.line, path=file.path, op=op.op_type)
        else:
            named = f": {', '.join(extra)} {'is' if len(extra) == 1 else 'are'} no tensor argument" if extra else ""
            line = next((t.line for t in op.inputs if t.name in extra), op.inputs[len(arguments)].line)
            yield Violation(f"{op.op_type}: {counts}{named}", line=line, path=file.path, op=op.op_type)
