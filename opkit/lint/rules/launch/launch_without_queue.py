"""K001 launch-without-queue."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import NO_DRAIN, KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import EMPTY_OUT, QUEUED_FIX, at_launch, direct_launcher_example, queued_launcher_example, where


@rule("K001", "launch-without-queue", severity=Severity.ERROR, scope="launch",
    example=direct_launcher_example("auto stream = c10_npu::getCurrentNPUStream().stream(false);", EMPTY_OUT),
    fixed=queued_launcher_example("c10_npu::getCurrentNPUStream().stream(false)"),
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
            yield at_launch(
                launch, f"launches on a stream(false) stream{where(launch.origin.where)} outside OpCommand: it runs out of order with the ops queued before it", QUEUED_FIX,
            )  # fmt: skip
