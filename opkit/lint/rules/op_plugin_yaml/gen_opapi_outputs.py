"""Y101 gen-opapi-outputs."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import gen_opapi_blocks, OUTPUT_FIELDS
from opkit.formats.op_plugin_yaml import OpPluginFile
from opkit.signature import SchemaKind


@rule(
    "Y101",
    "gen-opapi-outputs",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> (Tensor, Tensor)\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out:\n'
        '        size: x\n'
        '        dtype: x\n'
        '      exec: aclnnMyOp'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> (Tensor, Tensor)\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out0:\n'
        '        size: x\n'
        '        dtype: x\n'
        '      out1:\n'
        '        size: x\n'
        '        dtype: x\n'
        '      exec: aclnnMyOp'
    ),
)
def gen_opapi_outputs(file: OpPluginFile) -> Iterator[Violation]:
    """gen_opapi's result keys do not match what the schema returns.

    A functional op needs one result key per returned Tensor, each with both ``size`` and ``dtype``
    (the key names the C++ result variable); so does every result a mutable op allocates. An out
    variant's keys must be names of its out arguments (size and dtype default to the argument). An
    in-place op allocates nothing and needs none (``self: {name: ...}`` only propagates names). A result maps to
    ``size``, ``dtype`` and optionally ``name`` (the tensor whose names propagate). The codegen
    raises on a wrong count, a missing size/dtype or an unknown out key.
    """
    for gen in gen_opapi_blocks(file):
        sig, outputs, op = gen.signature, gen.outputs, gen.fact.op
        kind = sig.kind
        if kind is SchemaKind.OUT:
            out_names = [a.name for a in sig.out_arguments]
            for key in outputs:
                if key not in out_names:
                    line, column = gen.where(key=key)
                    yield Violation(f"'{key}' is not an out argument of {sig.full_name} ({', '.join(out_names)}){gen.suffix}", line=line, column=column, op=op)
        elif kind is SchemaKind.FUNCTIONAL:
            tensors = [r for r in sig.returns if r.type.is_tensor]
            if any(r.type.is_list or r.type.optional for r in tensors):
                line, column = gen.anchor
                yield Violation(f"{sig.full_name} returns Tensor[] or Tensor?, which gen_opapi cannot allocate{gen.suffix}", line=line, column=column, op=op)
            elif len(outputs) != len(tensors):
                line, column = gen.anchor
                yield Violation(
                    f"{len(outputs)} result key(s) ({', '.join(outputs) or 'none'}) for {len(tensors)} returned Tensor(s){gen.suffix}",
                    line=line,
                    column=column,
                    hint=f"one key per returned tensor, e.g. {', '.join(sig.output_names)}",
                    op=op,
                )
        for key, node in outputs.items():
            line, column = gen.where(key=key)
            if node.kind != "mapping":
                yield Violation(f"result '{key}' must map size/dtype, found {node.plain!r}{gen.suffix}", line=line, column=column, op=op)
                continue
            for extra in (k for k in node.value if k not in OUTPUT_FIELDS):
                extra_line, extra_column = node.key_position(extra) if gen.inherited_from is None else gen.anchor
                yield Violation(f"result '{key}' has unknown field '{extra}' (expected {', '.join(OUTPUT_FIELDS)}){gen.suffix}", line=extra_line, column=extra_column, op=op)
            if kind in (SchemaKind.FUNCTIONAL, SchemaKind.MUTABLE):  # these allocate their results
                missing = [f for f in ("size", "dtype") if f not in node.value]
                if missing:
                    yield Violation(f"result '{key}' has no {' and no '.join(missing)}: an allocated result needs both (only out and in-place results default to the argument){gen.suffix}", line=line, column=column, op=op)
