"""K206 gen-opapi-disagrees-with-meta."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.formats.meta_outputs import CreatedTensor, aten_dtype, read_meta_outputs
from opkit.lint.finding import Severity, Violation
from opkit.lint.project import LintProject
from opkit.lint.registry import rule
from opkit.lint.rules.effects.common import compare_dtypes
from opkit.lint.rules.registrations.common import bound
from opkit.signature import SchemaKind

_YAML = (
    '# file: op_plugin_functions.yaml\n'
    'custom:\n'
    '  - func: my_quant(Tensor x) -> (Tensor, Tensor)\n'
    '    op_api: all_version\n'
    '    gen_opapi:\n'
    '      y:\n'
    '        size: x\n'
    '        dtype: at::kChar\n'
    '      scale:\n'
    '        size: x\n'
    '        dtype: at::kFloat\n'
    '      exec: aclnnMyQuant\n'
)
_META = (
    '# file: meta.py\n'
    'import torch\n'
    'from torch.library import Library, impl\n'
    '\n'
    'm = Library("npu", "IMPL", "Meta")\n'
    '\n'
    '@impl(m, "my_quant")\n'
    'def my_quant_meta(x):\n'
)


@rule(
    "K206", "gen-opapi-disagrees-with-meta", severity=Severity.ERROR, scope="project",
    example=_YAML + _META + '    return torch.empty_like(x, dtype=torch.int8), torch.empty_like(x, dtype=torch.float16)',
    fixed=_YAML + _META + '    return torch.empty_like(x, dtype=torch.int8), torch.empty_like(x, dtype=torch.float32)',
)  # fmt: skip
def gen_opapi_disagrees_with_meta(project: LintProject) -> Iterator[Violation]:
    """The ``gen_opapi`` entry allocates an output with another dtype than the op's Meta gives it.

    op-plugin's codegen writes the op's kernel from ``gen_opapi``: each result is allocated with its
    ``size`` and ``dtype`` (an input's name, or a C++ expression such as ``at::kFloat``). The Meta
    registration is what torch.compile and npugraph_ex believe instead; where they differ the compiled graph
    computes with the wrong dtype (op-plugin fixed two such entries). Compared without running anything:
    a dtype named in both (``at::kChar`` against ``torch.int8``), or an input's dtype on one side
    (``dtype: x``, ``empty_like(x)``) against a named one on the other. Where either side is an
    expression opkit does not evaluate (a ternary, a helper call, a Meta whose return is not a factory
    call), or both follow different inputs, it cannot tell and says nothing. Sizes are not compared: two
    inputs' shapes may coincide, and size expressions need the sample inputs verify runs.
    """
    if not project.python_files or not project.yaml_files:
        return
    # here, not at the top: importing the yaml rules' package registers them, which a lint without a yaml never needs
    from opkit.lint.rules.op_plugin_yaml.common import gen_opapi_blocks

    blocks: dict = {}
    for file in project.yaml_files:
        for gen in gen_opapi_blocks(file):
            if gen.fact.op is not None:
                blocks.setdefault((file.path, gen.fact.op), gen)
    for b in bound(project):
        gen = blocks.get((b.schema.site.path, b.schema.sig.full_name))
        if gen is None or gen.signature.kind is not SchemaKind.FUNCTIONAL:
            continue
        returns = gen.signature.returns
        outputs = list(gen.outputs.items())
        if len(outputs) != len(returns) or any(r.alias is not None or not r.type.is_tensor for r in returns):
            continue  # Y101 reports a count that does not match
        meta = read_meta_outputs(b.reg.function.node).outputs if b.reg.function.node is not None else None
        if meta is None or len(meta) != len(returns):
            continue  # cannot tell: the Meta's returns are not read (M006 judges their structure)
        tensors = {a.name for a in gen.signature.arguments if a.is_tensor}
        for index, ((key, spec), made) in enumerate(zip(outputs, meta)):
            if made is None or spec.kind != "mapping" or "dtype" not in spec.value:
                continue
            node = spec.value["dtype"]
            written = str(node.value).strip()
            yaml_dtype = f"like:{written}" if written in tensors else aten_dtype(written)
            problem = compare_dtypes(yaml_dtype, made.dtype)
            if problem is None:
                continue
            line, column = gen.where(node=node)
            yield Violation(
                f"gen_opapi allocates {key} (output {index}) as {_said(yaml_dtype, written)}, but {b.reg.function.name} "
                f"(the Meta, {b.file.path}:{made.line}) makes it {_made(made)}: {problem}",
                line=line, column=column, path=file_of(gen, project), op=gen.fact.op,
                hint="make the two agree: the dtype the kernel really produces belongs in both (the yaml's dtype: and the Meta's dtype=)",
            )  # fmt: skip


def _said(dtype: str | None, written: str) -> str:
    return f"the dtype of {written}" if dtype and dtype.startswith("like:") else f"{dtype} ({written})"


def _made(made: CreatedTensor) -> str:
    dtype = made.dtype or "?"
    return f"the dtype of {dtype[5:]}" if dtype.startswith("like:") else "float32 (torch's default dtype)" if dtype == "default" else dtype


def file_of(gen, project: LintProject) -> str | None:
    """The yaml file holding ``gen`` (the violation's path: the rule is a project rule)."""
    return next((f.path for f in project.yaml_files if any(e is gen.fact.entry for e in f.entries)), None)
