"""M012 custom-op-rejected."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.python_registrations import RegistrationFile
from opkit.signature import Dialect, parse_schema, SchemaError


@rule(
    "M012", "custom-op-rejected", severity=Severity.ERROR, scope="python",
    example=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor, shape: list[int]) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor, shape: list[int]) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def custom_op_rejected(file: RegistrationFile) -> Iterator[Violation]:
    """torch.library would raise when the module is imported: the custom_op's schema cannot be inferred.

    Annotations must be what ``infer_schema`` supports (Tensor, int, float, bool, str, Optional and
    list forms, no tuples), every parameter annotated, defaults None/bool/int/float/str,
    ``mutates_args`` naming tensor parameters; with ``schema=``, its ``Tensor(a!)`` arguments must be
    exactly ``mutates_args``.
    """
    for op in file.custom_ops:
        problem = op.schema_problem
        if problem is None and op.explicit_schema is not None and isinstance(op.mutates_args, tuple):
            try:
                written = {a.name for a in parse_schema(op.schema, Dialect.TORCH_LIBRARY).mutated_arguments}  # type: ignore[arg-type]  # schema= is set
            except SchemaError:
                written = None  # S001 reports the schema itself
            if written is not None and written != set(op.mutates_args):
                problem = f"schema= marks {sorted(written)} as Tensor(a!) but mutates_args is {list(op.mutates_args)}"
        if problem:
            yield Violation(f"{op.kind} {op.qualname}: {problem}", line=op.line, column=op.column, op=op.name)
