"""M007 meta-returns-for-void-op."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.registrations.common import bound
from opkit.lint.project import LintProject


@rule(
    "M007", "meta-returns-for-void-op", severity=Severity.ERROR, scope="project",
    example=(
        '# schema: mylib::my_op_(Tensor(a!) x) -> ()\n'
        '# file: meta.py\n'
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::my_op_", mutates_args=("x",))\n'
        'def my_op_(x: torch.Tensor) -> None:\n'
        '    ...\n'
        '\n'
        '@my_op_.register_fake\n'
        'def _(x: torch.Tensor) -> None:\n'
        '    return x'
    ),
    fixed=(
        '# schema: mylib::my_op_(Tensor(a!) x) -> ()\n'
        '# file: meta.py\n'
        'import torch\n'
        '\n'
        '@torch.library.custom_op("mylib::my_op_", mutates_args=("x",))\n'
        'def my_op_(x: torch.Tensor) -> None:\n'
        '    ...\n'
        '\n'
        '@my_op_.register_fake\n'
        'def _(x: torch.Tensor) -> None:\n'
        '    return None'
    ),
)  # fmt: skip
def meta_returns_for_void_op(project: LintProject) -> Iterator[Violation]:
    """The schema returns ``()`` (an in-place or mutable op) but the Meta/fake function returns a value.

    PyTorch checks "Expected ... to return None but it returned something else instead". Returning
    the mutated input, the habit of eager in-place ops, is exactly what functionalization forbids
    (see S101): the op's result is the write to the ``Tensor(a!)`` argument, not a return value.
    """
    for b in bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if sig.returns:
            continue
        for ret in fn.returns:
            if ret.shape == "param":
                mutated = " (the mutated input)" if any(a.name == ret.param for a in sig.mutated_arguments) else ""
                yield b.violation(f"{fn.name} returns '{ret.param}'{mutated} at line {ret.line}, but the schema returns (): return None")
            elif ret.shape in ("tensor", "tuple", "list"):
                yield b.violation(f"{fn.name} returns a {ret.shape} at line {ret.line}, but the schema returns (): return None")
