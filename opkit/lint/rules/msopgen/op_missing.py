"""J001 op-missing."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.msopgen_json import MsOpGenFile


@rule("J001", "op-missing", severity=Severity.ERROR, scope="msopgen",
    example='[{"input_desc": [], "output_desc": []}]',
    fixed='[{"op": "MyOp", "input_desc": [], "output_desc": []}]',
)
def op_missing(file: MsOpGenFile) -> Iterator[Violation]:
    """An op object has no ``op`` name (or it is not a non-empty string).

    msOpGen names the OpDef class, the files and the kernel after ``op``; without it nothing is generated.
    """
    for op in file.ops:
        if not op.op:
            yield Violation(f"op {op.index} has no 'op' name", line=op.line_of("op"))
