"""M010 unlisted-mutation."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import written_parameters
from opkit.formats.python_registrations import RegistrationFile


@rule(
    "M010", "unlisted-mutation", severity=Severity.ERROR, scope="python",
    example=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=())\n'
        'def f(x: torch.Tensor) -> None:\n'
        '    x.add_(1)\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor) -> None:\n'
        '    return None'
    ),
    fixed=(
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::f", mutates_args=("x",))\n'
        'def f(x: torch.Tensor) -> None:\n'
        '    x.add_(1)\n'
        '\n'
        '@f.register_fake\n'
        'def _(x: torch.Tensor) -> None:\n'
        '    return None'
    ),
)  # fmt: skip
def unlisted_mutation(file: RegistrationFile) -> Iterator[Violation]:
    """A custom_op's body writes a tensor argument that ``mutates_args`` does not list.

    The schema then says the argument is read-only; functionalization drops the write, so compiled
    graphs compute with stale data while eager mode works. List the argument in ``mutates_args``.
    """
    for op in file.custom_ops:
        if not isinstance(op.mutates_args, tuple):
            continue
        tensors = {name for name, t in op.function.annotated_types.items() if t and t.startswith("Tensor")}
        for name, line in sorted(written_parameters(op.function.node).items()):
            if name in tensors and name not in op.mutates_args:
                yield Violation(f"{op.function.name} writes '{name}' in place (line {line}) but mutates_args does not list it", line=op.line, column=op.column, op=op.name)
