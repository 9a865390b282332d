"""M011 registration-without-schema."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import project_index, all_registrations, TORCH_NAMESPACES
from opkit.lint.project import LintProject


@rule(
    "M011", "registration-without-schema", severity=Severity.WARNING, scope="project",
    example=(
        '# file: op_plugin_functions.yaml\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x):\n'
        '    return torch.empty_like(x)\n'
        '\n'
        '@impl(m, "my_opp")\n'
        'def my_opp_meta(x):\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        '# file: op_plugin_functions.yaml\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def registration_without_schema(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake registration names an op that no linted schema declares.

    Usually a typo or a renamed op: at import time ``Library.impl`` fails for an op that does not
    exist, or the registration lands on another overload. Checked when schemas were given
    (op_plugin_functions.yaml or ``--schema``), since otherwise nothing declares op-plugin ops, and for
    a namespace a linted C++ ``TORCH_LIBRARY`` block owns (a namespace has one such block, which
    defines every op of it; ``TORCH_LIBRARY_FRAGMENT`` namespaces may have more fragments elsewhere).
    Registrations on PyTorch's own namespaces (``Library("aten", "IMPL", "Meta")``) are checked
    against a linted schema when one declares the op (``official:`` entries), never reported as
    unknown: ATen's schemas are not among the inputs.
    """
    if not project.python_files:  # nothing registered: skip indexing every schema of a large yaml
        return
    declared_everywhere = bool(project.yaml_files or project.schema_sites)
    owned = {block.namespace for source in project.cpp_files for block in source.blocks if block.macro == "TORCH_LIBRARY"}
    if not (declared_everywhere or owned):
        return
    unread = {op for file in project.python_files for op in file.unread_ops}  # defined by a helper, schema unknown
    index = project_index(project)
    for file, reg in all_registrations(project):
        if reg.custom_op is not None or index.declaring(reg) or reg.qualname in unread:
            continue
        if reg.namespace in TORCH_NAMESPACES:
            continue  # an ATen (or other PyTorch) op: its schema is PyTorch's, not in the linted inputs
        if not declared_everywhere and reg.namespace not in owned:
            continue
        yield Violation(f"{reg.style} registration for '{reg.qualname}', which no linted schema declares", line=reg.line, column=reg.column, path=file.path, op=reg.op)
