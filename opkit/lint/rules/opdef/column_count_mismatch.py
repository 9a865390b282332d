"""O002 opdef-column-count-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example
from opkit.formats.opdef_cpp import OpDefFile


@rule("O002", "opdef-column-count-mismatch", severity=Severity.ERROR, scope="opdef",
    example=opdef_example(
        'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});',
        'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});',
    ),
    fixed=opdef_example(
        'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});',
        'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});',
    ),
)
def column_count_mismatch(file: OpDefFile) -> Iterator[Violation]:
    """Descriptors of one OpDef list different numbers of DataType columns.

    Column *i* of every input and output together is one supported dtype combination (msopgen.md §1,
    the same rule as J010 for a prototype JSON), so every ``DataType`` list has the same length; a list
    of one is the only one broadcast. The op is rejected when it is built.
    """
    for op in file.ops:
        tensors = [t for t in (*op.inputs, *op.outputs) if t.declared[0] > 1]
        if not tensors:
            continue
        longest = max(tensors, key=lambda t: t.declared[0])
        for t in tensors:
            if t.declared[0] != longest.declared[0]:
                yield Violation(f"{op.op_type}: '{t.name}' lists {t.declared[0]} DataType columns but '{longest.name}' lists {longest.declared[0]}", line=t.line, op=op.op_type)
