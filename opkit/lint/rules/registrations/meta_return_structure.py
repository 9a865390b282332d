"""M006 meta-return-structure."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound, return_problem
from opkit.lint.project import LintProject


@rule(
    "M006", "meta-return-structure", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x) -> (Tensor, Tensor)\n'
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
        '# schema: my_op(Tensor x) -> (Tensor, Tensor)\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x):\n'
        '    return torch.empty_like(x), torch.empty_like(x)'
    ),
)  # fmt: skip
def meta_return_structure(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function returns another structure than the schema's returns.

    One tensor for ``-> Tensor``, a tuple of N for N returns: PyTorch unpacks the result by the
    schema and fails the trace otherwise (or, for a function that can end without ``return``, gets
    None). Only returns whose structure the source shows are checked (tuples, None, known factories
    such as ``torch.empty_like``, parameters).
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if not sig.returns:
            continue  # M007
        expected = "one value" if len(sig.returns) == 1 else f"a tuple of {len(sig.returns)}"
        for ret in fn.returns:
            problem = return_problem(ret, sig)
            if problem:
                yield b.violation(f"{fn.name} {problem} (line {ret.line}) but the schema returns {expected}")
        if fn.falls_off:
            yield b.violation(f"{fn.name} can end without a return statement (returning None) but the schema returns {expected}")
