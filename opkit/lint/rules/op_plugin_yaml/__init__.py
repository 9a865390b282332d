"""op_plugin_functions.yaml rules (Y): what op-plugin's codegen silently accepts, misreads or crashes on.

Y0xx: the file and its entries (sections, fields, version specs, duplicates).
Y1xx: ``gen_opapi``, the block from which the codegen writes an op_api kernel
(``codegen/struct/model.py`` and ``struct_codegen.py`` in Ascend/op-plugin).

Every rule receives one ``OpPluginFile``. Facts several rules need (parsed signatures, version specs,
entries by name) are computed once per file by ``file_index`` and cached, so each rule is one linear pass.
A file without ``all_version`` is a *fragment* (what ``opkit new`` writes, e.g. only ``custom:``):
section presence and version membership are not checked there.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.op_plugin_yaml import missing_section  # noqa: F401  Y001
from opkit.lint.rules.op_plugin_yaml import unknown_entry_field  # noqa: F401  Y002
from opkit.lint.rules.op_plugin_yaml import missing_func  # noqa: F401  Y003
from opkit.lint.rules.op_plugin_yaml import duplicate_key  # noqa: F401  Y004
from opkit.lint.rules.op_plugin_yaml import unknown_version  # noqa: F401  Y005
from opkit.lint.rules.op_plugin_yaml import malformed_version_spec  # noqa: F401  Y006
from opkit.lint.rules.op_plugin_yaml import empty_version_range  # noqa: F401  Y007
from opkit.lint.rules.op_plugin_yaml import gen_opapi_without_op_api  # noqa: F401  Y008
from opkit.lint.rules.op_plugin_yaml import duplicate_func  # noqa: F401  Y009
from opkit.lint.rules.op_plugin_yaml import exposed_not_version  # noqa: F401  Y010
from opkit.lint.rules.op_plugin_yaml import invalid_device_check  # noqa: F401  Y011
from opkit.lint.rules.op_plugin_yaml import gen_opapi_ignored_section  # noqa: F401  Y012
from opkit.lint.rules.op_plugin_yaml import gen_opapi_outputs  # noqa: F401  Y101
from opkit.lint.rules.op_plugin_yaml import gen_opapi_unknown_reference  # noqa: F401  Y102
from opkit.lint.rules.op_plugin_yaml import gen_opapi_exec_argument  # noqa: F401  Y103
from opkit.lint.rules.op_plugin_yaml import gen_opapi_missing_exec  # noqa: F401  Y104
from opkit.lint.rules.op_plugin_yaml import gen_opapi_bad_inherit  # noqa: F401  Y105
from opkit.lint.rules.op_plugin_yaml import aclnn_name_convention  # noqa: F401  Y106
