"""K203 input-returned-as-fresh-output."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import evidence_text, impls, kernel_name, my_ops_example, promises, returns_place

_META = "at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &y) { return at::empty_like(y); }"
_DEF = 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x, Tensor y) -> Tensor"); }'


def _kernel(result: str) -> str:
    return f"at::Tensor my_op(const at::Tensor &x, const at::Tensor &y)\n{{\n    TORCH_CHECK(x.sizes() == y.sizes(), \"x and y differ in shape\");\n    return {result};\n}}"


@rule(
    "K203", "input-returned-as-fresh-output", severity=Severity.ERROR, scope="project",
    example=my_ops_example(_kernel("y"), _META, _DEF, *impls("my_op_meta")),
    fixed=my_ops_example(_kernel("y.clone()"), _META, _DEF, *impls("my_op_meta")),
)  # fmt: skip
def input_returned_as_fresh(project: LintProject) -> Iterator[Violation]:
    """The op's kernel returns one of its inputs as an output the schema declares fresh.

    A ``Tensor`` return without an alias annotation promises new memory: the compiler may write into it,
    reuse it, or let the input be freed or overwritten while the output lives. A kernel that returns its
    argument (``return y;``, ``std::forward_as_tuple(a, b)``, a ``std::tuple<at::Tensor&, ...>`` return type)
    breaks that promise. Return a fresh tensor (allocate the output, or ``clone()``), or make the op write the
    argument (``Tensor(a!) y``) and return nothing (``-> ()``): on torch 2.13 an untagged custom op with an
    aliased return fails auto-functionalization.
    """
    for promise in promises(project):
        aliased = [r for r in promise.effects.returns if r.known and r.aliases is not None and r.index < len(promise.sig.returns) and promise.sig.returns[r.index].alias is None]
        if not aliased:
            continue
        line, column = returns_place(promise)
        several = len(promise.sig.returns) > 1
        what = ", ".join(f"'{r.aliases}' as output {r.index}" if several else f"'{r.aliases}' as its output" for r in aliased)
        names = [r.aliases for r in aliased]
        yield Violation(
            f"kernel {kernel_name(promise.effects)} returns its input {what} ({evidence_text(aliased[0].evidence, 1, beside=promise.site.path)}), "
            f"but the schema declares {'fresh Tensors' if len(aliased) > 1 else 'a fresh Tensor'}: the compiler may reuse or overwrite one while the other is live",
            line=line, column=column, path=promise.site.path, op=promise.op,
            hint=f"return {'fresh tensors (allocate them' if len(names) > 1 else 'a fresh tensor (allocate it'}, or `{names[0]}.clone()`), or declare `Tensor(a!) {names[0]}` and return nothing (`-> ()`)",
        )  # fmt: skip
