"""C003 op-without-device-kernel."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.cpp.common import COMPLETE_MY_OPS, DEF, META_IMPL, META_KERNEL, compiled_together, defined, my_ops_example, registered
from opkit.lint.project import LintProject


@rule(
    "C003", "op-without-device-kernel", severity=Severity.WARNING, scope="project",
    example=my_ops_example(META_KERNEL, DEF, META_IMPL),
    fixed=COMPLETE_MY_OPS,
)  # fmt: skip
def op_without_device_kernel(project: LintProject) -> Iterator[Violation]:
    """An op defined in C++ has no kernel for a device in the linted files.

    Only a Meta kernel (or none at all): the op traces, but calling it on a real tensor raises "Could
    not run 'ns::op' with arguments from the 'PrivateUse1' backend". A kernel on any key other than Meta
    counts (PrivateUse1, CPU, a composite key, or the def's own catch-all), in any linted C++ file.
    A warning: the kernel may be registered by a file that was not linted.
    """
    kernels: dict[tuple[str, str, str], list] = {}
    for r in registered(project):
        if r.impl.dispatch_key != "Meta":
            kernels.setdefault(r.key, []).append(r)
    for d in defined(project):
        if d.definition.kernel is None and not any(compiled_together(d, r.path, r.impl.conditions) for r in kernels.get(d.key, ())):
            yield Violation(
                f"op '{d.namespace}::{d.sig.full_name}' is defined but no linted C++ file registers a device kernel for it",
                line=d.definition.line, column=d.definition.column, path=d.path, op=d.sig.full_name,
                hint=f'add m.impl("{d.sig.full_name}", TORCH_FN(...)) in TORCH_LIBRARY_IMPL({d.namespace}, PrivateUse1, m)',
            )  # fmt: skip
