"""K207 void-op-without-effect."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import has_side_effect, impls, kernel_name, my_ops_example, promises, returns_place

_CHECK = 'TORCH_CHECK(x.dim() == 2, "x must be 2-D");'


@rule(
    "K207", "void-op-without-effect", severity=Severity.ERROR, scope="project",
    example=my_ops_example(
        f"void my_op(const at::Tensor &x)\n{{\n    {_CHECK}\n}}", "void my_op_meta(const at::Tensor &x) {}",
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x) -> ()"); }', *impls("my_op_meta"),
    ),
    fixed=my_ops_example(
        f"void my_op(const at::Tensor &x)\n{{\n    {_CHECK}\n    x.zero_();\n}}", "void my_op_meta(const at::Tensor &x) {}",
        'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor(a!) x) -> ()"); }', *impls("my_op_meta"),
    ),
)  # fmt: skip
def void_op_without_effect(project: LintProject) -> Iterator[Violation]:
    """An op ``-> ()`` whose kernel writes none of its arguments, and which is not declared a side effect.

    Nothing in the graph uses the result of such a call and its schema has no mutable argument, so
    ``torch._library.utils.is_impure`` calls it pure and torch.compile's dead-code elimination removes it:
    whatever it does (print, communicate, write memory opkit cannot see) never happens in a compiled model.
    Reported only where the whole kernel was read. Declare it, in the module that registers the op:
    ``torch.fx.node.has_side_effect(torch.ops.NS.NAME.default)``; or give it the tensor it writes, ``Tensor(a!)``.
    """
    for promise in promises(project):
        sig, effects = promise.sig, promise.effects
        if sig.returns or any(a.is_mutated for a in sig.arguments) or not effects.complete or effects.written or effects.side_effects:
            continue
        if has_side_effect(project, promise.op):
            continue
        namespace, _, name = promise.op.partition("::")
        line, column = returns_place(promise)
        yield Violation(
            f"op `-> ()` whose kernel {kernel_name(effects)} writes none of its arguments: torch.compile removes the call (is_impure sees no mutable argument and no has_side_effect)",
            line=line, column=column, path=promise.site.path, op=promise.op,
            hint=f"declare it: `torch.fx.node.has_side_effect(torch.ops.{namespace}.{name.split('.')[0]}.{name.split('.')[1] if '.' in name else 'default'})`, or annotate the tensor it writes `Tensor(a!)`",
        )  # fmt: skip
