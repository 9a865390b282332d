"""K209 host-sync-in-kernel."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule, shared_index
from opkit.lint.rules.effects.common import evidence_text, impls, kernel_name, my_ops_example, promises

_META = "at::Tensor my_op_meta(const at::Tensor &x, double scale) { return at::empty_like(x); }"


def _kernel(scale: str) -> str:
    return (
        "at::Tensor my_op(const at::Tensor &x, double scale)\n{\n    at::Tensor out = at::empty_like(x);\n"
        f"    at::mul_out(out, x, {scale});\n    return out;\n}}"
    )


@rule(
    "K209", "host-sync-in-kernel", severity=Severity.ERROR, scope="project",
    example=my_ops_example(_kernel("x.max().item<double>() * scale"), _META, 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, float scale) -> Tensor"); }', *impls("my_op_meta")),
    fixed=my_ops_example(_kernel("scale"), _META, 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, float scale) -> Tensor"); }', *impls("my_op_meta")),
)  # fmt: skip
def host_sync_in_kernel(project: LintProject) -> Iterator[Violation]:
    """The op's kernel waits for the device on the host (``.item()``, ``.cpu()``, stream synchronisation).

    Inside aclgraph capture (npugraph_ex, ``torch.npu.NPUGraph``) the wait is refused ("the current capture
    mode does not support this operation", error 107030), and a value read at capture time would be baked
    into every replay. Take the value as a scalar argument of the op, or compute with it on the device.
    Waits in a function that launches a kernel with ``<<<>>>`` are the launch rules' (K101-K104), not
    reported twice.
    """
    reported = _launcher_waits(project)
    for promise in promises(project):
        syncs = tuple(e for e in promise.effects.host_syncs if (e.path, e.line) not in reported)
        if syncs:
            yield Violation(
                f"kernel {kernel_name(promise.effects)} waits for the device on the host ({evidence_text(syncs, beside=promise.site.path)}): aclgraph capture refuses it",
                line=promise.site.line, column=promise.site.column, path=promise.site.path, op=promise.op,
                hint="take the value as a scalar argument of the op (`float scale`), or keep the computation on the device",
            )  # fmt: skip


@shared_index
def _launcher_waits(project: LintProject) -> set[tuple[str, int]]:
    """Where the launch rules already report a host wait: (path, line)."""
    return {(f.path, w.line) for f in project.launch_files for w in f.host_waits}
