"""K103 synchronize-in-launcher."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import EMPTY_OUT, direct_launcher_example, host_waits


@rule("K103", "synchronize-in-launcher", severity=Severity.ERROR, scope="launch",
    example=direct_launcher_example(EMPTY_OUT, "auto stream = c10_npu::getCurrentNPUStream().stream(true);", after=("aclrtSynchronizeStream(stream);",)),
    fixed=direct_launcher_example(EMPTY_OUT, "auto stream = c10_npu::getCurrentNPUStream().stream(true);"),
)  # fmt: skip
def synchronize_in_launcher(file: KernelLaunchFile) -> Iterator[Violation]:
    """The launcher synchronises the stream or the device (``aclrtSynchronizeStream``): forbidden while a graph is captured.

    ``aclrtSynchronizeStream``, ``aclrtSynchronizeDevice`` and ``NPUStream::synchronize()`` block the host
    until the device is idle. A stream being captured (aclgraph, npugraph_ex) cannot be synchronised:
    capture fails; in eager mode it also stalls torch_npu's task queue at every call. Ordering on one
    stream needs no synchronisation: drop it.
    """
    yield from host_waits(file, 'synchronize', 'waits for the device, which a stream under graph capture cannot do', 'drop it: work on one stream runs in order')
