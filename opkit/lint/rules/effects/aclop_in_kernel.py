"""K208 aclop-in-kernel."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import evidence_text, impls, kernel_name, my_ops_example, promises

_META = "at::Tensor my_op_meta(const at::Tensor &x) { return at::empty_like(x); }"
_DEF = 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x) -> Tensor"); }'


def _kernel(*statements: str) -> str:
    body = "\n".join(f"    {s}" for s in ("at::Tensor out = at::empty_like(x);", *statements, "return out;"))
    return f"at::Tensor my_op(const at::Tensor &x)\n{{\n{body}\n}}"


@rule(
    "K208", "aclop-in-kernel", severity=Severity.ERROR, scope="project",
    example=my_ops_example(_kernel("at_npu::native::OpCommand cmd;", 'cmd.Name("MyOp").Input(x).Output(out).Run();'), _META, _DEF, *impls("my_op_meta")),
    fixed=my_ops_example(_kernel("EXEC_NPU_CMD(aclnnMyOp, x, out);"), _META, _DEF, *impls("my_op_meta")),
)  # fmt: skip
def aclop_in_kernel(project: LintProject) -> Iterator[Violation]:
    """The op's kernel runs on torch_npu's aclop path (``OpCommand ... .Run()``), which graph capture refuses.

    ``OpCommand::Run()`` compiles and runs a GE operator (aclop). During aclgraph capture (npugraph_ex,
    ``torch.npu.NPUGraph``) torch_npu raises "Cannot run aclop operators during NPU graph capture", so a
    model calling this op cannot be captured. Call the op's aclnn interface instead (``EXEC_NPU_CMD(aclnnX,
    ...)``, or ``OpCommand::RunOpApiV2(name, lambda)``); an ``OpCommand`` given a ``SetCustomHandler`` is not
    aclop and is not reported.
    """
    for promise in promises(project):
        if promise.effects.aclop:
            yield Violation(
                f"kernel {kernel_name(promise.effects)} runs on the aclop path ({evidence_text(promise.effects.aclop, beside=promise.site.path)}): aclgraph capture fails with \"Cannot run aclop operators during NPU graph capture\"",
                line=promise.site.line, column=promise.site.column, path=promise.site.path, op=promise.op,
                hint="call the aclnn interface (`EXEC_NPU_CMD(aclnnX, inputs..., outputs...)`) or queue it with `OpCommand::RunOpApiV2(name, lambda)`",
            )  # fmt: skip
