"""M008 custom-op-schema-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import project_index, comparable
from opkit.lint.project import LintProject
from opkit.formats.python_registrations import Registration


@rule(
    "M008", "custom-op-schema-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: mylib::my_op_(Tensor(a!) x, Tensor(b!) y) -> ()\n'
        '# file: meta.py\n'
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::my_op_", mutates_args=("x",))\n'
        'def my_op_(x: torch.Tensor, y: torch.Tensor) -> None:\n'
        '    ...\n'
        '\n'
        '@my_op_.register_fake\n'
        'def _(x: torch.Tensor, y: torch.Tensor) -> None:\n'
        '    return None'
    ),
    fixed=(
        '# schema: mylib::my_op_(Tensor(a!) x, Tensor(b!) y) -> ()\n'
        '# file: meta.py\n'
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::my_op_", mutates_args=("x", "y"))\n'
        'def my_op_(x: torch.Tensor, y: torch.Tensor) -> None:\n'
        '    ...\n'
        '\n'
        '@my_op_.register_fake\n'
        'def _(x: torch.Tensor, y: torch.Tensor) -> None:\n'
        '    return None'
    ),
)  # fmt: skip
def custom_op_schema_mismatch(project: LintProject) -> Iterator[Violation]:
    """A custom_op's inferred schema differs from the schema declared for the same op elsewhere.

    torch registers the schema inferred from the annotations and ``mutates_args``; the declared one
    (``--schema``, op_plugin_functions.yaml, ``Library.define``) is what generators, converters and
    msOpGen were built from. ``mutates_args`` must name exactly the ``Tensor(a!)`` arguments: an
    argument written but not listed loses its write under functionalization.
    """
    if not project.python_files:
        return
    index = project_index(project)
    for file in project.python_files:
        for op in file.custom_ops:
            own = index.inferred_from(file.path, op)
            if own is None:
                continue
            probe = Registration(op.namespace, op.name, "fake", op.function, op.line, op.column)
            for declared in (s for s in index.declaring(probe) if s is not own):
                where = f"{declared.site.path}:{declared.site.line}"
                written = {a.name for a in own.sig.mutated_arguments}
                expected = {a.name for a in declared.sig.mutated_arguments}
                if written != expected:
                    message = f"mutates_args covers {sorted(written)} but {where} declares {sorted(expected)} as Tensor(a!)"
                elif comparable(own.sig) != comparable(declared.sig):
                    message = f"inferred schema '{own.sig}' differs from '{declared.sig}' declared at {where}"
                else:
                    continue
                yield Violation(message, line=op.line, column=op.column, path=file.path, op=op.name)
