"""M015 fake-returns-input."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound
from opkit.lint.project import LintProject


@rule(
    "M015", "fake-returns-input", severity=Severity.WARNING, scope="project",
    example=(
        '# schema: my_rope(Tensor q, Tensor k) -> (Tensor, Tensor)\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_rope")\n'
        'def my_rope_meta(q, k):\n'
        '    return q, k'
    ),
    fixed=(
        '# schema: my_rope(Tensor q, Tensor k) -> (Tensor, Tensor)\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_rope")\n'
        'def my_rope_meta(q, k):\n'
        '    return torch.empty_like(q), torch.empty_like(k)'
    ),
)  # fmt: skip
def fake_returns_input(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function returns one of its tensor arguments where the schema returns a new tensor.

    The schema promises a fresh output (no alias annotation), the fake says the output *is* the input:
    tracing then records an alias the real kernel never makes. ``torch.library.opcheck`` fails it
    ("mismatch in outputs_alias_inputs"), and a graph that writes the input after the call fails to
    compile, while a graph that leaves the input alone compiles and computes right (both measured with
    torch 2.13, aot_eager): a warning, not an error. Return ``torch.empty_like(x)`` (or the right
    shape); an op that really returns its written input declares ``Tensor(a!)`` on both.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        # the argument each parameter receives: positional ones by position (names may differ: M004)
        receives = {p.name: a for p, a in zip(fn.positional, sig.positional_arguments)}
        receives.update((a.name, a) for a in sig.kwarg_only_arguments if fn.parameter(a.name) is not None)
        for ret in fn.returns:
            returned = [(0, ret.param)] if ret.shape == "param" and len(sig.returns) == 1 else list(enumerate(ret.items)) if ret.arity == len(sig.returns) else []
            aliased = []
            for index, name in returned:
                argument = receives.get(name) if name is not None else None
                if argument is None or not argument.is_tensor or argument.type.is_list or index >= len(sig.returns):
                    continue
                out = sig.returns[index]
                if not out.type.is_tensor or out.type.is_list or (out.alias is not None and argument.alias is not None and set(out.alias.sets) & set(argument.alias.sets)):
                    continue
                aliased.append(f"'{name}'" + ("" if len(sig.returns) == 1 else f" as output {index}"))
            if aliased:
                yield b.violation(
                    f"{fn.name} returns its argument{'s' if len(aliased) > 1 else ''} {', '.join(aliased)} (line {ret.line}), but the schema returns new tensors",
                    hint="return new tensors (torch.empty_like(x)), or declare the alias in the schema if the kernel really returns its input",
                )  # fmt: skip
