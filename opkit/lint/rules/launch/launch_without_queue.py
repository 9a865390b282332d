"""K001 launch-without-queue."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import NO_DRAIN, KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import QUEUED_FIX, launch_text, launcher_example, where


@rule("K001", "launch-without-queue", severity=Severity.ERROR, scope="launch",
    example=launcher_example("""
auto stream = c10_npu::getCurrentNPUStream().stream(false);
at::Tensor out = at::empty_like(x);
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr());
return out;
"""),
    fixed=launcher_example("""
auto stream = c10_npu::getCurrentNPUStream().stream(false);
at::Tensor out = at::empty_like(x);
auto x_gm = x.mutable_data_ptr();
auto out_gm = out.mutable_data_ptr();
auto launch = [=]() -> int {
    my_kernel<<<8, nullptr, stream>>>(x_gm, out_gm);
    return 0;
};
at_npu::native::OpCommand::RunOpApiV2("my_op", launch);
return out;
"""),
)  # fmt: skip
def launch_without_queue(file: KernelLaunchFile) -> Iterator[Violation]:
    """A kernel launched on a ``stream(false)`` stream outside ``OpCommand``: it may run before the ops queued ahead of it.

    ``c10_npu::getCurrentNPUStream().stream(false)`` returns the ACL stream without draining torch_npu's
    task queue, and a ``<<<>>>`` launch on it goes to the device at once, while the ops called before it
    may still wait in the queue: the kernel reads inputs they have not written yet. Silent wrong numbers
    (launch mode 4 of TorchAir's ``add_custom.asc``). Queue the launch instead: put it in a lambda given
    to ``OpCommand::RunOpApiV2`` (mode 3), or pass the ``NPUStream`` object to ``<<<>>>``, which drains the
    queue first (mode 1).
    """
    for launch in file.launches:
        if launch.origin.kind == NO_DRAIN and not launch.queued:
            yield Violation(
                f"{launch_text(launch)} launches on a stream(false) stream{where(launch.origin.where)} outside OpCommand: it runs out of order with the ops queued before it",
                line=launch.line, column=launch.column, hint=QUEUED_FIX,
            )  # fmt: skip
