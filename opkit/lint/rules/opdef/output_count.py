"""O104 opdef-output-count."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example, pairs
from opkit.lint.project import LintProject

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'
_OUT = 'this->Output("{}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_ND}});'


@rule("O104", "opdef-output-count", severity=Severity.ERROR, scope="project",
    example="# schema: my_op(Tensor x) -> (Tensor y, Tensor rstd)\n# file: my_op.cpp\n" + opdef_example(_X, _OUT.format("y")),
    fixed="# schema: my_op(Tensor x) -> (Tensor y, Tensor rstd)\n# file: my_op.cpp\n" + opdef_example(_X, _OUT.format("y") + "\n        " + _OUT.format("rstd")),
)
def output_count(project: LintProject) -> Iterator[Violation]:
    """The OpDef's output count differs from the schema's returns plus its mutated arguments.

    Every fresh return is an output, and every ``Tensor(a!)`` argument is declared again as a
    same-named output (torchair's in-place rule): the aclnn API gets one output operand per each.
    """
    for file, op, sig in pairs(project):
        expected = len(sig.fresh_returns) + len(sig.mutated_arguments)
        if len(op.outputs) != expected:
            yield Violation(
                f"{op.op_type}: {len(op.outputs)} OpDef output(s), but {sig.full_name} has {len(sig.fresh_returns)} return(s) and {len(sig.mutated_arguments)} mutated argument(s)",
                line=(op.outputs[0].line if op.outputs else op.line), path=file.path, op=op.op_type,
            )  # fmt: skip
