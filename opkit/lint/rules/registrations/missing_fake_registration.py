"""M001 missing-fake-registration."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import project_index, all_registrations
from opkit.lint.project import LintProject
from opkit.formats.python_registrations import Registration


@rule(
    "M001", "missing-fake-registration", severity=Severity.ERROR, scope="project",
    example=(
        '# file: op_plugin_functions.yaml\n'
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")'
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
def missing_fake_registration(project: LintProject) -> Iterator[Violation]:
    """A new op has no Meta or fake registration for one of its overloads.

    torch.compile (and with it npugraph_ex) traces with fake tensors: an op without a Meta kernel
    fails the trace. ``@impl(m, "my_op")`` binds only the default overload; ``my_op.out`` needs its
    own ``@impl(m, "my_op.out")``. A custom_op needs ``@<op>.register_fake``. Checked only when at
    least one registration file is linted, against ``custom:`` entries, ``--schema`` strings,
    ``Library.define`` schemas and custom_ops.
    """
    if not project.python_files:
        return
    registered: dict[tuple[str, str], list[Registration]] = {}
    for _, reg in all_registrations(project):
        registered.setdefault((reg.name, reg.overload), []).append(reg)
    # custom_op sites (their schemas sit at the decorator) -> the decorated function's name, what register_fake hangs on
    custom_op_functions = {(file.path, op.line): op.function.name for file in project.python_files for op in file.custom_ops}
    for schema in project_index(project).schemas:
        if not schema.site.is_custom:
            continue
        if any(schema.declares(reg) for reg in registered.get((schema.sig.name, schema.sig.overload), ())):
            continue
        function = custom_op_functions.get((schema.site.path, schema.site.line))
        if function is not None:  # a custom_op's own schema: the fake goes on the custom_op object
            what, hint = "register_fake", f'add @{function}.register_fake, or @torch.library.register_fake("{schema.namespace}::{schema.sig.full_name}")'
        else:
            what, hint = "Meta registration", f'add @impl(m, "{schema.sig.full_name}") on m = Library("npu", "IMPL", "Meta"), or @<op>.register_fake'
        yield Violation(
            f"op '{schema.sig.full_name}' has no {what} in the linted Python files",
            line=schema.site.line, column=schema.site.column, path=schema.site.path, op=schema.sig.full_name, hint=hint,
        )  # fmt: skip
