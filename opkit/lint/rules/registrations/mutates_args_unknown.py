"""M009 mutates-args-unknown."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.python_registrations import MUTATES_UNKNOWN, RegistrationFile


@rule(
    "M009", "mutates-args-unknown", severity=Severity.WARNING, scope="python",
    example=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args="unknown")\n'
        'def f(x: torch.Tensor) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor) -> torch.Tensor:\n'
        '    ...\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor) -> torch.Tensor:\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def mutates_args_unknown(file: RegistrationFile) -> Iterator[Violation]:
    """``mutates_args="unknown"`` declares every tensor argument written.

    Functionalization then copies back every input after each call and no input can be reused
    without a clone: slow and rarely true. Name the arguments the kernel writes, or ``()``.
    """
    for op in file.custom_ops:
        if op.mutates_args == MUTATES_UNKNOWN:
            yield Violation(f"{op.kind} {op.qualname} declares mutates_args=\"unknown\": every tensor argument counts as written", line=op.line, column=op.column, op=op.name)
