"""msOpGen 26.0.0 facts and the PyTorch-schema → prototype-JSON mapping (msopgen.md §1-2, §4).

One table per fact, used by the generator (what opkit writes) and the J rules (what opkit accepts),
so the two cannot drift. Nothing here imports torch.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from opkit.signature import Argument, DType, OpSignature

# dtype string (case-sensitive) → ge:: enum (msOpGen 26.0.0's config/transform.json, INPUT_OUTPUT_DTYPE_MAP).
DTYPES: dict[str, str] = {
    "float": "DT_FLOAT", "fp32": "DT_FLOAT", "float32": "DT_FLOAT",
    "fp16": "DT_FLOAT16", "float16": "DT_FLOAT16", "half": "DT_FLOAT16",
    "bf16": "DT_BF16", "bfloat16": "DT_BF16",
    "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64",
    "uint8": "DT_UINT8", "uint16": "DT_UINT16", "uint32": "DT_UINT32", "uint64": "DT_UINT64",
    "int2": "DT_INT2", "uint1": "DT_UINT1",
    "bool": "DT_BOOL", "double": "DT_DOUBLE",
    "complex32": "DT_COMPLEX32", "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
    "qint8": "DT_QINT8", "qint16": "DT_QINT16", "qint32": "DT_QINT32",
    "quint8": "DT_QUINT8", "quint16": "DT_QUINT16",
    "string": "DT_STRING", "resource": "DT_RESOURCE",
}  # fmt: skip

# ge:: dtype → the ATen dtype a gen_opapi ``dtype:`` expression names (None: ATen has none).
ATEN_DTYPES: dict[str, str] = {
    "DT_FLOAT": "at::kFloat", "DT_FLOAT16": "at::kHalf", "DT_BF16": "at::kBFloat16", "DT_DOUBLE": "at::kDouble",
    "DT_INT8": "at::kChar", "DT_INT16": "at::kShort", "DT_INT32": "at::kInt", "DT_INT64": "at::kLong",
    "DT_UINT8": "at::kByte", "DT_UINT16": "at::kUInt16", "DT_UINT32": "at::kUInt32", "DT_UINT64": "at::kUInt64",
    "DT_BOOL": "at::kBool", "DT_COMPLEX32": "at::kComplexHalf", "DT_COMPLEX64": "at::kComplexFloat",
    "DT_COMPLEX128": "at::kComplexDouble",
}  # fmt: skip

# Formats msOpGen knows (transform.json FORMAT_LIST); ND is the default for PyTorch ops. NCL is not one.
FORMATS: frozenset[str] = frozenset(
    """NCHW NHWC ND NC1HWC0 FRACTAL_Z NC1C0HWPAD NHWC1C0 FSR_NCHW FRACTAL_DECONV C1HWNC0
    FRACTAL_DECONV_TRANSPOSE FRACTAL_DECONV_SP_STRIDE_TRANS NC1HWC0_C04 FRACTAL_Z_C04 CHWN
    FRACTAL_DECONV_SP_STRIDE8_TRANS HWCN NC1KHKWHWC0 BN_WEIGHT FILTER_HWCK C1HWNCoC0 MD NDHWC FRACTAL_ZZ
    FRACTAL_NZ NCDHW DHWCN NDC1HWC0 FRACTAL_Z_3D CN NC DHWNC FRACTAL_Z_3D_TRANSPOSE FRACTAL_ZN_LSTM
    FRACTAL_ZN_RNN FRACTAL_Z_G""".split()
)

# Every ge::DataType of CANN's public graph/types.h (hicann/metadef inc/external/graph), with its value
# (graph/c_types.h's C_DT_*): what an OpDef may name, a superset of what msOpGen 26.0.0 writes (DTYPES).
GE_DATA_TYPES: dict[str, int] = {
    "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6, "DT_UINT16": 7,
    "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12, "DT_STRING": 13,
    "DT_DUAL_SUB_INT8": 14, "DT_DUAL_SUB_UINT8": 15, "DT_COMPLEX64": 16, "DT_COMPLEX128": 17, "DT_QINT8": 18,
    "DT_QINT16": 19, "DT_QINT32": 20, "DT_QUINT8": 21, "DT_QUINT16": 22, "DT_RESOURCE": 23, "DT_STRING_REF": 24,
    "DT_DUAL": 25, "DT_VARIANT": 26, "DT_BF16": 27, "DT_UNDEFINED": 28, "DT_INT4": 29, "DT_UINT1": 30,
    "DT_INT2": 31, "DT_UINT2": 32, "DT_COMPLEX32": 33, "DT_HIFLOAT8": 34, "DT_FLOAT8_E5M2": 35,
    "DT_FLOAT8_E4M3FN": 36, "DT_FLOAT8_E8M0": 37, "DT_FLOAT6_E3M2": 38, "DT_FLOAT6_E2M3": 39,
    "DT_FLOAT4_E2M1": 40, "DT_FLOAT4_E1M2": 41, "DT_HIFLOAT4": 42, "DT_MAX": 43,
}  # fmt: skip

# Every ge::Format of graph/types.h (without FORMAT_): what an OpDef may name, a superset of FORMATS.
GE_FORMATS: frozenset[str] = frozenset(
    """NCHW NHWC ND NC1HWC0 FRACTAL_Z NC1C0HWPAD NHWC1C0 FSR_NCHW FRACTAL_DECONV C1HWNC0 FRACTAL_DECONV_TRANSPOSE
    FRACTAL_DECONV_SP_STRIDE_TRANS NC1HWC0_C04 FRACTAL_Z_C04 CHWN FRACTAL_DECONV_SP_STRIDE8_TRANS HWCN NC1KHKWHWC0
    BN_WEIGHT FILTER_HWCK HASHTABLE_LOOKUP_LOOKUPS HASHTABLE_LOOKUP_KEYS HASHTABLE_LOOKUP_VALUE
    HASHTABLE_LOOKUP_OUTPUT HASHTABLE_LOOKUP_HITS C1HWNC MD NDHWC FRACTAL_ZZ FRACTAL_NZ NCDHW DHWCN NDC1HWC0
    FRACTAL_Z_3D CN NC DHWNC FRACTAL_Z_3D_TRANSPOSE FRACTAL_ZN_LSTM FRACTAL_Z_G RESERVED ALL NULL ND_RNN_BIAS
    FRACTAL_ZN_RNN NYUV NYUV_A NCL FRACTAL_Z_WINO C1HWC0 FRACTAL_NZ_C0_16 FRACTAL_NZ_C0_32 FRACTAL_NZ_C0_2
    FRACTAL_NZ_C0_4 FRACTAL_NZ_C0_8 END MAX""".split()
) | FORMATS


def ge_dtype_name(ge: str) -> str:
    """The dtype name opkit's op model uses for a ge::DataType: msOpGen's spelling (``DT_FLOAT`` → ``float``),
    else the enumerator in lower case without ``DT_`` (``DT_INT4`` → ``int4``, which msOpGen 26.0.0 cannot write)."""
    return _MSOPGEN_SPELLING.get(ge) or ge.removeprefix("DT_").lower()


# JSON attr type → OpAttrDef method (transform.json IR_ATTR_TYPE_MAP); unknown attr types are silently dropped.
ATTR_METHODS: dict[str, str] = {
    "int": "Int", "float": "Float", "bool": "Bool", "string": "String", "type": "Type",
    "list_int": "ListInt", "list_float": "ListFloat", "list_bool": "ListBool", "list_list_int": "ListListInt",
    "list_string": "ListString", "list_type": "ListType", "tensor": "Tensor", "list_tensor": "ListTensor",
}  # fmt: skip

def ge_dtype(torch_dtype: str) -> str:
    """The ge:: enum of a torch dtype name (``float32`` → ``DT_FLOAT``); DT_UNDEFINED for none."""
    return DTYPES.get(torch_dtype) or {"float64": "DT_DOUBLE"}.get(torch_dtype, "DT_UNDEFINED")


_UNDEFINED_DTYPE = DType("undefined")

# The documented msOpGen default of an OPTIONAL attr whose schema default is None (``int? k=None``):
# aclnn gets the same value through gen_opapi ``new_params`` (``k.value_or(0)``). docs/new.md, "Type mapping".
NONE_ATTR_DEFAULTS: dict[str, object] = {
    "int": 0, "float": 0.0, "bool": False, "string": "", "type": _UNDEFINED_DTYPE,
    "list_int": [], "list_float": [], "list_bool": [], "list_string": [], "list_type": [],
}  # fmt: skip

# CANN's own OpTypes a new op should not take (a clash replaces or shadows the built-in kernel).
CANN_BUILTIN_OP_TYPES: frozenset[str] = frozenset(
    """Abs Add AddN AddRmsNorm Addcdiv Addcmul ApplyAdamW ArgMax ArgMin Axpy BatchMatMul BiasAdd Cast Ceil
    Concat ConcatV2 Conv2D Cos Cumsum Div Dropout Equal Erf Exp Fill Floor FlashAttentionScore Gather GatherV2
    Gelu GeluV2 GroupNorm IsClose LayerNorm Log MatMul MatMulV2 Maximum Minimum Mul Neg OneHot Pack Pow Range
    Reciprocal ReduceMax ReduceMean ReduceSum Relu Reshape RmsNorm RotaryMul Round Rsqrt Scale ScatterUpdate
    Select Sigmoid Silu Sin Slice Softmax Split SplitV Sqrt Square Sub SwiGlu Tanh Tile TopK Transpose Trilu
    Unpack ZerosLike""".split()
)

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
    scalar: bool = False  # a PyTorch Scalar operand: the OpDef marks the input ``.Scalar()`` (not a JSON field)

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


# The kernel's own trailing parameters; an operand of the same name renames them (``workspace_``).
KERNEL_TRAILING_PARAMETERS = ("workspace", "tiling")


@dataclass(frozen=True)
class Prototype:
    """One op of an msOpGen input JSON."""

    op: str
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    attrs: tuple[AttrDesc, ...]

    def to_json(self) -> dict:
        d: dict = {"op": self.op, "input_desc": [i.to_json() for i in self.inputs], "output_desc": [o.to_json() for o in self.outputs]}
        if self.attrs:
            d["attr"] = [a.to_json() for a in self.attrs]
        return d

    @property
    def operand_parameters(self) -> tuple[str, ...]:
        """The kernel's GM_ADDR operands in msOpGen's order; an output named like an input is ``<name>_ref``."""
        inputs = [i.name for i in self.inputs]
        outputs = [f"{o.name}_ref" if o.name in inputs else o.name for o in self.outputs]
        return (*inputs, *outputs)

    @property
    def trailing_parameters(self) -> tuple[str, ...]:
        """``workspace`` and ``tiling``, each suffixed with ``_`` until it names no operand."""
        taken = set(self.operand_parameters)
        names = []
        for name in KERNEL_TRAILING_PARAMETERS:
            while name in taken:
                name += "_"
            taken.add(name)
            names.append(name)
        return tuple(names)

    @property
    def kernel_parameters(self) -> tuple[str, ...]:
        return (*self.operand_parameters, *self.trailing_parameters)


class UnsupportedSignature(ValueError):
    """The schema has an argument msOpGen cannot declare (S203 explains which and why)."""


def json_default(default: str) -> str:
    """A schema default as msOpGen's ``default_value`` text: ``True`` → ``true``, ``[1,1]`` kept."""
    return {"True": "true", "False": "false"}.get(default, default)


# What a default's Python value must be for each attr type (``int i="abc"`` must not become ``.Int("abc")``).
_VALUE_KINDS: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,), "string": (str,)}


def _value_fits(attr_type: str, value: object) -> bool:
    """A scalar attr's default fits its msOpGen type (``int a=True`` does not). A list attr's default
    was read element by element, as torch reads it, by ``Argument.default_value`` already."""
    if attr_type.startswith("list_"):
        return True
    if attr_type == "type":
        return isinstance(value, DType)
    return isinstance(value, _VALUE_KINDS[attr_type]) and (attr_type == "bool" or not isinstance(value, bool))


def attr_default(arg: Argument) -> bool | int | float | str | list:
    """The msOpGen value of an attr argument's schema default (``int[2] k=1`` → ``[1, 1]``, ``str m="a"`` → ``a``).

    One parser for every consumer (prototype JSON, OpDef C++, gen_opapi), so the spellings of a default
    cannot disagree. ``None`` (``int? k=None``) becomes the type's documented default (``NONE_ATTR_DEFAULTS``).
    Raises UnsupportedSignature for a default that does not fit the attr type or that msOpGen rejects.
    """
    text = arg.default
    if text is None:
        raise ValueError(f"argument {arg.name!r} has no default")
    attr_type = arg.type.msopgen_attr_type
    try:
        value = arg.default_value
    except ValueError:
        raise UnsupportedSignature(f"default {text!r} of '{arg.name}' is not a literal msOpGen can carry") from None
    if value is None:
        if attr_type not in NONE_ATTR_DEFAULTS:
            raise UnsupportedSignature(f"attr '{arg.type} {arg.name}=None' has no msOpGen default; give a value default or drop it")
        return NONE_ATTR_DEFAULTS[attr_type]
    if attr_type is not None and not _value_fits(attr_type, value):
        article = "an" if arg.type.base[0] in "aeiou" else "a"
        raise UnsupportedSignature(f"default {text} of '{arg.type} {arg.name}' is not {article} {arg.type.base} value; write e.g. {_EXAMPLE_DEFAULTS[attr_type]}")
    if isinstance(value, str) and (FORBIDDEN_DEFAULT_CHARS & set(value) or len(value) > MAX_DEFAULT_LENGTH):
        raise UnsupportedSignature(f"default {text!r} of '{arg.name}' contains characters msOpGen rejects")
    return value


# What a refused scalar default could be instead (lists never get here: see _value_fits).
_EXAMPLE_DEFAULTS = {"int": "0", "float": "1.0", "bool": "False", "string": "'text'", "type": "float"}


def default_value_text(value: object) -> str:
    """msOpGen's ``default_value`` text: ``true``, ``1``, ``1e-06``, ``abc``, ``DT_FLOAT``, ``{1,1}``.

    msOpGen pastes it into C++ verbatim, so a list is written with braces (``ListInt({1,1})`` compiles,
    ``ListInt([1,1])`` does not; msopgen.md §6).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "{" + ",".join(default_value_text(v) for v in value) + "}"
    if isinstance(value, DType):
        return ge_dtype(value.name)
    return str(value)


# SoC version (as `-c ai_core-<soc>` takes it) → the chip family msOpGen writes in AddConfig and
# ASCEND_COMPUTE_UNIT (transform.json SOC_VERSION_TYPE). A bare 'ascend910b' means the FIRST-generation
# Ascend 910. Other ``ascend…`` names msOpGen keeps unchanged.
SOC_FAMILIES: dict[str, str] = {
    "ascend910a": "ascend910", "ascend910proa": "ascend910", "ascend910b": "ascend910", "ascend910prob": "ascend910",
    "ascend910premiuma": "ascend910",
    "ascend910b1": "ascend910b", "ascend910b2": "ascend910b", "ascend910b2c": "ascend910b", "ascend910b3": "ascend910b",
    "ascend910b4": "ascend910b", "ascend910b4-1": "ascend910b",
    "ascend910_9391": "ascend910_93", "ascend910_9392": "ascend910_93", "ascend910_9381": "ascend910_93",
    "ascend910_9382": "ascend910_93", "ascend910_9372": "ascend910_93", "ascend910_9362": "ascend910_93",
    "ascend910_9363": "ascend910_93",
    "ascend950dt": "ascend950", "ascend950pr": "ascend950",
    "ascend310p1": "ascend310p", "ascend310p3": "ascend310p", "ascend310p5": "ascend310p", "ascend310p7": "ascend310p",
    "ascend310p3vir01": "ascend310p", "ascend310p3vir02": "ascend310p", "ascend310p3vir04": "ascend310p",
    "ascend310p3vir08": "ascend310p",
    "ascend310b1": "ascend310b", "ascend310b2": "ascend310b", "ascend310b3": "ascend310b", "ascend310b4": "ascend310b",
    "bs9sx1aa": "bs9sx1a",
}  # fmt: skip
SOC_EXAMPLES = ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend910_9391", "ascend310p3", "ascend950pr")


# The families themselves, as msOpGen's map also takes them (AddConfig names one of these).
KNOWN_SOCS = frozenset(SOC_FAMILIES) | frozenset(SOC_FAMILIES.values())


def soc_family(soc: str) -> str | None:
    """The family msOpGen maps a SoC version to (``ascend910b1`` → ``ascend910b``); a family name is its own;
    None for a name msOpGen's map does not know (it would pass ``ascend999`` through into an OpDef no CANN
    builds, so opkit refuses it)."""
    if soc in SOC_FAMILIES:
        return SOC_FAMILIES[soc]
    return soc if soc in KNOWN_SOCS else None


def compute_unit(soc: str | tuple[str, ...] | list[str]) -> str:
    """msOpGen's ``-c`` value: ``ai_core-<soc>`` (an underscore, then a hyphen); several SoCs comma-separated."""
    socs = [soc] if isinstance(soc, str) else list(soc)
    return ",".join(f"ai_core-{s}" for s in socs)


def expand_columns(values: tuple[str, ...], count: int) -> tuple[str, ...]:
    """A descriptor's list broadcast to ``count`` columns (a length-1 list is repeated, as msOpGen does)."""
    return values * count if len(values) == 1 else values


def prototype_from_signature(
    sig: OpSignature,
    dtypes: tuple[str, ...] = DEFAULT_DTYPES,
    formats: tuple[str, ...] = DEFAULT_FORMATS,
    *,
    descriptor_dtypes: dict[str, tuple[str, ...]] | None = None,
    op_type: str | None = None,
) -> Prototype:
    """torchair's documented mapping: tensors → inputs, other arguments → attrs, returns → outputs.

    Every mutated input is declared again as a same-named output (in-place ops; a mutated ``Tensor[]``
    is a DYNAMIC output); each fresh return is an output named by ``OpSignature.output_names`` (a
    ``Tensor[]`` return is DYNAMIC). A ``Scalar`` is a tensor input marked ``.Scalar()``. Each
    descriptor's dtypes are ``descriptor_dtypes[name]`` or ``dtypes``; column i of every descriptor
    is one supported (dtype, format) combination: each dtype column is paired with every format.
    """
    descriptor_dtypes = descriptor_dtypes or {}

    def desc(name: str, param_type: str, scalar: bool = False) -> TensorDesc:
        types = descriptor_dtypes.get(name, dtypes)
        return TensorDesc(name, param_type, tuple(t for t in types for _ in formats), tuple(f for _ in types for f in formats), scalar)

    inputs, attrs = [], []
    for a in sig.arguments:
        if a.type.refusal:
            raise UnsupportedSignature(f"argument '{a.type} {a.name}': {a.type.refusal}")
        if a.type.is_input:
            if a.type.elem_optional:
                raise UnsupportedSignature(f"argument '{a.name}: {a.type}' has no msOpGen input kind")
            inputs.append(desc(a.name, a.type.msopgen_param_type, a.type.is_scalar))
            continue
        attr_type = a.type.msopgen_attr_type
        if attr_type is None:
            raise UnsupportedSignature(f"argument '{a.name}: {a.type}' has no msOpGen attr type")
        if a.default is None:
            attrs.append(AttrDesc(a.name, attr_type))
        else:
            attrs.append(AttrDesc(a.name, attr_type, "optional", default_value_text(attr_default(a))))
    outputs = [desc(a.name, "dynamic" if a.type.is_list else "required") for a in sig.mutated_arguments]
    fresh = {id(r) for r in sig.fresh_returns}
    for ret, name in zip(sig.returns, sig.output_names):
        if id(ret) in fresh:
            if not ret.type.is_tensor or ret.type.optional or ret.type.elem_optional:
                raise UnsupportedSignature(f"return '{ret}' is not a Tensor or Tensor[]; msOpGen outputs are tensors")
            outputs.append(desc(name, "dynamic" if ret.type.is_list else "required"))
    if not outputs:
        # An AI Core op writes its result to an output; an op that returns nothing and mutates nothing does no work.
        raise UnsupportedSignature("the op returns nothing and mutates nothing; return a Tensor or mark the written input Tensor(a!)")
    return Prototype(op_type or sig.op_type, tuple(inputs), tuple(outputs), tuple(attrs))


def cpp_literal(value: Any) -> str:
    """A default as C++ source: ``true``, ``1``, ``1e-06``, ``"abc"``, ``{1, 1}`` (braces, so ListInt compiles)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} has no C++ literal")
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a C string literal for the plain text msOpGen allows
    if isinstance(value, (list, tuple)):
        return "{" + ", ".join(cpp_literal(v) for v in value) + "}"
    if isinstance(value, DType):
        return f"ge::{ge_dtype(value.name)}"
    raise TypeError(f"no C++ literal for {value!r}")


# ge::DataType → msOpGen's dtype name for it (its first spelling; float, float16, bfloat16 for the three with aliases).
_MSOPGEN_SPELLING = {ge: name for name, ge in reversed(list(DTYPES.items()))} | {"DT_FLOAT": "float", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16"}
