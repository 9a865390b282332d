"""M013 fake-annotation-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.python_registrations import RegistrationFile


@rule(
    "M013", "fake-annotation-mismatch", severity=Severity.WARNING, scope="python",
    example=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor, n: int) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor, n: float) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor, n: int) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor, n: int) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def fake_annotation_mismatch(file: RegistrationFile) -> Iterator[Violation]:
    """A fake function's annotations disagree with its custom_op's.

    The fake receives exactly the custom_op's arguments and must return what it returns; a
    different annotation is a stale copy that misleads type checkers and readers.
    """
    for reg in file.registrations:
        op = reg.custom_op
        if op is None:
            continue
        for name, fake_type in reg.function.annotated_types.items():
            op_type = op.function.annotated_types.get(name)
            if fake_type and op_type and fake_type != op_type:
                yield Violation(f"fake parameter '{name}' is annotated {fake_type}, custom_op {op.function.name} says {op_type}", line=reg.line, column=reg.column, op=reg.op)
        fake_ret, op_ret = reg.function.annotated_return, op.function.annotated_return
        if fake_ret and op_ret and fake_ret != op_ret:
            yield Violation(f"fake returns {fake_ret}, custom_op {op.function.name} returns {op_ret}", line=reg.line, column=reg.column, op=reg.op)
