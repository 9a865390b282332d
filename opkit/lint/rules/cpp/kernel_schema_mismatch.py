"""C001 cpp-kernel-schema-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.cpp.common import kernel_problems, kernels_of, resolve
from opkit.lint.project import LintProject


@rule(
    "C001", "cpp-kernel-schema-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# file: my_ops.cpp\n'
        'at::Tensor my_op(const at::Tensor &x, int64_t k);\n'
        'at::Tensor my_op_meta(const at::Tensor &x) { return at::empty_like(x); }\n'
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, int k) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }'
    ),
    fixed=(
        '# file: my_ops.cpp\n'
        'at::Tensor my_op(const at::Tensor &x, int64_t k);\n'
        'at::Tensor my_op_meta(const at::Tensor &x, int64_t k) { return at::empty_like(x); }\n'
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, int k) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }\n'
        'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }'
    ),
)  # fmt: skip
def cpp_kernel_schema_mismatch(project: LintProject) -> Iterator[Violation]:
    """A C++ kernel's parameters or return type do not match its op's schema.

    torch infers a schema from the kernel's C++ type when ``m.impl`` registers it and refuses the
    registration when it differs from the def in the number or types of arguments or returns ("Inferred
    operator schema for a C++ kernel function doesn't match the expected function schema"): loading the
    library fails, for every op in it. ``const at::Tensor &`` is ``Tensor``, ``c10::optional<at::Tensor>``
    is ``Tensor?``, ``int64_t`` and ``c10::SymInt`` are ``int``, ``double`` is ``float``, ``void`` is
    ``()``. Checked for Meta kernels and device kernels alike, wherever the function named is defined or
    declared in the linted C++ files (a lambda or a ``static_cast`` gives its own type).
    """
    for path, kernel, key, d, line, column in kernels_of(project):
        fn = resolve(project, kernel)
        if fn is None:
            continue
        problems = kernel_problems(fn, d.sig)
        if problems:
            name = kernel.name or "the lambda"
            where = "" if fn.name in ("<lambda>", "<cast>") else f" (line {fn.line})" if fn.path == path else f" ({fn.path}:{fn.line})"
            yield Violation(
                f"{key or 'catch-all'} kernel {name}{where} does not match '{d.sig.full_name}': " + "; ".join(problems),
                line=line, column=column, path=path, op=d.sig.full_name,
                hint=f"torch refuses the registration when the library loads; make the C++ signature match {d.definition.schema.split('(', 1)[0].strip()}'s schema",
            )  # fmt: skip
