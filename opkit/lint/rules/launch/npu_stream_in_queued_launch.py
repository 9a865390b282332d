"""K002 npu-stream-in-queued-launch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import NPU_STREAM, KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import at_launch, queued_launcher_example, where


@rule("K002", "npu-stream-in-queued-launch", severity=Severity.ERROR, scope="launch",
    example=queued_launcher_example("c10_npu::getCurrentNPUStream()"),
    fixed=queued_launcher_example("c10_npu::getCurrentNPUStream().stream(false)"),
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
            yield at_launch(
                launch, f"passes the NPUStream object{where(launch.origin.where)} inside a lambda OpCommand queues: the queued task waits for its own queue to drain (deadlock)",
                "take `auto stream = c10_npu::getCurrentNPUStream().stream(false);` before the lambda and launch on that ACL stream",
            )  # fmt: skip
