"""O105 opdef-inplace-without-output."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example, pairs
from opkit.lint.project import LintProject

_INPUTS = (
    'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'
    '        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'
)
_OUT = 'this->Output("{}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_ND}});'


@rule("O105", "opdef-inplace-without-output", severity=Severity.ERROR, scope="project",
    example="# schema: my_inplace(Tensor(a!) x, Tensor y) -> ()\n# file: my_op.cpp\n" + opdef_example(_INPUTS, _OUT.format("out")).replace("MyOp", "MyInplace"),
    fixed="# schema: my_inplace(Tensor(a!) x, Tensor y) -> ()\n# file: my_op.cpp\n" + opdef_example(_INPUTS, _OUT.format("x")).replace("MyOp", "MyInplace"),
)
def inplace_without_output(project: LintProject) -> Iterator[Violation]:
    """A mutated ``Tensor(a!)`` argument has no OpDef output of the same name.

    An in-place op declares the written input again as an output with the same name (torchair's
    in_place_op_cases; the kernel gets it as ``<name>_ref``): otherwise the kernel writes an output
    PyTorch never sees and the input stays unchanged.
    """
    for file, op, sig in pairs(project):
        outputs = {t.name for t in op.outputs}
        for a in sig.mutated_arguments:
            if a.name not in outputs:
                yield Violation(f"{op.op_type}: '{a}' is written by {sig.full_name} but the OpDef has no output '{a.name}'", line=op.line, path=file.path, op=op.op_type)
