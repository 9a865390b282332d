"""K002 npu-stream-in-queued-launch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import NPU_STREAM, KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import launch_text, launcher_example, where


@rule("K002", "npu-stream-in-queued-launch", severity=Severity.ERROR, scope="launch",
    example=launcher_example("""
auto stream = c10_npu::getCurrentNPUStream();
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
def npu_stream_in_queued_launch(file: KernelLaunchFile) -> Iterator[Violation]:
    """An ``NPUStream`` object given to ``<<<>>>`` inside a lambda that ``OpCommand`` queues: the task waits for its own queue, a deadlock.

    ``OpCommand::RunOpApiV2`` puts the lambda on torch_npu's task queue. A ``<<<>>>`` launch given the
    ``c10_npu::NPUStream`` object drains that queue before launching, so the queued task waits for the
    queue to empty, and the queue waits for the task: the process hangs (launch mode 5 of TorchAir's
    ``add_custom.asc``). Inside the lambda, launch on the ACL stream taken with ``.stream(false)`` before
    it (mode 3).
    """
    for launch in file.launches:
        if launch.origin.kind == NPU_STREAM and launch.queued:
            yield Violation(
                f"{launch_text(launch)} passes the NPUStream object{where(launch.origin.where)} inside a lambda OpCommand queues: the queued task waits for its own queue to drain (deadlock)",
                line=launch.line, column=launch.column,
                hint="take `auto stream = c10_npu::getCurrentNPUStream().stream(false);` before the lambda and launch on that ACL stream",
            )  # fmt: skip
