"""`opkit new`: from one op spec, every artifact an Ascend custom op needs (see cookiecutter-op/).

spec (OpSpec, opkit.json) → model (ProjectModel: derived values) → cookiecutter-op/ templates
(through the OpkitExtension) → a project directory, written atomically. ``yaml_edit`` inserts the
generated entry into a real op_plugin_functions.yaml. Nothing here imports torch.
"""

from opkit.generate.spec import SPEC_FILE, OpSpec, SpecError, load_spec, make_spec

__all__ = ["SPEC_FILE", "OpSpec", "SpecError", "load_spec", "make_spec"]
