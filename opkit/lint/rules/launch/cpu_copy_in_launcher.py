"""K102 cpu-copy-in-launcher."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import host_waits, launcher_example


@rule("K102", "cpu-copy-in-launcher", severity=Severity.ERROR, scope="launch",
    example=launcher_example("""
at::Tensor out = at::empty_like(x);
auto sizes = n.cpu();
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), sizes.data_ptr());
return out;
""", parameters='const at::Tensor &x, const at::Tensor &n'),
    fixed=launcher_example("""
at::Tensor out = at::empty_like(x);
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), n.mutable_data_ptr());
return out;
""", parameters='const at::Tensor &x, const at::Tensor &n'),
)  # fmt: skip
def cpu_copy_in_launcher(file: KernelLaunchFile) -> Iterator[Violation]:
    """A tensor copied to the CPU in a launcher (``.cpu()``, ``.to(kCPU)``): graph capture cannot record it.

    A device-to-host copy waits for the device and leaves the captured stream; under aclgraph capture it
    fails, or records a copy whose host result replays never refresh. Keep the computation on the
    device, or pass what the host needs (sizes, flags) as op arguments.
    """
    yield from host_waits(file, 'cpu', 'copies device memory to the host, which graph capture cannot record', 'keep the tensor on the device and hand its address to the kernel')
