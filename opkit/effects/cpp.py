"""The effects of C++ host kernels: each kernel bound by ``impl`` (or a def's own), its body read
(``formats.cpp_bodies``) and what it does to each tensor argument decided from what it calls.

What counts as a write (kernel-effects.md): an output position of an aclnn call (``EXEC_NPU_CMD``-family
macros, ``aclnnXGetWorkspaceSize`` called directly), mapped by position to the aclnn header in the files
read (``const aclTensor *`` in, ``aclTensor *`` out, or ``DFX_OUT``) or else to the op's OpDef (inputs,
attributes, outputs; an output named like an input is that input, written), whose device kernel in the files
read (msOpGen's ``<snake>(inputs, outputs, workspace, tiling)``) also shows the inputs it writes: an OpDef
without outputs is an op that writes some of its inputs; ``OpCommand``'s ``.Output(x)``;
an in-place tensor method (``x.copy_``, any ``x.name_(...)``); ``at::name_out``/``at::name_`` calls; a call of
a registered op whose schema marks the position ``(a!)``; and any of these in a helper function of the files
read (followed ``MAX_DEPTH`` calls deep). A local made from a parameter by views (``x.view(...)``, ``x[0]``,
``x.value()``, a range-for element) is that parameter.

What stays unknown, with the reason: a tensor passed to a call opkit does not follow (a function not in the
files read, a pointer to its memory handed to a device launch, an aclnn interface with neither header nor
OpDef). A non-const ``at::Tensor &`` parameter is never taken as a write.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from opkit.formats.cpp_bodies import CHECK_MACROS
from opkit.effects.model import Allocation, ArgumentEffect, Evidence, KernelSite, Knowledge, OpEffects, ReturnEffect

# Dispatch keys whose kernel is the op's computation (not Meta, not an autograd wrapper).
KERNEL_KEYS = frozenset({"PrivateUse1", "NPU", "CPU", "CUDA", "CompositeExplicitAutograd", "CompositeImplicitAutograd", ""})
MAX_DEPTH = 3  # helper calls followed from a kernel

EXEC_MACROS = frozenset(
    {"EXEC_NPU_CMD", "EXEC_NPU_NO_FORMAT_CHECK_CMD", "EXEC_NPU_CMD_V1", "EXEC_NPU_NO_FORMAT_CHECK_CMD_V1", "EXEC_NPU_CMD_SYNC", "EXEC_NPU_CMD_EXT"}
)
# Methods returning a view of the tensor (writing the result writes it).
VIEW_METHODS = frozenset(
    """view view_as unflatten squeeze unsqueeze transpose permute t select slice narrow expand expand_as as_strided
    unfold diagonal movedim moveaxis swapaxes swapdims alias detach value get real imag mT mH T H [] operator* front back at""".split()
)
# Methods returning the tensor itself when nothing needs converting, else a copy: a write through one may be a
# write of the tensor (so it counts), a return of one is not surely the tensor (so it is no alias).
MAYBE_VIEW_METHODS = frozenset("reshape reshape_as flatten contiguous to type float half bfloat16 double long int short char byte bool".split())
WRITE_THROUGH = VIEW_METHODS | MAYBE_VIEW_METHODS
# ATen functions returning a view of their first argument.
VIEW_FUNCTIONS = frozenset(f"at::{n}" for n in "view_as_real view_as_complex narrow select transpose permute squeeze unsqueeze reshape flatten as_strided alias detach".split())
# Methods that neither write the tensor nor return memory of it that is written later.
_NOT_WRITING_METHODS_ENDING_IN_UNDERSCORE = frozenset({"requires_grad_", "retain_grad_", "set_requires_grad_"})
POINTER_METHODS = frozenset({"data_ptr", "mutable_data_ptr", "const_data_ptr", "data", "storage"})
SYNC_METHODS = frozenset({"item", "cpu", "tolist", "numpy"})
SYNC_FUNCTIONS = frozenset(
    {"aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice", "aclrtSynchronizeEvent", "npuSynchronizeDevice",
     "c10_npu::npuSynchronizeDevice", "c10_npu::npuSynchronizeUsedDevices"}
)  # fmt: skip
ALLOCATIONS = frozenset(
    """at::empty at::empty_like at::zeros at::zeros_like at::ones at::ones_like at::full at::full_like at::empty_strided at::randn
    torch::empty torch::empty_like torch::zeros torch::zeros_like torch::ones torch::ones_like torch::full torch::full_like
    at_npu::native::OpPreparation::apply_tensor at_npu::native::OpPreparation::apply_tensor_without_format
    OpPreparation::apply_tensor OpPreparation::apply_tensor_without_format OpPreparation::apply_tensor_with_format
    at_npu::native::OpPreparation::apply_tensor_with_format npu_preparation::apply_tensor npu_preparation::apply_tensor_without_format
    at_npu::native::empty_with_format""".split()
)
# Calls known to write none of their arguments: checks, logging, the standard library, stream plumbing.
_HARMLESS_PREFIXES = ("std::", "TORCH_", "AT_", "C10_", "c10::", "ASCEND_LOGI", "ASCEND_LOGW", "ASCEND_LOGE", "OPS_LOG", "OP_LOG", "printf", "fprintf")
_HARMLESS_CALLS = frozenset(
    """TORCH_CHECK TORCH_INTERNAL_ASSERT TORCH_WARN CHECK_ACL static_assert assert sizeof at::IntArrayRef c10::IntArrayRef
    at::TensorOptions at::dtype at::device at::Device c10::Device at::ScalarType OptionalNPUGuard c10_npu::OptionalNPUGuard
    c10_npu::getCurrentNPUStream getCurrentNPUStream at::SymIntArrayRef c10::SymIntArrayRef c10::nullopt at::Scalar c10::Scalar
    c10::str c10::string_view std::string get_npu_format at_npu::native::get_npu_format is_npu torch_npu::utils::is_npu
    at_npu::native::FormatHelper::GetFormat CalcuOpUtil::GetTensorNpuFormat""".split()
)
# CANN's runtime copies (acl/acl_rt.h), destination first: aclrtMemcpy(dst, destMax, src, count, kind),
# aclrtMemcpyAsync(..., stream), aclrtMemset(dst, destMax, value, count); the other operands are read.
RUNTIME_COPIES = frozenset({"aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset", "aclrtMemsetAsync"})
# What a pointer variable is used through and stays that pointer: itself, a handle's ``.get()``.
_POINTER_CHAINS = ((), ("get",))
# CANN's calls making an aclTensor handle of memory given by pointer (its last argument): the handle is that memory.
HANDLE_MAKERS = frozenset({"aclCreateTensor"})
# Functions of torch, torch_npu and CANN: never defined in the files read, so never searched for.
_LIBRARY_NAMESPACES = ("at::", "torch::", "c10::", "c10_npu::", "at_npu::", "torch_npu::", "std::", "op_api::", "acl")
_DTYPES = {
    "kChar": "int8", "kByte": "uint8", "kShort": "int16", "kInt": "int32", "kLong": "int64", "kHalf": "float16", "kFloat": "float32",
    "kDouble": "float64", "kBFloat16": "bfloat16", "kBool": "bool", "kFloat16": "float16", "kInt8": "int8", "kUInt8": "uint8",
    "kInt16": "int16", "kInt32": "int32", "kInt64": "int64", "kFloat32": "float32", "kFloat64": "float64", "kComplexFloat": "complex64",
}  # fmt: skip


def produce(inputs) -> Iterator[OpEffects]:
    """The effects of every op whose C++ kernel the inputs bind (``impl``, or a def's own kernel)."""
    if not getattr(inputs, "cpp_files", None):
        return
    reader = _Kernels(inputs)
    by_op: dict[str, list[OpEffects]] = {}
    for op, sig, kernel, key, path, line, column in bound_kernels(inputs.cpp_files):
        by_op.setdefault(op, []).append(reader.effects(op, sig, kernel, key, path, line, column))
    from opkit.effects.build import merge

    for op, parts in by_op.items():
        yield parts[0] if len(parts) == 1 else merge(parts)


def read_kernels(inputs, kernels: Iterable[tuple]) -> Iterator[OpEffects]:
    """What this reader reads of each ``(op, signature, Kernel, dispatch key, path, line, column)``, one reader
    shared: for kernels ``produce`` does not read as the op's computation (a Meta's, for what it allocates)."""
    reader = _Kernels(inputs)
    for kernel in kernels:
        yield reader.effects(*kernel)


def bound_kernels(files) -> Iterator[tuple]:
    """(op, signature, Kernel, dispatch key, path, line, column) for each kernel of a parsed C++ def: the
    kernels the C++ producer reads, and the host side other producers (device launches) start from."""
    from opkit.formats.cpp_registrations import exclusive
    from opkit.signature import Dialect, SchemaError, parse_schema

    defs: dict[tuple[str, str], list] = {}
    for source in files:
        for d in source.defs:
            try:
                sig = parse_schema(d.schema, Dialect.TORCH_LIBRARY)
            except SchemaError:
                continue
            namespace = sig.namespace or d.namespace
            defs.setdefault((namespace, sig.full_name), []).append((source.path, d, sig))
            if d.kernel is not None:
                yield f"{namespace}::{sig.full_name}", sig, d.kernel, "CompositeImplicitAutograd", source.path, d.kernel.line, d.kernel.column
    for source in files:
        for impl in source.impls:
            if impl.dispatch_key not in KERNEL_KEYS:
                continue
            for path, d, sig in defs.get((impl.namespace, impl.op), ()):
                if not exclusive(d.conditions, impl.conditions, same_file=path == source.path):
                    yield f"{impl.namespace}::{sig.full_name}", sig, impl.kernel, impl.dispatch_key, source.path, impl.line, impl.column
                    break


@dataclass
class _Flow:
    """What one function does to its tracked parameters: the result of reading its body."""

    writes: dict[str, list[Evidence]] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    settled_by: dict[str, str] = field(default_factory=dict)  # an unknown another kernel language settles
    returns: list[tuple[Evidence, tuple]] = field(default_factory=list)  # (where, per value: ("alias", p) | ("fresh", Allocation) | None)
    aclop: list[Evidence] = field(default_factory=list)
    syncs: list[Evidence] = field(default_factory=list)
    handles: set[str] = field(default_factory=set)  # parameters whose memory a returned handle refers to

    def write(self, param: str, evidence: Evidence) -> None:
        self.writes.setdefault(param, []).append(evidence)

    def not_known(self, param: str, reason: str, settled_by: str = "") -> None:
        """``param``'s write cannot be told here; ``settled_by``: only because of a construct another
        producer reads (a device launch), a reason kept only while every unknown of it is of that kind."""
        if param not in self.unknown:
            self.unknown[param] = reason
            if settled_by:
                self.settled_by[param] = settled_by
        elif self.settled_by.get(param) != settled_by:
            self.settled_by.pop(param, None)


class _Kernels:
    """The files a kernel's reading reaches, each read once: bodies, helpers, aclnn interfaces, OpDefs, ops."""

    def __init__(self, inputs):
        self.inputs = inputs
        self.texts: dict[str, str] = dict(getattr(inputs, "cpp_texts", {}) or {})
        self.functions: dict[str, list] = getattr(inputs, "cpp_functions", {}) or {}
        self._defined: dict[str, list] = {}  # name → functions with bodies found by searching the texts
        self._searched: set[str] = set()
        self._interfaces: dict[str, list] = {}
        self._interface_files: dict[str, list] = {}
        self._declaring: dict[str, str] | None = None
        self._opdefs: dict[str, object] | None = None
        self._device = None  # the device kernels of OpDefs, read when an aclnn call has no header
        self._schemas: dict[str, object] | None = None
        self._flows: dict[tuple, _Flow] = {}

    # -- one op ------------------------------------------------------------------------------
    def effects(self, op: str, sig, kernel, key: str, path: str, line: int, column: int) -> OpEffects:
        from opkit.formats.cpp_registrations import resolve_kernel

        tensors = [a for a in sig.arguments if a.type.is_tensor]
        fn = resolve_kernel(self.functions, kernel)
        if fn is not None and not fn.defined:
            fn = self.definition(fn.short_name, len(fn.parameters), fn.name) or fn
        elif fn is None and kernel.kind == "function":
            fn = self.definition(kernel.name.rsplit("::", 1)[-1], len(sig.arguments), kernel.name)
        name = kernel.name or "the lambda"
        if fn is None or not fn.defined or fn.body == (0, 0) or fn.path not in self.texts:
            why = f"the body of {name} is not in the C++ files read" if kernel.kind in ("function", "lambda") else f"a {kernel.kind} kernel ({name})"
            return _unknown(op, sig, tensors, why)
        label = fn.name if fn.name not in ("<lambda>", "<cast>") else kernel.name or f"the lambda at line {fn.line}"
        site = KernelSite(label, "c++", key, fn.path, fn.line, fn.column)
        if len(fn.parameters) != len(sig.arguments):
            return _unknown(op, sig, tensors, f"{site.function} takes {len(fn.parameters)} parameters, the schema {len(sig.arguments)}", site)
        tracked = {p.name: a.name for p, a in zip(fn.parameters, sig.arguments) if a.type.is_tensor and p.name}
        flow = self.flow(fn, frozenset(tracked), 0)
        arguments = []
        for a, p in ((a, p) for p, a in zip(fn.parameters, sig.arguments) if a.type.is_tensor):
            if p.name in flow.writes:
                arguments.append(ArgumentEffect(a.name, Knowledge.YES, tuple(dict.fromkeys(flow.writes[p.name]))))
            elif not p.name:
                arguments.append(ArgumentEffect(a.name, Knowledge.UNKNOWN, unknown_because="the kernel's parameter is unnamed"))
            elif p.name in flow.unknown:
                arguments.append(ArgumentEffect(a.name, Knowledge.UNKNOWN, unknown_because=flow.unknown[p.name], settled_by=flow.settled_by.get(p.name, "")))
            else:
                arguments.append(ArgumentEffect(a.name, Knowledge.NO))
        returns = _returns(sig, fn, flow, tracked)
        return OpEffects(op, (site,), tuple(arguments), returns, tuple(dict.fromkeys(flow.aclop)), tuple(dict.fromkeys(flow.syncs)))

    # -- one function --------------------------------------------------------------------------
    def flow(self, fn, tracked: frozenset[str], depth: int) -> _Flow:
        key = (fn.path, fn.body, tracked)
        if key not in self._flows:
            self._flows[key] = _FlowReader(self, fn, tracked, depth).read()
        return self._flows[key]

    def definition(self, name: str, arity: int | None = None, qualified: str = ""):
        """The one definition (with a body) of function ``name`` in the files read; None if none or several differ.
        ``qualified``: the name as a kernel or call spells it (``ns::f``), which picks that namespace's."""
        qualified = qualified.lstrip(":")

        def named(functions):
            functions = list(functions)
            if "::" not in qualified:
                return functions
            exact = [f for f in functions if f.name == qualified]
            return exact or [f for f in functions if f.name.endswith("::" + qualified) or qualified.endswith("::" + f.name)]

        candidates = named(f for f in self.functions.get(name, ()) if f.defined and f.body != (0, 0)) or named(self._search(name))
        if arity is not None:
            candidates = [f for f in candidates if len(f.parameters) == arity] or ([] if len({len(f.parameters) for f in candidates}) > 1 else candidates)
        shapes = {tuple(p.type for p in f.parameters) for f in candidates}
        return candidates[0] if len(shapes) == 1 else None

    def _search(self, name: str) -> list:
        """Definitions of ``name`` in the texts: only files whose text shows ``name(...) {`` are read (each once).
        An all-capitals name is a macro: never a function with a body."""
        if name in self._searched:
            return self._defined.get(name, [])
        self._searched.add(name)
        if name.isupper():
            return []
        pattern = re.compile(r"\b" + re.escape(name) + r"\s*\([^;{}]*\)\s*(?:const\s*)?(?:noexcept\s*)?(?:->[^;{]*)?\{")
        from opkit.formats.cpp_registrations import find_definitions

        found = []
        for path, text in self.texts.items():
            if name in text and pattern.search(text):
                found += find_definitions(path, text, name)
        self._defined[name] = found
        return found

    def interface(self, name: str):
        """The aclnn interface ``name`` (``aclnnX``) as a header or definition in the files read declares it
        (only files naming ``aclnnXGetWorkspaceSize`` are lexed, each once)."""
        from opkit.formats.aclnn_api import read_aclnn_interfaces

        if name not in self._interfaces:
            if self._declaring is None:  # the files that may declare any aclnn interface, found in one scan
                self._declaring = {path: text for path, text in self.texts.items() if "GetWorkspaceSize" in text}
            wanted = name + "GetWorkspaceSize"
            found = []
            for path, text in self._declaring.items():
                if wanted in text:
                    if path not in self._interface_files:
                        self._interface_files[path] = read_aclnn_interfaces(path, text)
                    found += [i for i in self._interface_files[path] if i.name == name]
            self._interfaces[name] = found
        found = self._interfaces[name]
        decided = [f for f in found if f.dfx_out] or found
        shapes = {tuple((p.tensor, p.output) for p in f.parameters) for f in decided}
        return decided[0] if len(shapes) == 1 else None

    @functools.cached_property
    def make_acl_tensors(self) -> bool:
        """Whether any file read calls ``aclCreateTensor`` (a helper returning one may describe its argument)."""
        return any("aclCreateTensor" in text for text in self.texts.values())

    @functools.cached_property
    def launch_macros(self) -> dict:
        """The launch macros the files read define (``kernel_launches.launch_macros``), by name."""
        from opkit.formats.kernel_launches import launch_macros

        return launch_macros(self.texts)

    def opdef(self, op_type: str):
        if self._opdefs is None:
            self._opdefs = {}
            for file in getattr(self.inputs, "opdef_files", ()) or ():
                for op in file.ops:
                    self._opdefs.setdefault(op.op_type, op)
        return self._opdefs.get(op_type)

    def opdef_kernel(self, op):
        """The device kernel msOpGen names after OpDef ``op`` (``MyOp`` → ``my_op``), as the files read define
        it: the op's own ``op_kernel`` file first; None when no single one does."""
        from opkit.effects.device import DeviceKernels
        from opkit.naming import msopgen_snake

        if self._device is None:
            self._device = DeviceKernels.of(self.inputs)
        name = msopgen_snake(op.op_type)
        project = os.path.dirname(os.path.dirname(op.path))
        near = next((p for p in self.texts if p.startswith(project) and os.path.basename(os.path.dirname(p)) == "op_kernel" and name in self.texts[p]), "")
        return self._device.kernel(name, near)

    def schema(self, name: str):
        """The signature of a registered op a kernel may call by its name (C++ defs and Python schemas)."""
        if self._schemas is None:
            self._schemas = {}
            sites = [s for f in getattr(self.inputs, "cpp_files", ()) for s in f.schema_sites()]
            sites += [s for f in getattr(self.inputs, "python_files", ()) for s in f.schema_sites()]
            for site in sites:
                sig = site.signature
                if sig is not None:
                    self._schemas.setdefault(sig.name, []).append(sig)
        found = self._schemas.get(name, [])
        return found[0] if len({tuple(a.is_mutated for a in s.arguments) for s in found}) == 1 else None


@dataclass
class _Positions:
    """What an aclnn call does to each operand position, and where that was read."""

    where: str
    written: dict[int, str] = field(default_factory=dict)  # position → the callee's name for it
    device: dict[int, tuple] = field(default_factory=dict)  # position → the device kernel's writes showing it
    unknown: dict[int, str] = field(default_factory=dict)  # position → why its write is not known
    problem: str = ""  # why no position is known


def _unknown(op: str, sig, tensors, why: str, site: KernelSite | None = None) -> OpEffects:
    return OpEffects(
        op, (site,) if site else (), tuple(ArgumentEffect(a.name, Knowledge.UNKNOWN, unknown_because=why) for a in tensors),
        tuple(ReturnEffect(i) for i in range(len(sig.returns))), unknowns=(why,),
    )  # fmt: skip


def _returns(sig, fn, flow: _Flow, tracked: dict[str, str]) -> tuple[ReturnEffect, ...]:
    """Each schema return: an argument returned as-is, a fresh allocation, or unknown, from every ``return``."""
    count = len(sig.returns)
    if count == 0:
        return ()
    statements = [(where, values) for where, values in flow.returns if len(values) == count]
    if not statements or len(statements) != len(flow.returns):
        return tuple(ReturnEffect(i) for i in range(count))
    reference = _reference_returns(fn.returns, count)
    out = []
    for i in range(count):
        seen = {values[i] for _, values in statements}
        evidence = tuple(where for where, _ in statements)
        if len(seen) != 1 or None in seen:
            out.append(ReturnEffect(i))
            continue
        kind, what = next(iter(seen))
        if kind == "alias":
            why = f"returns {what} itself" + (" (a reference in the return type)" if reference[i] else "")
            out.append(ReturnEffect(i, aliases=tracked.get(what, what), known=True, evidence=tuple(Evidence(e.path, e.line, e.column, why) for e in evidence)))
        else:
            out.append(ReturnEffect(i, allocation=what, known=True, evidence=evidence))
    return tuple(out)


def _reference_returns(returns: str, count: int) -> list[bool]:
    """Which elements of a kernel's return type are references (``std::tuple<at::Tensor&, at::Tensor>``)."""
    from opkit.formats.cpp_registrations import split_top

    text = returns.strip()
    m = re.fullmatch(r"(?:std::)?tuple\s*<(.*)>", text)
    parts = split_top(m.group(1), ",") if m else [text]
    flags = ["&" in p and "&&" not in p for p in parts]
    return flags if len(flags) == count else [False] * count


class _FlowReader:
    """One function's body against its tracked parameters (the kernel's tensors, or a helper's)."""

    def __init__(self, kernels: _Kernels, fn, tracked: frozenset[str], depth: int):
        self.k = kernels
        self.fn = fn
        self.path = fn.path
        self.depth = depth
        self.flow = _Flow()
        # variable → (tracked parameter it is, or a view of; how) ; None: a fresh tensor of the function's own
        self.alias: dict[str, str | None] = {p: p for p in tracked}
        self.allocation: dict[str, Allocation] = {}
        self.maybe: set[str] = set()  # aliases that may be a copy instead (``auto c = x.contiguous();``)
        self.pointers: dict[str, str] = {}  # a pointer variable → the parameter whose memory it points to
        self.custom_handlers: set[str] = set()  # OpCommand variables given a custom handler (not aclop)
        self.ever: dict[str, str] = {p: p for p in tracked}  # every variable that was a parameter, a view or a pointer of one
        self.explained: set[tuple[int, int]] = set()  # where a variable is named in a use this reader understood

    def read(self) -> _Flow:
        from opkit.formats.cpp_bodies import read_body_in
        from opkit.formats.cpp_text import CppTextError

        try:
            body = read_body_in(self.k.texts[self.path], *self.fn.body)
        except CppTextError:
            for p in self.alias:
                self.flow.not_known(p, f"{self.path} cannot be read as C++")
            return self.flow
        facts = body.facts
        self.calls_at = {(f.line, f.column): f for f in facts if f.kind == "call"}  # an assignment's source call's arguments
        self.custom_handlers = {f.target.root for f in facts if f.kind == "method" and f.name == "SetCustomHandler" and f.target is not None}
        for fact in facts:
            handler = getattr(self, "_" + fact.kind)
            handler(fact)
        # a tensor named anywhere the facts do not explain (a macro's arguments, an aggregate, a condition):
        # what is done with it there is not known
        for name, line, column in body.mentions:
            param = self.ever.get(name)
            if param is not None and (line, column) not in self.explained:
                self.flow.not_known(param, f"{name} is used at {self.path}:{line} in a way opkit does not read")
        return self.flow

    def explain(self, *operands) -> None:
        for operand in operands:
            if operand is not None:
                self.explained.update((line, column) for _, line, column, _ in operand.names)

    def evidence(self, fact, why: str) -> Evidence:
        return Evidence(self.path, fact.line, fact.column, why)

    def param_of(self, operand, *, surely: bool = False) -> str | None:
        """The tracked parameter an operand is (or views, or may be: ``x.contiguous()``), or None. ``surely``:
        only when it is that parameter's memory whatever the tensor (a view, not a ``.to(dtype)``)."""
        if operand is None or not operand.root or operand.call:
            return None
        base = self.alias.get(operand.root)
        if base is None:
            return self.pointers.get(operand.root) if operand.root in self.pointers and operand.chain in _POINTER_CHAINS and not surely else None
        if surely and operand.root in self.maybe:
            return None
        return base if all(c in (VIEW_METHODS if surely else WRITE_THROUGH) for c in operand.chain) else None

    def _touched(self, operand) -> str | None:
        """The tracked parameter whose memory an operand hands on: the parameter or a view of it, a pointer to
        its data (``x.data_ptr()``, a variable holding one, ``&x``); not a value computed from it (``x.size(0)``)."""
        if operand is None:
            return None
        if operand.call:
            return self._wrapped(operand) if operand.call.rsplit("::", 1)[-1] in HANDLE_MAKERS else None
        if not operand.root:  # an expression opkit does not take apart (arithmetic, a conditional): what it mentions
            return next(
                (self.alias.get(n) or self.pointers.get(n) for n, _, _, member in operand.names
                 if (n in self.alias or n in self.pointers) and (not member or member in WRITE_THROUGH or member in POINTER_METHODS)),
                None,
            )  # fmt: skip
        if operand.root in self.pointers and operand.chain in _POINTER_CHAINS:  # a pointer, a handle's .get()
            return self.pointers[operand.root]
        base = self.alias.get(operand.root)
        if base is None:
            return None
        chain = operand.chain
        if chain and chain[-1] in POINTER_METHODS:
            chain = chain[:-1]
        return base if all(c in WRITE_THROUGH for c in chain) else None

    def _standard_alias(self, name: str) -> bool:
        """Whether ``name`` is a ``using`` alias of a standard library type in the kernel's file."""
        if "::" in name or f"using {name}" not in self.k.texts.get(self.path, ""):
            return False
        return re.search(r"\busing\s+%s\s*=\s*std::" % re.escape(name), self.k.texts[self.path]) is not None

    def _wrapped(self, operand) -> str | None:
        """The tracked parameter whose data pointer a call's arguments pass (``aclCreateTensor(..., x.data_ptr())``,
        a helper's ``Wrap(x)`` that returns such a handle): the call's value refers to its memory."""
        return next((self.alias.get(n) or self.pointers.get(n) for n, _, _, member in operand.names if member in POINTER_METHODS and (n in self.alias or n in self.pointers)), None)

    def _handle(self, source) -> str | None:
        """The parameter whose memory the value of call ``source`` refers to: an ``aclCreateTensor`` of its data, or
        a helper of the files read returning such a handle of the argument it is given; None otherwise."""
        short = source.call.rsplit("::", 1)[-1]
        if short in HANDLE_MAKERS:
            return self._wrapped(source)
        if not self.k.make_acl_tensors or short.isupper() or source.call.startswith(_LIBRARY_NAMESPACES) or self.depth >= MAX_DEPTH:
            return None  # a helper is asked only where the files make aclTensors at all
        call = self.calls_at.get((source.line, source.column))
        args = list(call.args) if call is not None else []
        helper = self.k.definition(short, len(args), source.call) if args else None
        if helper is None or len(helper.parameters) != len(args):
            return None
        names = {helper.parameters[i].name: touched for i, a in enumerate(args) if helper.parameters[i].name and (touched := self._touched(a))}
        if not names:
            return None
        inner = self.k.flow(helper, frozenset(names), self.depth + 1)
        return next((names[n] for n in names if n in inner.handles), None)

    # -- facts ---------------------------------------------------------------------------------
    def _assign(self, fact) -> None:
        source = fact.target
        name = fact.name
        param = self.param_of(source)
        touched = self._touched(source)
        surely = self.param_of(source, surely=True) is not None
        self.alias.pop(name, None)
        self.pointers.pop(name, None)
        self.allocation.pop(name, None)
        self.maybe.discard(name)
        self.explained.add((fact.line, fact.column))
        self.explain(source)
        if source is None:
            return
        if param is not None and not ("*" in fact.declared and not fact.declared.endswith("&")):
            self.alias[name] = self.ever[name] = param
            if not surely:
                self.maybe.add(name)
            return
        if touched is not None:  # a pointer to its memory, or an expression opkit cannot take apart that mentions it
            self.pointers[name] = self.ever[name] = touched
            return
        if source.call in VIEW_FUNCTIONS:
            return  # its first argument's view: read through the call fact below
        if source.call and (handle := self._handle(source)) is not None:  # auto yt = Wrap(y): a handle of y's memory
            self.pointers[name] = self.ever[name] = handle
            return
        if source.call:
            allocation = self._allocation(source)
            if allocation is not None:
                self.allocation[name] = allocation

    def _allocation(self, source) -> Allocation | None:
        call = source.call
        if call not in ALLOCATIONS:
            return None
        text = source.text
        dtype = device = size = None
        m = re.search(r"\b(?:at|torch|c10)::(?:ScalarType::)?(k\w+)", text)
        if m and m.group(1) in _DTYPES:
            dtype = _DTYPES[m.group(1)]
        inner = text[text.find("(") + 1 :]
        first = re.match(r"\s*([A-Za-z_]\w*)\b", inner)
        like = call.endswith("_like") and first is not None
        if like:
            size = f"like:{self.alias.get(first.group(1)) or first.group(1)}"
            dtype = dtype or size
        options = re.search(r"([A-Za-z_]\w*)\s*\.\s*options\s*\(\s*\)", text)
        if options and dtype is None:
            dtype = f"like:{self.alias.get(options.group(1)) or options.group(1)}"
        if "kCPU" in text or "\"cpu\"" in text:
            device = "cpu"
        elif options or like:
            device = f"like:{self.alias.get((options or first).group(1)) or (options or first).group(1)}"
        elif "device(" in text:
            dev = re.search(r"device\(\s*([A-Za-z_]\w*)\s*\.\s*device\s*\(\s*\)\s*\)", text)
            device = f"like:{self.alias.get(dev.group(1)) or dev.group(1)}" if dev else None
        if size is None:
            args = inner.rsplit(")", 1)[0]
            size = args.split(",", 1)[0].strip() if args else None
        return Allocation(dtype, size, device, Evidence(self.path, source.line, source.column, source.text))

    def _method(self, fact) -> None:
        receiver = fact.target
        name = fact.name
        self.explain(receiver)
        if name in SYNC_METHODS or (name == "to" and any("kCPU" in a.text or a.text == '"cpu"' for a in fact.args)):
            if self._tensorish(receiver):
                self.flow.syncs.append(self.evidence(fact, f"{receiver.text}.{name}({', '.join(a.text for a in fact.args)}) waits for the device and copies to the host"))
        opcommand = receiver is not None and receiver.root and not receiver.call and (
            "Name" in receiver.chain or "Input" in receiver.chain or self._is_opcommand(receiver.root)
        )
        if name == "Run" and opcommand:
            if receiver.root not in self.custom_handlers:
                self.flow.aclop.append(self.evidence(fact, f"{receiver.root}.Run() runs the OpCommand on the aclop path"))
            return
        if opcommand and name in ("Input", "Output", "Name", "Attr", "InputWithoutContiguous", "Sync", "SetCustomHandler"):
            self.explain(*fact.args)
            if name == "Output" and fact.args:
                param = self.param_of(fact.args[0])
                if param is not None:
                    self.flow.write(param, self.evidence(fact, f"{receiver.root}.Output({fact.args[0].text}): an output of the {self._command_kind(receiver.root)}"))
                elif self._touched(fact.args[0]) is not None:
                    self.flow.not_known(self._touched(fact.args[0]), f"{fact.args[0].text} is an output of the {self._command_kind(receiver.root)} {receiver.root}, line {fact.line}")
            return
        param = self.param_of(receiver)
        if param is not None and name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITING_METHODS_ENDING_IN_UNDERSCORE:
            self.flow.write(param, self.evidence(fact, f"{receiver.text}.{name}(...) writes it in place"))
        if self._tensorish(receiver) or receiver is None or not receiver.root:
            self.explain(*fact.args)  # a tensor method reads its arguments
            return
        # another object's method given a tensor (``v.push_back(x)``, ``params.set(x)``): not followed
        for arg in fact.args:
            touched = self._touched(arg)
            if touched is not None:
                self.flow.not_known(touched, f"{arg.text} is handed to {receiver.text}.{name}(...), which opkit does not follow (line {fact.line})")
            else:
                self.explain(arg)

    def _tensorish(self, operand) -> bool:
        return operand is not None and (operand.root in self.alias or operand.root in self.allocation)

    def _is_opcommand(self, name: str) -> bool:
        return name in self._opcommands

    def _command_kind(self, name: str) -> str:
        """What the builder ``name`` is, in a message: torch_npu's OpCommand, or another builder of the same
        ``.Input().Output()`` shape (op-plugin's ATB ``ParamSetter``)."""
        return "OpCommand" if self._is_opcommand(name) else "command it builds"

    @property
    def _opcommands(self) -> set[str]:
        if not hasattr(self, "_opcommand_names"):
            text = self.k.texts.get(self.path, "")[self.fn.body[0] : self.fn.body[1]]
            self._opcommand_names = set(re.findall(r"\bOpCommand\s+([A-Za-z_]\w*)\s*[;({]", text))
        return self._opcommand_names

    def _call(self, fact) -> None:
        name = fact.name
        short = name.rsplit("::", 1)[-1]
        if (fact.checked or name.startswith(CHECK_MACROS)) and name not in SYNC_FUNCTIONS and short not in SYNC_FUNCTIONS:
            self.explain(*fact.args)
            return  # TORCH_CHECK(...) and what its condition calls: tests, computes nothing kept
        if short in EXEC_MACROS:
            self.explain(*fact.args)
            self._aclnn(fact, fact.args[0].text if fact.args else "", fact.args[1:])
            return
        macro = self.k.launch_macros.get(short)
        if macro is not None and len(fact.args) > macro.kernel:
            self._launch(fact, f"{fact.args[macro.kernel].text} launched by {short} (its #define, {macro.where})")
            return
        if short.startswith("aclnn") and short.endswith("GetWorkspaceSize"):
            self.explain(*fact.args)
            self._aclnn(fact, short.removesuffix("GetWorkspaceSize"), fact.args[:-2])
            return
        if name in SYNC_FUNCTIONS or short in SYNC_FUNCTIONS:
            self.flow.syncs.append(self.evidence(fact, f"{name}(...) blocks the host until the device finishes"))
            return
        if short in HANDLE_MAKERS:
            self.explain(*fact.args)
            return  # a handle of the memory: what uses it is read where it is used
        if short == "RunOpApiV2" or short == "RunOpApi" or short == "RunOpApiV3":
            self.explain(*fact.args)  # the lambda given (or a variable holding it): understood where defined
            return  # queues the lambda given: its body is read with the function's
        passed = [(i, a, self._touched(a)) for i, a in enumerate(fact.args)]
        passed = [(i, a, p) for i, a, p in passed if p is not None]
        self.explain(*(a for a in fact.args if self._touched(a) is None))
        if not passed:
            return
        self.explain(*fact.args)  # understood below, or marked unknown
        if short in RUNTIME_COPIES and len(fact.args) >= 4:
            for i, arg, param in passed:
                if i == 0:
                    self.flow.write(param, self.evidence(fact, f"{short}'s destination {arg.text} points into it"))
            return  # the source and the sizes are read
        if name in ALLOCATIONS or name in VIEW_FUNCTIONS or name in _HARMLESS_CALLS or name.startswith(_HARMLESS_PREFIXES) or short in _HARMLESS_CALLS:
            return
        if self._standard_alias(name):
            return  # ``using Ptr = std::unique_ptr<...>``: a standard type under a local name
        if name.startswith(("at::", "torch::")) and name.count("::") == 1:
            if short.endswith(("_out", "_outf")) or (short.endswith("_") and not short.startswith("_")):
                self._aten_inplace(fact, short, passed)
            return  # a functional ATen op: reads its arguments
        schema = self.k.schema(short)
        if schema is not None:
            self._registered_op(fact, schema, passed)
            return
        library = name.startswith(_LIBRARY_NAMESPACES) or short.startswith(("acl", "rt")) and short[3:4].isupper()
        helper = self.k.definition(short, len(fact.args), name) if self.depth < MAX_DEPTH and not library else None
        if helper is not None and helper.body != (0, 0) and len(helper.parameters) == len(fact.args):
            self._helper(fact, helper, passed)
            return
        reason = f"passed to {name}(...), which opkit does not follow" + (
            f" (more than {MAX_DEPTH} calls deep)" if self.depth >= MAX_DEPTH and not library else " (a library function)" if library
            else " (a macro)" if short.isupper() else " (not defined in the C++ files read)"
        )
        for _, arg, param in passed:
            self.flow.not_known(param, f"{arg.text} {reason}, {self.path}:{fact.line}")

    def _aten_inplace(self, fact, short: str, passed) -> None:
        """``at::x_(self, ...)`` writes self; ``at::x_out(out, ...)`` its first arguments, ``at::x_outf(..., out)`` its last."""
        written = 0 if not short.endswith("_outf") else len(fact.args) - 1
        for i, arg, param in passed:
            if i == written and self.param_of(arg) is not None:
                self.flow.write(param, self.evidence(fact, f"at::{short}({', '.join(a.text for a in fact.args)}) writes {arg.text}"))
            elif short.endswith("_out") and i > 0:
                self.flow.not_known(param, f"{arg.text} passed to at::{short}, whose leading out arguments opkit does not count, {self.path}:{fact.line}")

    def _registered_op(self, fact, schema, passed) -> None:
        for i, arg, param in passed:
            if i < len(schema.arguments) and schema.arguments[i].is_mutated and self.param_of(arg) is not None:
                self.flow.write(param, self.evidence(fact, f"{fact.name}(...) is the registered op {schema.name}, whose schema marks '{schema.arguments[i].name}' (a!)"))

    def _helper(self, fact, helper, passed) -> None:
        names = {helper.parameters[i].name: (arg, param) for i, arg, param in passed if helper.parameters[i].name}
        inner = self.k.flow(helper, frozenset(names), self.depth + 1)
        for hname, (arg, param) in names.items():
            if hname in inner.writes:
                direct = self.param_of(arg) is not None or arg.address or arg.root in self.pointers
                if direct:
                    first = inner.writes[hname][0]
                    self.flow.write(param, Evidence(first.path, first.line, first.column, f"{first.why} (in {helper.name}, called at {self.path}:{fact.line})"))
            elif hname in inner.unknown:
                self.flow.not_known(param, inner.unknown[hname], inner.settled_by.get(hname, ""))
        self.flow.aclop += inner.aclop
        self.flow.syncs += inner.syncs

    def _aclnn(self, fact, aclnn: str, operands) -> None:
        """An aclnn call: each operand at an output position of the interface is written."""
        passed = [(i, a, self._touched(a)) for i, a in enumerate(operands)]
        passed = [(i, a, p) for i, a, p in passed if p is not None]
        if not passed:
            return
        positions = self._positions(aclnn, len(operands))
        for i, arg, param in passed:
            if positions.problem:
                self.flow.not_known(param, f"{arg.text} passed to {aclnn} ({self.path}:{fact.line}): {positions.problem}")
            elif i in positions.unknown:
                self.flow.not_known(param, f"{arg.text} passed to {aclnn} ({self.path}:{fact.line}) as {positions.unknown[i]}")
            elif i in positions.written:
                if self.param_of(arg) is None:
                    self.flow.not_known(param, f"{arg.text} is {aclnn}'s output {positions.written[i]} ({positions.where}), but not {param} itself")
                elif i in positions.device:
                    call = f"; {aclnn} ({self.path}:{fact.line}) passes {arg.text} as its input {positions.written[i]}"
                    for w in positions.device[i]:
                        self.flow.write(param, Evidence(w.path, w.line, w.column, w.why + call))
                else:
                    self.flow.write(param, self.evidence(fact, f"{aclnn}'s output {positions.written[i]} ({positions.where}) is {arg.text}"))

    def _positions(self, aclnn: str, count: int) -> "_Positions":
        """Which operand positions of an aclnn call are written: from its header, else its OpDef (and the
        OpDef's device kernel, which shows the inputs it writes)."""
        interface = self.k.interface(aclnn)
        op = self.k.opdef(aclnn.removeprefix("aclnn")) if aclnn.startswith("aclnn") else None
        if interface is not None:
            where = f"{interface.where}" + (", DFX_OUT" if interface.dfx_out else "")
            if not any(p.output for p in interface.parameters):
                all_const = f"{aclnn}GetWorkspaceSize at {where} declares every tensor const: which are its outputs it does not say"
                found = self._opdef_positions(op, count) if op is not None else None
                return found if found is not None and not found.problem else _Positions(where, problem=all_const)
            if len(interface.parameters) != count:
                return _Positions(where, problem=f"the call passes {count} operands, {aclnn}GetWorkspaceSize at {where} takes {len(interface.parameters)}")
            return _Positions(where, {i: p.name for i, p in enumerate(interface.parameters) if p.output})
        if op is None:
            return _Positions("", problem=f"no aclnn header declares {aclnn}GetWorkspaceSize and no OpDef {aclnn.removeprefix('aclnn')} is in the files read")
        return self._opdef_positions(op, count)

    def _opdef_positions(self, op, count: int) -> "_Positions":
        """An aclnn call's positions as OpDef ``op`` lays them out: inputs, attributes, outputs."""
        inputs = [t.name for t in op.inputs]
        outputs = [t.name for t in op.outputs if t.name not in inputs]
        in_place = {t.name for t in op.outputs if t.name in inputs}
        positions = [*inputs, *(a.name for a in op.attrs), *outputs]
        where = f"OpDef {op.op_type}, {op.path}:{op.line}"
        if len(positions) != count:
            return _Positions(where, problem=f"the call passes {count} operands, OpDef {op.op_type} ({op.path}:{op.line}) has {len(positions)} (inputs, attributes, outputs)")
        found = _Positions(where, {i: n for i, n in enumerate(positions) if i >= len(inputs) + len(op.attrs) or n in in_place})
        kernel = self.k.opdef_kernel(op)
        memory = [p for p in kernel.parameters if p.global_memory] if kernel is not None else []
        if len(memory) != len(op.inputs) + len(op.outputs) + 2:  # msOpGen's layout: inputs, outputs, workspace, tiling
            if not op.outputs:
                why = f"its kernel {kernel.name} ({kernel.path}:{kernel.line}) takes {len(memory)} global-memory parameters, not inputs, outputs, workspace and tiling" if kernel is not None else "its device kernel is not in the files read"
                found.problem = f"OpDef {op.op_type} ({op.path}:{op.line}) declares no output: it writes some of its inputs, and {why}"
            return found
        for i, parameter in enumerate(memory[: len(inputs)]):
            if parameter.written == "yes":
                found.written[i] = inputs[i]
                found.device[i] = parameter.writes
            elif parameter.written == "unknown" and not op.outputs:  # else the OpDef's word stands: an input
                found.unknown[i] = f"input {inputs[i]} of {kernel.name} ({kernel.path}:{kernel.line}), parameter {parameter.name}: {parameter.unknown_because}"
        return found

    def _launch(self, fact, kernel: str = "") -> None:
        """A device launch (``k<<<>>>(args)``, a launch macro's use): unknown here, for the device producer to settle."""
        self.explain(*fact.args)
        for arg in fact.args:
            param = self._touched(arg)
            if param is not None:
                self.flow.not_known(param, f"{arg.text} is handed to the device kernel {kernel or fact.name + '<<<>>>'} ({self.path}:{fact.line})", "device")

    def _return(self, fact) -> None:
        self.explain(*fact.args)
        if fact.in_lambda:
            return
        values = []
        for value in fact.args:
            param = self.param_of(value, surely=True)
            if param is not None:
                values.append(("alias", param))
            elif value.root in self.allocation and not value.chain:
                values.append(("fresh", self.allocation[value.root]))
            elif value.call and not value.chain and self._allocation(value) is not None:
                values.append(("fresh", self._allocation(value)))
            elif value.root in self.alias and value.chain and value.chain[-1] == "clone" and all(c in WRITE_THROUGH for c in value.chain[:-1]):
                like = f"like:{self.alias[value.root]}"
                values.append(("fresh", Allocation(like, like, like, Evidence(self.path, value.line, value.column, value.text))))
            else:
                values.append(None)
                if value.call and (handle := self._wrapped(value)) is not None:  # return Ptr(aclCreateTensor(..., t.data_ptr()))
                    self.flow.handles.add(handle)
                elif value.root in self.pointers and value.chain in _POINTER_CHAINS:
                    self.flow.handles.add(self.pointers[value.root])
        self.flow.returns.append((self.evidence(fact, "return"), tuple(values)))
