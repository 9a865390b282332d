"""msOpGen prototype JSON rules (J): what msOpGen 26.0.0 does with each field (msopgen.md §1).

J0xx: one JSON file, field by field; most name what msOpGen silently drops or rewrites, since a
project generated from such a file builds and then misbehaves. J1xx: a prototype against the
PyTorch schema of the same op (``op`` == UpperCamelCase of the schema name), compared with
``opkit.msopgen.prototype_from_signature``, the mapping opkit's generator uses.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.msopgen import op_missing  # noqa: F401  J001
from opkit.lint.rules.msopgen import op_not_upper_camel  # noqa: F401  J002
from opkit.lint.rules.msopgen import invalid_name  # noqa: F401  J003
from opkit.lint.rules.msopgen import param_type_invalid  # noqa: F401  J004
from opkit.lint.rules.msopgen import descriptor_dropped  # noqa: F401  J005
from opkit.lint.rules.msopgen import dtypes_all_unknown  # noqa: F401  J006
from opkit.lint.rules.msopgen import dtypes_some_unknown  # noqa: F401  J007
from opkit.lint.rules.msopgen import unknown_format  # noqa: F401  J008
from opkit.lint.rules.msopgen import type_format_length  # noqa: F401  J009
from opkit.lint.rules.msopgen import column_count_mismatch  # noqa: F401  J010
from opkit.lint.rules.msopgen import duplicate_descriptor_name  # noqa: F401  J011
from opkit.lint.rules.msopgen import attr_unknown_type  # noqa: F401  J012
from opkit.lint.rules.msopgen import attr_default_invalid  # noqa: F401  J013
from opkit.lint.rules.msopgen import optional_attr_without_default  # noqa: F401  J014
from opkit.lint.rules.msopgen import prototype_inputs_mismatch  # noqa: F401  J101
from opkit.lint.rules.msopgen import prototype_attrs_mismatch  # noqa: F401  J102
from opkit.lint.rules.msopgen import prototype_outputs_mismatch  # noqa: F401  J103
