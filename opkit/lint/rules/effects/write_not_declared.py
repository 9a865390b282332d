"""K201 write-not-declared."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.effects.model import Knowledge
from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import evidence_text, has_side_effect, kernel_name, my_ops_example, promises

_KERNEL = (
    "void my_op(const at::Tensor &x, const at::Tensor &cache)\n"
    "{\n"
    "    cache.copy_(x);\n"
    "}"
)
_META = "void my_op_meta(const at::Tensor &x, const at::Tensor &cache) {}"
_IMPLS = (
    'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }',
    'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }',
)


@rule(
    "K201", "write-not-declared", severity=Severity.ERROR, scope="project",
    example=my_ops_example(_KERNEL, _META, 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor cache) -> ()"); }', *_IMPLS),
    fixed=my_ops_example(_KERNEL, _META, 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor(a!) cache) -> ()"); }', *_IMPLS),
)  # fmt: skip
def write_not_declared(project: LintProject) -> Iterator[Violation]:
    """The op's kernel writes a tensor argument that the schema does not annotate ``(a!)``.

    torch.compile and npugraph_ex trust the schema and never look at the kernel. For an op ``-> ()`` with no
    mutable argument this is fatal: ``torch._library.utils.is_impure`` keeps a node only for a mutable schema,
    a ``has_side_effect`` declaration or an effectful registration, so dead-code elimination removes the
    call and the write never happens (measured with ``aot_eager``, ``fullgraph=True``). Where the call
    survives, functionalization assumes the argument unchanged: reads of it may be moved before the write
    and graph replays keep stale copies. The evidence is the kernel's write (an aclnn output, ``.copy_``,
    ``OpCommand .Output``, ...); annotate the argument ``Tensor(a!)`` (``Tensor!`` in torch.library's
    shorthand), with a new alias letter for each written argument.
    """
    for promise in promises(project):
        sig = promise.sig
        removed = not sig.returns and not any(a.is_mutated for a in sig.arguments) and not has_side_effect(project, promise.op)
        for effect in promise.effects.arguments:
            if effect.written is not Knowledge.YES:
                continue
            arg = next((a for a in sig.arguments if a.name == effect.name), None)
            if arg is None or arg.is_mutated:
                continue
            line, column = promise.place(arg.name)
            consequence = (
                f"an op `-> ()` with no mutable argument: torch.compile removes the call (is_impure sees no mutable argument and no has_side_effect), so the write to '{arg.name}' never happens"
                if removed else
                f"torch.compile assumes '{arg.name}' unchanged: reads of it may move before the write and graph replays keep stale copies"
            )  # fmt: skip
            yield Violation(
                f"kernel {kernel_name(promise.effects)} writes '{arg.name}' ({evidence_text(effect.evidence, beside=promise.site.path)}), but the schema does not annotate it: {consequence}",
                line=line, column=column, path=promise.site.path, op=promise.op,
                hint=f"annotate it: `{_annotated(arg, sig)}` in the schema of {sig.name}",
            )  # fmt: skip


def _annotated(arg, sig) -> str:
    """The argument as it should read: ``Tensor(b!) cache`` with an alias letter the schema does not use."""
    used = {s for a in sig.arguments if a.alias is not None for s in a.alias.sets} | {s for r in sig.returns if r.alias is not None for s in r.alias.sets}
    letter = next(c for c in "abcdefghijklmnopqrstuvwxyz" if c not in used)
    text = str(arg.type)
    return f"Tensor({letter}!){text[len('Tensor'):]} {arg.name}"
