"""The ``extension`` style's C++ side: an Ascend C kernel launched with ``<<<>>>`` from a host function.

What the ``csrc/NAME.asc`` template needs beyond the common project model: the C++ type of each schema
argument as torch's ``TORCH_FN`` infers the schema back from it (checked against the schema when the
library loads), the kernel's ``GM_ADDR`` operands, each fresh output's allocation in ATen C++, and the
``--npu-arch`` bisheng compiles for.

The launcher uses one launch mode (add_custom.asc's mode 3, one of its two recommended ones): the ACL
stream taken with ``stream(false)`` and the ``<<<>>>`` launch inside a lambda that
``OpCommand::RunOpApiV2`` puts on torch_npu's task queue. The launch then keeps its place among the
ops queued before and after it without draining the queue (mode 1 drains it at every call: a host-side
wait per launch), and it is what the queue replays under capture.
"""

from __future__ import annotations

from dataclasses import dataclass

from opkit import msopgen, naming
from opkit.signature import Argument, ArgType, OpSignature

# bisheng's --npu-arch for each SoC family (CANN's simulator table in hicann/ops-math scripts/build_example.sh;
# TorchAir's example builds dav-2201 for Atlas A2/A3).
NPU_ARCH = {
    "ascend910": "dav-1001",
    "ascend910b": "dav-2201",
    "ascend910_93": "dav-2201",
    "ascend310p": "dav-2002",
    "ascend310b": "dav-3002",
    "ascend950": "dav-3510",
}

# Schema element type → the C++ parameter type TORCH_FN infers it from (checked with torch 2.13's infer_schema).
_CPP_BASE = {
    "int": "int64_t", "SymInt": "c10::SymInt", "float": "double", "bool": "bool", "str": "c10::string_view",
    "Scalar": "at::Scalar", "ScalarType": "at::ScalarType",
}  # fmt: skip
_CPP_LIST = {
    "int": "at::IntArrayRef", "SymInt": "c10::SymIntArrayRef", "float": "at::ArrayRef<double>",
    "bool": "c10::List<bool>", "str": "c10::List<std::string>", "Tensor": "at::TensorList",
}  # fmt: skip
_CPP_OPTIONAL_LIST = {"int": "at::OptionalIntArrayRef", "SymInt": "at::OptionalSymIntArrayRef"}


class UnsupportedArch(ValueError):
    """The SoCs name no bisheng architecture, or several."""


def npu_arch(soc: tuple[str, ...]) -> str:
    """The one ``--npu-arch`` of ``soc``; UnsupportedArch when a SoC has none or they need two builds."""
    archs = []
    for s in soc:
        arch = NPU_ARCH.get(msopgen.soc_family(s) or "")
        if arch is None:
            known = ", ".join(f"{family}* → {a}" for family, a in NPU_ARCH.items())
            raise UnsupportedArch(f"--soc {s}: no bisheng --npu-arch is known for it ({known})")
        if arch not in archs:
            archs.append(arch)
    if len(archs) > 1:
        raise UnsupportedArch(f"--soc {','.join(soc)} needs {len(archs)} architectures ({', '.join(archs)}); bisheng builds one --npu-arch per library: generate one project per architecture")
    return archs[0]


def cpp_parameter_type(arg: Argument) -> str:
    """The launcher's C++ parameter type for ``arg``."""
    t: ArgType = arg.type
    if t.base == "Tensor":
        if t.is_list:
            return "std::optional<at::TensorList>" if t.optional else ("const c10::List<std::optional<at::Tensor>> &" if t.elem_optional else "at::TensorList")
        if t.optional:
            return "const std::optional<at::Tensor> &"
        return "at::Tensor &" if arg.is_mutated else "const at::Tensor &"
    if t.is_list:
        if t.base == "bool" and t.size is not None:
            cpp = f"std::array<bool, {t.size}>"
        else:
            cpp = _CPP_LIST[t.base]
        if t.optional:
            return _CPP_OPTIONAL_LIST.get(t.base, f"std::optional<{cpp}>")
        return cpp
    cpp = _CPP_BASE[t.base]
    if t.base == "Scalar":
        return "const std::optional<at::Scalar> &" if t.optional else "const at::Scalar &"
    return f"std::optional<{cpp}>" if t.optional else cpp


def cpp_return_type(sig: OpSignature) -> str:
    def one(r) -> str:
        return "std::vector<at::Tensor>" if r.type.is_list else "at::Tensor"

    if not sig.returns:
        return "void"
    if len(sig.returns) == 1:
        return one(sig.returns[0])
    return "std::tuple<" + ", ".join(one(r) for r in sig.returns) + ">"


@dataclass(frozen=True)
class CppParam:
    type: str
    name: str  # a C++ identifier

    @property
    def declaration(self) -> str:
        """``const at::Tensor &x``, ``int64_t k``."""
        return f"{self.type}{self.name}" if self.type.endswith("&") else f"{self.type} {self.name}"


@dataclass(frozen=True)
class KernelOperand:
    """One ``GM_ADDR`` parameter of the kernel and the host expression that passes it."""

    name: str  # the kernel's parameter (a C++ identifier)
    address: str  # the launcher's expression for the device address
    note: str = ""  # what the launcher cannot pass as one address


def _address(tensor: str) -> str:
    return f"static_cast<uint8_t *>({tensor}.mutable_data_ptr())"


class KernelLaunch:
    """The values ``csrc/NAME.asc`` renders, derived from the project model (``ProjectModel.launch``)."""

    def __init__(self, model) -> None:
        self.model = model
        self.signature: OpSignature = model.signature

    @property
    def arch(self) -> str:
        return npu_arch(self.model.spec.soc)

    @property
    def kernel(self) -> str:
        """The ``__global__`` function's name."""
        return f"{self.model.name}_kernel"

    @property
    def host_function(self) -> str:
        return naming.cpp_identifier(self.model.name)

    @property
    def cpp_namespace(self) -> str:
        return naming.cpp_identifier(self.model.namespace)

    @property
    def parameters(self) -> tuple[CppParam, ...]:
        return tuple(CppParam(cpp_parameter_type(a), naming.cpp_identifier(a.name)) for a in self.signature.arguments)

    @property
    def return_type(self) -> str:
        return cpp_return_type(self.signature)

    @property
    def schema_literal(self) -> str:
        """What ``m.def`` takes: the schema without its namespace, as written."""
        return self.model.library_definition

    @property
    def registered_name(self) -> str:
        """What ``m.impl`` names: ``name`` or ``name.overload``."""
        return self.signature.full_name

    @property
    def operands(self) -> tuple[KernelOperand, ...]:
        """The kernel's ``GM_ADDR`` operands: every tensor argument in order, then every fresh output."""
        out = []
        for a in self.signature.tensor_arguments:
            name = naming.cpp_identifier(a.name)
            if a.type.is_list:
                out.append(KernelOperand(name, f"{name}.empty() ? nullptr : {_address(f'{name}[0]')}", "a Tensor[]: only its first tensor's address is passed"))
            elif a.type.optional:
                out.append(KernelOperand(name, f"{name}.has_value() && {name}->defined() ? {_address(f'(*{name})')} : nullptr"))
            else:
                out.append(KernelOperand(name, _address(name)))
        for alloc in self.model.fresh_outputs:
            name = self.output_variable(alloc.name)
            if alloc.is_list:
                out.append(KernelOperand(name, f"{name}.empty() ? nullptr : {_address(f'{name}[0]')}", "a Tensor[] output: only its first tensor's address is passed"))
            else:
                out.append(KernelOperand(name, _address(name)))
        return tuple(out)

    def output_variable(self, name: str) -> str:
        """The launcher's local for fresh output ``name`` (``out_`` where a parameter is named ``out``)."""
        taken = {p.name for p in self.parameters}
        variable = naming.cpp_identifier(name)
        while variable in taken:
            variable += "_"
        return variable

    @property
    def length_source(self) -> str:
        """The tensor whose element count the skeleton hands the kernel (``total_length``)."""
        sig = self.signature
        first = next((a for a in sig.tensor_arguments if not a.type.optional), None)
        if first is None:
            return ""
        name = naming.cpp_identifier(first.name)
        return f"{name}[0]" if first.type.is_list else name

    def allocation(self, alloc) -> str:
        """ATen C++ allocating fresh output ``alloc`` on the device of its ``like`` tensor, as the fake does."""
        like = naming.cpp_identifier(alloc.like)
        if not alloc.is_list:
            return self._one_allocation(alloc, f"{like}[0]" if alloc.like_is_list else like)
        items = like if alloc.like_is_list else f"at::TensorList({like})"
        return f"[&] {{ std::vector<at::Tensor> all; for (const at::Tensor &t : {items}) all.push_back({self._one_allocation(alloc, 't')}); return all; }}()"

    def _one_allocation(self, alloc, source: str) -> str:
        options = f"{source}.options()"
        aten_dtype = msopgen.ATEN_DTYPES.get(msopgen.DTYPES[alloc.dtype]) if alloc.dtype else None
        if aten_dtype:
            options += f".dtype({aten_dtype})"
        if alloc.size_arg:
            arg = self.signature.argument(alloc.size_arg)
            size = naming.cpp_identifier(alloc.size_arg)
            return f"at::empty_symint({size}, {options})" if arg.type.base == "SymInt" else f"at::empty({size}, {options})"
        if alloc.shape is not None:
            dims = ", ".join(self._sym_dim(d) for d in alloc.shape)
            return f"at::empty_symint(c10::SymDimVector{{{dims}}}, {options})"
        return f"at::empty_like({source}, {options})" if aten_dtype else f"at::empty_like({source})"

    def _sym_dim(self, dim) -> str:
        arg = naming.cpp_identifier(dim.arg)
        if dim.kind == "dim":
            return f"{arg}[0].sym_size({dim.index})" if dim.arg_is_list else f"{arg}.sym_size({dim.index})"
        if dim.kind == "int":
            return f"c10::SymInt({arg})"
        return f"c10::SymInt({dim.index})"

    @property
    def returned(self) -> str:
        """The launcher's return expression ('' for void)."""
        names = [self.output_variable(o.name) for o in self.model.fresh_outputs]
        if not self.signature.returns:
            return ""
        if len(names) == 1:
            return names[0]
        return "{" + ", ".join(names) + "}"

    @property
    def package(self) -> str:
        """The Python package that loads the built library (and registers the fake)."""
        return f"{self.model.name}_ext"
