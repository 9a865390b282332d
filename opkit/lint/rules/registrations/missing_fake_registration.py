"""M001 missing-fake-registration."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.cpp.common import META_KEYS, compiled_together, defined, registered as cpp_registered
from opkit.lint.rules.registrations.common import project_index, all_registrations
from opkit.lint.project import LintProject


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
    own ``@impl(m, "my_op.out")``. A custom_op needs ``@<op>.register_fake``. An op defined in C++
    (``TORCH_LIBRARY``) is served by a C++ Meta kernel (``TORCH_LIBRARY_IMPL(ns, Meta, m)``), a composite
    kernel (``CompositeExplicitAutograd``, or the def's own kernel), or a Python Meta/fake, in any linted
    file. Checked against ``custom:`` entries, ``--schema`` strings, ``Library.define`` schemas and
    custom_ops when a Python registration file is linted, and against C++ defs always.
    """
    if not (project.python_files or project.cpp_files):
        return
    registered: dict[tuple[str, str], list] = {}
    for _, reg in all_registrations(project):
        registered.setdefault((reg.name, reg.overload), []).append(reg)
    cpp_metas = [r for r in cpp_registered(project) if r.impl.dispatch_key in META_KEYS]
    cpp_defs = {(d.path, d.definition.line, d.definition.column): d for d in defined(project)}
    for d in cpp_defs.values():  # a C++ Meta serves the defs compiled with it (not another #if arm's)
        if any(r.key == d.key and compiled_together(d, r.path, r.impl.conditions) for r in cpp_metas):
            registered.setdefault((d.sig.name, d.sig.overload), []).append(_Provided(d.namespace, d.sig.name, d.sig.overload, d))
    for d in cpp_defs.values():
        if d.definition.kernel is not None:  # m.def(schema, kernel): a catch-all, CompositeImplicitAutograd
            registered.setdefault((d.sig.name, d.sig.overload), []).append(_Provided(d.namespace, d.sig.name, d.sig.overload, d))
    # custom_op sites (their schemas sit at the decorator) -> the decorated function's name, what register_fake hangs on
    custom_op_functions = {(file.path, op.line): op for file in project.python_files for op in file.custom_ops}
    for schema in project_index(project).schemas:
        cpp_def = cpp_defs.get((schema.site.path, schema.site.line, schema.site.column))
        if not schema.site.is_custom or (cpp_def is None and not project.python_files):
            continue
        # a Python Meta serves every def of its op; a C++ one the def it is compiled with
        if any(schema.declares(reg) and (not isinstance(reg, _Provided) or reg.serves(cpp_def)) for reg in registered.get((schema.sig.name, schema.sig.overload), ())):
            continue
        own_op = custom_op_functions.get((schema.site.path, schema.site.line))
        if own_op is not None and own_op.helper:  # defined by a registration helper: it takes the fake
            what, hint = "fake", f'pass fake_impl=<fake function> to {own_op.kind}, or add @torch.library.register_fake("{schema.namespace}::{schema.sig.full_name}")'
        elif own_op is not None:  # a custom_op's own schema: the fake goes on the custom_op object
            what, hint = "register_fake", f'add @{own_op.function.name}.register_fake, or @torch.library.register_fake("{schema.namespace}::{schema.sig.full_name}")'
        elif cpp_def is not None:
            what = "Meta kernel or fake registration (it cannot enter a graph)"
            hint = f'add m.impl("{schema.sig.full_name}", &{schema.sig.name}_meta) in TORCH_LIBRARY_IMPL({cpp_def.namespace}, Meta, m), or torch.library.register_fake("{cpp_def.namespace}::{schema.sig.full_name}") in Python'
        else:
            what, hint = "Meta registration", f'add @impl(m, "{schema.sig.full_name}") on m = Library("npu", "IMPL", "Meta"), or @<op>.register_fake'
        yield Violation(
            f"op '{schema.sig.full_name}' has no {what} in the linted {'files' if cpp_def is not None else 'Python files'}",
            line=schema.site.line, column=schema.site.column, path=schema.site.path, op=schema.sig.full_name, hint=hint,
        )  # fmt: skip


@dataclass(frozen=True)
class _Provided:
    """A C++ kernel that serves Meta tensors, as M001 matches registrations: by namespace, name, overload,
    for the one C++ def it is compiled with."""

    namespace: str
    name: str
    overload: str
    definition: object = None

    def serves(self, cpp_def) -> bool:
        return cpp_def is None or self.definition is cpp_def
