"""msOpGen 26.0.0 facts and the PyTorch-schema → prototype-JSON mapping (msopgen.md §1-2, §4).

One table per fact, used by the generator (what opkit writes) and the J rules (what opkit accepts),
so the two cannot drift. Nothing here imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opkit.signature import Argument, OpSignature

# dtype string (case-sensitive) → ge:: enum
DTYPES: dict[str, str] = {
    "float": "DT_FLOAT", "fp32": "DT_FLOAT", "float32": "DT_FLOAT",
    "fp16": "DT_FLOAT16", "float16": "DT_FLOAT16", "half": "DT_FLOAT16",
    "bf16": "DT_BF16", "bfloat16": "DT_BF16",
    "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64",
    "uint8": "DT_UINT8", "uint16": "DT_UINT16", "uint32": "DT_UINT32", "uint64": "DT_UINT64",
    "bool": "DT_BOOL", "double": "DT_DOUBLE",
    "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
    "qint8": "DT_QINT8", "qint16": "DT_QINT16", "qint32": "DT_QINT32",
    "quint8": "DT_QUINT8", "quint16": "DT_QUINT16",
}  # fmt: skip

# Formats msOpGen knows; ND is the default for PyTorch ops. NCL is not one: msOpGen only warns (msopgen.md §6).
FORMATS: frozenset[str] = frozenset(
    """ND NCHW NHWC NC1HWC0 FRACTAL_Z FRACTAL_NZ NCDHW NDHWC NDC1HWC0 FRACTAL_Z_3D HWCN CHWN DHWCN NC CN
    NC1HWC0_C04 FRACTAL_Z_C04 C1HWNCoC0 FRACTAL_ZN_LSTM FRACTAL_Z_3D_TRANSPOSE""".split()
)

# JSON attr type → OpAttrDef method; unknown attr types are silently dropped by msOpGen.
ATTR_METHODS: dict[str, str] = {
    "int": "Int", "float": "Float", "bool": "Bool", "string": "String",
    "list_int": "ListInt", "list_float": "ListFloat", "list_bool": "ListBool", "list_list_int": "ListListInt",
}  # fmt: skip

TENSOR_PARAM_TYPES = ("required", "optional", "dynamic")
ATTR_PARAM_TYPES = ("required", "optional")
FORBIDDEN_DEFAULT_CHARS = frozenset(";'\"()\n\t`")
MAX_DEFAULT_LENGTH = 1024

DEFAULT_DTYPES = ("float16", "float", "bfloat16")
DEFAULT_FORMATS = ("ND",)


@dataclass(frozen=True)
class TensorDesc:
    name: str
    param_type: str
    types: tuple[str, ...]
    formats: tuple[str, ...]

    def to_json(self) -> dict:
        return {"name": self.name, "param_type": self.param_type, "format": list(self.formats), "type": list(self.types)}


@dataclass(frozen=True)
class AttrDesc:
    name: str
    type: str
    param_type: str = "required"
    default_value: str | None = None

    def to_json(self) -> dict:
        d = {"name": self.name, "param_type": self.param_type, "type": self.type}
        if self.default_value is not None:
            d["default_value"] = self.default_value
        return d


@dataclass(frozen=True)
class Prototype:
    """One op of an msOpGen input JSON."""

    op: str
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    attrs: tuple[AttrDesc, ...]

    def to_json(self) -> dict:
        d: dict = {"op": self.op, "language": "cpp", "input_desc": [i.to_json() for i in self.inputs], "output_desc": [o.to_json() for o in self.outputs]}
        if self.attrs:
            d["attr"] = [a.to_json() for a in self.attrs]
        return d

    @property
    def kernel_parameters(self) -> tuple[str, ...]:
        """The kernel's GM_ADDR parameters in msOpGen's order; an output named like an input is ``<name>_ref``."""
        inputs = [i.name for i in self.inputs]
        outputs = [f"{o.name}_ref" if o.name in inputs else o.name for o in self.outputs]
        return (*inputs, *outputs, "workspace", "tiling")


class UnsupportedSignature(ValueError):
    """The schema has an argument msOpGen cannot declare (S203 explains which and why)."""


def json_default(default: str) -> str:
    """A schema default as msOpGen's ``default_value`` text: ``True`` → ``true``, ``[1,1]`` kept."""
    return {"True": "true", "False": "false"}.get(default, default)


def attr_default(arg: Argument) -> bool | int | float | str | list:
    """The value of an attr argument's schema default (``int[2] k=1`` → ``[1, 1]``, ``str m="a"`` → ``a``).

    One parser for every consumer (prototype JSON, OpDef C++, Meta/fake Python), so the three
    spellings of a default cannot disagree. Raises UnsupportedSignature for defaults msOpGen cannot
    carry (``None``, ``inf``, or text it rejects).
    """
    text = arg.default
    if text is None:
        raise ValueError(f"argument {arg.name!r} has no default")
    if text == "None":
        raise UnsupportedSignature(f"attr '{arg.type} {arg.name}=None' has no msOpGen default; give a value default or drop it")
    try:
        value = arg.default_value
    except ValueError:
        raise UnsupportedSignature(f"default {text!r} of '{arg.name}' is not a literal msOpGen can carry") from None
    if isinstance(value, str) and (FORBIDDEN_DEFAULT_CHARS & set(value) or len(value) > MAX_DEFAULT_LENGTH):
        raise UnsupportedSignature(f"default {text!r} of '{arg.name}' contains characters msOpGen rejects")
    return value


def default_value_text(value: bool | int | float | str | list) -> str:
    """msOpGen's ``default_value`` text for a default: ``true``, ``1``, ``1e-06``, ``abc``, ``{1,1}``.

    msOpGen pastes the text into C++ (``ListInt(<text>)``): a list needs braces, ``[1,1]`` does not compile.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "{" + ",".join(default_value_text(v) for v in value) + "}"
    return str(value)


# SoC version (as `-c ai_core-<soc>` takes it) → the chip family msOpGen writes in AddConfig and
# ASCEND_COMPUTE_UNIT (msopgen.md §3). A bare 'ascend910b' means the FIRST-generation Ascend 910.
_SOC_FAMILIES = (
    (re.compile(r"^ascend910b[1-4](?:c|-1)?$"), "ascend910b"),
    (re.compile(r"^ascend910_93\d\d$"), "ascend910_93"),
    (re.compile(r"^ascend310p[1357]$"), "ascend310p"),
    (re.compile(r"^ascend310b[1-4]$"), "ascend310b"),
    (re.compile(r"^ascend910(?:a|b|proa|prob|premiuma)?$"), "ascend910"),
)
SOC_EXAMPLES = ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend910_9391", "ascend310p3")


def soc_family(soc: str) -> str | None:
    """The family msOpGen maps a SoC version to (``ascend910b1`` → ``ascend910b``), or None if unknown."""
    for pattern, family in _SOC_FAMILIES:
        if pattern.match(soc):
            return family
    return None


def compute_unit(soc: str) -> str:
    """msOpGen's ``-c`` value: ``ai_core-<soc>`` (an underscore, then a hyphen)."""
    return f"ai_core-{soc}"


def prototype_from_signature(
    sig: OpSignature, dtypes: tuple[str, ...] = DEFAULT_DTYPES, formats: tuple[str, ...] = DEFAULT_FORMATS
) -> Prototype:
    """torchair's documented mapping: tensors → inputs, other arguments → attrs, returns → outputs.

    Every mutated input is declared again as a same-named output (in-place ops); each fresh return is
    an output named by ``OpSignature.output_names``. Columns are every (dtype, format) pair, so the
    lists of all descriptors line up as msOpGen requires.
    """
    # Column i of every list is one supported (dtype, format) combination: take the cross product.
    column_types = tuple(t for t in dtypes for _ in formats)
    column_formats = tuple(f for _ in dtypes for f in formats)

    def desc(name: str, param_type: str) -> TensorDesc:
        return TensorDesc(name, param_type, column_types, column_formats)

    inputs, attrs = [], []
    for a in sig.arguments:
        if a.is_tensor:
            param_type = a.type.msopgen_param_type
            if a.type.elem_optional:
                raise UnsupportedSignature(f"argument '{a.name}: {a.type}' has no msOpGen input kind")
            inputs.append(desc(a.name, param_type))
            continue
        attr_type = a.type.msopgen_attr_type
        if attr_type is None:
            raise UnsupportedSignature(f"argument '{a.name}: {a.type}' has no msOpGen attr type")
        if a.default is None:
            attrs.append(AttrDesc(a.name, attr_type))
        else:
            attrs.append(AttrDesc(a.name, attr_type, "optional", default_value_text(attr_default(a))))
    outputs = [desc(a.name, "required") for a in sig.mutated_arguments]
    fresh = {id(r) for r in sig.fresh_returns}
    for ret, name in zip(sig.returns, sig.output_names):
        if id(ret) in fresh:
            if not ret.type.is_tensor or ret.type.is_list:
                raise UnsupportedSignature(f"return '{ret}' is not a single Tensor; msOpGen outputs are tensors")
            outputs.append(desc(name, "required"))
    if not outputs:
        # An AI Core op writes its result to an output; an op that returns nothing and mutates nothing does no work.
        raise UnsupportedSignature("the op returns nothing and mutates nothing; return a Tensor or mark the written input Tensor(a!)")
    return Prototype(sig.op_type, tuple(inputs), tuple(outputs), tuple(attrs))
