"""M003 meta-parameter-order."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound, schema_name
from opkit.lint.project import LintProject


@rule(
    "M003", "meta-parameter-order", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x, Tensor y) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(y, x):\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        '# schema: my_op(Tensor x, Tensor y) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x, y):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def meta_parameter_order(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function names the schema's positional arguments in another order.

    Arguments arrive positionally, so each lands in the parameter at its position, not the one of its
    name: the function silently computes with swapped inputs and returns wrong shapes or dtypes.
    Reported only for a real slot mismatch: two schema arguments whose parameters come in the other
    order (``(y, x)`` for ``(x, y)``). A parameter merely renamed, even to another argument's name
    shifted by one (``(x1, x2)`` for ``(self, x1)``), is M004's concern.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        names = [schema_name(p.name) for p in fn.positional]
        schema_names = [a.name for a in sig.positional_arguments]
        shared = [n for n in schema_names if n in names]
        in_function_order = sorted(shared, key=names.index)
        misplaced = [n for n, m in zip(shared, in_function_order) if n != m]
        if misplaced:
            yield b.violation(f"parameters ({', '.join(names)}) receive the schema's positional arguments ({', '.join(schema_names)}): {', '.join(misplaced)} land in the wrong parameter")
