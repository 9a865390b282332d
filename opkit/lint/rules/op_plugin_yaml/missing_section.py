"""Y001 missing-section."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.formats.op_plugin_yaml import OpPluginFile, SECTIONS


@rule(
    "Y001",
    "missing-section",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'all_version: [v2.1, v2.2]\n'
        'official: []\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        ''
    ),
    fixed=(
        'all_version: [v2.1, v2.2]\n'
        'official: []\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        'autograd: []\n'
        'symint: []\n'
        'quant: []'
    ),
)
def missing_section(file: OpPluginFile) -> Iterator[Violation]:
    """A full file lacks one of the sections the codegen iterates, or a section is empty (null).

    gen_op_plugin_functions.py loops over ``official``, ``custom``, ``symint`` and ``quant`` (and
    torch_npu over ``autograd``) with ``old_yaml[key]``: a missing key is a KeyError, a key with no
    value (``custom:``) is ``None`` and the loop raises TypeError. ``all_version`` must be a list of
    version strings. Fragments (files without ``all_version``, as ``opkit new`` writes) are not checked.
    """
    if file.is_fragment:
        return
    root = file.root
    versions = file.all_version
    if versions is not None and (versions.kind != "sequence" or not versions.value or not all(v.kind == "scalar" and isinstance(v.value, str) for v in versions.value)):
        yield Violation("all_version must be a non-empty list of version strings such as [v2.1, v2.2]", line=versions.line, column=versions.column)
    missing = [s for s in SECTIONS if s not in root.value]
    if missing:
        yield Violation(f"missing section(s): {', '.join(missing)}", line=1, column=1, hint="add each as an empty list, e.g. quant: []")
    for section in SECTIONS:
        node = root.value.get(section)
        if node is not None and node.value is None:
            line, column = root.key_position(section)
            yield Violation(f"section '{section}' is empty (null): the codegen cannot iterate it", line=line, column=column, hint=f"write {section}: []")
