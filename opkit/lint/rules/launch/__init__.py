"""Kernel-launch rules (K): host C++ that launches an Ascend C kernel with ``<<<blockDim, l2ctrl, stream>>>``
(``.asc`` files, and ``.cpp`` files with a launch), read by ``opkit.formats.kernel_launches``.

K0xx: the launch against torch_npu's task queue (TorchAir's ``add_custom.asc`` documents eight launch
modes; K001, K002 and K003 are its three wrong ones). K1xx: host work inside a PyTorch op's launcher that
waits for the device, which graph capture (aclgraph, npugraph_ex) cannot record.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.launch import launch_without_queue  # noqa: F401  K001
from opkit.lint.rules.launch import npu_stream_in_queued_launch  # noqa: F401  K002
from opkit.lint.rules.launch import queued_work_after_drain  # noqa: F401  K003
from opkit.lint.rules.launch import item_in_launcher  # noqa: F401  K101
from opkit.lint.rules.launch import cpu_copy_in_launcher  # noqa: F401  K102
from opkit.lint.rules.launch import synchronize_in_launcher  # noqa: F401  K103
from opkit.lint.rules.launch import device_read_in_launcher  # noqa: F401  K104
