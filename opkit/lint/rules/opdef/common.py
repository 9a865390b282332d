"""Facts and helpers the OpDef rules share."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.adopt.model import SourceOp
from opkit.lint.sources import LintProject
from opkit.lint.sources.opdef_cpp import OpDefFile
from opkit.signature import OpSignature


def opdef_example(inputs: str, outputs: str = 'this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});', extra: str = 'this->AICore().AddConfig("ascend910b");') -> str:
    """An OpDef of op MyOp for rule examples: its input and output declarations, then ``extra``."""
    return (
        "class MyOp : public OpDef {\n"
        "public:\n"
        "    explicit MyOp(const char* name) : OpDef(name)\n"
        "    {\n"
        f"        {inputs}\n"
        f"        {outputs}\n"
        f"        {extra}\n"
        "    }\n"
        "};\n"
        "OP_ADD(MyOp);"
    )


def pairs(project: LintProject) -> Iterator[tuple[OpDefFile, SourceOp, OpSignature]]:
    """Each OpDef with the new op's schema of the same OpType (yaml, Python registration or --schema).

    Overloads share an OpType (``my_op``, ``my_op.out``, ``my_op_`` → ``MyOp``): the default overload
    of the non-in-place name is the one the OpDef serves, as for the J1xx rules.
    """
    if not project.opdef_files:
        return
    sigs = [s.signature for s in project.all_schema_sites() if s.is_custom and s.signature is not None]
    for file in project.opdef_files:
        for op in file.ops:
            matches = sorted((sig for sig in sigs if sig.op_type == op.op_type), key=lambda s: (s.overload != "", s.is_inplace_name))
            if matches:
                yield file, op, matches[0]


def operand_arguments(sig: OpSignature):
    """The schema's kernel inputs, in order: tensors, tensor lists and Scalar operands."""
    return [a for a in sig.arguments if a.type.is_input]
