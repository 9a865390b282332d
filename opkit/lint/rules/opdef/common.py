"""Facts and helpers the OpDef rules share."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from opkit import naming
from opkit.lint.project import LintProject
from opkit.signature import OpSignature

if TYPE_CHECKING:  # the C++ reader is imported when a C++ file is read, not for a yaml-only lint
    from opkit.formats.opdef_cpp import OpDefFile
    from opkit.formats.source_op import SourceOp


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
    of the non-in-place name is the one the OpDef serves, as for the J1xx rules. An OpDef with per-SoC
    ``OpAICoreConfig`` descriptors is paired once per distinct view a SoC builds (``soc_views``).
    """
    for file, op, sig in _pairs(project):
        for view in soc_views(op):
            yield file, view, sig


def soc_views(op: SourceOp) -> list[SourceOp]:
    """The op as each of its SoCs builds it: a SoC given an ``OpAICoreConfig`` with inputs or outputs of its
    own builds those (the op's own where the config declares none); the others build the op's own. The
    op's own view is left out when every SoC has a config of its own, and equal views count once."""
    views: list[SourceOp] = []
    covered = {soc for config in op.soc_configs for soc in config.socs}
    if not op.soc_configs or not op.socs or any(soc not in covered for soc in op.socs):
        views.append(op)
    for config in op.soc_configs:
        views.append(replace(op, inputs=config.inputs or op.inputs, outputs=config.outputs or op.outputs))
    unique: dict[tuple, SourceOp] = {}
    for view in views:
        key = tuple((t.name, t.param_type) for t in (*view.inputs, *view.outputs))
        unique.setdefault(key, view)
    return list(unique.values())


def _pairs(project: LintProject) -> Iterator[tuple[OpDefFile, SourceOp, OpSignature]]:
    if not project.opdef_files:
        return
    named = _exec_op_types(project)
    # A C++ TORCH_LIBRARY def is not the OpDef's interface: its hand-written C++ kernel maps the schema's
    # arguments onto the aclnn call (vllm-ascend's `r1, r2` become the OpDef's `cos, sin`), so it is not paired.
    cpp_paths = {f.path for f in project.cpp_files}
    sigs = [
        (s.signature, named.get((s.path, s.line)))
        for s in project.all_schema_sites()
        if s.is_custom and s.signature is not None and s.path not in cpp_paths
    ]
    for file in project.opdef_files:
        for op in file.ops:
            matches = sorted((sig for sig, exec_type in sigs if op.op_type in (sig.op_type, exec_type)), key=lambda s: (s.overload != "", s.is_inplace_name))
            if matches:
                yield file, op, matches[0]


def _exec_op_types(project: LintProject) -> dict[tuple[str, int], str]:
    """(path, func line) of each yaml entry whose gen_opapi ``exec`` calls ``aclnn<OpType>`` → that OpType.

    An op named apart from its kernel (``npu_swiglu`` running SwiGlu, ``opkit new --op-type``) is paired
    with its OpDef through the aclnn function its entry calls, as the built op is."""
    named = {}
    for file in project.yaml_files:
        for entry in file.entries:
            func, gen = entry.get("func"), entry.get("gen_opapi")
            exec_node = gen.value.get("exec") if gen is not None and isinstance(gen.value, dict) else None
            op_type = naming.op_type_of_exec(exec_node.value) if exec_node is not None and isinstance(exec_node.value, str) else None
            if func is not None and op_type:
                named[(file.path, func.line)] = op_type
    return named


def operand_arguments(sig: OpSignature):
    """The schema's kernel inputs, in order: tensors, tensor lists and Scalar operands."""
    return [a for a in sig.arguments if a.type.is_input]


def input_pairs(sig: OpSignature, op: SourceOp) -> list[tuple]:
    """(schema argument, OpDef input) pairs: by name where every argument has its input, else by position,
    which is how aclnn passes them (``bias_opt`` is the input ``bias`` at its place)."""
    arguments = operand_arguments(sig)
    inputs = {t.name: t for t in op.inputs}
    if all(a.name in inputs for a in arguments):
        return [(a, inputs[a.name]) for a in arguments]
    return list(zip(arguments, op.inputs)) if len(arguments) == len(op.inputs) else [(a, inputs[a.name]) for a in arguments if a.name in inputs]
