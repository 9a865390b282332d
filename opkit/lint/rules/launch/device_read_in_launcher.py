"""K104 device-read-in-launcher."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import host_waits, launcher_example


@rule("K104", "device-read-in-launcher", severity=Severity.ERROR, scope="launch",
    example=launcher_example("""
at::Tensor out = at::empty_like(x);
int64_t rows = n.data_ptr<int64_t>()[0];
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), rows);
return out;
""", parameters='const at::Tensor &x, const at::Tensor &n'),
    fixed=launcher_example("""
at::Tensor out = at::empty_like(x);
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), rows);
return out;
""", parameters='const at::Tensor &x, int64_t rows'),
)  # fmt: skip
def device_read_in_launcher(file: KernelLaunchFile) -> Iterator[Violation]:
    """The launcher reads device memory on the host (a dereferenced ``data_ptr``, a device-to-host ``aclrtMemcpy``).

    An NPU tensor's ``data_ptr()`` is a device address: dereferenced on the host it is invalid memory,
    and ``aclrtMemcpy(..., ACL_MEMCPY_DEVICE_TO_HOST)`` waits for the device, which graph capture cannot
    record (a value read at capture time is baked into every replay). Hand the address to the kernel, or
    take the value as an op argument.
    """
    yield from host_waits(file, 'device_read', 'reads device memory on the host, which graph capture cannot record', 'pass the address to the kernel, or the value as an op argument')
