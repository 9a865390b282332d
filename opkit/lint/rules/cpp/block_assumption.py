"""C005 cpp-block-assumption."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.project import LintProject


@rule(
    "C005", "cpp-block-assumption", severity=Severity.INFO, scope="cpp",
    example=(
        'at::Tensor my_op(const at::Tensor &x);\n'
        'TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), m) { m.def("my_op(Tensor x) -> Tensor", TORCH_FN(my_op)); }'
    ),
    fixed=(
        '#define _CONCAT(A, B) A##B\n'
        '#define CONCAT(A, B) _CONCAT(A, B)\n'
        '#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)\n'
        'at::Tensor my_op(const at::Tensor &x);\n'
        'TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), m) { m.def("my_op(Tensor x) -> Tensor", TORCH_FN(my_op)); }'
    ),
)  # fmt: skip
def cpp_block_assumption(source) -> Iterator[Violation]:
    """A registration block was read on an assumption: its macro or its namespace's macro is not defined in the files given.

    ``TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), m)``: without the header that defines the wrapper and
    ``CONCAT``, opkit reads the block by its name and takes the namespace as written, so a Python Meta
    registered for ``_C_ext`` is not paired with its def. Lint the header too (``opkit lint csrc/``).
    """
    for block in source.blocks:
        if block.namespace_note:
            yield Violation(f"{block.written_as}: {block.namespace_note}", line=block.line, column=block.column, hint="lint the header that defines the macros along with this file")
