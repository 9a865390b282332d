"""Kernel-effects rules (K2xx): the registration's promise (schema, Meta/fake, op-plugin yaml entry) held
to what the kernel does, as ``opkit.effects`` reads it from the kernel's code.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.effects import meta_dtype_differs_from_kernel  # noqa: F401  K204
from opkit.lint.rules.effects import fake_literal_device  # noqa: F401  K205
from opkit.lint.rules.effects import gen_opapi_disagrees_with_meta  # noqa: F401  K206
