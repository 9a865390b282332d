"""K204 meta-dtype-differs-from-kernel."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from opkit.effects.model import OpEffects
from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import compare_dtypes, effects_of, my_ops_example

_KERNEL = (
    "at::Tensor my_quant(const at::Tensor &x)\n"
    "{\n"
    '    TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16, "x: float16 or bfloat16");\n'
    "    at::Tensor y = at::empty_like(x, x.options().dtype(at::kChar));\n"
    "    return y;\n"
    "}"
)
_REGISTRATIONS = (
    'TORCH_LIBRARY(my_ops, m) { m.def("my_quant(Tensor x) -> Tensor"); }',
    'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_quant", TORCH_FN(my_quant)); }',
    'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_quant", &my_quant_meta); }',
)


@rule(
    "K204", "meta-dtype-differs-from-kernel", severity=Severity.ERROR, scope="project",
    example=my_ops_example(_KERNEL, "at::Tensor my_quant_meta(const at::Tensor &x) { return at::empty_like(x); }", *_REGISTRATIONS),
    fixed=my_ops_example(_KERNEL, "at::Tensor my_quant_meta(const at::Tensor &x) { return at::empty_like(x, x.options().dtype(at::kChar)); }", *_REGISTRATIONS),
)  # fmt: skip
def meta_dtype_differs_from_kernel(project: LintProject) -> Iterator[Violation]:
    """The op's Meta/fake gives an output another dtype than the kernel allocates it with.

    torch.compile and npugraph_ex build the graph from the Meta: every op after this one is traced, and
    compiled, for the dtype the Meta says, while the kernel returns another (vllm-ascend's
    ``npu_rms_norm_dynamic_quant``: the Meta returns ``empty_like(x)``, the kernel allocates int8). Off the NPU
    nothing runs the kernel, so only a reader sees it. Compared: the dtype each side names (``at::kChar``,
    ``torch.int8``), and an input's dtype on one side (``empty_like(x)``) against a named one on the other
    when the kernel's ``TORCH_CHECK``s accept that input only in other dtypes. Where either side is an
    expression opkit does not evaluate, or the kernel's allocation is not read, it says nothing. Give the Meta
    the kernel's dtype (``dtype=torch.int8``, ``x.options().dtype(at::kChar)``).
    """
    effects = effects_of(project)
    if not effects:
        return
    for meta in _metas(project):
        kernel = effects.get(meta.op)
        if kernel is None:
            continue
        checked = _checked_dtypes(project, kernel)
        for ret in kernel.returns:
            allocation = ret.allocation
            if allocation is None or allocation.dtype is None or ret.index >= len(meta.outputs) or meta.outputs[ret.index] is None:
                continue
            dtype, line, column = meta.outputs[ret.index]
            problem = compare_dtypes(allocation.dtype, dtype, checked)
            if problem is None:
                continue
            where = allocation.evidence
            yield Violation(
                f"{meta.function} (the Meta of {meta.op}) makes output {ret.index} {_said(dtype)}, but the kernel allocates it as "
                f"{_said(allocation.dtype)}" + (f" ({where})" if where is not None else "") + f": {problem}",
                line=line, column=column, path=meta.path, op=meta.op,
                hint=f"give the Meta's output {ret.index} the kernel's dtype ({_said(allocation.dtype)})",
            )  # fmt: skip


@dataclass(frozen=True)
class _Meta:
    op: str  # "ns::name[.overload]", as the effects name it
    function: str
    path: str
    outputs: tuple[tuple[str | None, int, int] | None, ...]  # per return: (dtype, line, column) of its creation


def _metas(project: LintProject) -> Iterator[_Meta]:
    """Each Meta/fake of the project (Python registrations and C++ ``Meta`` impls) and the dtype of each output."""
    from opkit.formats.meta_outputs import read_meta_outputs
    from opkit.lint.rules.registrations.common import bound

    for b in bound(project):
        if b.reg.function.node is None:
            continue
        outputs = read_meta_outputs(b.reg.function.node).outputs
        if outputs is None:
            continue
        op = f"{b.schema.namespace}::{b.schema.sig.full_name}" if b.schema.namespace else b.schema.sig.full_name
        yield _Meta(op, b.reg.function.name, b.file.path, tuple((o.dtype, o.line, o.column) if o is not None else None for o in outputs))
    cpp_metas = [(file, impl) for file in project.cpp_files for impl in file.impls if impl.dispatch_key == "Meta"]
    if not cpp_metas:
        return
    from opkit.effects.cpp import read_kernels
    from opkit.effects.device import schemas_by_op

    schemas = schemas_by_op(project)
    metas = [(f"{impl.namespace}::{impl.op}" if impl.namespace else impl.op, file, impl) for file, impl in cpp_metas]
    metas = [(op, file, impl) for op, file, impl in metas if op in schemas]
    kernels = ((op, schemas[op], impl.kernel, "Meta", file.path, impl.line, impl.column) for op, file, impl in metas)
    for (op, file, impl), read in zip(metas, read_kernels(project, kernels)):
        sig = schemas[op]
        outputs: list = [None] * len(sig.returns)
        for ret in read.returns:
            a = ret.allocation
            if a is not None and a.evidence is not None and ret.index < len(outputs):
                outputs[ret.index] = (a.dtype, a.evidence.line, a.evidence.column)
        path = read.kernels[0].path if read.kernels else file.path
        yield _Meta(op, impl.kernel.name or "the Meta", path, tuple(outputs))


_CHECK = re.compile(r"TORCH_CHECK\s*\(")
_DTYPE_TEST = re.compile(r"([A-Za-z_]\w*)\s*\.\s*(?:scalar_type|dtype)\s*\(\s*\)\s*==\s*(?:at|torch|c10)::(?:ScalarType::)?(\w+)")


def _checked_dtypes(project: LintProject, kernel: OpEffects) -> dict[str, frozenset[str]]:
    """Input → the dtypes the C++ kernel's ``TORCH_CHECK(x.scalar_type() == at::kHalf || ...)`` accept for it,
    by schema argument name (the kernel's parameters are the schema's arguments in order)."""
    from opkit.formats.meta_outputs import aten_dtype
    from opkit.effects.device import schemas_by_op

    sig = schemas_by_op(project).get(kernel.op)
    found: dict[str, frozenset[str]] = {}
    for site in kernel.kernels:
        if site.language != "c++":
            continue
        fn = next((f for f in project.cpp_functions.get(site.function.rsplit("::", 1)[-1], ()) if f.path == site.path and f.line == site.line and f.body != (0, 0)), None)
        text = project.cpp_texts.get(site.path)
        if fn is None or text is None or sig is None or len(fn.parameters) != len(sig.arguments):
            continue
        names = {p.name: a.name for p, a in zip(fn.parameters, sig.arguments) if p.name}
        body = text[fn.body[0] : fn.body[1]]
        for m in _CHECK.finditer(body):
            condition = body[m.end() : body.find(",", m.end()) if "," in body[m.end() :] else len(body)]
            if "&&" in condition or "!=" in condition:
                continue
            tests = _DTYPE_TEST.findall(condition)
            variables = {v for v, _ in tests}
            if len(variables) != 1 or condition.count("==") != len(tests):
                continue
            dtypes = {aten_dtype(f"at::{d}") for _, d in tests}
            if None in dtypes:
                continue
            name = names.get(variables.pop())
            if name is not None:
                found[name] = found.get(name, frozenset(dtypes)) & frozenset(dtypes)
    return found


def _said(dtype: str | None) -> str:
    if dtype is None:
        return "?"
    return f"the dtype of {dtype[5:]}" if dtype.startswith("like:") else "float32 (torch's default dtype)" if dtype == "default" else dtype
