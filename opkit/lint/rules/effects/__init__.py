"""Kernel-effects rules (K2xx): the registration's promise (schema, Meta, yaml) against what the op's kernel
does, as ``opkit.effects`` reads it (computed once per lint, ``common.effects_of``).

A rule fires only on what the model knows (``Knowledge.YES``/``NO``), never on "unknown". Findings sit at
the schema (the argument's column where there is one) and name the kernel's evidence. K201-K203, K207-K209:
C++ host kernels; K204-K206: Meta, fakes and gen_opapi against the kernel's allocations; K210 and on:
Python kernels.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.effects import write_not_declared  # noqa: F401  K201
from opkit.lint.rules.effects import annotation_never_written  # noqa: F401  K202
from opkit.lint.rules.effects import input_returned_as_fresh  # noqa: F401  K203
from opkit.lint.rules.effects import meta_dtype_differs_from_kernel  # noqa: F401  K204
from opkit.lint.rules.effects import fake_literal_device  # noqa: F401  K205
from opkit.lint.rules.effects import gen_opapi_disagrees_with_meta  # noqa: F401  K206
from opkit.lint.rules.effects import void_op_without_effect  # noqa: F401  K207
from opkit.lint.rules.effects import aclop_in_kernel  # noqa: F401  K208
from opkit.lint.rules.effects import host_sync_in_kernel  # noqa: F401  K209
