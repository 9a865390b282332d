"""K202 annotation-never-written."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.effects.model import Knowledge
from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import impls, kernel_name, my_ops_example, promises

_META = "void my_op_meta(const at::Tensor &x, const at::Tensor &cache) {}"


def _kernel(statement: str) -> str:
    return f"void my_op(const at::Tensor &x, at::Tensor &cache)\n{{\n    {statement}\n}}"


_DEF = 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor(a!) cache) -> ()"); }'


@rule(
    "K202", "annotation-never-written", severity=Severity.WARNING, scope="project",
    example=my_ops_example(_kernel("TORCH_CHECK(cache.sizes() == x.sizes(), \"cache and x differ in shape\");"), _META, _DEF, *impls("my_op_meta")),
    fixed=my_ops_example(_kernel("cache.copy_(x);"), _META, _DEF, *impls("my_op_meta")),
)  # fmt: skip
def annotation_never_written(project: LintProject) -> Iterator[Violation]:
    """The schema annotates a tensor ``(a!)`` that the op's kernel never writes.

    Auto-functionalization clones every ``(a!)`` argument the re-inplacing pass cannot prove dead, and the
    op is ordered as if it wrote the tensor: each annotation on a read-only tensor costs a copy and false
    ordering. Reported only where the whole kernel was read and nothing in it writes the tensor (a non-const
    ``at::Tensor &`` parameter is no write). Drop the annotation; where it is deliberate (to keep an op
    ordered after another, as TorchAir's ``record_tagged_stream_`` does), say so in a comment and add
    ``// noqa: K202`` on the schema's line.
    """
    for promise in promises(project):
        for arg in promise.sig.arguments:
            effect = promise.effects.argument(arg.name)
            if not arg.is_mutated or effect is None or effect.written is not Knowledge.NO:
                continue
            line, column = promise.place(arg.name)
            yield Violation(
                f"the schema marks '{arg.name}' written (`{arg}`), "
                f"but kernel {kernel_name(promise.effects)} never writes it: each call clones it and is ordered as a write",
                line=line, column=column, path=promise.site.path, op=promise.op,
                hint=f"drop the annotation (`Tensor {arg.name}`), or keep it for ordering with a comment and `// noqa: K202`",
            )  # fmt: skip
