"""M004 meta-parameter-names."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound, schema_name
from opkit.lint.project import LintProject


@rule(
    "M004", "meta-parameter-names", severity=Severity.WARNING, scope="project",
    example=(
        '# schema: my_op(Tensor x, *, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(inp, *, k=1):\n'
        '    return torch.empty_like(inp)'
    ),
    fixed=(
        '# schema: my_op(Tensor x, *, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x, *, k=1):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def meta_parameter_names(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake parameter is named differently from its schema argument, or is not keyword-only.

    A renamed positional parameter still receives its value (arguments arrive positionally) but hides
    the mapping from readers and breaks calling the function by keyword. A keyword-only schema
    argument taken as a positional parameter works by name, yet lets a stray positional call fill it.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        names = {schema_name(p.name) for p in fn.parameters}
        for a, p in zip(sig.positional_arguments, fn.positional):
            if schema_name(p.name) != a.name and a.name not in names:
                yield b.violation(f"parameter '{p.name}' receives schema argument '{a.name}': name it '{a.name}'")
        for a in sig.kwarg_only_arguments:
            p = fn.parameter(a.name)
            if p is not None and p.kind == "positional":
                yield b.violation(f"schema argument '{a.name}' is keyword-only but {fn.name} takes it positionally", hint=f"put '{a.name}' after '*'")
