"""The project model: every value the cookiecutter templates need, derived from an ``OpSpec``.

Templates format; this module decides. Each derived value comes from the signature model, the
msOpGen mapping (``opkit.msopgen``) and the naming functions (``opkit.naming``), so the JSON, the
OpDef, the kernel, the yaml entry, the Meta function and the MRE agree by construction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from opkit import msopgen, naming
from opkit.generate.spec import OpSpec
from opkit.samples import TENSOR_LIST_LENGTH, sample_call
from opkit.signature import Argument, OpSignature

# msOpGen dtype → the torch dtype the MRE's dummy tensors use, and how to fill them.
_TORCH_DTYPES = {
    "DT_FLOAT": ("float32", "randn"), "DT_FLOAT16": ("float16", "randn"), "DT_BF16": ("bfloat16", "randn"),
    "DT_DOUBLE": ("float64", "randn"), "DT_INT8": ("int8", "randint"), "DT_INT16": ("int16", "randint"),
    "DT_INT32": ("int32", "randint"), "DT_INT64": ("int64", "randint"), "DT_UINT8": ("uint8", "randint"),
    "DT_UINT16": ("uint16", "randint"), "DT_UINT32": ("uint32", "randint"), "DT_UINT64": ("uint64", "randint"),
    "DT_BOOL": ("bool", "randint"), "DT_COMPLEX64": ("complex64", "randn"), "DT_COMPLEX128": ("complex128", "randn"),
    "DT_COMPLEX32": ("complex32", "randn"),
}  # fmt: skip
_FALLBACK_TORCH_DTYPE = ("float32", "randn")  # int2, uint1, string, ...: no torch dtype

# msOpGen attr type → the Python annotation custom_op infers it from
_ATTR_PYTHON = {
    "int": "int", "float": "float", "bool": "bool", "string": "str",
    "list_int": "list[int]", "list_float": "list[float]", "list_bool": "list[bool]", "list_string": "list[str]",
    "type": "torch.dtype",
}  # fmt: skip

# How gen_opapi hands aclnn an argument it cannot take as is (op-plugin-yaml.md, real-file conventions):
# a ``new_params`` entry ``<name>_value: <expression>`` that ``exec`` then names. {n}: the argument, {d}: C++ default.
_OPTIONAL_ATTR_EXPRESSIONS = {
    "int": "{n}.value_or({d})", "float": "{n}.value_or({d})", "bool": "{n}.value_or({d})",
    "list_int": "{n}.value_or(at::IntArrayRef{d})", "list_float": "{n}.value_or(at::ArrayRef<double>{d})",
    "list_bool": "{n}.value_or(at::ArrayRef<bool>{d})", "type": "{n}.value_or(at::ScalarType::Undefined)",
    "string": "{n}.has_value() ? const_cast<char *>({n}.value().data()) : nullptr",
}  # fmt: skip
_STRING_EXPRESSION = "const_cast<char *>({n}.data())"

_NO_DEFAULT = object()


@dataclass(frozen=True)
class OpDefTensor:
    """One ``this->Input(...)``/``this->Output(...)`` of the OpDef."""

    name: str
    param_type: str  # REQUIRED, OPTIONAL, DYNAMIC
    data_types: tuple[str, ...]  # ge::DT_*
    formats: tuple[str, ...]  # ge::FORMAT_*
    scalar: bool = False  # .Scalar(): a PyTorch Scalar operand


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

    @property
    def variable(self) -> str:
        """The MRE's Python name for it (``self`` and keywords get a trailing ``_``)."""
        return naming.python_identifier(self.name)


# How gen_opapi's ``size`` spells one entry of a ``size:[...]`` rule (real entries: ``{query.size(0), 8L}``).
_CPP_SIZE_DIMS = {"dim": "{arg}.size({index})", "list_dim": "{arg}[0].size({index})", "int": "{arg}", "literal": "{index}L"}
_CPP_EMPTY_SIZE = "at::IntArrayRef{}"


@dataclass(frozen=True)
class ShapeDim:
    """One entry of a ``size:[...]`` rule with where each artifact finds it."""

    kind: str  # dim | int | literal
    arg: str = ""
    index: int = 0  # the dimension (dim) or the value (literal)
    arg_is_list: bool = False  # a dim of a Tensor[] argument: of its first element
    input_index: int = 0  # IR input of ``arg`` (dim)
    attr_index: int = 0  # OpDef attr of ``arg`` (int)

    @property
    def cpp(self) -> str:
        kind = "list_dim" if self.kind == "dim" and self.arg_is_list else self.kind
        return _CPP_SIZE_DIMS[kind].format(arg=self.arg, index=self.index)


@dataclass(frozen=True)
class OutputAlloc:
    """A fresh output: its gen_opapi key, what sizes it, its dtype rule, and how every artifact spells them.

    ``like`` gives the device and, unless ``dtype``, the dtype; the size too unless ``shape`` (size:[...])
    or ``size_arg`` (size:ARG, an int[] argument) replaces it.
    """

    name: str
    like: str
    like_is_list: bool = False
    dtype: str = ""  # msOpGen dtype, empty: like's
    is_list: bool = False  # a Tensor[] return (DYNAMIC output)
    index: int = 0  # position among the OpDef's outputs
    like_index: int = 0  # position of ``like`` among the OpDef's inputs
    like_dynamic: bool = False
    shape: tuple[ShapeDim, ...] | None = None
    size_arg: str = ""
    size_attr_index: int = 0  # OpDef attr of ``size_arg``

    @property
    def sized_by_rule(self) -> bool:
        return self.shape is not None or bool(self.size_arg)

    @property
    def torch_dtype(self) -> str:
        return _TORCH_DTYPES.get(msopgen.DTYPES[self.dtype], _FALLBACK_TORCH_DTYPE)[0] if self.dtype else ""

    @property
    def ge_dtype(self) -> str:
        return f"ge::{msopgen.DTYPES[self.dtype]}" if self.dtype else ""

    @property
    def yaml_size(self) -> str:
        if self.size_arg:
            return self.size_arg
        if self.shape is not None:
            return "{" + ", ".join(d.cpp for d in self.shape) + "}" if self.shape else _CPP_EMPTY_SIZE
        return f"{self.like}[0].sizes()" if self.like_is_list else self.like

    @property
    def yaml_dtype(self) -> str:
        """``dtype:``'s ATen constant; like's dtype without one, or for a dtype ATen has no constant for (int2, ...)."""
        aten = msopgen.ATEN_DTYPES.get(msopgen.DTYPES[self.dtype]) if self.dtype else None
        if aten:
            return aten
        return f"{self.like}[0].scalar_type()" if self.like_is_list else self.like


@dataclass(frozen=True)
class NewParam:
    """A gen_opapi ``new_params`` entry and the argument it replaces in ``exec``."""

    argument: str
    name: str
    expression: str


def _annotation(arg: Argument) -> str:
    if arg.is_tensor:
        if arg.type.is_list:
            inner = "list[torch.Tensor]"
            return f"Optional[{inner}]" if arg.type.optional else inner
        return "Optional[torch.Tensor]" if arg.type.optional else "torch.Tensor"
    base = _ATTR_PYTHON.get(arg.type.msopgen_attr_type, "object")
    return f"Optional[{base}]" if arg.type.optional else base


class ProjectModel:
    """Derived, read-only view of one op project; the templates' only input besides the spec."""

    def __init__(self, spec: OpSpec):
        self.spec = spec
        self.signature: OpSignature = spec.signature
        self.prototype = spec.prototype()

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
        return naming.msopgen_snake(self.op_type)

    @property
    def aclnn_name(self) -> str:
        return naming.aclnn_for_op_type(self.op_type)

    @property
    def meta_function_name(self) -> str:
        return naming.meta_function_name(self.signature.name + (f"_{self.signature.overload}" if self.signature.overload else ""))

    @property
    def qualified_op(self) -> str:
        """How Python calls the op: ``torch.ops.npu.my_op`` (``.overload`` for another overload)."""
        overload = f".{self.signature.overload}" if self.signature.overload else ""
        return f"torch.ops.{self.namespace}.{self.signature.name}{overload}"

    @property
    def kernel_function_name(self) -> str:
        """The eager (PrivateUse1) kernel of the library style."""
        return f"{self.meta_function_name.removesuffix('_meta')}_npu"

    @property
    def library_definition(self) -> str:
        """What ``Library(ns, "FRAGMENT").define`` takes: the schema as written, without its namespace."""
        text = self.signature.text
        return text.split("::", 1)[1] if self.signature.namespace else text

    @property
    def model_class(self) -> str:
        return f"{self.op_type}Model"

    # -- msOpGen ---------------------------------------------------------------------------------
    @property
    def msopgen_document(self) -> list[dict]:
        """The prototype JSON as torchair documents it: a list of one op (no 'language': msOpGen ignores it)."""
        return [self.prototype.to_json()]

    @property
    def msopgen_json(self) -> str:
        return json.dumps(self.msopgen_document, indent=4) + "\n"

    @property
    def soc_families(self) -> tuple[str, ...]:
        """The chip families for AddConfig and ASCEND_COMPUTE_UNIT, once each, in the given order."""
        return tuple(dict.fromkeys(msopgen.soc_family(s) for s in self.spec.soc))

    @property
    def compute_unit(self) -> str:
        """msOpGen's ``-c`` for every SoC: ``ai_core-a,ai_core-b``."""
        return msopgen.compute_unit(self.spec.soc)

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
            desc.scalar,
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
        """The kernel's parameters as C++ identifiers (a keyword-named operand gets a trailing ``_``)."""
        return tuple(naming.cpp_identifier(p) for p in self.prototype.operand_parameters) + self.prototype.trailing_parameters

    @property
    def workspace_parameter(self) -> str:
        return self.prototype.trailing_parameters[0]

    @property
    def tiling_parameter(self) -> str:
        return self.prototype.trailing_parameters[1]

    def _accessor(self, index: int) -> str:
        """How host code reaches IR input ``index``: ``GetInput…(i)`` counts instances, so after an optional or
        dynamic input the IR-index accessors (``GetRequiredInput…``, ``GetOptionalInput…``, ``GetDynamicInput…``)."""
        desc = self.prototype.inputs[index]
        if desc.param_type == "dynamic":
            return "Dynamic"
        if desc.param_type == "optional":
            return "Optional"
        return "Required" if any(d.param_type != "required" for d in self.prototype.inputs[:index]) else ""

    def input_shape(self, index: int) -> str:
        """The host-side expression for input ``index``'s shape (a DYNAMIC input: its first instance)."""
        kind = self._accessor(index)
        return f"context->Get{kind}InputShape({index}{', 0' if kind == 'Dynamic' else ''})"

    def input_dtype(self, index: int) -> str:
        kind = self._accessor(index)
        return f"context->Get{kind}InputDataType({index}{', 0' if kind == 'Dynamic' else ''})"

    @property
    def tiling_input(self) -> int:
        """The input whose element count the default tiling splits: the first required or dynamic one."""
        return next((i for i, d in enumerate(self.prototype.inputs) if d.param_type != "optional" and not d.scalar), 0)

    @property
    def has_inputs(self) -> bool:
        return bool(self.prototype.inputs)

    @property
    def infer_rules(self) -> tuple[OutputAlloc, ...]:
        """Every OpDef output's shape/dtype source: fresh outputs by their rule, mutated inputs as themselves."""
        rules = list(self.fresh_outputs)
        inputs = [d.name for d in self.prototype.inputs]
        for index, desc in enumerate(self.prototype.outputs):
            if desc.name in inputs:
                j = inputs.index(desc.name)
                rules.append(OutputAlloc(desc.name, desc.name, index=index, like_index=j, like_dynamic=self.prototype.inputs[j].param_type == "dynamic"))
        return tuple(sorted(rules, key=lambda r: r.index))

    # -- op_plugin_functions.yaml ----------------------------------------------------------------
    @property
    def fresh_outputs(self) -> tuple[OutputAlloc, ...]:
        sig = self.signature
        fresh = {id(r) for r in sig.fresh_returns}
        output_index = {d.name: i for i, d in enumerate(self.prototype.outputs)}
        input_index = {d.name: i for i, d in enumerate(self.prototype.inputs)}
        attr_index = {d.name: i for i, d in enumerate(self.prototype.attrs)}
        allocs = []
        for ret, name in zip(sig.returns, sig.output_names):
            if id(ret) not in fresh:
                continue
            rule = self.spec.output_rule(name)
            like = sig.argument(rule.like)
            like_is_list = bool(like and like.type.is_list)
            shape = None
            if rule.shape is not None:
                shape = tuple(self._shape_dim(d, input_index, attr_index) for d in rule.shape)
            allocs.append(
                OutputAlloc(
                    name, rule.like, like_is_list, rule.dtype, ret.type.is_list, output_index.get(name, 0), input_index.get(rule.like, 0), like_is_list,
                    shape, rule.size_arg, attr_index.get(rule.size_arg, 0),
                )
            )  # fmt: skip
        return tuple(allocs)

    def _shape_dim(self, dim, input_index: dict[str, int], attr_index: dict[str, int]) -> ShapeDim:
        arg = self.signature.argument(dim.arg)  # None for a literal dim (no argument)
        return ShapeDim(dim.kind, dim.arg, dim.index, bool(arg and arg.type.is_list), input_index.get(dim.arg, 0), attr_index.get(dim.arg, 0))

    @property
    def new_params(self) -> tuple[NewParam, ...]:
        """Arguments aclnn cannot take as PyTorch passes them: optional attrs (``value_or``) and strings."""
        taken = {a.name for a in self.signature.arguments} | set(self.signature.output_names)
        params = []
        for a in self.signature.arguments:
            attr_type = a.type.msopgen_attr_type
            if attr_type is None:
                continue
            if a.type.optional:
                template = _OPTIONAL_ATTR_EXPRESSIONS.get(attr_type)
                if template is None:
                    continue
                default = msopgen.attr_default(a) if a.default is not None else msopgen.NONE_ATTR_DEFAULTS.get(attr_type, 0)
                expression = template.format(n=a.name, d=msopgen.cpp_literal(default) if not isinstance(default, str) or attr_type == "string" else default)
            elif attr_type == "string":
                expression = _STRING_EXPRESSION.format(n=a.name)
            else:
                continue
            name = f"{a.name}_value"
            while name in taken:  # two new names never collide: each is its own argument's name + '_value' + '_'s
                name += "_"
            params.append(NewParam(a.name, name, expression))
        return tuple(params)

    @property
    def yaml_entry(self) -> dict:
        """The ``custom:`` entry, as data: the template and ``opkit yaml add`` both write it.

        A Tensor[] return has no gen_opapi (the codegen cannot allocate one): the op_api kernel is hand-written.
        An adopted entry (``opkit new --from`` a yaml) is kept as it is: its func, versions and gen_opapi.
        """
        if self.spec.yaml_entry:
            return json.loads(self.spec.yaml_entry)
        entry: dict = {"func": self.signature.text, "op_api": "all_version"}
        if any(r.type.is_list for r in self.signature.fresh_returns):
            return entry
        gen_opapi: dict = {o.name: {"size": o.yaml_size, "dtype": o.yaml_dtype} for o in self.fresh_outputs}
        new_params = self.new_params
        if new_params:
            gen_opapi["new_params"] = {p.name: p.expression for p in new_params}
            replaced = {p.argument: p.name for p in new_params}
            arguments = [replaced.get(a.name, a.name) for a in self.signature.arguments]
            gen_opapi["exec"] = ", ".join([self.aclnn_name, *arguments, *(o.name for o in self.fresh_outputs)])
        else:
            gen_opapi["exec"] = self.aclnn_name
        entry["gen_opapi"] = gen_opapi
        return entry

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
    def mutated_variables(self) -> tuple[str, ...]:
        """The mutated arguments as the MRE's Python variables."""
        return tuple(naming.python_identifier(n) for n in self.mutated_names)

    @property
    def returns_kind(self) -> str:
        """none (``-> ()``), tensor (one), or tuple: the structure the Meta function must return."""
        n = len(self.signature.returns)
        return "none" if n == 0 else "tensor" if n == 1 else "tuple"

    @property
    def return_annotation(self) -> str:
        def one(r) -> str:
            return "list[torch.Tensor]" if r.type.is_list else "torch.Tensor"

        if self.returns_kind == "none":
            return "None"
        if self.returns_kind == "tensor":
            return one(self.signature.returns[0])
        return "tuple[" + ", ".join(one(r) for r in self.signature.returns) + "]"

    @property
    def dummy_args(self) -> tuple[DummyArg, ...]:
        """The sample call ``opkit verify`` also runs (``opkit.samples``), with the first dtype of each tensor."""
        from opkit.signature import DType

        columns = {d.name: d.types[0] for d in self.prototype.inputs}
        args = []
        for s in sample_call(self.signature):
            torch_dtype, fill = _TORCH_DTYPES.get(msopgen.DTYPES.get(columns.get(s.name, self.spec.dtypes[0]), ""), _FALLBACK_TORCH_DTYPE)
            if s.kind == "dtype":  # a ScalarType argument: the op's first dtype, as a torch dtype literal
                args.append(DummyArg(s.name, "value", s.kwarg_only, value=DType(torch_dtype)))
            else:
                args.append(DummyArg(s.name, s.kind, s.kwarg_only, value=s.value, torch_dtype=torch_dtype, fill=fill))
        return tuple(args)

    @property
    def tensor_dummy_args(self) -> tuple[DummyArg, ...]:
        return tuple(a for a in self.dummy_args if a.kind != "value")

    @property
    def dummy_shape(self) -> tuple[int, ...]:
        return self.spec.sample_shape

    @property
    def tensor_list_length(self) -> int:
        return TENSOR_LIST_LENGTH

    @property
    def uses_optional(self) -> bool:
        """Whether an annotation needs ``typing.Optional``."""
        return any(p.annotation.startswith("Optional[") for p in self.parameters)


def _python_default(arg: Argument) -> Any:
    """The default as Python source reads it (``None``, ``1``, ``torch.int64``): what torch passes when omitted."""
    if arg.default is None:
        return _NO_DEFAULT
    if arg.is_tensor:
        return None  # Tensor? x=None
    return arg.default_value  # an attr's default passed msopgen.attr_default's checks in validate_spec
