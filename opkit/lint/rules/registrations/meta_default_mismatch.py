"""M005 meta-default-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound, python_default, schema_default, schema_name, UNKNOWN
from opkit.lint.project import LintProject


@rule(
    "M005", "meta-default-mismatch", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: my_op(Tensor x, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x, k):\n'
        '    return torch.empty_like(x)'
    ),
    fixed=(
        '# schema: my_op(Tensor x, int k=1) -> Tensor\n'
        '# file: meta.py\n'
        'import torch\n'
        'from torch.library import Library, impl\n'
        '\n'
        'm = Library("npu", "IMPL", "Meta")\n'
        '\n'
        '@impl(m, "my_op")\n'
        'def my_op_meta(x, k=1):\n'
        '    return torch.empty_like(x)'
    ),
)  # fmt: skip
def meta_default_mismatch(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake parameter's default disagrees with the schema's default.

    PyTorch drops trailing positional arguments that equal their default, and keyword-only arguments
    that equal theirs. Without a default the function then raises "missing argument" for such calls;
    with a different default it silently computes with a value the caller did not pass. A schema
    default of ``None`` with a concrete Meta default (``dst_type=None`` against ``dst_type=1``) is
    not reported: ``None`` means "the kernel chooses", and the Meta function spells out the choice.
    Nor is a Meta default of ``None`` that the function resolves itself (``if dilation is None:``),
    nor a different default of a parameter the function never reads: it cannot change the result.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        positional = sig.positional_arguments
        for a in sig.omittable_arguments:
            if a.kwarg_only:
                p = fn.parameter(a.name)
            else:
                j = positional.index(a)
                p = fn.positional[j] if j < len(fn.positional) else None
            if p is None:
                continue
            if not p.has_default:
                yield b.violation(f"schema argument '{a.name}' defaults to {a.default}: calls that leave it there drop it, and {fn.name}'s '{p.name}' has no default")
                continue
            if schema_name(p.name) != a.name and sig.argument(schema_name(p.name)) is not None:
                continue  # the parameter stands for another schema argument: misplaced (M003), not a default
            expected, found = schema_default(a), python_default(p.default)
            if found is None and p.name in fn.none_tested:
                continue
            if expected is not UNKNOWN and found is not UNKNOWN and expected != found and expected is not None and p.name in fn.names_read:
                yield b.violation(f"'{p.name}' defaults to {p.default_text} but the schema's '{a.name}' defaults to {a.default}: calls that pass {a.default} get {p.default_text}")
