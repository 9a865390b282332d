"""K003 queued-work-after-drain."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import DRAINED, KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import at_launch, direct_launcher_example, where


@rule("K003", "queued-work-after-drain", severity=Severity.ERROR, scope="launch",
    example=direct_launcher_example("auto stream = c10_npu::getCurrentNPUStream().stream(true);", "at::Tensor out = at::zeros_like(x);"),
    fixed=direct_launcher_example("at::Tensor out = at::zeros_like(x);", "auto stream = c10_npu::getCurrentNPUStream().stream(true);"),
)  # fmt: skip
def queued_work_after_drain(file: KernelLaunchFile) -> Iterator[Violation]:
    """Device work queued after ``stream(true)`` drained the task queue, then a launch outside ``OpCommand``: the kernel may run before that work.

    ``.stream(true)`` (and ``.stream()``) drain torch_npu's task queue once, when the stream is taken. An
    ATen call after that (``at::zeros_like``, ``fill_``, ``copy_``, ``contiguous``, ...) goes on the queue
    again, and a ``<<<>>>`` launch outside ``OpCommand`` does not wait for it: the kernel writes an output
    that ``zeros_like`` zeroes afterwards, or reads an input not yet copied (launch mode 7 of TorchAir's
    ``add_custom.asc``). Take the stream after the last queued call, allocate with ``at::empty_like``
    (nothing queued), or queue the launch with ``OpCommand::RunOpApiV2`` (mode 6).
    """
    for launch in file.launches:
        if launch.origin.kind == DRAINED and not launch.queued and launch.queued_work:
            work = launch.queued_work[0]
            yield at_launch(
                launch, f"runs unqueued after {work.text} (line {work.line}) was queued behind the drained stream{where(launch.origin.where)}: it may run before that work",
                "take the stream after the last queued call, allocate with at::empty_like, or launch inside a lambda OpCommand::RunOpApiV2 queues",
            )  # fmt: skip
