"""O003 opdef-type-format-length."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example

if TYPE_CHECKING:  # the C++ reader is imported when a C++ file is read, not for a yaml-only lint
    from opkit.formats.opdef_cpp import OpDefFile



@rule("O003", "opdef-type-format-length", severity=Severity.ERROR, scope="opdef",
    example=opdef_example(
        'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});',
        'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND});',
    ),
    fixed=opdef_example(
        'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});',
        'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND});',
    ),
)
def type_format_length(file: OpDefFile) -> Iterator[Violation]:
    """A descriptor's DataType and Format (or UnknownShapeFormat) lists have different lengths (and neither has one item).

    Each position pairs one dtype with one format; a list of one is broadcast to the other's length,
    other mismatches leave columns without a dtype or a format (J009's rule for a prototype JSON).
    ``UnknownShapeFormat`` gives the formats of the same columns for dynamic shapes: CANN checks its
    length against the dtypes when it loads the op, so a mismatch fails at op init, not at build time.
    """
    for op in file.ops:
        for t in (*op.inputs, *op.outputs):
            types, formats = t.declared
            if types and formats and types != formats and 1 not in (types, formats):
                yield Violation(f"{op.op_type}: '{t.name}' lists {types} DataType but {formats} Format entries", line=t.line, op=op.op_type)
            unknown = t.unknown_shape_formats
            if types and unknown and types != unknown and 1 not in (types, unknown):
                yield Violation(f"{op.op_type}: '{t.name}' lists {types} DataType but {unknown} UnknownShapeFormat entries: CANN rejects the op when it loads it", line=t.line, op=op.op_type)
