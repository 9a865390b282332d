"""Schema rules (S): one signature at a time, wherever it was written.

S0xx: the dialect's parser rejects the string. S1xx: aliasing and in-place conventions that
functionalization, and with it npugraph_ex, depends on. S2xx: what msOpGen and TorchAir can express.
Rules marked "new ops only" apply to op-plugin's ``custom:`` section, ``--schema`` strings and
custom_op registrations, not to ATen overloads in ``official:``, which follow ATen's own conventions.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.schema import schema_syntax  # noqa: F401  S001
from opkit.lint.rules.schema import unknown_type  # noqa: F401  S002
from opkit.lint.rules.schema import not_canonical  # noqa: F401  S003
from opkit.lint.rules.schema import rejected_by_torch_library  # noqa: F401  S004
from opkit.lint.rules.schema import returns_mutated_input  # noqa: F401  S101
from opkit.lint.rules.schema import alias_set_reused  # noqa: F401  S102
from opkit.lint.rules.schema import return_alias_unknown  # noqa: F401  S103
from opkit.lint.rules.schema import inplace_name_without_mutation  # noqa: F401  S104
from opkit.lint.rules.schema import out_argument_not_annotated  # noqa: F401  S105
from opkit.lint.rules.schema import duplicate_argument  # noqa: F401  S106
from opkit.lint.rules.schema import default_before_required  # noqa: F401  S107
from opkit.lint.rules.schema import out_overload_returns_alias  # noqa: F401  S108
from opkit.lint.rules.schema import tensor_after_attribute  # noqa: F401  S201
from opkit.lint.rules.schema import name_round_trip  # noqa: F401  S202
from opkit.lint.rules.schema import attr_type_unsupported  # noqa: F401  S203
from opkit.lint.rules.schema import not_capturable  # noqa: F401  S204
