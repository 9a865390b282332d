"""Meta/fake registration rules (M): Python registration files checked against the op schemas.

How PyTorch calls a Meta or fake function (``parseIValuesToPyArgsKwargs`` in torch/csrc): positional
schema arguments are passed positionally, trailing positional arguments equal to their default are
dropped, keyword-only arguments are passed by name and omitted when equal to their default. The
function's return value is then checked against the schema's returns (``None`` for ``-> ()``).
Every M rule that needs a schema is a project rule: the schema may come from op_plugin_functions.yaml
(``custom:``), ``--schema``, ``Library.define`` or the custom_op's own annotations. Findings sit on
the registration's line (the decorator), where ``# noqa: M00x`` suppresses them.

One rule per module, named after the rule; ``common`` holds what several share. M010 (unlisted-mutation,
a custom_op body writing what ``mutates_args`` leaves out) is retired: K201 write-not-declared reads every
Python kernel through ``opkit.effects`` (helpers, ``out=``, calls of ``(a!)`` ops included) and reports it.
"""

from opkit.lint.rules.registrations import missing_fake_registration  # noqa: F401  M001
from opkit.lint.rules.registrations import meta_arity  # noqa: F401  M002
from opkit.lint.rules.registrations import meta_parameter_order  # noqa: F401  M003
from opkit.lint.rules.registrations import meta_parameter_names  # noqa: F401  M004
from opkit.lint.rules.registrations import meta_default_mismatch  # noqa: F401  M005
from opkit.lint.rules.registrations import meta_return_structure  # noqa: F401  M006
from opkit.lint.rules.registrations import meta_returns_for_void_op  # noqa: F401  M007
from opkit.lint.rules.registrations import custom_op_schema_mismatch  # noqa: F401  M008
from opkit.lint.rules.registrations import mutates_args_unknown  # noqa: F401  M009
from opkit.lint.rules.registrations import registration_without_schema  # noqa: F401  M011
from opkit.lint.rules.registrations import custom_op_rejected  # noqa: F401  M012
from opkit.lint.rules.registrations import fake_annotation_mismatch  # noqa: F401  M013
from opkit.lint.rules.registrations import duplicate_registration  # noqa: F401  M014
from opkit.lint.rules.registrations import fake_returns_input  # noqa: F401  M015
from opkit.lint.rules.registrations import output_rules_apart  # noqa: F401  M016
