"""Python kernels, read with ``ast`` (never imported): which functions are an op's kernel, and what their
bodies visibly do to their parameters.

A kernel is the function PyTorch runs for real tensors, as opposed to a Meta/fake function
(``python_registrations`` reads those):

* ``@torch.library.custom_op("ns::op", mutates_args=...)`` on a function (its ``device_types`` say for
  which device; none: every device), and ``@op.register_kernel("npu")`` / ``torch.library.register_kernel``;
* ``Library.impl("op", fn, key)``, ``@lib.impl("op")``, ``@impl(lib, "op", key)`` and
  ``@torch.library.impl("ns::op", key)`` for any key but Meta (CPU, PrivateUse1, CompositeExplicitAutograd, ...);
* ``direct_register_custom_op(op_name=..., op_func=fn, mutates_args=[...], ...)``, vLLM's and sglang's helper
  (the schema is inferred from ``op_func`` as ``torch.library.infer_schema`` does).

Each kernel's body gives located facts about its parameters: writes (``x.add_()``, any ``name_`` method,
``x[...] = v``, ``x += v``, ``out=x``, ``inplace=True``, a collective's output), calls of registered ops
(``torch.ops.ns.op(...)``, ``torch_npu.op(...)``: which parameter goes to which position, for a reader of
schemas to decide), calls opkit cannot follow (the parameters they are given, and why), returns (a
parameter as-is or a view of it, an allocation with its dtype/size/device, a fresh result, or unknown) and
host syncs (``.item()``, ``.tolist()``, ``.cpu()``, ``.numpy()``, ``bool(t)``, ``if t:``, ...). Helpers
defined in the same module are followed to a bounded depth. Nothing here knows a schema: ``opkit.effects``
turns these facts into the kernel-effects model.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from opkit.formats.files import InputError
from opkit.formats.python_registrations import (
    CUSTOM_OP,
    IMPL,
    KNOWN_HELPERS,
    META_KEY,
    ModuleReader,
    NotInferable,
    _arg,
    _assigned_libraries,
    _function,
    _mutates_args,
    _Names,
    _split_qualname,
    _str_arg,
    infer_schema,
    module_libraries,
    module_paths,
    parsed,
    sibling_text,
    walk,
)

REGISTER_KERNEL = frozenset({"torch.library.register_kernel"})
DIRECT_REGISTER = "direct_register_custom_op"
# The namespace each ecosystem's helper defines its ops in when ``target_lib`` is not given.
# Dispatch keys whose functions are not kernels of real tensors.
_NOT_KERNEL_KEYS = frozenset({META_KEY, "Fake", "Autograd", "AutogradCPU", "AutogradPrivateUse1", "AutogradNPU", "Functionalize"})
# custom_op's ``device_types`` / register_kernel's device → the dispatch key torch registers.
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "npu": "PrivateUse1", "privateuseone": "PrivateUse1", "meta": META_KEY}
HELPER_DEPTH = 3  # helpers of the module followed this deep; deeper calls are unknown

# Tensor methods that return a view of (or the same memory as) their receiver: writing through the
# result writes the receiver.
_VIEWS = frozenset(
    """view view_as transpose permute narrow select squeeze unsqueeze expand expand_as t as_strided diagonal
    unfold unflatten split chunk unbind tensor_split detach movedim swapaxes swapdims real imag""".split()
)
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data"})
# Results that are the receiver's memory when they can be, a copy otherwise: a write through them is unknown.
_MAYBE_VIEWS = frozenset({"reshape", "contiguous", "flatten", "to", "type_as", "float", "half", "bfloat16", "int", "long"})
# ``name_`` methods that change no data.
_NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})
# Tensor methods whose result is a host value, not a tensor (``if x.dim() == 2`` needs no sync).
_HOST_VALUES = frozenset(
    """size dim numel stride element_size nelement ndimension is_contiguous is_floating_point is_complex get_device
    storage_offset data_ptr untyped_storage is_pinned is_shared has_names type""".split()
)
_HOST_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "is_npu", "is_meta", "layout", "requires_grad", "names", "is_sparse"})
# Methods that copy a device value to the host (an NPU stream sync, which aclgraph capture refuses).
_SYNC_METHODS = frozenset({"item", "tolist", "cpu", "numpy", "nonzero"})
_SYNC_FUNCTIONS = frozenset({"torch.npu.synchronize", "torch.cuda.synchronize", "torch_npu.npu.synchronize", "torch.nonzero"})
_SCALAR_CASTS = frozenset({"bool", "int", "float"})
# Builtins that only read what they are given.
_READ_BUILTINS = frozenset(
    """len isinstance issubclass print type id range enumerate zip list tuple dict set getattr hasattr max min abs
    str repr format sorted reversed any all iter next hash callable round divmod sum map filter""".split()
)
# Factories of fresh tensors: name → (the argument giving the size, and whether it is made like an argument).
_ALLOCATORS = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided", "arange", "tensor"})
_ALLOCATORS_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"})
_NEW_ALLOCATORS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "new_tensor"})
# torch.distributed collectives → the positions of the arguments they write (their outputs).
_COLLECTIVE_OUTPUTS = {
    "all_reduce": (0,), "broadcast": (0,), "all_gather": (0,), "all_gather_into_tensor": (0,), "_all_gather_base": (0,),
    "reduce_scatter": (0,), "reduce_scatter_tensor": (0,), "_reduce_scatter_base": (0,), "all_to_all": (0,),
    "all_to_all_single": (0,), "recv": (0,), "irecv": (0,), "scatter": (0,), "reduce": (0,), "gather": (1,),
    "broadcast_object_list": (0,), "all_gather_object": (0,),
}  # fmt: skip
# torch.distributed calls that write no tensor they are given.
_COLLECTIVE_READS = frozenset({"send", "isend", "barrier", "monitored_barrier", "get_rank", "get_world_size", "new_group",
                               "_find_or_create_pg_by_ranks_and_tag", "get_process_group_ranks", "is_initialized"})
_DISTRIBUTED = ("torch.distributed.", "torch.distributed.distributed_c10d.")


# ------------------------------------------------------------------------------------------------
# The located facts
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """Something the code shows at one place: ``why`` says what (``x.copy_(...)``, ``.item()``, ...)."""

    line: int
    column: int
    why: str


@dataclass(frozen=True)
class Write(Fact):
    parameter: str = ""  # the kernel parameter whose memory is written


@dataclass(frozen=True)
class OpCall(Fact):
    """A call of a registered op; which of the kernel's parameters it passes where."""

    op: str = ""  # "ns::name" or "ns::name.overload"
    positional: tuple[tuple[int, str], ...] = ()  # (position, parameter)
    keywords: tuple[tuple[str, str], ...] = ()  # (argument name, parameter)


@dataclass(frozen=True)
class Opaque(Fact):
    """A call opkit does not follow, given some of the kernel's parameters (it may write them)."""

    parameters: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sync(Fact):
    """A host sync; ``on``: the parameter it is a sync for only if that parameter is a tensor (``if x:``)."""

    on: str | None = None


@dataclass(frozen=True)
class Allocated:
    dtype: str | None  # "int8", "like:x", or None (torch's default / not told)
    size: str | None  # "like:x" or the expression as written
    device: str | None  # "like:x", a literal ("cpu", "npu", "meta"), or None
    line: int
    column: int
    why: str


@dataclass(frozen=True)
class Returned:
    """One returned value: ``kind`` "alias" (``parameter``, as-is or a view: ``why``), "allocation",
    "fresh" (a new tensor of some op), "none" or "unknown"."""

    kind: str
    line: int
    column: int
    why: str
    parameter: str | None = None
    allocation: Allocated | None = None


@dataclass(frozen=True)
class Exit:
    """A ``return`` statement: ``values`` one per item of a returned tuple/list, or one."""

    line: int
    column: int
    values: tuple[Returned, ...]
    is_sequence: bool  # a tuple or list display


@dataclass(frozen=True)
class KernelBody:
    """What one function's body (with the helpers it calls) shows about its parameters."""

    function: str
    line: int
    column: int
    parameters: tuple[str, ...]  # in order: positional then keyword-only
    writes: tuple[Write, ...] = ()
    op_calls: tuple[OpCall, ...] = ()
    opaque: tuple[Opaque, ...] = ()
    syncs: tuple[Sync, ...] = ()
    side_effects: tuple[Fact, ...] = ()
    exits: tuple[Exit, ...] = ()
    falls_off: bool = False  # some path ends without ``return``
    annotated_types: dict[str, str | None] = field(default_factory=dict, compare=False)
    path: str = ""  # the module the function is defined in, where it is not the registering one (an imported op_func)


@dataclass(frozen=True)
class PythonKernel:
    """A function registered as the kernel of an op, and where."""

    namespace: str  # "" where the registration does not say
    op: str  # "name" or "name.overload"
    dispatch_key: str  # "CompositeExplicitAutograd" (custom_op for every device), "PrivateUse1", "CPU", ...
    style: str  # "custom_op", "impl", "register_kernel", "direct_register_custom_op"
    body: KernelBody
    line: int  # the registration
    column: int
    mutates_args: tuple[str, ...] | str | None = None  # custom_op / direct_register_custom_op: the promise
    schema: str | None = None  # the schema the registration itself infers or states (custom_op, direct_register_custom_op)

    @property
    def qualname(self) -> str:
        return f"{self.namespace}::{self.op}" if self.namespace else self.op


@dataclass
class PythonKernelFile:
    path: str
    kernels: list[PythonKernel] = field(default_factory=list)
    defined: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # op name → (schema text, line, column): ``lib.define``


# ------------------------------------------------------------------------------------------------
# Reading a body
# ------------------------------------------------------------------------------------------------


def _call_text(call: ast.Call) -> str:
    text = ast.unparse(call.func)
    return f"{text}(...)" if len(text) < 60 else f"{text[:57]}...(...)"


class _Body:
    """Reads one function's body; ``binding`` maps its parameters to the kernel's (a helper's are its caller's)."""

    def __init__(self, reader: _FileReader, fn: ast.FunctionDef | ast.AsyncFunctionDef, binding: dict[str, str], depth: int, tensors: frozenset[str]):
        self.reader, self.fn, self.depth = reader, fn, depth
        self.origin: dict[str, tuple[str, str]] = {name: (param, "") for name, param in binding.items()}  # local → (kernel parameter, how)
        self.maybe: dict[str, str] = {}  # local → kernel parameter it may or may not share memory with
        self.kinds: dict[str, Returned] = {}  # local → what it holds, for returns
        self.tensors = set(tensors)  # locals known to be tensors (beyond the parameters)
        self.writes: list[Write] = []
        self.op_calls: list[OpCall] = []
        self.opaque: list[Opaque] = []
        self.syncs: list[Sync] = []
        self.side_effects: list[Fact] = []
        self.exits: list[Exit] = []

    # -- names ---------------------------------------------------------------------------------
    def root(self, node: ast.expr | None) -> tuple[str, str] | None:
        """(kernel parameter, how) when ``node`` is a parameter's memory: the parameter, a view or an element."""
        if isinstance(node, ast.Name):
            return self.origin.get(node.id)
        if isinstance(node, ast.Subscript):
            inner = self.root(node.value)
            return (inner[0], inner[1] or "an element") if inner else None
        if isinstance(node, ast.Attribute) and node.attr in _VIEW_ATTRIBUTES:
            inner = self.root(node.value)
            return (inner[0], inner[1] or f"its .{node.attr}") if inner else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr in _VIEWS or (attr.endswith("_") and attr not in _NOT_WRITES and not attr.startswith("_")):
                inner = self.root(node.func.value)
                return (inner[0], inner[1] or (f"a view (.{attr})" if attr in _VIEWS else "")) if inner else None
        if isinstance(node, ast.Call) and node.args:  # torch.narrow(x, ...), torch.transpose(x, ...): views too
            qualified = self.reader.names.qualify(node.func) or ""
            if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _VIEWS:
                inner = self.root(node.args[0])
                return (inner[0], inner[1] or f"a view ({qualified})") if inner else None
        if isinstance(node, ast.Starred):
            return self.root(node.value)
        return None

    def maybe_root(self, node: ast.expr | None) -> str | None:
        if isinstance(node, ast.Name):
            return self.maybe.get(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MAYBE_VIEWS:
            inner = self.root(node.func.value)
            return inner[0] if inner else self.maybe_root(node.func.value)
        return None

    def is_tensor(self, node: ast.expr) -> bool | None:
        """Whether ``node`` is a tensor: True, False, or None (a parameter: its schema decides)."""
        if isinstance(node, ast.Name):
            if node.id in self.origin:
                return None
            return True if node.id in self.tensors else False
        if isinstance(node, ast.Attribute):
            return False if node.attr in _HOST_ATTRIBUTES else (self.is_tensor(node.value) if node.attr in _VIEW_ATTRIBUTES else False)
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _HOST_VALUES or node.func.attr in _SYNC_METHODS:
                return False
            receiver = self.is_tensor(node.func.value)
            return receiver if receiver is not False else False
        if isinstance(node, ast.Compare) and not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            sides = [self.is_tensor(n) for n in (node.left, *node.comparators)]
            return True if True in sides else (None if None in sides else False)
        if isinstance(node, ast.BinOp):
            sides = [self.is_tensor(node.left), self.is_tensor(node.right)]
            return True if True in sides else (None if None in sides else False)
        return False

    def tensor_parameter(self, node: ast.expr) -> str | None:
        """The parameter whose tensor-ness decides ``node``'s (``if x:``, ``x > 0``)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.origin:
                return self.origin[n.id][0]
        return None

    # -- facts -----------------------------------------------------------------------------------
    def write(self, target: ast.expr, at: ast.AST, why: str) -> None:
        found = self.root(target)
        if found is not None:
            param, how = found
            self.writes.append(Write(at.lineno, at.col_offset + 1, why + (f" ({how} of {param})" if how else ""), param))
            return
        maybe = self.maybe_root(target)
        if maybe is not None:
            self.opaque.append(Opaque(at.lineno, at.col_offset + 1, f"{why}: a tensor that may or may not share {maybe}'s memory", (maybe,)))

    def sync(self, node: ast.AST, why: str, on: ast.expr | None = None) -> None:
        decided = True if on is None else self.is_tensor(on)
        if decided is False:
            return
        param = self.tensor_parameter(on) if decided is None and on is not None else None
        self.syncs.append(Sync(node.lineno, node.col_offset + 1, why, param))

    def parameters_in(self, nodes: list[ast.expr]) -> tuple[str, ...]:
        """The kernel parameters whose memory ``nodes`` hand over: as-is, a view, an element of a display,
        or held by a local (``d = {"k": x}``, the result of a call given ``x``). ``x + 1`` or ``x.shape``
        hands over no memory of ``x``."""
        found: list[str] = []
        for node in nodes:
            for item in _displayed(node):
                param = self.holder(item)
                if param and param not in found:
                    found.append(param)
        return tuple(found)

    def holder(self, node: ast.expr) -> str | None:
        found = self.root(node)
        return found[0] if found else self.maybe_root(node)

    # -- statements ------------------------------------------------------------------------------
    def read(self) -> None:
        self.block(self.fn.body)

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # a nested def runs only when called: a call of it is opaque
        if isinstance(stmt, ast.Assign):
            self.expression(stmt.value)
            for target in stmt.targets:
                self.assign(target, stmt.value, stmt)
            return
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.expression(stmt.value)
                self.assign(stmt.target, stmt.value, stmt)
            return
        if isinstance(stmt, ast.AugAssign):
            self.expression(stmt.value)
            target = stmt.target
            if isinstance(target, ast.Subscript):
                self.expression(target.slice)
            self.write(target, stmt, f"{ast.unparse(target)} {_AUG[type(stmt.op)]}= ...")
            return
        if isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self.expression(stmt.value)
            self.exits.append(self.exit(stmt))
            return
        if isinstance(stmt, (ast.If, ast.While)):
            self.expression(stmt.test)
            self.condition(stmt.test)
            self.block(stmt.body)
            self.block(stmt.orelse)
            return
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expression(stmt.iter)
            found = self.root(stmt.iter)
            if found is not None:
                for name in _target_names(stmt.target):
                    self.origin.setdefault(name, (found[0], "an element"))
            elif isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id in ("enumerate", "zip"):
                self.zip_targets(stmt.target, stmt.iter)
            self.block(stmt.body)
            self.block(stmt.orelse)
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expression(item.context_expr)
            self.block(stmt.body)
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.block(stmt.body)
            for handler in stmt.handlers:
                self.block(handler.body)
            self.block(stmt.orelse)
            self.block(stmt.finalbody)
            return
        if isinstance(stmt, ast.Match):
            self.expression(stmt.subject)
            for case in stmt.cases:
                self.block(case.body)
            return
        if isinstance(stmt, ast.Assert):
            self.expression(stmt.test)
            self.condition(stmt.test)
            return
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.expression(child)

    def zip_targets(self, target: ast.expr, call: ast.Call) -> None:
        """``for i, t in enumerate(xs)`` / ``for a, b in zip(xs, ys)``: each name an element of its list."""
        if not isinstance(target, ast.Tuple):
            return
        sources = [None, *call.args[:1]] if call.func.id == "enumerate" else list(call.args)
        for name_node, source in zip(target.elts, sources):
            found = self.root(source) if source is not None else None
            if found is not None and isinstance(name_node, ast.Name):
                self.origin.setdefault(name_node.id, (found[0], "an element"))

    def assign(self, target: ast.expr, value: ast.expr, stmt: ast.stmt) -> None:
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            if isinstance(target, ast.Subscript):
                self.write(target.value, stmt, f"{ast.unparse(target)} = ...")
            elif target.attr == "data":
                self.write(target.value, stmt, f"{ast.unparse(target)} = ... (replaces its data)")
            return
        names = _target_names(target)
        found = self.root(value)
        if found is not None and (isinstance(target, ast.Name) or _splits(value)):
            for name in names:
                self.origin[name] = (found[0], found[1] or ("a view" if not isinstance(value, ast.Name) else ""))
            return
        maybe = self.maybe_root(value)
        if maybe is None and not _is_torch_call(value, self.reader.names):
            held = self.parameters_in([value]) if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set)) else ()
            if isinstance(value, ast.Call) and not held:  # the result of a call opkit does not follow may hold what it was given
                held = self.parameters_in([*value.args, *(k.value for k in value.keywords)]) if not isinstance(value.func, ast.Attribute) or self.is_tensor(value.func.value) is not True else ()
            maybe = held[0] if held else None
        for name in names:
            self.origin.pop(name, None)
            self.maybe.pop(name, None)
            if maybe is not None:
                self.maybe[name] = maybe
        if isinstance(target, ast.Name):
            kind = self.value_kind(value)
            previous = self.kinds.get(target.id)
            self.kinds[target.id] = kind if previous is None or previous.kind == kind.kind else Returned("unknown", kind.line, kind.column, f"{target.id} is assigned values of different kinds")
            if kind.kind in ("allocation", "fresh"):
                self.tensors.add(target.id)

    def condition(self, test: ast.expr) -> None:
        """``if t:`` / ``while t > 0:``: Python reads a tensor's value on the host."""
        nodes = test.values if isinstance(test, ast.BoolOp) else [test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test]
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                continue  # bool(t), isinstance(...): the call itself says
            if isinstance(node, (ast.Name, ast.Compare, ast.Call, ast.Subscript, ast.BinOp)):
                self.sync(node, f"`{_short(node)}` as a condition reads the tensor's value on the host", on=node)

    # -- expressions -----------------------------------------------------------------------------
    def expression(self, node: ast.expr) -> None:
        """Every call in ``node`` (nested lambdas and comprehensions' own calls included)."""
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        for call in calls:
            self.call(call)
        for n in ast.walk(node):
            if isinstance(n, ast.IfExp):
                self.condition(n.test)

    def call(self, call: ast.Call) -> None:
        names = self.reader.names
        func = call.func
        qualified = names.qualify(func) or ""
        text = _call_text(call)
        args = list(call.args)
        for keyword in call.keywords:
            if keyword.arg == "out":
                for out in keyword.value.elts if isinstance(keyword.value, (ast.Tuple, ast.List)) else [keyword.value]:
                    self.write(out, call, f"out={ast.unparse(out)} in {text}")
            if keyword.arg == "inplace" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True and args:
                self.write(args[0], call, f"{text} with inplace=True")
        # host syncs
        if isinstance(func, ast.Attribute) and func.attr in _SYNC_METHODS:
            self.sync(call, f".{func.attr}() copies a device value to the host", on=func.value if func.attr == "nonzero" else None)
        elif isinstance(func, ast.Attribute) and func.attr == "to" and _to_cpu(call):
            self.sync(call, ".to('cpu') copies a device value to the host")
        elif isinstance(func, ast.Attribute) and func.attr == "synchronize":
            self.sync(call, f"{text} waits for the device")
        elif qualified in _SYNC_FUNCTIONS:
            self.sync(call, f"{text} waits for the device")
        elif isinstance(func, ast.Name) and func.id in _SCALAR_CASTS and len(args) == 1 and func.id not in self.reader.defs:
            self.sync(call, f"{func.id}({_short(args[0])}) reads the tensor's value on the host", on=args[0])
        # what the call does to the parameters it is given
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_") and func.attr not in _NOT_WRITES:
            receiver_is_module = qualified.startswith(("torch.", "torch_npu.")) and self.root(func.value) is None
            if not receiver_is_module:
                self.write(func.value, call, f"{ast.unparse(func.value)}.{func.attr}(...)")
                return
        if qualified.startswith("torch.ops.") or qualified.startswith("torch_npu.") and not qualified.startswith("torch_npu.npu."):
            self.op_call(call, qualified)
            return
        if any(qualified.startswith(prefix) for prefix in _DISTRIBUTED):
            name = qualified.rsplit(".", 1)[-1]
            self.side_effects.append(Fact(call.lineno, call.col_offset + 1, f"{text}: a collective"))
            if name in _COLLECTIVE_READS:
                return
            if name in _COLLECTIVE_OUTPUTS:
                for position in _COLLECTIVE_OUTPUTS[name]:
                    target = _arg(call, position, "tensor" if position == 0 else "gather_list")
                    if target is not None:
                        self.write(target, call, f"{text} writes its output")
                return
            self.unfollowed(call, f"{text} (a torch.distributed call opkit does not know)")
            return
        if qualified.startswith(("torch.", "torch_npu.npu.")) and not qualified.startswith(("torch._C", "torch.library", "torch.ops")):
            name = qualified.rsplit(".", 1)[-1]
            if name.endswith("_") and not name.startswith("_") and args:
                self.write(args[0], call, f"{text}")
            return  # torch's functions read their arguments (out= and in-place forms are handled above)
        if isinstance(func, ast.Name):
            if func.id in self.reader.defs and func.id not in self.origin:
                self.helper(call, func.id)
                return
            if func.id in _READ_BUILTINS or func.id in _SCALAR_CASTS:
                return
        if isinstance(func, ast.Attribute) and (self.root(func.value) is not None or self.is_tensor(func.value) is True):
            return  # a tensor method: reads its arguments (in-place ones are handled above)
        if isinstance(func, ast.Attribute) and (func.attr in _HOST_VALUES or func.attr in _VIEWS or func.attr in _MAYBE_VIEWS):
            return
        if isinstance(func, ast.Subscript):
            self.unfollowed(call, f"{ast.unparse(func)}(...) launches a kernel opkit does not read (Triton or another DSL)")
            return
        self.unfollowed(call, f"{text} is not followed")

    def unfollowed(self, call: ast.Call, why: str) -> None:
        params = self.parameters_in([*call.args, *(k.value for k in call.keywords)])
        if isinstance(call.func, ast.Attribute):  # a method of an object built from a parameter may write it
            params = tuple(dict.fromkeys((*params, *self.parameters_in([call.func.value]))))
        if params:
            self.opaque.append(Opaque(call.lineno, call.col_offset + 1, why, params))

    def op_call(self, call: ast.Call, qualified: str) -> None:
        parts = qualified.split(".")
        if parts[0] == "torch_npu":  # torch_npu.npu_x is torch.ops.npu.npu_x
            op = f"npu::{parts[-1]}"
        elif len(parts) >= 4:
            op = f"{parts[2]}::{parts[3]}" + (f".{parts[4]}" if len(parts) > 4 and parts[4] != "default" else "")
        else:
            self.unfollowed(call, f"{qualified}(...): no op named")
            return
        positional = tuple((i, r[0]) for i, a in enumerate(call.args) for item in _displayed(a) if (r := self.root(item)) is not None)
        keywords = tuple((k.arg, r[0]) for k in call.keywords if k.arg for item in _displayed(k.value) if (r := self.root(item)) is not None)
        maybe = [m for a in (*call.args, *(k.value for k in call.keywords)) for item in _displayed(a) if (m := self.maybe_root(item))]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.unfollowed(call, f"{_call_text(call)} passes *args/**kwargs")
            return
        if positional or keywords:
            self.op_calls.append(OpCall(call.lineno, call.col_offset + 1, f"{_call_text(call)}", op, positional, keywords))
        if maybe:
            self.opaque.append(Opaque(call.lineno, call.col_offset + 1, f"{_call_text(call)} is given a tensor that may or may not share memory with {', '.join(maybe)}", tuple(maybe)))

    def helper(self, call: ast.Call, name: str) -> None:
        fn = self.reader.defs[name]
        if self.depth >= HELPER_DEPTH or fn is self.fn:
            self.unfollowed(call, f"{name}(...) is not followed (helpers are read {HELPER_DEPTH} calls deep)")
            return
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        binding: dict[str, str] = {}
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.unfollowed(call, f"{name}(...) is given *args/**kwargs")
            return
        for param, arg in zip(params, call.args):
            found = self.root(arg)
            if found is not None:
                binding[param] = found[0]
        for keyword in call.keywords:
            found = self.root(keyword.value)
            if found is not None:
                binding[keyword.arg] = found[0]
        if not binding:
            return
        inner = _Body(self.reader, fn, binding, self.depth + 1, frozenset())
        inner.read()
        via = f" (in {name}, called at line {call.lineno})"
        self.writes += [Write(w.line, w.column, w.why + via, w.parameter) for w in inner.writes]
        self.op_calls += [OpCall(c.line, c.column, c.why + via, c.op, c.positional, c.keywords) for c in inner.op_calls]
        self.opaque += [Opaque(o.line, o.column, o.why + via, o.parameters) for o in inner.opaque]
        self.syncs += [Sync(s.line, s.column, s.why + via, s.on) for s in inner.syncs]
        self.side_effects += [Fact(s.line, s.column, s.why + via) for s in inner.side_effects]

    # -- returns ---------------------------------------------------------------------------------
    def exit(self, stmt: ast.Return) -> Exit:
        value = stmt.value
        if isinstance(value, (ast.Tuple, ast.List)):
            return Exit(stmt.lineno, stmt.col_offset + 1, tuple(self.value_kind(v) for v in value.elts), True)
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return Exit(stmt.lineno, stmt.col_offset + 1, (Returned("none", stmt.lineno, stmt.col_offset + 1, "returns None"),), False)
        return Exit(stmt.lineno, stmt.col_offset + 1, (self.value_kind(value),), False)

    def value_kind(self, node: ast.expr) -> Returned:
        line, column = node.lineno, node.col_offset + 1
        found = self.root(node)
        if found is not None:
            param, how = found
            return Returned("alias", line, column, f"returns {param}" + (f" ({how})" if how else ""), param)
        if self.maybe_root(node) is not None:
            return Returned("unknown", line, column, f"`{_short(node)}` may or may not share {self.maybe_root(node)}'s memory")
        if isinstance(node, ast.Name) and node.id in self.kinds:
            return self.kinds[node.id]
        if isinstance(node, ast.Constant) and node.value is None:
            return Returned("none", line, column, "None")
        if isinstance(node, ast.Call):
            allocation = self.allocation(node)
            if allocation is not None:
                return Returned("allocation", line, column, allocation.why, allocation=allocation)
            qualified = self.reader.names.qualify(node.func) or ""
            if qualified.startswith("torch.") and not qualified.startswith(("torch.ops.", "torch._C", "torch.distributed")):
                return Returned("fresh", line, column, f"a new tensor from {_call_text(node)}")
            if isinstance(node.func, ast.Attribute) and self.is_tensor(node.func.value) is True and node.func.attr not in _HOST_VALUES:
                return Returned("fresh", line, column, f"a new tensor from {_call_text(node)}")
        if isinstance(node, ast.BinOp) and (self.is_tensor(node.left) is not False or self.is_tensor(node.right) is not False):
            return Returned("fresh", line, column, f"a new tensor from `{_short(node)}`")
        return Returned("unknown", line, column, f"`{_short(node)}`: opkit cannot tell what it is")

    def allocation(self, call: ast.Call) -> Allocated | None:
        func = call.func
        qualified = self.reader.names.qualify(func) or ""
        name = qualified.rsplit(".", 1)[-1] if qualified.startswith("torch.") else (func.attr if isinstance(func, ast.Attribute) else "")
        line, column, why = call.lineno, call.col_offset + 1, _call_text(call)

        def like(node: ast.expr | None) -> str | None:
            if node is None:
                return None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in ("dtype", "device") and node.value.id in self.origin:
                return f"like:{self.origin[node.value.id][0]}"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("torch",):
                return node.attr
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value.split(":")[0]
            if isinstance(node, ast.Call) and (self.reader.names.qualify(node.func) or "") == "torch.device" and node.args:
                return like(node.args[0])
            return ast.unparse(node)

        def keyword(name: str) -> ast.expr | None:
            return next((k.value for k in call.keywords if k.arg == name), None)

        def size(node: ast.expr | None) -> str | None:
            if node is None:
                return None
            inner = node.value if isinstance(node, ast.Attribute) and node.attr == "shape" else (node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args else None)
            if isinstance(inner, ast.Name) and inner.id in self.origin:
                return f"like:{self.origin[inner.id][0]}"
            return ast.unparse(node)

        if qualified.startswith("torch.") and name in _ALLOCATORS:
            return Allocated(like(keyword("dtype")), size(call.args[0]) if call.args else None, like(keyword("device")), line, column, why)
        if qualified.startswith("torch.") and name in _ALLOCATORS_LIKE and call.args:
            base = self.root(call.args[0])
            base_like = f"like:{base[0]}" if base else None
            return Allocated(like(keyword("dtype")) or base_like, base_like, like(keyword("device")) or base_like, line, column, why)
        if isinstance(func, ast.Attribute) and func.attr in _NEW_ALLOCATORS:
            base = self.root(func.value)
            base_like = f"like:{base[0]}" if base else None
            return Allocated(like(keyword("dtype")) or base_like, size(call.args[0]) if call.args else None, like(keyword("device")) or base_like, line, column, why)
        return None


_AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@",
        ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}  # fmt: skip


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _not_implemented(exc: ast.expr | None) -> bool:
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"


def _displayed(node: ast.expr) -> list[ast.expr]:
    """``node``, or the items of a list/tuple/set/dict display (``[a, b]`` hands over ``a`` and ``b``)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [i for e in node.elts for i in _displayed(e)]
    if isinstance(node, ast.Dict):
        return [i for e in node.values for i in _displayed(e)]
    if isinstance(node, ast.Starred):
        return _displayed(node.value)
    return [node]


def _is_torch_call(node: ast.expr, names: _Names) -> bool:
    """A call of torch's own functions (not its op registry or C internals): its result is new memory."""
    if not isinstance(node, ast.Call):
        return False
    qualified = names.qualify(node.func) or ""
    return qualified.startswith("torch.") and not qualified.startswith(("torch.ops.", "torch._C", "torch.distributed"))


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _splits(value: ast.expr) -> bool:
    """``a, b = x.split(...)``: every name is a view of ``x``."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("split", "chunk", "unbind", "tensor_split")


def _to_cpu(call: ast.Call) -> bool:
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if isinstance(device, ast.Constant) and isinstance(device.value, str):
        return device.value.split(":")[0] == "cpu"
    if isinstance(device, ast.Call) and device.args and isinstance(device.args[0], ast.Constant):
        return str(device.args[0].value).split(":")[0] == "cpu"
    return False


# ------------------------------------------------------------------------------------------------
# Finding the kernels
# ------------------------------------------------------------------------------------------------


class _FileReader:
    def __init__(self, path: str, tree: ast.Module, modules: ModuleReader | None = None, nodes: dict | None = None):
        self.path = path
        self.modules = modules
        self.nodes = walk(tree) if nodes is None else nodes
        self.names = _Names([node for node, _ in self.nodes["imports"]])
        self.libraries = _assigned_libraries(self.nodes["assigns"], self.names)
        if modules is not None:  # ``from ._lib import lib``: a Library another module of the package makes
            for node, _ in self.nodes["imports"]:
                if isinstance(node, ast.ImportFrom) and node.level:
                    text = sibling_text(path, node, modules)
                    found = module_libraries(text) if text is not None else {}
                    for alias in node.names:
                        if alias.name in found:
                            self.libraries.setdefault(alias.asname or alias.name, found[alias.name])
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node, _ in self.nodes["scopes"]:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(node.name, node)
        self.result = PythonKernelFile(path)
        self.op_names: dict[str, str] = {}  # ``op = lib.define("name(...)")``: variable → op name
        self.custom_ops: dict[str, PythonKernel] = {}  # the Python name a custom_op decorator binds → its kernel

    def load(self) -> PythonKernelFile:
        for node, _ in self.nodes["calls"]:
            self.define(node)
        for node, _ in self.nodes["scopes"]:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    self.decorated(node, dec)
        for node, _ in self.nodes["calls"]:
            self.registration_call(node)
        return self.result

    def define(self, call: ast.Call) -> None:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "define" and getattr(call.func.value, "id", None) in self.libraries):
            return
        schema = _arg(call, 0, "schema")
        if isinstance(schema, ast.Constant) and isinstance(schema.value, str):
            text = " ".join(schema.value.split())
            name = text.split("(", 1)[0].strip().rsplit("::", 1)[-1]
            self.result.defined[name] = (text, schema.lineno, schema.col_offset + 1)
        for node, _ in self.nodes["assigns"]:
            if node.value is call and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(schema, ast.Constant):
                self.op_names[node.targets[0].id] = str(schema.value).strip().split("(", 1)[0].strip().rsplit("::", 1)[-1]

    def body(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> KernelBody:
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
        function = _function(fn, self.names, [], frozenset(), frozenset())
        # A parameter annotated with a non-tensor type (int, str, ...) holds no tensor memory.
        tensors = {p: p for p in params if (function.annotated_types.get(p) or "Tensor").startswith("Tensor")}
        reader = _Body(self, fn, tensors, 0, frozenset())
        reader.read()
        placeholder = next((stmt for stmt in fn.body if isinstance(stmt, ast.Raise) and _not_implemented(stmt.exc)), None)
        stub = all(isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)) for stmt in fn.body)
        if placeholder is not None or stub:
            # A placeholder (``raise NotImplementedError`` in the body itself, what ``opkit new`` writes for the user
            # to fill in) or a stub (``...``, ``pass``, a docstring alone): not yet the kernel.
            stmt = placeholder or fn.body[-1]
            why = (f"the kernel is a placeholder that raises NotImplementedError (line {stmt.lineno}): what it will write is not written yet"
                   if placeholder is not None else
                   f"the kernel is a stub (its body is `{ast.unparse(stmt)[:20]}`, line {stmt.lineno}): what it will write is not written yet")  # fmt: skip
            reader.opaque.append(Opaque(stmt.lineno, stmt.col_offset + 1, why, tuple(tensors)))
            reader.exits.append(Exit(stmt.lineno, stmt.col_offset + 1, (Returned("unknown", stmt.lineno, stmt.col_offset + 1, why),), False))
        falls_off = not reader.exits or not isinstance(fn.body[-1], (ast.Return, ast.Raise))
        return KernelBody(
            fn.name, fn.lineno, fn.col_offset + 1, tuple(params), tuple(reader.writes), tuple(reader.op_calls), tuple(reader.opaque),
            tuple(reader.syncs), tuple(reader.side_effects), tuple(reader.exits), falls_off, dict(function.annotated_types),
        )  # fmt: skip

    def add(self, namespace: str, op: str, key: str, style: str, fn, at: ast.AST, mutates=None, schema=None, reader: _FileReader | None = None) -> PythonKernel | None:
        """``reader``: the module ``fn`` is defined in, where it is not this one (an imported op_func)."""
        if key in _NOT_KERNEL_KEYS:
            return None
        body = (reader or self).body(fn)
        if reader is not None:
            body = dataclasses.replace(body, path=reader.path)
        kernel = PythonKernel(namespace, op, key, style, body, at.lineno, at.col_offset + 1, mutates, schema)
        self.result.kernels.append(kernel)
        return kernel

    def function(self, node: ast.expr | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        return self.defs.get(node.id) if isinstance(node, ast.Name) else None

    def imported(self, node: ast.expr | None) -> tuple[_FileReader, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """A function this module imports from another module of the package (``from .x import f``, ``from
        pkg.x import f`` where this file lies in ``pkg/``), with the reader of that module."""
        if self.modules is None or not isinstance(node, ast.Name):
            return None
        for imp, _ in self.nodes["imports"]:
            if not isinstance(imp, ast.ImportFrom) or not imp.module and not imp.level:
                continue
            alias = next((a for a in imp.names if (a.asname or a.name) == node.id), None)
            if alias is None:
                continue
            for path in module_paths(self.path, imp):
                text = self.modules(path)
                if text is None:
                    continue
                try:
                    other = _FileReader(path, ast.parse(text, filename=path), None)
                except (SyntaxError, ValueError):
                    return None
                fn = other.defs.get(alias.name)
                return (other, fn) if fn is not None else None
        return None

    def op_name(self, node: ast.expr | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.op_names.get(node.id)
        return None

    def decorated(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, dec: ast.expr) -> None:
        if isinstance(dec, ast.Attribute) and dec.attr == "register_kernel":
            return
        if not isinstance(dec, ast.Call):
            return
        callee = self.names.qualify(dec.func) or ""
        if callee in CUSTOM_OP:
            qualname = _str_arg(dec, 0, "name")
            if qualname is None:
                return
            namespace, name = _split_qualname(qualname)
            mutates = _mutates_args(dec)
            schema = self.infer(fn, mutates, qualname, dec)
            keys = _device_keys(_arg(dec, 2, "device_types"))
            for key in keys or ["CompositeExplicitAutograd"]:
                kernel = self.add(namespace, name, key, "custom_op", fn, dec, mutates, schema)
                if kernel is not None:
                    self.custom_ops.setdefault(fn.name, kernel)
            return
        if isinstance(dec.func, ast.Attribute) and dec.func.attr == "register_kernel" and isinstance(dec.func.value, ast.Name):
            owner = self.custom_ops.get(dec.func.value.id)  # @my_op.register_kernel("npu")
            if owner is not None:
                for key in _device_keys(_arg(dec, 0, "device_types")):
                    self.add(owner.namespace, owner.op, key, "register_kernel", fn, dec, owner.mutates_args, owner.schema)
            return
        if callee in REGISTER_KERNEL:
            qualname = self.op_name(_arg(dec, 0, "op"))
            if qualname:
                for key in _device_keys(_arg(dec, 1, "device_types")):
                    self.add(*_split_qualname(qualname), key, "register_kernel", fn, dec)
            return
        if callee in IMPL:
            first = _arg(dec, 0, "qualname")
            if isinstance(first, ast.Name) and first.id in self.libraries:  # @impl(lib, "op", "CPU")
                lib = self.libraries[first.id]
                op = self.op_name(_arg(dec, 1, "name"))
                key = _str_arg(dec, 2, "dispatch_key") or lib.dispatch_key or "CompositeImplicitAutograd"
                if op:
                    self.add(lib.namespace, op, key, "impl", fn, dec)
            elif isinstance(first, ast.Constant) and isinstance(first.value, str):  # @torch.library.impl("ns::op", "cpu")
                types = _arg(dec, 1, "types")
                for value in (types.elts if isinstance(types, (ast.Tuple, ast.List)) else [types]):
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        self.add(*_split_qualname(first.value), _DEVICE_KEYS.get(value.value, value.value), "impl", fn, dec)
            return
        if isinstance(dec.func, ast.Attribute) and dec.func.attr == "impl" and getattr(dec.func.value, "id", None) in self.libraries:
            lib = self.libraries[dec.func.value.id]  # @lib.impl("op"[, key])
            op = self.op_name(_arg(dec, 0, "op_name"))
            key = _str_arg(dec, 2, "dispatch_key") or lib.dispatch_key or "CompositeImplicitAutograd"
            if op:
                self.add(lib.namespace, op, key, "impl", fn, dec)

    def registration_call(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "impl" and getattr(func.value, "id", None) in self.libraries:
            lib = self.libraries[func.value.id]  # lib.impl("op", fn, key)
            fn = self.function(_arg(call, 1, "fn"))
            op = self.op_name(_arg(call, 0, "op_name"))
            key = _str_arg(call, 2, "dispatch_key") or lib.dispatch_key or "CompositeImplicitAutograd"
            if fn is not None and op:
                self.add(lib.namespace, op, key, "impl", fn, call)
            return
        qualified = self.names.qualify(func) or ""
        if qualified.rsplit(".", 1)[-1] == DIRECT_REGISTER:
            name = _str_arg(call, 0, "op_name")
            fn, reader = self.function(_arg(call, 1, "op_func")), self
            if fn is None and (found := self.imported(_arg(call, 1, "op_func"))) is not None:
                reader, fn = found
            if not name or fn is None:
                return
            target = _arg(call, 4, "target_lib")
            if isinstance(target, ast.Name) and target.id in self.libraries:
                namespace = self.libraries[target.id].namespace
            elif target is None:
                namespace = KNOWN_HELPERS.get(qualified, "")  # the helper's own library
            else:
                namespace = ""
            node = _arg(call, 2, "mutates_args")
            if node is None or (isinstance(node, ast.Constant) and node.value is None):
                mutates: tuple[str, ...] | str | None = ()  # the helpers' default: nothing
            else:
                mutates = _mutates_args(ast.Call(ast.Name("f"), [], [ast.keyword("mutates_args", node)]))
            key = _str_arg(call, 5, "dispatch_key") or "PrivateUse1"  # the platform's key; vllm-ascend's and sglang's NPU platforms: PrivateUse1
            schema = reader.infer(fn, mutates, f"{namespace}::{name}" if namespace else name, None)
            self.add(namespace, name, key, "direct_register_custom_op", fn, call, mutates, schema, reader if reader is not self else None)

    def infer(self, fn, mutates, qualname: str, dec: ast.Call | None) -> str | None:
        if dec is not None:
            explicit = next((k.value for k in dec.keywords if k.arg == "schema"), None)
            if isinstance(explicit, ast.Constant) and isinstance(explicit.value, str):
                return f"{qualname}{explicit.value}"
        if mutates is None:
            return None
        try:
            return infer_schema(_function(fn, self.names, [], frozenset(), frozenset()), mutates, qualname, self.names)
        except NotInferable:
            return None


def _device_keys(node: ast.expr | None) -> list[str]:
    values = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node] if node is not None else []
    return [_DEVICE_KEYS.get(v.value, v.value) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]


# Words without which a module registers no Python kernel: a cheap test before parsing.
_MARKERS = ("custom_op", ".impl", "impl(", "register_kernel", DIRECT_REGISTER)


def read_python_kernels(path: str, text: str, modules: ModuleReader | None = None, trees: dict | None = None) -> PythonKernelFile:
    """The Python kernels ``text`` registers, each with what its body shows; InputError E002 on a syntax error.
    ``modules`` reads the package's other modules, for a Library imported from one; ``trees``: the modules the
    registration reader parsed (``parsed``)."""
    if not any(marker in text for marker in _MARKERS):
        return PythonKernelFile(path)
    tree, nodes = parsed(path, text, trees)
    return _FileReader(path, tree, modules, nodes).load()


def kernels_of(files: list[PythonKernelFile]) -> Iterator[PythonKernel]:
    for file in files:
        yield from file.kernels
