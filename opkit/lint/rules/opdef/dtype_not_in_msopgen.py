"""O005 opdef-dtype-not-in-msopgen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example

if TYPE_CHECKING:  # the C++ reader is imported when a C++ file is read, not for a yaml-only lint
    from opkit.formats.opdef_cpp import OpDefFile

_OUT = 'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_INT8}).Format({ge::FORMAT_ND, ge::FORMAT_ND});'


@rule("O005", "opdef-dtype-not-in-msopgen", severity=Severity.INFO, scope="opdef",
    example=opdef_example('this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_INT4}).Format({ge::FORMAT_ND, ge::FORMAT_ND});', _OUT),
    fixed=opdef_example('this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_INT8}).Format({ge::FORMAT_ND, ge::FORMAT_ND});', _OUT),
)
def dtype_not_in_msopgen(file: OpDefFile) -> Iterator[Violation]:
    """The OpDef names a ``ge::DataType`` or ``ge::Format`` of CANN's ``graph/types.h`` that msOpGen 26.0.0 cannot write.

    CANN's headers define more dtypes (``DT_INT4``, ``DT_HIFLOAT8``, ``DT_FLOAT8_E4M3FN``, ...) and formats
    (``FORMAT_NCL``, ...) than msOpGen's table (its ``config/transform.json``) has names for. The OpDef is
    right as it is and builds; only a project regenerated with msOpGen (``opkit new --from``) cannot
    declare those columns, so they are kept by hand. A note, never a failure.
    """
    for op in file.ops:
        for config_name, tensors in (("", (*op.inputs, *op.outputs)), *((c.name, (*c.inputs, *c.outputs)) for c in op.soc_configs)):
            where = f" (OpAICoreConfig {config_name})" if config_name else ""
            for t in tensors:
                dtypes = sorted({d for d in t.dtypes if d and d not in msopgen.DTYPES})
                formats = sorted({f for f in t.formats if f not in msopgen.FORMATS})
                if dtypes or formats:
                    names = [f"ge::DT_{d.upper()}" for d in dtypes] + [f"ge::FORMAT_{f}" for f in formats]
                    yield Violation(f"{op.op_type}: '{t.name}'{where} uses {', '.join(names)}, which msOpGen 26.0.0 cannot write", line=t.line, op=op.op_type)
