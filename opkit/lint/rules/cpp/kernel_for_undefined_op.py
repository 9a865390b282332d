"""C004 kernel-for-undefined-op."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.cpp.common import COMPLETE_MY_OPS, DEF, DEVICE_KERNEL_DECLARATION, META_IMPL, META_KERNEL, defined, my_ops_example, registered
from opkit.lint.rules.registrations.common import project_index
from opkit.lint.project import LintProject


@rule(
    "C004", "kernel-for-undefined-op", severity=Severity.WARNING, scope="project",
    example=my_ops_example(
        DEVICE_KERNEL_DECLARATION, META_KERNEL, DEF,
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); m.impl("my_opp", TORCH_FN(my_op)); }',
        META_IMPL,
    ),
    fixed=COMPLETE_MY_OPS,
)  # fmt: skip
def kernel_for_undefined_op(project: LintProject) -> Iterator[Violation]:
    """A C++ kernel is registered for an op no linted schema defines, in a namespace the linted files define.

    Usually a typo or a renamed op: torch keeps the kernel as a dangling impl and the op itself stays
    undefined ("No such operator"). Checked only in namespaces where some linted C++ def lives, so
    kernels for ATen ops or another library's ops are never reported.
    """
    namespaces = {d.namespace for d in defined(project)}
    if not namespaces:
        return
    index = project_index(project)
    for r in registered(project):
        namespace, name, overload = r.key
        if namespace not in namespaces:
            continue
        if any(s.covers(namespace) for s in index.by_op.get((name, overload), ())):
            continue
        yield Violation(
            f"{r.impl.dispatch_key or 'catch-all'} kernel for '{namespace}::{r.impl.op}', which no linted schema defines",
            line=r.impl.line, column=r.impl.column, path=r.path, op=r.impl.op,
        )
