"""O102 opdef-param-type-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.opdef.common import input_pairs, opdef_example, operand_arguments, pairs
from opkit.lint.project import LintProject

_X = 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'


@rule("O102", "opdef-param-type-mismatch", severity=Severity.ERROR, scope="project",
    example="# schema: my_op(Tensor x, Tensor? y) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + '\n        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'),
    fixed="# schema: my_op(Tensor x, Tensor? y) -> Tensor\n# file: my_op.cpp\n" + opdef_example(_X + '\n        this->Input("y").ParamType(OPTIONAL).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'),
)
def param_type_mismatch(project: LintProject) -> Iterator[Violation]:
    """An OpDef input's ParamType contradicts its argument: ``Tensor`` is REQUIRED, ``Tensor?`` OPTIONAL, ``Tensor[]`` DYNAMIC.

    A REQUIRED input that PyTorch may pass as None crashes the kernel launch; a DYNAMIC input takes an
    ``aclTensorList``, which a single ``Tensor`` is not. Outputs are checked the same way: a mutated
    ``Tensor(a!)[]`` or a ``Tensor[]`` return is a DYNAMIC output.
    """
    for file, op, sig in pairs(project):
        for a, t in input_pairs(sig, op):
            if t.param_type != a.type.msopgen_param_type:
                yield Violation(f"{op.op_type}: input '{a.name}' is {t.param_type.upper()} but the schema declares '{a.type} {a.name}' ({a.type.msopgen_param_type.upper()})", line=t.line, path=file.path, op=op.op_type)
        outputs = {t.name: t for t in op.outputs}
        expected = {a.name: a.type.is_list for a in sig.mutated_arguments}
        expected.update({n: r.type.is_list for r, n in zip(sig.returns, sig.output_names) if r.alias is None})
        for name, is_list in expected.items():
            t = outputs.get(name)
            if t is not None and (t.param_type == "dynamic") != is_list:
                yield Violation(f"{op.op_type}: output '{name}' is {t.param_type.upper()} but the schema's is {'a list' if is_list else 'one tensor'} ({'DYNAMIC' if is_list else 'REQUIRED'})", line=t.line, path=file.path, op=op.op_type)
