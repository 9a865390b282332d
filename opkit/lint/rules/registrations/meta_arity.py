"""M002 meta-arity."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound
from opkit.lint.project import LintProject


@rule(
    "M002", "meta-arity", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x, Tensor y, *, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x):\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        '# schema: my_op(Tensor x, Tensor y, *, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x, y, *, k=1):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def meta_arity(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function cannot accept the call PyTorch makes for the schema.

    Positional schema arguments arrive positionally: a function with fewer positional parameters
    (and no ``*args``) raises TypeError whenever the trailing arguments are not at their defaults.
    Keyword-only schema arguments arrive by name when not at their default: a function without a
    parameter of that name (and no ``**kwargs``) raises "unexpected keyword argument". A parameter
    without a default that the schema never supplies makes every call fail.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if not fn.var_positional and len(fn.positional) < len(sig.positional_arguments):
            missing = ", ".join(a.name for a in sig.positional_arguments[len(fn.positional) :])
            yield b.violation(f"{fn.name} takes {len(fn.positional)} positional parameters but the schema passes {len(sig.positional_arguments)} ({missing} not accepted)")
        for a in sig.kwarg_only_arguments:
            p = fn.parameter(a.name)
            if not fn.var_keyword and (p is None or p.kind == "positional_only"):
                when = f" whenever it is not {a.default}" if a.default is not None else ""
                yield b.violation(f"keyword-only argument '{a.name}' is passed by name{when}, but {fn.name} has no parameter '{a.name}'")
        supplied = {a.name for a in sig.kwarg_only_arguments}
        for index, p in enumerate(fn.parameters):
            never_passed = (p.kind == "keyword_only" or index >= len(sig.positional_arguments)) and p.name not in supplied
            if p.kind in ("positional", "positional_only", "keyword_only") and not p.has_default and never_passed:
                yield b.violation(f"parameter '{p.name}' of {fn.name} has no default and the schema never passes it: every call fails")
