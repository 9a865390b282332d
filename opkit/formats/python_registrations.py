"""Meta/fake registration modules, read with ``ast``: never imported, never executed.

Two registration styles are recognised, in any import spelling (``torch.library.X``, ``from
torch.library import X``, ``import torch.library as tl``, ...):

* op-plugin: ``m = Library("npu", "IMPL", "Meta")`` then ``@impl(m, "my_op")`` (``"my_op.out"`` binds
  another overload), ``@m.impl("my_op")`` or ``m.impl("my_op", fn, "Meta")``; ``m.define("schema")``
  declares a schema.
* custom_op: ``@torch.library.custom_op("ns::name", mutates_args=...)`` on a typed function, then
  ``@name.register_fake`` or ``@torch.library.register_fake("ns::name")``.

Beyond those templates, as projects write them: a helper of the module that registers through its
parameters (``def register_meta_if_necessary(ns, op_name, fn): lib.impl(op_name, fn, "Meta")``) registers
at each call with literal arguments; registrations under ``if``/``try`` and in ``for`` loops over literal
lists (one per item); call forms ``register_fake("ns::op")(fn)`` and ``impl(lib, "op", "Meta")(fn)``, with
lambdas too; ``op = lib.define(...)`` then ``lib.impl(op, ...)``; a ``Library`` imported from a sibling
module (``from ._lib import lib``, read through the ``modules`` reader lint passes); ``define`` strings
triple-quoted, implicitly concatenated or joined with ``+``, each character placed in the file.

Registration helpers of the ecosystem whose shape is known (``KNOWN_HELPERS``): vLLM's and sglang's
``direct_register_custom_op(op_name=, op_func=, mutates_args=, fake_impl=, target_lib=, ...)`` defines
``op_name`` with the schema inferred from ``op_func`` in ``target_lib`` (by default the helper's own
library, namespace ``vllm`` or ``sglang``) and registers ``fake_impl`` as its fake: read as a ``CustomOp``
(``helper`` names the helper), ``op_func`` followed into the package's other modules when imported. Called
through a module-local wrapper that passes its parameters on, too; and a decorator factory of the module
(``def register_x_fake(name): return register_fake(f"ns::{name}")``, through another factory as well)
registers the function it decorates.

For a custom_op the schema is inferred from the annotations exactly as ``torch.library.infer_schema``
does (``int`` is ``SymInt``, ``mutates_args`` entries become ``Tensor(a<index>!)``), and exposed through
``schema_sites()`` in the torch.library dialect, so the schema rules apply to it.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from opkit.formats.files import InputError
from opkit.formats.noqa import NoqaMap
from opkit.formats.schema_site import SchemaSite, position_in
from opkit.signature import Dialect

LIBRARY = frozenset({"torch.library.Library"})
IMPL = frozenset({"torch.library.impl"})
CUSTOM_OP = frozenset({"torch.library.custom_op", "torch._library.custom_ops.custom_op"})
REGISTER_FAKE = frozenset({"torch.library.register_fake", "torch.library.impl_abstract"})
META_KEY = "Meta"
FUNCTIONALIZE_KEY = "Functionalize"

# Registration helpers of the ecosystem whose shape is known, by where they are imported from → the
# namespace of the library they define in when ``target_lib`` is not given. Both take
# (op_name, op_func, mutates_args, fake_impl, target_lib, ...) and call ``infer_schema(op_func,
# mutates_args=mutates_args)``; vLLM's ``mutates_args`` defaults to ``[]``, sglang's is required.
KNOWN_HELPERS = {
    "vllm.utils.direct_register_custom_op": "vllm",
    "vllm.utils.torch_utils.direct_register_custom_op": "vllm",
    "sglang.srt.utils.direct_register_custom_op": "sglang",
    "sglang.srt.utils.common.direct_register_custom_op": "sglang",
}
_HELPER_PARAMETERS = ("op_name", "op_func", "mutates_args", "fake_impl", "target_lib", "dispatch_key", "tags")

# ``unknown`` is torch's spelling for "assume every tensor argument is written".
MUTATES_UNKNOWN = "unknown"

# Python annotation → schema type, with the variants torch.library supports for each
# (torch/_library/infer_schema.py: get_supported_param_types): (optional, list, list of optional, optional list).
_PARAM_BASES: dict[str, tuple[str, frozenset[str]]] = {
    "torch.Tensor": ("Tensor", frozenset({"", "?", "[]", "?[]"})),
    "int": ("SymInt", frozenset({"", "?", "[]", "[]?"})),
    "float": ("float", frozenset({"", "?", "[]", "[]?"})),
    "bool": ("bool", frozenset({"", "?", "[]", "[]?"})),
    "str": ("str", frozenset({"", "?"})),
    "torch.types.Number": ("Scalar", frozenset({"", "?", "[]"})),
    "torch.dtype": ("ScalarType", frozenset({"", "?"})),
    "torch.device": ("Device", frozenset({"", "?"})),
}
# Return annotations torch.library accepts (SUPPORTED_RETURN_TYPES): no Optional, no Sequence.
_RETURN_TYPES = {"torch.Tensor": "Tensor", "int": "SymInt", "float": "float", "bool": "bool", "torch.types.Number": "Scalar"}
_OPTIONAL = frozenset({"typing.Optional"})
_UNION = frozenset({"typing.Union"})
_SEQUENCES = frozenset({"typing.Sequence", "typing.List", "list", "collections.abc.Sequence"})
_LISTS = frozenset({"typing.List", "list"})
_TUPLES = frozenset({"typing.Tuple", "tuple"})
# Bare names torch.library assumes to be torch.* / typing.* in string annotations.
_IMPLICIT = {"Tensor": "torch.Tensor", "dtype": "torch.dtype", "device": "torch.device", "Number": "torch.types.Number",
             "Optional": "typing.Optional", "List": "typing.List", "Sequence": "typing.Sequence", "Union": "typing.Union",
             "Tuple": "typing.Tuple"}  # fmt: skip


class NotInferable(ValueError):
    """torch.library.infer_schema would raise for this function (the message says why)."""


# ------------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parameter:
    """One parameter of a registered Python function."""

    name: str
    kind: str  # "positional_only", "positional", "var_positional", "keyword_only", "var_keyword"
    default: ast.expr | None = None
    annotation: ast.expr | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def default_text(self) -> str | None:
        return None if self.default is None else ast.unparse(self.default)


@dataclass(frozen=True)
class ReturnSite:
    """A ``return`` statement and the shape of what it returns, as far as the source shows."""

    line: int
    shape: str  # "none", "tensor", "tuple", "list", "param" (returns a parameter) or "unknown"
    arity: int | None = None  # items of a tuple/list display
    param: str | None = None  # the returned parameter, for shape "param"
    items: tuple[str | None, ...] = ()  # for a tuple/list display: the parameter each item returns, or None


@dataclass(frozen=True)
class Function:
    name: str
    line: int
    parameters: tuple[Parameter, ...]
    returns: tuple[ReturnSite, ...]
    falls_off: bool  # some path ends without ``return`` (so returns None)
    return_annotation: ast.expr | None
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(compare=False, repr=False)
    # Schema type of each annotated parameter and of the return, as torch.library infers them
    # (None where there is no annotation or torch would reject it).
    annotated_types: dict[str, str | None] = field(default_factory=dict, compare=False)
    annotated_return: str | None = None
    # Names the body reads (any ``Name`` in it, nested functions included) and those it tests ``is None``.
    names_read: frozenset[str] = field(default=frozenset(), compare=False)
    none_tested: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def positional(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.kind in ("positional_only", "positional"))

    @property
    def var_positional(self) -> bool:
        return any(p.kind == "var_positional" for p in self.parameters)

    @property
    def var_keyword(self) -> bool:
        return any(p.kind == "var_keyword" for p in self.parameters)

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name and p.kind not in ("var_positional", "var_keyword")), None)


@dataclass(frozen=True)
class CustomOp:
    """``@custom_op("ns::name", mutates_args=...)`` on ``function``."""

    namespace: str
    name: str
    function: Function
    mutates_args: tuple[str, ...] | str | None  # names, "unknown", or None when not a literal / missing
    explicit_schema: str | None  # the ``schema=`` text, name-less as torch takes it
    schema: str | None  # what torch registers: ``schema=``, else inferred from the annotations
    schema_problem: str | None  # why torch would raise instead (None when it would not, or cannot tell)
    line: int
    column: int
    # A known registration helper's call (``KNOWN_HELPERS``): its qualified name, the file holding
    # ``function`` (``op_func``) when another module of the package defines it, the dispatch key and
    # the ``torch.Tag`` names it passes. "" / () for ``@custom_op``.
    helper: str = ""
    function_path: str = ""
    dispatch_key: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def qualname(self) -> str:
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    @property
    def kind(self) -> str:
        """How the source registers it, for messages: ``custom_op`` or the helper's own name."""
        return self.helper.rsplit(".", 1)[-1] if self.helper else "custom_op"


# Where a statement sits among mutually exclusive branches: one (branching statement, branch index)
# pair per enclosing ``if``/``else``, ``try``/``except`` handler or ``match`` case, outermost first.
# The statement is identified by its position (line, column), so the path compares across parses.
BranchPath = tuple[tuple[tuple[int, int], int], ...]


def exclusive(a: BranchPath, b: BranchPath) -> bool:
    """Whether code on path ``a`` and code on path ``b`` can never both run (different arms of one branch)."""
    arms = dict(a)
    return any(stmt in arms and arms[stmt] != arm for stmt, arm in b)


@dataclass(frozen=True)
class Registration:
    """A Python function PyTorch calls on fake tensors instead of the kernel: a Meta impl or a fake impl."""

    namespace: str  # "" when the registration does not say
    op: str  # ``name`` or ``name.overload``, as registered
    style: str  # "meta" (Library impl on the Meta key) or "fake" (register_fake)
    function: Function
    line: int
    column: int
    custom_op: CustomOp | None = None  # the custom_op of this file that a fake belongs to
    # The branches the registration sits in: ``if version: @impl(m, "f") ... else: @impl(m, "f") ...``
    # registers ``f`` once, whichever arm runs.
    branches: BranchPath = field(default=(), compare=False)

    @property
    def name(self) -> str:
        return self.op.split(".", 1)[0]

    @property
    def overload(self) -> str:
        return self.op.split(".", 1)[1] if "." in self.op else ""

    @property
    def qualname(self) -> str:
        return f"{self.namespace}::{self.op}" if self.namespace else self.op


@dataclass(frozen=True)
class LibraryObject:
    variable: str
    namespace: str
    kind: str
    dispatch_key: str


@dataclass
class RegistrationFile:
    path: str
    text: str
    noqa: NoqaMap
    registrations: list[Registration] = field(default_factory=list)
    custom_ops: list[CustomOp] = field(default_factory=list)
    defined_schemas: list[SchemaSite] = field(default_factory=list)  # ``m.define("...")``
    # Ops a known helper defines here whose op_func opkit cannot read (defined in no linted module):
    # they exist, with a schema opkit does not know.
    unread_ops: list[str] = field(default_factory=list)
    # Functionalize kernels registered (``m.impl("my_op_", fn, "Functionalize")``): (namespace, op, line, column);
    # torch uses them instead of automatic functionalization
    functionalize_kernels: list[tuple[str, str, int, int]] = field(default_factory=list)
    structure_errors: list[InputError] = field(default_factory=list)

    def schema_sites(self) -> list[SchemaSite]:
        """Schemas this file declares: ``Library.define`` strings and inferable custom_op schemas."""
        sites = list(self.defined_schemas)
        for op in self.custom_ops:
            if op.schema is not None:  # M012 reports the others
                sites.append(SchemaSite(op.schema, self.path, op.line, op.column, Dialect.TORCH_LIBRARY, op_hint=op.name, inferred=True, tags=op.tags))
        return sites


# ------------------------------------------------------------------------------------------------
# Names: resolve what the file's imports make of a Name or an Attribute chain
# ------------------------------------------------------------------------------------------------


class _Names:
    def __init__(self, nodes: list[ast.AST]):
        self.aliases: dict[str, str] = {}
        self.star_modules: list[str] = []
        for node in nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name == "*":
                        self.star_modules.append(node.module)
                    else:
                        self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def qualify(self, node: ast.AST | None) -> str | None:
        """``tl.impl`` → ``torch.library.impl`` under ``import torch.library as tl``; None for other nodes."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            if node.id in _STAR_EXPORTS and _STAR_EXPORTS[node.id] in self.star_modules:
                return f"{_STAR_EXPORTS[node.id]}.{node.id}"
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        return None


# What ``from torch.library import *`` and ``from typing import *`` bring in, of what we look for.
_STAR_EXPORTS = {"Library": "torch.library", "impl": "torch.library", "custom_op": "torch.library", "register_fake": "torch.library",
                 "impl_abstract": "torch.library", "Optional": "typing", "List": "typing", "Sequence": "typing",
                 "Union": "typing", "Tuple": "typing"}  # fmt: skip


# ------------------------------------------------------------------------------------------------
# Functions: parameters and returns
# ------------------------------------------------------------------------------------------------

# Calls that produce one tensor: what Meta functions return in practice.
_TENSOR_FACTORIES = frozenset(
    """empty empty_like empty_strided zeros zeros_like ones ones_like full full_like rand randn new_empty
    new_empty_strided new_zeros new_ones new_full clone contiguous view reshape expand to as_strided""".split()
)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def subtree(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``, in its order, with plain loops: about twice as fast on large modules."""
    nodes = [node]
    add, AST = nodes.append, ast.AST
    for node in nodes:  # a list read while it grows: breadth-first
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, AST):
                add(value)
            elif type(value) is list:
                for child in value:
                    if isinstance(child, AST):
                        add(child)
    return nodes


# The node types the loader reads, by what it reads them for.
_KINDS = {ast.Import: "imports", ast.ImportFrom: "imports", ast.Assign: "assigns", ast.Call: "calls", ast.Expr: "expressions",
          ast.FunctionDef: "scopes", ast.AsyncFunctionDef: "scopes", ast.Lambda: "scopes", ast.ClassDef: "scopes",
          ast.Return: "exits", ast.Yield: "exits", ast.YieldFrom: "exits", ast.Name: "names", ast.Compare: "compares",
          ast.For: "loops"}  # fmt: skip


def walk(tree: ast.AST) -> dict[str, list[tuple[ast.AST, ast.AST | None]]]:
    """The nodes of each kind in ``_KINDS``, in ``ast.walk``'s breadth-first order, each with its scope:
    the nearest def, lambda or class whose *body* holds it (decorators, defaults and annotations belong
    to the scope around), None at module level.

    One pass of plain loops: ``ast.walk``, a walk per function and a scan per kind cost more than
    parsing a real Meta module (~60k nodes).
    """
    found: dict[str, list[tuple[ast.AST, ast.AST | None]]] = {kind: [] for kind in _KINDS.values()}
    nodes: list[ast.AST] = [tree]
    scopes: list[ast.AST | None] = [None]
    add_node, add_scope, kinds, AST = nodes.append, scopes.append, _KINDS, ast.AST
    for node, scope in zip(nodes, scopes):  # lists read while they grow: breadth-first
        kind = kinds.get(type(node))
        if kind is not None:
            found[kind].append((node, scope))
        opens = isinstance(node, _SCOPES)
        for name in node._fields:
            value = getattr(node, name, None)
            inner = node if opens and name == "body" else scope
            if isinstance(value, AST):
                add_node(value)
                add_scope(inner)
            elif type(value) is list:
                for child in value:
                    if isinstance(child, AST):
                        add_node(child)
                        add_scope(inner)
    return found


def _return_shape(value: ast.expr | None, params: set[str]) -> tuple[str, int | None, str | None, tuple[str | None, ...]]:
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return "none", None, None, ()
    if isinstance(value, (ast.Tuple, ast.List)):
        # ``(*heads, tail)`` has as many items as ``heads`` holds at run time: the arity is unknown.
        arity = None if any(isinstance(e, ast.Starred) for e in value.elts) else len(value.elts)
        items = tuple(e.id if isinstance(e, ast.Name) and e.id in params else None for e in value.elts) if arity is not None else ()
        return ("tuple" if isinstance(value, ast.Tuple) else "list"), arity, None, items
    if isinstance(value, ast.Name) and value.id in params:
        return "param", None, value.id, ()
    if isinstance(value, ast.Call):
        callee = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
        if callee in _TENSOR_FACTORIES:
            return "tensor", None, None, ()
    return "unknown", None, None, ()


def _always_raises(stmt: ast.stmt) -> bool:
    """``assert False`` and ``torch._check(False, ...)`` (the Meta idiom for "unsupported"): never fall through."""
    if isinstance(stmt, ast.Assert):
        return isinstance(stmt.test, ast.Constant) and not stmt.test.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func, args = stmt.value.func, stmt.value.args
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        position = _CHECKS.get(name)  # the condition's position
        return position is not None and len(args) > position and isinstance(args[position], ast.Constant) and args[position].value is False
    return False


def _is_none_test(node: ast.Compare) -> bool:
    """``name is None`` (the first comparison)."""
    return (
        isinstance(node.left, ast.Name)
        and isinstance(node.ops[0], ast.Is)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )


# torch._check and its variants raise when their condition is False; _check_with takes the error type first.
_CHECKS = {"_check": 0, "_check_index": 0, "_check_value": 0, "_check_type": 0, "_check_not_implemented": 0, "_check_with": 1}


def _ends_without_return(body: list[ast.stmt]) -> bool:
    """Whether control can reach the end of ``body``: conservative, only plain sequential endings count."""
    if not body:
        return True
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)) or _always_raises(last):
        return False
    if isinstance(last, ast.If):
        return _ends_without_return(last.body) or _ends_without_return(last.orelse)
    if isinstance(last, (ast.Try, ast.With, ast.AsyncWith, ast.For, ast.While, ast.Match)):
        return False  # unknowable without flow analysis: assume it returns
    return True


def _parameters(a: ast.arguments) -> list[Parameter]:
    """A def's or a lambda's parameters, in order, with their kinds, defaults and annotations."""
    params: list[Parameter] = []
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        params.append(Parameter(arg.arg, "positional_only" if i < len(a.posonlyargs) else "positional", default, arg.annotation))
    if a.vararg:
        params.append(Parameter(a.vararg.arg, "var_positional", None, a.vararg.annotation))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Parameter(arg.arg, "keyword_only", default, arg.annotation))
    if a.kwarg:
        params.append(Parameter(a.kwarg.arg, "var_keyword", None, a.kwarg.annotation))
    return params


def _function(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: _Names, own: list[ast.AST], read: frozenset[str], none_tested: frozenset[str]) -> Function:
    """``own``: the Return and Yield nodes of ``fn``'s body outside nested defs, lambdas and classes."""
    params = _parameters(fn.args)
    param_names = {p.name for p in params}
    returns = tuple(ReturnSite(n.lineno, *_return_shape(n.value, param_names)) for n in own if isinstance(n, ast.Return))
    is_generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own)
    falls_off = not is_generator and _ends_without_return(fn.body)
    return Function(
        fn.name, fn.lineno, tuple(params), returns, falls_off, fn.returns, fn,
        {p.name: _inferable(_parameter_type, p.annotation, names) for p in params if p.annotation is not None},
        _inferable(_return_type, fn.returns, names) if fn.returns is not None else None, read, none_tested,
    )  # fmt: skip


def _inferable(infer, annotation: ast.expr, names: _Names) -> str | None:
    try:
        return infer(annotation, names)
    except NotInferable:
        return None


# ------------------------------------------------------------------------------------------------
# custom_op schema inference: torch.library.infer_schema over the AST
# ------------------------------------------------------------------------------------------------


def _annotation_expr(node: ast.expr) -> ast.expr:
    """String annotations (and ``from __future__ import annotations`` text) are expressions too."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise NotInferable(f"annotation {node.value!r} is not an expression") from None
    return node


def _qualified_type(node: ast.expr, names: _Names) -> str | None:
    q = names.qualify(node)
    if q is None:
        return None
    return _IMPLICIT.get(q, q)


def _subscript_args(node: ast.Subscript) -> list[ast.expr]:
    return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _optional_inner(node: ast.expr, names: _Names) -> ast.expr | None:
    """``X`` for ``Optional[X]``, ``Union[X, None]``, ``X | None`` (either order); None otherwise."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if _is_none(node.right):
            return node.left
        if _is_none(node.left):
            return node.right
        return None
    if isinstance(node, ast.Subscript):
        origin = _qualified_type(node.value, names)
        args = _subscript_args(node)
        if origin in _OPTIONAL and len(args) == 1:
            return args[0]
        if origin in _UNION and len(args) == 2 and any(_is_none(x) for x in args):
            return next(x for x in args if not _is_none(x))
    return None


def _parameter_type(node: ast.expr, names: _Names) -> str:
    """The schema type torch infers for a parameter annotation (``Optional[list[int]]`` → ``SymInt[]?``)."""
    node = _annotation_expr(node)
    suffix = ""
    inner = _optional_inner(node, names)
    if inner is not None:
        node, suffix = _annotation_expr(inner), "?"
    if isinstance(node, ast.Subscript) and _qualified_type(node.value, names) in _SEQUENCES:
        args = _subscript_args(node)
        if len(args) != 1:
            raise NotInferable(f"unsupported annotation {ast.unparse(node)}")
        elem = _annotation_expr(args[0])
        elem_inner = _optional_inner(elem, names)
        elem_suffix = "?" if elem_inner is not None else ""
        node, suffix = (elem_inner if elem_inner is not None else elem), elem_suffix + "[]" + suffix
    elif isinstance(node, ast.Subscript) and _qualified_type(node.value, names) in _TUPLES:
        raise NotInferable(f"tuple annotation {ast.unparse(node)} is not supported for parameters; use list[...]")
    base = _PARAM_BASES.get(_qualified_type(node, names) or "")
    if base is None or suffix not in base[1]:
        raise NotInferable(f"unsupported annotation {ast.unparse(node)}{' (as ' + suffix + ')' if suffix else ''}")
    return base[0] + suffix


def _return_type(node: ast.expr | None, names: _Names) -> str:
    if node is None:
        raise NotInferable("no return type annotation")
    node = _annotation_expr(node)
    if _is_none(node):
        return "()"

    def single(n: ast.expr) -> str:
        n = _annotation_expr(n)
        if isinstance(n, ast.Subscript) and _qualified_type(n.value, names) in _LISTS:
            args = _subscript_args(n)
            if len(args) == 1 and _qualified_type(_annotation_expr(args[0]), names) == "torch.Tensor":
                return "Tensor[]"
        ty = _RETURN_TYPES.get(_qualified_type(n, names) or "")
        if ty is None:
            raise NotInferable(f"unsupported return annotation {ast.unparse(n)}")
        return ty

    if isinstance(node, ast.Subscript) and _qualified_type(node.value, names) in _TUPLES:
        items = [single(x) for x in _subscript_args(node)]
        joined = ", ".join(items)
        return f"(({joined}))" if len(items) == 1 else f"({joined})"  # torch spells a 1-tuple ((T))
    return single(node)


def _default_text(node: ast.expr) -> str:
    """A Python default as infer_schema writes it: str() of None/bool/int/float, a quoted str, a dtype name."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return node.attr  # torch.float16 → float16
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise NotInferable(f"unsupported default {ast.unparse(node)}") from None
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    raise NotInferable(f"unsupported default value type {type(value).__name__} ({ast.unparse(node)})")


def infer_schema(function: Function, mutates_args: tuple[str, ...] | str, qualname: str, names: _Names) -> str:
    """``torch.library.infer_schema(fn, mutates_args=..., op_name=qualname)`` computed from the source."""
    pieces: list[str] = []
    seen_kwarg_only = False
    for index, p in enumerate(function.parameters):
        if p.kind not in ("positional", "keyword_only"):
            raise NotInferable("positional-only parameters, *args and **kwargs are not supported")
        if p.kind == "keyword_only" and not seen_kwarg_only:
            pieces.append("*")
            seen_kwarg_only = True
        if p.annotation is None:
            raise NotInferable(f"parameter {p.name} has no type annotation")
        schema_type = _parameter_type(p.annotation, names)
        mutated = schema_type.startswith("Tensor") if mutates_args == MUTATES_UNKNOWN else p.name in mutates_args
        if mutated:
            if not schema_type.startswith("Tensor"):
                raise NotInferable(f"parameter {p.name} is in mutates_args but only tensors can be mutated")
            schema_type = f"Tensor(a{index}!){schema_type[len('Tensor'):]}"
        pieces.append(f"{schema_type} {p.name}" if p.default is None else f"{schema_type} {p.name}={_default_text(p.default)}")
    if mutates_args != MUTATES_UNKNOWN:
        missing = sorted(set(mutates_args) - {p.name for p in function.parameters})
        if missing:
            raise NotInferable(f"mutates_args names {', '.join(missing)}, not parameters of {function.name}")
    return f"{qualname}({', '.join(pieces)}) -> {_return_type(function.return_annotation, names)}"


# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------


def _str_arg(call: ast.Call, index: int, keyword: str) -> str | None:
    node = call.args[index] if len(call.args) > index else next((k.value for k in call.keywords if k.arg == keyword), None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _arg(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else next((k.value for k in call.keywords if k.arg == keyword), None)


def _mutates_args(call: ast.Call) -> tuple[str, ...] | str | None:
    return _mutates_value(next((k.value for k in call.keywords if k.arg == "mutates_args"), None))


def _mutates_value(node: ast.expr | None) -> tuple[str, ...] | str | None:
    """A literal ``mutates_args``: names, "unknown", or None when it is computed at run time."""
    if isinstance(node, ast.Constant) and node.value == MUTATES_UNKNOWN:
        return MUTATES_UNKNOWN
    if isinstance(node, ast.Dict) and not node.keys:
        return ()  # mutates_args={} as in torch's own examples
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


# The branching point every function body is an arm of (no statement sits at line 0).
FUNCTION_BODIES = (0, 0)


def _branch_paths(tree: ast.Module) -> dict[int, BranchPath]:
    """``id(statement)`` → the exclusive branches it sits in, for every statement of the module."""
    paths: dict[int, BranchPath] = {}

    def visit(body: list[ast.stmt], path: BranchPath) -> None:
        for stmt in body:
            paths[id(stmt)] = path
            key = (stmt.lineno, stmt.col_offset)
            if isinstance(stmt, ast.If):  # elif is an If in orelse: its arms nest
                visit(stmt.body, (*path, (key, 0)))
                visit(stmt.orelse, (*path, (key, 1)))
            elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                # A handler runs instead of the rest of the body (the import-fallback idiom); ``else``
                # runs after the body, ``finally`` always.
                visit(stmt.body, (*path, (key, 0)))
                visit(stmt.orelse, (*path, (key, 0)))
                for index, handler in enumerate(stmt.handlers, start=1):
                    visit(handler.body, (*path, (key, index)))
                visit(stmt.finalbody, path)
            elif isinstance(stmt, ast.Match):
                for index, case in enumerate(stmt.cases):
                    visit(case.body, (*path, (key, index)))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # Each function's body runs when it is called, not with the others: registrations in two
                # test methods, each with its own Library, are alternatives, not a duplicate.
                visit(stmt.body, (*path, (FUNCTION_BODIES, key)))
            else:  # class, for, while, with: their bodies are not alternatives to anything
                for name in ("body", "orelse", "finalbody"):
                    child = getattr(stmt, name, None)
                    if isinstance(child, list):
                        visit(child, path)

    visit(tree.body, ())
    return paths


def _bind_arguments(helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, outer: dict[str, ast.expr] | None = None) -> dict[str, ast.expr] | None:
    """``helper``'s parameters bound to ``call``'s arguments (defaults for the rest), as Python binds them;
    None when the call passes ``*args``/``**kwargs`` or does not fit. An argument that is a name of the
    ``outer`` binding (a wrapper passing its own parameter on) is bound to that name's value."""
    a = helper.args
    positional = [*a.posonlyargs, *a.args]
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords) or len(call.args) > len(positional):
        return None
    bound: dict[str, ast.expr] = {}
    for param, default in zip(positional[len(positional) - len(a.defaults) :], a.defaults):
        bound[param.arg] = default
    for param, default in zip(a.kwonlyargs, a.kw_defaults):
        if default is not None:
            bound[param.arg] = default
    for param, value in zip(positional, call.args):
        bound[param.arg] = value
    for keyword in call.keywords:
        bound[keyword.arg] = keyword.value
    if outer:
        bound = {name: outer.get(value.id, value) if isinstance(value, ast.Name) else value for name, value in bound.items()}
    return bound


# A `for` over a literal list is unrolled (each iteration's registration read) up to this many statements:
# a loop of 1,000 items around 1,000 m.impl calls would be a million records.
MAX_UNROLLED_STATEMENTS = 10_000


def _loop_bindings(loops: list[ast.For]) -> dict[int, list[dict[str, ast.expr]]]:
    """``id(statement)`` → one binding per iteration, for statements in the body of a ``for`` over a
    literal list or tuple (``for name, fn in [("a", a_meta), ("b", b_meta)]:``)."""
    found: dict[int, list[dict[str, ast.expr]]] = {}
    for node in loops:
        if not isinstance(node.iter, (ast.List, ast.Tuple)):
            continue
        names = [node.target.id] if isinstance(node.target, ast.Name) else [e.id for e in node.target.elts] if isinstance(node.target, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.target.elts) else None
        if names is None:
            continue
        iterations = []
        for item in node.iter.elts:
            values = [item] if len(names) == 1 else list(item.elts) if isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(names) else None
            if values is None:
                iterations = []
                break
            iterations.append(dict(zip(names, values)))
        # a loop unrolls into iterations x statements records: past the bound its body is read as written
        if iterations and len(iterations) * len(node.body) <= MAX_UNROLLED_STATEMENTS:
            for stmt in node.body:
                found[id(stmt)] = iterations
    return found


def _lambda_function(node: ast.Lambda, names: _Names) -> Function:
    """A lambda as a registered function: its parameters, and its body as its one return."""
    params = _parameters(node.args)
    returns = (ReturnSite(node.lineno, *_return_shape(node.body, {p.name for p in params})),)
    read = frozenset(n.id for n in subtree(node.body) if isinstance(n, ast.Name))
    return Function("<lambda>", node.lineno, tuple(params), returns, False, None, node, {}, None, read, frozenset())


_STRING_PREFIX = re.compile(r"[rRbBuUfF]*('\'\'|\"\"\"|'|\")")


class _SourceLines:
    """A module's lines and their start offsets, made once per file for every string placed in it."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line_text in self.lines:
            self.starts.append(self.starts[-1] + len(line_text))


def _string_runs(source: _SourceLines, node: ast.expr | None) -> tuple[str, tuple[tuple[int, int, int], ...]] | None:
    """A string expression's value and where its characters sit in ``text``: one literal, implicitly
    concatenated literals (``"a" "b"``), triple-quoted ones, or ``+`` of those. (index, line, column) starts
    each run of consecutive source columns. None for anything else, or when the source does not decode to
    the value (escapes opkit does not place)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_runs(source, node.left), _string_runs(source, node.right)
        if left is None or right is None:
            return None
        return left[0] + right[0], left[1] + tuple((i + len(left[0]), line, column) for i, line, column in right[1])
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.end_lineno is not None):
        return None
    text, lines, starts = source.text, source.lines, source.starts
    if node.end_lineno > len(lines):
        return None

    def char_column(line: int, byte_column: int) -> int:  # ast columns count UTF-8 bytes
        return len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    start = starts[node.lineno - 1] + char_column(node.lineno, node.col_offset)
    end = starts[node.end_lineno - 1] + char_column(node.end_lineno, node.end_col_offset)

    def position(offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(starts, offset) - 1
        return index + 1, offset - starts[index] + 1

    value: list[str] = []
    produced = 0  # characters in value
    runs: list[tuple[int, int, int]] = []
    i = start
    while i < end:
        if text[i] in " \t\r\n\\":
            i += 1
            continue
        if text[i] == "#":
            i = text.find("\n", i, end) if "\n" in text[i:end] else end
            continue
        m = _STRING_PREFIX.match(text, i, end)
        if m is None:
            return None
        raw, quote = "r" in m.group().lower().split(m.group(1))[0], m.group(1)
        j = m.end()
        runs.append((produced, *position(j)))
        while j < end and not text.startswith(quote, j):
            c = text[j]
            if c == "\\" and not raw:
                escape = re.match(r"\\(?:\n|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", text[j:end], re.S)
                width = len(escape.group()) if escape else 1
                try:
                    decoded = ast.literal_eval('"' + text[j : j + width] + '"')
                except (SyntaxError, ValueError):
                    decoded = text[j : j + width]
                value.append(decoded)
                produced += len(decoded)
                j += width
                runs.append((produced, *position(j)))
                continue
            value.append(c)
            produced += 1
            j += 1
            if c == "\n":
                runs.append((produced, *position(j)))
        i = j + len(quote)
    if "".join(value) != node.value:
        return None
    return node.value, tuple(runs)


def _shifted(runs: tuple[tuple[int, int, int], ...], lead: int) -> tuple[tuple[int, int, int], ...]:
    """Runs of a string whose first ``lead`` characters are dropped."""
    kept = [(index - lead, line, column) for index, line, column in runs if index > lead]
    return ((0, *position_in(runs, lead)), *kept)


# Reads another module of the package: its path → its text, or None when there is none to read.
ModuleReader = Callable[[str], "str | None"]


def _assigned_libraries(assigns, names: _Names) -> dict[str, LibraryObject]:
    found = {}
    for node, _ in assigns:
        if isinstance(node.value, ast.Call) and names.qualify(node.value.func) in LIBRARY:
            call = node.value
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = LibraryObject(target.id, _str_arg(call, 0, "ns") or "", _str_arg(call, 1, "kind") or "", _str_arg(call, 2, "dispatch_key") or "")
    return found


@functools.lru_cache(maxsize=64)
def module_libraries(text: str) -> dict[str, LibraryObject]:
    """The ``torch.library.Library`` objects a module makes at its top level, by variable name."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    body = [(node, None) for node in tree.body if isinstance(node, ast.Assign)]
    return _assigned_libraries(body, _Names([node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]))


def sibling_text(path: str, node: ast.ImportFrom, modules: ModuleReader) -> str | None:
    """The text of the module a relative ``from .x import y`` in ``path`` names, read through ``modules``."""
    for candidate in module_paths(path, node) if node.level else ():
        text = modules(candidate)
        if text is not None:
            return text
    return None


def module_paths(path: str, node: ast.ImportFrom) -> list[str]:
    """Where the module an import in ``path`` names may be: relative to that file, or (absolute) under each
    directory above it, as a package root would hold it."""
    import os

    parts = node.module.split(".") if node.module else []
    directory = os.path.dirname(path)
    if node.level:  # spelled as the lint run spells the file, so a reader keyed by those paths finds it
        base = directory
        for _ in range(node.level - 1):
            base = os.path.dirname(base)
        return [os.path.join(base, *parts) + ".py", os.path.join(base, *parts, "__init__.py")]
    # each directory above the file
    depth = len(os.path.abspath(directory or os.curdir).split(os.sep))
    bases = [os.path.join(directory, *[os.pardir] * up) for up in range(min(depth, 12))]
    paths = []
    for base in bases:
        stem = os.path.normpath(os.path.join(base, *parts)) if parts else os.path.normpath(base)
        paths += [stem + ".py", os.path.join(stem, "__init__.py")]
    return paths


def _parsed_functions(nodes: dict[str, list[tuple[ast.AST, ast.AST | None]]], names: _Names) -> dict[int, Function]:
    """Every def of a walked module (``walk``), by ``id`` of its node, read as a ``Function``."""
    defs = [node for node, _ in nodes["scopes"] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    own: dict[int, list[ast.AST]] = {id(fn): [] for fn in defs}
    for node, scope in nodes["exits"]:
        if id(scope) in own:
            own[id(scope)].append(node)
    read, none_tested = _names_in_bodies(nodes)
    return {id(fn): _function(fn, names, own[id(fn)], read[id(fn)], none_tested[id(fn)]) for fn in defs}


def _names_in_bodies(nodes: dict[str, list[tuple[ast.AST, ast.AST | None]]]) -> tuple[dict[int, frozenset[str]], dict[int, frozenset[str]]]:
    """For each scope (by id): the names read in its body and those tested ``is None`` there, nested
    scopes included: each node counts for its own scope, then every scope adds its nested ones'."""
    read: dict[int, set[str]] = {id(node): set() for node, _ in nodes["scopes"]}
    tested: dict[int, set[str]] = {key: set() for key in read}
    read[id(None)], tested[id(None)] = set(), set()  # module level
    for node, scope in nodes["names"]:
        read[id(scope)].add(node.id)
    for node, scope in nodes["compares"]:
        if _is_none_test(node):
            tested[id(scope)].add(node.left.id)
    for node, scope in reversed(nodes["scopes"]):  # breadth-first, reversed: inner scopes first
        read[id(scope)] |= read[id(node)]
        tested[id(scope)] |= tested[id(node)]
    return {k: frozenset(v) for k, v in read.items()}, {k: frozenset(v) for k, v in tested.items()}


@functools.lru_cache(maxsize=64)
def module_functions(text: str) -> dict[str, Function]:
    """The functions a module defines at its top level, by name (another module's ``op_func``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    nodes = walk(tree)
    parsed = _parsed_functions(nodes, _Names([node for node, _ in nodes["imports"]]))
    return {fn.name: parsed[id(fn)] for fn in tree.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names assigned a string exactly once (``NS = "attentions"``)."""
    seen: dict[str, int] = {}
    values: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    seen[target.id] = seen.get(target.id, 0) + 1
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        values[target.id] = node.value.value
    return {name: value for name, value in values.items() if seen[name] == 1}


@functools.lru_cache(maxsize=64)
def module_names(text: str) -> _Names:
    """What another module's imports make of its names (for its annotations)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return _Names([])
    return _Names([node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))])


def _tag_names(call: ast.Call) -> tuple[str, ...]:
    """The names of the ``tags=`` a define or custom_op passes: ``torch.Tag.inplace``, ``(Tag.out, ...)``."""
    return _tags(next((k.value for k in call.keywords if k.arg == "tags"), None))


def _tags(node: ast.expr | None) -> tuple[str, ...]:
    """The tag names an expression gives: one ``torch.Tag.x``, or a tuple/list/set of them."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node] if node is not None else []
    return tuple(i.attr for i in items if isinstance(i, ast.Attribute) and isinstance(i.value, (ast.Attribute, ast.Name)) and getattr(i.value, "attr", getattr(i.value, "id", "")) == "Tag")


def _split_qualname(qualname: str) -> tuple[str, str]:
    ns, sep, name = qualname.partition("::")
    return (ns, name) if sep else ("", qualname)


class _Loader:
    def __init__(self, path: str, tree: ast.Module, result: RegistrationFile, modules: ModuleReader | None = None, nodes: dict | None = None):
        self.path = path
        self.modules = modules
        self.tree = tree
        self.nodes = walk(tree) if nodes is None else nodes
        self.names = _Names([node for node, _ in self.nodes["imports"]])
        self.result = result
        self.libraries: dict[str, LibraryObject] = {}
        self.functions: dict[str, Function] = {}
        self.custom_ops: dict[str, CustomOp] = {}  # by the Python name the decorator rebinds
        self.branches = _branch_paths(tree)
        self.statement: dict[int, ast.stmt] = {}  # id(node) → the statement that holds it, for call registrations
        # helpers: name → the def whose body registers through its parameters (``lib.impl(op_name, fn, "Meta")``)
        self.helpers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.helper_calls: dict[str, list[ast.Call]] = {}  # helper name → the registrations in its body
        self.source_lines: _SourceLines | None = None  # made on the first define string placed
        # Module-level ``NAME = "text"`` (assigned once): what op-name strings are built from.
        self.constants = _module_constants(tree)
        # Decorator factories: name → (def, the registration call or factory call it returns), for
        # ``def register_x_fake(name): return register_fake(f"ns::{name}")``.
        self.factories: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.Call]]] = {}

    def load(self) -> None:
        self._find_libraries()
        defs = [node for node, _ in self.nodes["scopes"] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.parsed = _parsed_functions(self.nodes, self.names)
        for fn in defs:
            self.functions.setdefault(fn.name, self.parsed[id(fn)])
        # custom_ops first, so fakes registered before or after them resolve by name.
        for fn in defs:
            for dec in fn.decorator_list:
                self._custom_op(fn, dec)
        self._find_factories(defs)
        for fn in defs:
            for dec in fn.decorator_list:
                self._decorated(self.parsed[id(fn)], dec, dec)
        loops = _loop_bindings([node for node, _ in self.nodes["loops"]])
        defined_names = self._defined_op_names()
        calls = [(node, scope) for node, scope in self.nodes["expressions"] if isinstance(node.value, ast.Call)]
        for _ in range(3):  # registrations inside a function, through its parameters: a helper (of a helper)
            known = len(self.helpers)
            for node, scope in calls:
                if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.value not in self.helper_calls.get(scope.name, ()) and self._registers_through_parameters(node.value, scope):
                    self.helpers[scope.name] = scope
                    self.helper_calls.setdefault(scope.name, []).append(node.value)
            if len(self.helpers) == known:
                break
        for node, _ in calls:
            self.statement[id(node.value)] = node
            for binding in loops.get(id(node), ({},)):
                self._call_registration(node.value, {**defined_names, **binding}, node.value)

    def _find_libraries(self) -> None:
        self.libraries.update(_assigned_libraries(self.nodes["assigns"], self.names))
        if self.modules is not None:  # ``from ._lib import lib``: a Library another module of the package makes
            for node, _ in self.nodes["imports"]:
                if isinstance(node, ast.ImportFrom) and node.level:
                    for alias in node.names:
                        lib = self._imported_library(node, alias.name)
                        if lib is not None and (alias.asname or alias.name) not in self.libraries:
                            self.libraries[alias.asname or alias.name] = lib
        # Only once every Library is known: ``m.define`` may sit anywhere in the module.
        for node, _ in self.nodes["calls"]:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "define":
                self._define(node)

    def _imported_library(self, node: ast.ImportFrom, name: str) -> LibraryObject | None:
        text = sibling_text(self.path, node, self.modules)
        return module_libraries(text).get(name) if text is not None else None

    def _define(self, call: ast.Call) -> None:
        lib = self.libraries.get(getattr(call.func.value, "id", ""))
        node = _arg(call, 0, "schema")
        if lib is None:
            return
        if self.source_lines is None:
            self.source_lines = _SourceLines(self.result.text)
        located = _string_runs(self.source_lines, node)
        if located is None:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a literal opkit cannot place per character
                self.result.defined_schemas.append(SchemaSite(node.value.strip(), self.path, node.lineno, node.col_offset + 2, Dialect.TORCH_LIBRARY, namespace=lib.namespace, tags=_tag_names(call)))
            return
        value, runs = located
        # torch skips the blanks around a schema (TorchAir writes ``define("""\n  name(...) -> None\n""")``)
        lead = len(value) - len(value.lstrip())
        text = value.strip()
        runs = _shifted(runs, lead)
        line, column = runs[0][1], runs[0][2]
        self.result.defined_schemas.append(SchemaSite(text, self.path, line, column, Dialect.TORCH_LIBRARY, namespace=lib.namespace, runs=runs if len(runs) > 1 else (), tags=_tag_names(call)))

    def _custom_op(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, dec: ast.expr) -> None:
        if not (isinstance(dec, ast.Call) and self.names.qualify(dec.func) in CUSTOM_OP):
            return
        qualname = _str_arg(dec, 0, "name")
        if qualname is None:
            return
        ns, name = _split_qualname(qualname)
        schema_node = next((k.value for k in dec.keywords if k.arg == "schema"), None)
        explicit = schema_node.value if isinstance(schema_node, ast.Constant) and isinstance(schema_node.value, str) else None
        function, mutates = self.parsed[id(fn)], _mutates_args(dec)
        schema, problem = None, None
        if explicit is not None:
            schema = f"{qualname}{explicit}"
        elif not any(k.arg == "mutates_args" for k in dec.keywords):
            problem = "custom_op requires mutates_args (write () when the op writes nothing)"
        elif mutates is None:
            pass  # mutates_args is computed at run time: the schema cannot be known without running the file
        else:
            try:
                schema = infer_schema(function, mutates, qualname, self.names)
            except NotInferable as exc:
                problem = str(exc)
        op = CustomOp(ns, name, function, mutates, explicit, schema, problem, dec.lineno, dec.col_offset + 1, tags=_tag_names(dec))
        self.custom_ops[fn.name] = op
        self.result.custom_ops.append(op)

    def _meta_key(self, explicit: str | None, lib: LibraryObject | None) -> bool:
        return self._key(explicit, lib) == META_KEY

    @staticmethod
    def _key(explicit: str | None, lib: LibraryObject | None) -> str:
        return explicit if explicit else (lib.dispatch_key if lib else "")

    def _functionalize(self, explicit: str | None, lib: LibraryObject | None, namespace: str, ops, at: ast.AST) -> None:
        """Record the ops of a registration for the Functionalize key."""
        if self._key(explicit, lib) == FUNCTIONALIZE_KEY:
            for op in ops:
                self.result.functionalize_kernels.append((namespace, op, at.lineno, at.col_offset + 1))

    def _add(self, namespace: str, op: str, style: str, function: Function, node: ast.AST, custom_op: CustomOp | None = None) -> None:
        # A decorator sits in the branches of its function's ``def``, a call in those of its statement.
        holder = self.statement.get(id(node), function.node)
        branches = self.branches.get(id(holder), ())
        self.result.registrations.append(Registration(namespace, op, style, function, node.lineno, node.col_offset + 1, custom_op, branches))

    def _decorated(self, function: Function, dec: ast.expr, at: ast.AST, binding: dict[str, ast.expr] | None = None) -> None:
        """``function`` under decorator ``dec`` (or passed to it, ``register_fake("ns::op")(fn)``), reported at ``at``."""
        binding = binding or {}
        # @my_op.register_fake
        if isinstance(dec, ast.Attribute) and dec.attr == "register_fake" and isinstance(dec.value, ast.Name):
            op = self.custom_ops.get(dec.value.id)
            if op is not None:
                self._add(op.namespace, op.name, "fake", function, at, op)
            return
        if not isinstance(dec, ast.Call):
            return
        if isinstance(dec.func, ast.Name) and dec.func.id in self.factories:  # @register_x_fake("op")
            made = self._factory_made(dec, binding)
            if made is None:
                return
            dec, binding = made
        callee = self.names.qualify(dec.func)
        if callee in IMPL:
            first = _arg(dec, 0, "qualname")
            if isinstance(first, ast.Name) and first.id in self.libraries:  # impl(m, "my_op"[, "Meta"])
                lib = self.libraries[first.id]
                if self._meta_key(self._bound_str(_arg(dec, 2, "dispatch_key"), binding), lib):
                    for op in self._bound_strs(_arg(dec, 1, "name"), binding):
                        self._add(lib.namespace, op, "meta", function, at)
                self._functionalize(self._bound_str(_arg(dec, 2, "dispatch_key"), binding), lib, lib.namespace, self._bound_strs(_arg(dec, 1, "name"), binding), at)
            elif isinstance(first, ast.Constant) and isinstance(first.value, str):  # impl("ns::op", "Meta")
                types = _arg(dec, 1, "types")
                keys = [e.value for e in (types.elts if isinstance(types, (ast.Tuple, ast.List)) else [types]) if isinstance(e, ast.Constant)]
                if META_KEY in keys:
                    self._add(*_split_qualname(first.value), "meta", function, at)
                if FUNCTIONALIZE_KEY in keys:
                    ns, name = _split_qualname(first.value)
                    self._functionalize(FUNCTIONALIZE_KEY, None, ns, [name], at)
        elif callee in REGISTER_FAKE:
            self._fake_target(_arg(dec, 0, "op"), function, at, binding)
        elif isinstance(dec.func, ast.Attribute) and dec.func.attr == "impl" and getattr(dec.func.value, "id", None) in self.libraries:
            lib = self.libraries[dec.func.value.id]  # @m.impl("my_op")
            if self._meta_key(self._bound_str(_arg(dec, 2, "dispatch_key"), binding), lib):
                for op in self._bound_strs(_arg(dec, 0, "op_name"), binding):
                    self._add(lib.namespace, op, "meta", function, at)
            self._functionalize(self._bound_str(_arg(dec, 2, "dispatch_key"), binding), lib, lib.namespace, self._bound_strs(_arg(dec, 0, "op_name"), binding), at)

    def _fake_target(self, target: ast.expr | None, function: Function, node: ast.AST, binding: dict[str, ast.expr] | None = None) -> None:
        binding = binding or {}
        value = self._bound_str(target, binding)
        if isinstance(target, ast.Name) and target.id in binding:
            target = binding[target.id]
        if value is not None:
            ns, name = _split_qualname(value)
            owner = next((c for c in self.custom_ops.values() if c.namespace == ns and c.name == name), None)
            self._add(ns, name, "fake", function, node, owner)
        elif isinstance(target, ast.Name) and target.id in self.custom_ops:
            op = self.custom_ops[target.id]
            self._add(op.namespace, op.name, "fake", function, node, op)

    def _call_registration(self, call: ast.Call, binding: dict[str, ast.expr], at: ast.AST) -> None:
        """A registration as a call, its names looked up in ``binding`` (a loop's values, a helper's
        arguments) first: ``m.impl("my_op", my_op_meta, "Meta")``, ``register_fake("ns::op", fn)``,
        ``register_fake("ns::op")(fn)`` and ``impl(m, "op", "Meta")(fn)`` (lambdas too), or a call of a
        helper of this module that makes one of those with its parameters."""
        if isinstance(call.func, ast.Attribute) and call.func.attr == "impl" and getattr(call.func.value, "id", None) in self.libraries:
            lib = self.libraries[call.func.value.id]
            function = self._function_of(_arg(call, 1, "fn"), binding)
            if function is not None and self._meta_key(self._bound_str(_arg(call, 2, "dispatch_key"), binding), lib):
                for op in self._bound_strs(_arg(call, 0, "op_name"), binding):
                    self._add(lib.namespace, op, "meta", function, at)
            self._functionalize(self._bound_str(_arg(call, 2, "dispatch_key"), binding), lib, lib.namespace, self._bound_strs(_arg(call, 0, "op_name"), binding), at)
        elif self.names.qualify(call.func) in REGISTER_FAKE:
            function = self._function_of(_arg(call, 1, "func"), binding)
            if function is not None:
                self._fake_target(_arg(call, 0, "op"), function, at, binding)
        elif self.names.qualify(call.func) in KNOWN_HELPERS:
            self._helper_op(call, self.names.qualify(call.func), binding, at)
        elif isinstance(call.func, (ast.Call, ast.Attribute)) and len(call.args) == 1 and not call.keywords:
            function = self._function_of(call.args[0], binding)  # a decorator called on a function
            if function is not None:
                self._decorated(function, call.func, at, binding)
        elif isinstance(call.func, ast.Name) and call.func.id in self.helpers:
            helper = self.helpers[call.func.id]
            arguments = _bind_arguments(helper, call, binding)
            if arguments is not None:
                inner = {**binding, **arguments}
                for registration in self.helper_calls[call.func.id]:
                    self._call_registration(registration, inner, at)

    # --------------------------------------------------------------------------------------------
    # Known registration helpers, decorator factories, op names built from strings
    # --------------------------------------------------------------------------------------------

    def _bound_strs(self, node: ast.expr | None, binding: dict[str, ast.expr]) -> list[str]:
        """The op names an argument gives: a string, or a name bound to one (a helper's parameter, a
        loop's value, a module constant), an f-string or ``+`` of those."""
        value = self._string(node, binding, 0)
        return [value] if value else []

    def _bound_str(self, node: ast.expr | None, binding: dict[str, ast.expr]) -> str | None:
        found = self._bound_strs(node, binding)
        return found[0] if found else None

    def _string(self, node: ast.expr | None, binding: dict[str, ast.expr], depth: int) -> str | None:
        if node is None or depth > 8:  # ``f(op_name=op_name)`` binds a name to itself
            return None
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            if node.id in binding:
                return self._string(binding[node.id], binding, depth + 1)
            return self.constants.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._string(node.left, binding, depth + 1), self._string(node.right, binding, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.conversion != -1 or value.format_spec is not None:
                        return None
                    value = value.value
                part = self._string(value, binding, depth + 1)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        return None

    def _find_factories(self, defs: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> None:
        """Defs that return a registration decorator (``register_fake(...)``) or another factory's result."""
        returned: dict[int, list[ast.Call]] = {id(fn): [] for fn in defs}
        for node, scope in self.nodes["exits"]:
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and id(scope) in returned:
                returned[id(scope)].append(node.value)
        names = {fn.name for fn in defs}
        for fn in defs:
            for call in returned[id(fn)]:
                if self.names.qualify(call.func) in REGISTER_FAKE or (isinstance(call.func, ast.Name) and call.func.id in names and call.func.id != fn.name):
                    self.factories.setdefault(fn.name, []).append((fn, call))

    def _factory_made(self, call: ast.Call, binding: dict[str, ast.expr], depth: int = 0) -> tuple[ast.Call, dict[str, ast.expr]] | None:
        """The registration decorator a factory call makes, with the factory's parameters bound."""
        if depth > 4:
            return None
        for fn, made in self.factories.get(call.func.id, ()):
            arguments = _bind_arguments(fn, call, binding)
            if arguments is None:
                continue
            inner = {**binding, **arguments}
            if self.names.qualify(made.func) in REGISTER_FAKE:
                return made, inner
            if isinstance(made.func, ast.Name) and made.func.id in self.factories:
                found = self._factory_made(made, inner, depth + 1)
                if found is not None:
                    return found
        return None

    def _helper_op(self, call: ast.Call, helper: str, binding: dict[str, ast.expr], at: ast.AST) -> None:
        """``direct_register_custom_op(op_name=..., op_func=..., mutates_args=..., fake_impl=..., target_lib=...)``."""

        def argument(name: str) -> ast.expr | None:
            node = _arg(call, _HELPER_PARAMETERS.index(name), name)
            while isinstance(node, ast.Name) and node.id in binding and binding[node.id] is not node:
                node = binding[node.id]
            return None if isinstance(node, ast.Constant) and node.value is None else node

        op_name = self._bound_str(argument("op_name"), binding)
        if not op_name:
            return
        namespace = KNOWN_HELPERS[helper]
        target = argument("target_lib")
        if target is not None:  # a Library of this module, else a namespace opkit cannot know
            namespace = self.libraries[target.id].namespace if isinstance(target, ast.Name) and target.id in self.libraries else ""
        qualname = f"{namespace}::{op_name}" if namespace else op_name
        function, function_path = self._function_anywhere(argument("op_func"), binding)
        fake, _ = self._function_anywhere(argument("fake_impl"), binding)
        if function is None:  # op_func is not readable here: the op exists, its schema is unknown
            self.result.unread_ops.append(qualname)
            if fake is not None:
                self._add(namespace, op_name, "fake", fake, at)
            return
        mutates_node = argument("mutates_args")
        schema, problem = None, None
        if mutates_node is None:
            mutates: tuple[str, ...] | str | None = () if namespace == "vllm" or helper.startswith("vllm.") else None
            if mutates is None:
                problem = f"{helper.rsplit('.', 1)[-1]} requires mutates_args (write [] when the op writes nothing)"
        else:
            mutates = _mutates_value(mutates_node)
        if mutates is not None and problem is None:
            try:
                schema = infer_schema(function, mutates, qualname, self._names_for(function_path))
            except NotInferable as exc:
                problem = str(exc)
        tags = argument("tags")
        op = CustomOp(
            namespace, op_name, function, mutates, None, schema, problem, at.lineno, at.col_offset + 1,
            helper=helper, function_path=function_path, dispatch_key=self._bound_str(argument("dispatch_key"), binding),
            tags=_tags(tags),
        )  # fmt: skip
        self.custom_ops[f"<{helper}:{at.lineno}:{at.col_offset}:{op_name}>"] = op  # no Python name rebinds to it
        self.result.custom_ops.append(op)
        if fake is not None:
            self._add(namespace, op_name, "fake", fake, at, op)

    def _names_for(self, function_path: str) -> _Names:
        """The imports an annotation is read with: this module's, or those of the module defining op_func."""
        if not function_path:
            return self.names
        text = self.modules(function_path) if self.modules else None
        return module_names(text) if text is not None else self.names

    def _function_anywhere(self, node: ast.expr | None, binding: dict[str, ast.expr]) -> tuple[Function | None, str]:
        """The function passed: one of this module (or a lambda), else a top-level def of the package module
        it is imported from (``from pkg.ops.rope import rope_impl``), with that module's path."""
        if isinstance(node, ast.Name) and node.id in binding:
            node = binding[node.id]
        function = self._function_of(node, binding)
        if function is not None or not isinstance(node, ast.Name) or self.modules is None:
            return function, ""
        for imported in self.nodes["imports"]:
            imported = imported[0]
            if not isinstance(imported, ast.ImportFrom):
                continue
            alias = next((a for a in imported.names if (a.asname or a.name) == node.id), None)
            if alias is None:
                continue
            for candidate in module_paths(self.path, imported):
                text = self.modules(candidate)
                if text is not None:
                    found = module_functions(text).get(alias.name)
                    if found is not None:
                        return found, candidate
        return None, ""

    def _defined_op_names(self) -> dict[str, ast.expr]:
        """``op = lib.define("name(...) -> ...")``: ``define`` returns the op's name, which ``lib.impl(op, ...)`` then uses."""
        found: dict[str, ast.expr] = {}
        for node, _ in self.nodes["assigns"]:
            call = node.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "define" and getattr(call.func.value, "id", None) in self.libraries:
                schema = _arg(call, 0, "schema")
                if isinstance(schema, ast.Constant) and isinstance(schema.value, str) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name = schema.value.strip().split("(", 1)[0].strip().rsplit("::", 1)[-1]
                    found[node.targets[0].id] = ast.Constant(name)
        return found

    def _function_of(self, node: ast.expr | None, binding: dict[str, ast.expr]) -> Function | None:
        """The function a registration passes: a def of this module by name, or a lambda."""
        if isinstance(node, ast.Name) and node.id in binding:
            node = binding[node.id]
        if isinstance(node, ast.Name):
            return self.functions.get(node.id)
        if isinstance(node, ast.Lambda):
            return _lambda_function(node, self.names)
        return None

    def _registers_through_parameters(self, call: ast.Call, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether ``call`` registers something whose op or function is one of ``scope``'s parameters."""
        params = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs)}
        if isinstance(call.func, ast.Attribute) and call.func.attr == "impl" and getattr(call.func.value, "id", None) in self.libraries:
            used = (_arg(call, 0, "op_name"), _arg(call, 1, "fn"))
        elif self.names.qualify(call.func) in REGISTER_FAKE:
            used = (_arg(call, 0, "op"), _arg(call, 1, "func"))
        elif self.names.qualify(call.func) in KNOWN_HELPERS:
            used = tuple(_arg(call, i, name) for i, name in enumerate(_HELPER_PARAMETERS))
        elif isinstance(call.func, ast.Name) and call.func.id in self.helpers:  # a wrapper of a helper
            used = (*call.args, *(k.value for k in call.keywords))
        else:
            return False
        return any(isinstance(u, ast.Name) and u.id in params for u in used)


def load_registration_file(path: str, text: str, *, explicit: bool = True, modules: ModuleReader | None = None, trees: dict | None = None) -> RegistrationFile:
    """Parse ``text`` with ``ast`` (never import it); InputError E002 on a syntax error. ``modules`` reads
    the package's other modules, for a Library imported from one (``from ._lib import lib``). ``trees``:
    path → (tree, ``walk(tree)``), kept for the kernel reader of the same lint."""
    result = RegistrationFile(path, text, NoqaMap.from_text(text, comment="#"))
    tree, nodes = parsed(path, text, trees)
    _Loader(path, tree, result, modules, nodes).load()
    return result


def parsed(path: str, text: str, trees: dict | None = None) -> tuple[ast.Module, dict]:
    """``text``'s tree and its nodes by kind (``walk``), from ``trees`` when it holds ``path`` (kept there
    when given): the readers of one lint parse and walk a module once. InputError E002 on a syntax error."""
    if trees is not None and path in trees:
        return trees[path]
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InputError("E002", f"invalid Python: {exc.msg}", line=exc.lineno or 1, column=exc.offset or 1) from None
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        raise InputError("E002", f"invalid Python: {exc}") from None
    found = (tree, walk(tree))
    if trees is not None:
        trees[path] = found
    return found



# ------------------------------------------------------------------------------------------------
# Ops declared impure: torch.fx keeps their calls although nothing uses their result
# ------------------------------------------------------------------------------------------------

_SIDE_EFFECT_CALLS = ("has_side_effect", "_register_effectful_op")


def side_effect_ops(text: str) -> dict[str, tuple[int, int]]:
    """``ns::name`` → (line, column) for each ``torch.fx.node.has_side_effect(torch.ops.ns.name[.overload])`` and
    ``torch.library._register_effectful_op(torch.ops.ns.name..., ...)`` in a module (what ``is_impure`` reads)."""
    if not any(name in text for name in _SIDE_EFFECT_CALLS):
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called not in _SIDE_EFFECT_CALLS:
            continue
        parts: list[str] = []
        target = node.args[0]
        while isinstance(target, ast.Attribute):
            parts.append(target.attr)
            target = target.value
        parts.reverse()
        if isinstance(target, ast.Name) and target.id == "torch" and parts[:1] == ["ops"] and len(parts) >= 3:
            found.setdefault(f"{parts[1]}::{parts[2]}", (node.lineno, node.col_offset + 1))
    return found
