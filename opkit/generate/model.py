"""The project model: every value the cookiecutter templates need, derived from an ``OpSpec``.

Templates format; this module decides. Each derived value comes from the signature model, the
msOpGen mapping (``opkit.msopgen``) and the naming functions (``opkit.naming``), so the JSON, the
OpDef, the kernel, the yaml entry, the Meta function and the MRE agree by construction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from opkit import msopgen
from opkit.generate.spec import OpSpec
from opkit.samples import SAMPLE_SHAPE, TENSOR_LIST_LENGTH, sample_call
from opkit.signature import Argument, OpSignature

# msOpGen dtype → the torch dtype the MRE's dummy tensors use, and how to fill them.
_TORCH_DTYPES = {
    "DT_FLOAT": ("float32", "randn"), "DT_FLOAT16": ("float16", "randn"), "DT_BF16": ("bfloat16", "randn"),
    "DT_DOUBLE": ("float64", "randn"), "DT_INT8": ("int8", "randint"), "DT_INT16": ("int16", "randint"),
    "DT_INT32": ("int32", "randint"), "DT_INT64": ("int64", "randint"), "DT_UINT8": ("uint8", "randint"),
    "DT_UINT16": ("uint16", "randint"), "DT_UINT32": ("uint32", "randint"), "DT_UINT64": ("uint64", "randint"),
    "DT_BOOL": ("bool", "randint"), "DT_COMPLEX64": ("complex64", "randn"), "DT_COMPLEX128": ("complex128", "randn"),
}  # fmt: skip

# msOpGen attr type → the Python annotation custom_op infers it from, and a sample value for the MRE.
# msOpGen attr type → the Python annotation custom_op infers it from
_ATTR_PYTHON = {
    "int": "int", "float": "float", "bool": "bool", "string": "str",
    "list_int": "list[int]", "list_float": "list[float]", "list_bool": "list[bool]",
}  # fmt: skip

_NO_DEFAULT = object()


@dataclass(frozen=True)
class OpDefTensor:
    """One ``this->Input(...)``/``this->Output(...)`` of the OpDef."""

    name: str
    param_type: str  # REQUIRED, OPTIONAL, DYNAMIC
    data_types: tuple[str, ...]  # ge::DT_*
    formats: tuple[str, ...]  # ge::FORMAT_*


@dataclass(frozen=True)
class OpDefAttr:
    """One ``this->Attr(...)`` of the OpDef: the OpAttrDef method and, when optional, its default."""

    name: str
    method: str  # Int, Float, ListInt, ...
    optional: bool
    default: Any = None


@dataclass(frozen=True)
class PyParam:
    """A parameter of the Meta / fake / model function, exactly as the schema declares it."""

    name: str
    annotation: str  # custom_op infers the schema from it
    default: Any = _NO_DEFAULT
    kwarg_only: bool = False
    mutated: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


@dataclass(frozen=True)
class DummyArg:
    """How the MRE builds one argument: a tensor, an optional tensor, a tensor list, or a value."""

    name: str
    kind: str  # tensor | tensor_list | value
    kwarg_only: bool
    value: Any = None
    torch_dtype: str = ""
    fill: str = ""  # randn | randint


@dataclass(frozen=True)
class OutputAlloc:
    """A fresh output: its gen_opapi key and the input whose size and dtype it copies."""

    name: str
    like: str


def _python_default(arg: Argument) -> Any:
    if arg.default is None:
        return _NO_DEFAULT
    if arg.is_tensor:
        return None  # Tensor? x=None
    return msopgen.attr_default(arg)


def _annotation(arg: Argument) -> str:
    if arg.is_tensor:
        if arg.type.is_list:
            return "list[torch.Tensor]"
        return "Optional[torch.Tensor]" if arg.type.optional else "torch.Tensor"
    return _ATTR_PYTHON[arg.type.msopgen_attr_type]


class ProjectModel:
    """Derived, read-only view of one op project; the templates' only input besides the spec."""

    def __init__(self, spec: OpSpec):
        self.spec = spec
        self.signature: OpSignature = spec.signature
        self.prototype = msopgen.prototype_from_signature(self.signature, spec.dtypes, spec.formats)

    # -- names -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def style(self) -> str:
        return self.spec.style

    @property
    def namespace(self) -> str:
        return self.spec.namespace

    @property
    def op_type(self) -> str:
        return self.prototype.op

    @property
    def kernel_name(self) -> str:
        return self.signature.kernel_name

    @property
    def aclnn_name(self) -> str:
        return self.signature.aclnn_name

    @property
    def meta_function_name(self) -> str:
        return self.signature.meta_function_name

    @property
    def qualified_op(self) -> str:
        """How Python calls the op: ``torch.ops.npu.my_op``."""
        return f"torch.ops.{self.namespace}.{self.signature.name}"

    @property
    def model_class(self) -> str:
        return f"{self.op_type}Model"

    # -- msOpGen ---------------------------------------------------------------------------------
    @property
    def msopgen_document(self) -> list[dict]:
        """The prototype JSON as torchair documents it: a list of one op, without the ignored 'language'."""
        op = {k: v for k, v in self.prototype.to_json().items() if k != "language"}
        return [op]

    @property
    def msopgen_json(self) -> str:
        return json.dumps(self.msopgen_document, indent=4) + "\n"

    @property
    def soc_families(self) -> tuple[str, ...]:
        """The chip families for AddConfig and ASCEND_COMPUTE_UNIT, once each, in the given order."""
        return tuple(dict.fromkeys(msopgen.soc_family(s) for s in self.spec.soc))

    @property
    def compute_unit(self) -> str:
        """msOpGen's ``-c`` for the first SoC."""
        return msopgen.compute_unit(self.spec.soc[0])

    @property
    def vendor(self) -> str:
        return self.spec.vendor

    @staticmethod
    def _opdef_tensor(desc: msopgen.TensorDesc) -> OpDefTensor:
        return OpDefTensor(
            desc.name,
            desc.param_type.upper(),
            tuple(f"ge::{msopgen.DTYPES[t]}" for t in desc.types),
            tuple(f"ge::FORMAT_{f}" for f in desc.formats),
        )

    @property
    def opdef_inputs(self) -> tuple[OpDefTensor, ...]:
        return tuple(self._opdef_tensor(d) for d in self.prototype.inputs)

    @property
    def opdef_outputs(self) -> tuple[OpDefTensor, ...]:
        return tuple(self._opdef_tensor(d) for d in self.prototype.outputs)

    @property
    def opdef_attrs(self) -> tuple[OpDefAttr, ...]:
        attrs = []
        for desc in self.prototype.attrs:
            optional = desc.param_type == "optional"
            default = msopgen.attr_default(self.signature.argument(desc.name)) if optional else None
            attrs.append(OpDefAttr(desc.name, msopgen.ATTR_METHODS[desc.type], optional, default))
        return tuple(attrs)

    @property
    def kernel_parameters(self) -> tuple[str, ...]:
        return self.prototype.kernel_parameters

    # -- op_plugin_functions.yaml ----------------------------------------------------------------
    @property
    def fresh_outputs(self) -> tuple[OutputAlloc, ...]:
        sig = self.signature
        fresh = {id(r) for r in sig.fresh_returns}
        return tuple(OutputAlloc(n, self.spec.out_like) for r, n in zip(sig.returns, sig.output_names) if id(r) in fresh)

    @property
    def yaml_entry(self) -> dict:
        """The ``custom:`` entry, as data: the template and ``opkit yaml add`` both write it."""
        gen_opapi: dict = {o.name: {"size": o.like, "dtype": o.like} for o in self.fresh_outputs}
        gen_opapi["exec"] = self.aclnn_name
        return {"func": self.signature.text, "op_api": "all_version", "gen_opapi": gen_opapi}

    # -- Python: Meta / fake registration and MRE --------------------------------------------------
    @property
    def parameters(self) -> tuple[PyParam, ...]:
        # Only arguments PyTorch may omit carry a default: Python allows no default before a parameter without one.
        sig = self.signature
        return tuple(
            PyParam(a.name, _annotation(a), _python_default(a) if sig.is_omittable(a) else _NO_DEFAULT, a.kwarg_only, a.is_mutated)
            for a in sig.arguments
        )

    @property
    def mutated_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.signature.mutated_arguments)

    @property
    def returns_kind(self) -> str:
        """none (``-> ()``), tensor (one), or tuple: the structure the Meta function must return."""
        n = len(self.signature.returns)
        return "none" if n == 0 else "tensor" if n == 1 else "tuple"

    @property
    def return_annotation(self) -> str:
        return {"none": "None", "tensor": "torch.Tensor"}.get(
            self.returns_kind, "tuple[" + ", ".join("torch.Tensor" for _ in self.signature.returns) + "]"
        )

    @property
    def dummy_args(self) -> tuple[DummyArg, ...]:
        """The sample call ``opkit verify`` also runs (``opkit.samples``), with the spec's first dtype."""
        torch_dtype, fill = _TORCH_DTYPES[msopgen.DTYPES[self.spec.dtypes[0]]]
        return tuple(
            DummyArg(s.name, s.kind, s.kwarg_only, value=s.value, torch_dtype=torch_dtype, fill=fill) for s in sample_call(self.signature)
        )

    @property
    def tensor_dummy_args(self) -> tuple[DummyArg, ...]:
        return tuple(a for a in self.dummy_args if a.kind != "value")

    @property
    def dummy_shape(self) -> tuple[int, ...]:
        return SAMPLE_SHAPE

    @property
    def tensor_list_length(self) -> int:
        return TENSOR_LIST_LENGTH

    @property
    def uses_optional(self) -> bool:
        """Whether an annotation needs ``typing.Optional``."""
        return any(p.annotation.startswith("Optional[") for p in self.parameters)
