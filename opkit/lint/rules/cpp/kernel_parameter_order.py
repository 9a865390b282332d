"""C002 cpp-kernel-parameter-order."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.cpp.common import kernels_of, resolve
from opkit.lint.project import LintProject


@rule(
    "C002", "cpp-kernel-parameter-order", severity=Severity.WARNING, scope="project",
    example=(
        '# file: my_ops.cpp\n'
        'at::Tensor my_op(const at::Tensor &y, const at::Tensor &x);\n'
        'at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &y) { return at::empty_like(x); }\n'
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor y) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }'
    ),
    fixed=(
        '# file: my_ops.cpp\n'
        'at::Tensor my_op(const at::Tensor &x, const at::Tensor &y);\n'
        'at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &y) { return at::empty_like(x); }\n'
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor y) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }'
    ),
)  # fmt: skip
def cpp_kernel_parameter_order(project: LintProject) -> Iterator[Violation]:
    """A C++ kernel names its parameters like the schema's arguments, in another order.

    Arguments reach a C++ kernel by position: torch compares types, never names, so two tensors
    swapped register without complaint and the kernel reads ``y`` as ``x``. Reported where a parameter
    carries the name of a *different* schema argument; other names (``hiddenState`` for
    ``hidden_state``) are a matter of style and not reported.
    """
    for path, kernel, _, d, line, column in kernels_of(project):
        fn = resolve(project, kernel)
        if fn is None or len(fn.parameters) != len(d.sig.arguments):
            continue
        names = [a.name for a in d.sig.arguments]
        for index, p in enumerate(fn.parameters):
            if p.name and p.name != names[index] and p.name in names:
                yield Violation(
                    f"parameter {index + 1} of {kernel.name or 'the lambda'} is named '{p.name}', but the schema's '{p.name}' is argument {names.index(p.name) + 1} (arguments arrive by position; position {index + 1} is '{names[index]}')",
                    line=line, column=column, path=path, op=d.sig.full_name,
                )  # fmt: skip
                break
