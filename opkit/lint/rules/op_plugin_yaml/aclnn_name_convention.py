"""Y106 aclnn-name-convention."""

from __future__ import annotations

import re
from collections.abc import Iterator

from opkit import naming
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import exec_parts, gen_opapi_blocks
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y106",
    "aclnn-name-convention",
    severity=Severity.INFO,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOperator'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: x, dtype: x}\n'
        '      exec: aclnnMyOp'
    ),
)
def aclnn_name_convention(file: OpPluginFile) -> Iterator[Violation]:
    """``exec`` calls an aclnn function whose name follows none of CANN's naming conventions.

    A note, not a fault. The convention is ``aclnn`` + the op type, the UpperCamelCase base name, with
    the variations real op-plugin entries use: the ``npu_`` prefix (and a leading ``_``) dropped
    (``npu_add_rms_norm`` → ``aclnnAddRmsNorm``), ``Inplace`` before in-place kernels
    (``aclnnInplaceAddRelu``), a revision suffix (``aclnnGeluV2``), acronyms in capitals
    (``aclnnGridSampler2D``, ``aclnnIsClose``), ``Grad`` for ``_backward``, and an overload's operand
    kinds after the name (``aclnnPowTensorScalar``, ``aclnnMedianDim``, ``aclnnLerps``). Anything else
    is another kernel's name: right for some existing ops, often a typo in a new one.
    """
    for gen in gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        parts = exec_parts(node) if node is not None and gen.inherited_from is None else None
        if parts and parts[0] and not follows_cann_convention(parts[0], gen.signature.base_name):
            yield Violation(
                f"exec calls '{parts[0]}', which follows no aclnn naming convention for '{gen.signature.base_name}' (expected '{expected_exec(gen.signature.base_name)}' or a variant)",
                line=node.line,
                column=node.column,
                op=gen.fact.op,
            )


# Variations CANN's aclnn names take on the op type (measured on the real op_plugin_functions.yaml).
_INPLACE = re.compile(r"^Inplace")
_REVISION = re.compile(r"V\d+$")
_OPERAND_KINDS = re.compile(r"(?:(?:Tensor|Scalar)+(?:Self|Other)?|Dim|All|s)$")


def _squash(name: str) -> str:
    """Case and underscores do not count: ``GridSampler2D`` is ``grid_sampler_2d``, ``IsClose`` is ``isclose``."""
    return name.replace("_", "").lower()


def _op_part(base_name: str) -> str:
    """The part of an op's name CANN's op type spells: without ``npu_`` and leading underscores."""
    return re.sub(r"^_*(?:npu_)?", "", base_name)


def expected_exec(base_name: str) -> str:
    return "aclnn" + naming.upper_camel(_op_part(base_name))


def follows_cann_convention(exec_name: str, base_name: str) -> bool:
    """Whether ``exec_name`` is ``aclnn`` + the op type of ``base_name`` under one of CANN's variations."""
    if not exec_name.startswith("aclnn"):
        return False
    op = re.sub(r"_?v\d+$", "", _op_part(base_name))  # npu_sort_v2 → sort: the revision is matched below
    wanted = {_squash(op), _squash(op.replace("backward", "grad"))}
    kernel = _REVISION.sub("", _INPLACE.sub("", exec_name[len("aclnn") :]))
    return _squash(kernel) in wanted or _squash(_OPERAND_KINDS.sub("", kernel)) in wanted
