"""O004 opdef-no-soc."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example
from opkit.formats.opdef_cpp import OpDefFile

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'


@rule("O004", "opdef-no-soc", severity=Severity.WARNING, scope="opdef",
    example=opdef_example(_X, extra="this->AICore().SetTiling(optiling::TilingFunc);"),
    fixed=opdef_example(_X, extra='this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");'),
)
def no_soc(file: OpDefFile) -> Iterator[Violation]:
    """The OpDef adds no AI Core config (``this->AICore().AddConfig("<soc>")``), so it is built for no SoC.

    msOpGen writes one ``AddConfig`` per SoC family of ``-c ai_core-<soc>``; without one the package
    holds no kernel for any chip and the op is not found at run time. An AI CPU op (``this->AICPU()``)
    needs none.
    """
    for op in file.ops:
        if not op.socs and not op.aicpu:
            yield Violation(f"{op.op_type}: no AICore().AddConfig(...): the op is built for no SoC", line=op.line, op=op.op_type)
