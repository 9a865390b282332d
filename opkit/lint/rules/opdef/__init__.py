"""Ascend C OpDef rules (O): an op_host C++ file read by opkit's tolerant OpDef reader (``opkit.formats.opdef_cpp``).

O0xx: one OpDef on its own, the J-rule equivalents for OpDef sources. O1xx: an OpDef against the PyTorch
schema of the same OpType (from the yaml, a Python registration or ``--schema``): the drift public
projects that ship both show.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.opdef import call_skipped  # noqa: F401  O001
from opkit.lint.rules.opdef import column_count_mismatch  # noqa: F401  O002
from opkit.lint.rules.opdef import type_format_length  # noqa: F401  O003
from opkit.lint.rules.opdef import no_soc  # noqa: F401  O004
from opkit.lint.rules.opdef import dtype_not_in_msopgen  # noqa: F401  O005
from opkit.lint.rules.opdef import tensor_argument_mismatch  # noqa: F401  O101
from opkit.lint.rules.opdef import param_type_mismatch  # noqa: F401  O102
from opkit.lint.rules.opdef import input_order  # noqa: F401  O103
from opkit.lint.rules.opdef import output_count  # noqa: F401  O104
from opkit.lint.rules.opdef import inplace_without_output  # noqa: F401  O105
from opkit.lint.rules.opdef import input_name_differs  # noqa: F401  O106
