"""A schema string and where it sits: the record every reader gives the schema rules."""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field

from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema


@dataclass(frozen=True)
class SchemaSite:
    """One schema string and where it sits: the subject of ``schema`` rules."""

    text: str
    path: str
    line: int
    column: int  # column of the schema's first character in the file
    dialect: Dialect
    section: str | None = None  # op_plugin_functions.yaml section; None for a standalone schema
    tags: tuple[str, ...] = ()
    op_hint: str | None = None  # name to report when the schema does not parse
    # op_plugin_functions.yaml: the torch versions whose codegen builds the entry; None where unknown
    versions: frozenset[str] | None = None
    # the namespace the source gives a schema without ``ns::`` (a C++ TORCH_LIBRARY block's); "" if none
    namespace: str = ""
    # a schema spread over the file (adjacent C++ literals, a raw or triple-quoted string): where each run
    # of its characters starts, (index in text, line, column); empty for a schema on one line
    runs: tuple[tuple[int, int, int], ...] = field(default=(), compare=False, repr=False)
    # inferred from a Python function's annotations (custom_op, a registration helper): the argument
    # order is the function's own, and no op-plugin/aclnn codegen reads the schema
    inferred: bool = False
    # why the op never reaches automatic functionalization (a Functionalize kernel op-plugin's codegen
    # generates or a file registers, a Tag.inplace/out tag); "" when nothing says so (opkit.lint.op_context)
    functionalized: str = ""
    # who already defines the op when this site re-declares it (a test stand-in of torch_npu's ops): "torch_npu"
    defined_by: str = ""

    def place(self, column: int) -> tuple[int, int]:
        """The file (line, column) of the schema's 1-based ``column``."""
        if not self.runs:
            return self.line, self.column + column - 1
        return position_in(self.runs, column - 1)

    @property
    def is_custom(self) -> bool:
        """A new op being onboarded (custom: section, --schema, a custom_op): the graph-entry rules apply.
        Not an op torch_npu already defines that a file re-declares."""
        return self.section in (None, "custom") and not self.defined_by

    @functools.cached_property
    def parsed(self) -> OpSignature | SchemaError:
        try:
            return parse_schema(self.text, self.dialect)
        except SchemaError as exc:
            return exc.with_traceback(None)  # kept by the site: its frames would hold the project in a cycle

    @property
    def signature(self) -> OpSignature | None:
        p = self.parsed
        return p if isinstance(p, OpSignature) else None


def position_in(runs: tuple[tuple[int, int, int], ...], index: int) -> tuple[int, int]:
    """The file (line, column) of character ``index`` of a string whose ``runs`` are given: (index in the
    string, line, column) wherever a run of consecutive source columns starts."""
    starts = [r[0] for r in runs]
    k = max(bisect.bisect_right(starts, index) - 1, 0)
    start, line, column = runs[k]
    return line, column + (index - start)
