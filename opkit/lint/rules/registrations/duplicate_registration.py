"""M014 duplicate-registration."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.python_registrations import exclusive, Registration, RegistrationFile


@rule(
    "M014", "duplicate-registration", severity=Severity.ERROR, scope="python",
    example=(
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def a(x):\n'
        '    return torch.empty_like(x)\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def b(x):\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def a(x):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def duplicate_registration(file: RegistrationFile) -> Iterator[Violation]:
    """The same op overload gets two Meta (or two fake) registrations in one file.

    torch raises at import ("already a kernel registered from python" / "already has a fake impl"),
    and a reader cannot tell which function was meant. Registrations in different arms of one
    ``if``/``else`` (a version switch), ``try``/``except`` or ``match`` never both run and are fine.
    """
    earlier: dict[tuple[str, str, str], list[Registration]] = {}
    for reg in sorted(file.registrations, key=lambda r: (r.line, r.column)):
        key = (reg.namespace, reg.op, reg.style)
        clash = next((r for r in earlier.get(key, ()) if not exclusive(r.branches, reg.branches)), None)
        if clash is not None:
            yield Violation(f"'{reg.qualname}' already has a {reg.style} registration at line {clash.line}", line=reg.line, column=reg.column, op=reg.op)
        earlier.setdefault(key, []).append(reg)
