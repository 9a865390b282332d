"""K101 item-in-launcher."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.kernel_launches import KernelLaunchFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.launch.common import host_waits, launcher_example


@rule("K101", "item-in-launcher", severity=Severity.ERROR, scope="launch",
    example=launcher_example("""
at::Tensor out = at::empty_like(x);
float scale = s.item<float>();
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), scale);
return out;
""", parameters='const at::Tensor &x, const at::Tensor &s'),
    fixed=launcher_example("""
at::Tensor out = at::empty_like(x);
float scale = static_cast<float>(s);
auto stream = c10_npu::getCurrentNPUStream();
my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr(), scale);
return out;
""", parameters='const at::Tensor &x, double s'),
)  # fmt: skip
def item_in_launcher(file: KernelLaunchFile) -> Iterator[Violation]:
    """x.item() reads a tensor's value on the host in a launcher: graph capture cannot record it.

    ``Tensor::item()`` copies the value to the host and waits for the device. Under ``torch.npu.NPUGraph()``,
    ``make_graphed_callables`` or npugraph_ex the wait is not allowed while capturing, and a value read at
    capture time would be baked into every replay. Pass the value as an ``int``/``float`` argument of the
    op, or read it on the device inside the kernel.
    """
    yield from host_waits(file, 'item', 'reads the value on the host, which graph capture cannot record', 'take the value as a scalar argument of the op (`float s` in the schema), or read it in the kernel')
