"""K205 fake-literal-device."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.meta_outputs import read_meta_outputs
from opkit.formats.python_registrations import RegistrationFile
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule

# The devices a Meta/fake may name: the meta device is where a Meta kernel's outputs live.
_ALLOWED = frozenset({"meta"})


_META = (
    'import torch\n'
    'from torch.library import Library, impl\n'
    '\n'
    'm = Library("npu", "IMPL", "Meta")\n'
    '\n'
    '@impl(m, "my_op")\n'
    'def my_op_meta(x):\n'
)


@rule(
    "K205", "fake-literal-device", severity=Severity.ERROR, scope="python",
    example=_META + '    return torch.empty(x.shape, dtype=torch.float32, device="cpu")',
    fixed=_META + '    return torch.empty(x.shape, dtype=torch.float32, device=x.device)',
)  # fmt: skip
def fake_literal_device(file: RegistrationFile) -> Iterator[Violation]:
    """A Meta/fake function creates a tensor on a literal device (``device="cpu"``).

    The op's kernel returns its outputs on the NPU; a Meta or fake that places one on a device named in
    the code (``device="cpu"``, ``torch.device("cuda")``) tells torch.compile and npugraph_ex another
    device, and the graph is built around it: device checks pass where they should fail, copies are
    inserted or missing, and an aclgraph capture records a host tensor. Off the NPU every tensor is on the
    CPU, so no test run there shows it; op-plugin fixed one such fake (``npu_fusion_attention_v3``). Create
    the tensor where the inputs are: ``x.new_empty(size, dtype=...)``, ``torch.empty_like(x)`` or
    ``device=x.device``. ``device="meta"`` is what a Meta kernel's outputs are, and is not reported.
    """
    for reg in file.registrations:
        node = reg.function.node
        if node is None:
            continue
        for made in read_meta_outputs(node).created:
            if made.device is None or made.device.startswith("like:") or made.device in _ALLOWED or made.device == "default" or made.device_node is None:
                continue
            where = made.device_node
            yield Violation(
                f"{reg.function.name} (the {reg.style} of {reg.qualname}) creates a tensor on the literal device {made.device!r} "
                f"with {made.call}(...) (line {made.line}): the kernel returns its outputs on the NPU",
                line=where.lineno, column=where.col_offset + 1, op=reg.op,
                hint=f"create it where the inputs are: device=<input>.device, <input>.new_empty(...) or torch.empty_like(<input>)",
            )  # fmt: skip
