"""O001 opdef-call-skipped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import opdef_example

if TYPE_CHECKING:  # the C++ reader is imported when a C++ file is read, not for a yaml-only lint
    from opkit.formats.opdef_cpp import OpDefFile

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND})'


@rule("O001", "opdef-call-skipped", severity=Severity.INFO, scope="opdef",
    example=opdef_example(_X + ".Frobnicate(2);"),
    fixed=opdef_example(_X + ";"),
)
def call_skipped(file: OpDefFile) -> Iterator[Violation]:
    """A call or statement of the OpDef that opkit's reader does not know, so it was read past.

    opkit reads the fluent declarations (Input/Output/Attr chains, ParamType, DataType(List),
    Format(List), UnknownShapeFormat, ValueDepend, Scalar, Follow, AttrType, AICore().AddConfig and
    OpAICoreConfig blocks) and the calls that carry nothing a PyTorch schema needs (tiling, infer
    functions, kernel flags). Anything else is listed here, never skipped silently: check that it does
    not change the op's inputs, outputs or attrs, since `opkit new --from` and the O1xx rules ignore it.
    A note, not a warning: the code is valid CANN (a helper, a computed list, a loop); only opkit's
    reading of it is partial.
    """
    for op in file.ops:
        for skipped in op.skipped:
            yield Violation(f"{op.op_type}: {skipped.what}", line=skipped.line, op=op.op_type)
