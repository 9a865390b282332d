"""What a Python Meta/fake function returns, read from its body with ``ast``: each output's dtype, device and
size source as the code states them, and every tensor it creates (for literal devices).

A created tensor is a call of a torch factory (``torch.empty``, ``torch.empty_like``, ``torch.zeros``, ...)
or a ``new_*`` method (``x.new_empty``). Its facts, normalised so that two sources compare:

- ``dtype``: a torch dtype name (``"int8"``, ``"float32"``), ``"like:x"`` (``empty_like(x)``,
  ``x.new_empty(...)``, ``dtype=x.dtype``), ``"default"`` (a factory given no dtype), or None (an
  expression this reader does not evaluate);
- ``device``: ``"cpu"``, ``"meta"``, ... for a literal, ``"like:x"``, ``"default"``, or None;
- ``size``: ``"like:x"`` (``empty_like(x)``, ``x.size()``, ``x.shape``) or the expression as written.

A returned name is followed to its last assignment in the function (``out = torch.empty(...); return out``);
each output is known only when every ``return`` agrees on it. Nothing is imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# torch.<name> → the dtype's name (torch's aliases resolved)
TORCH_DTYPES = {
    "float32": "float32", "float": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float64": "float64", "double": "float64", "int8": "int8", "int16": "int16", "short": "int16", "int32": "int32",
    "int": "int32", "int64": "int64", "long": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "bool": "bool", "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128",
    "cdouble": "complex128", "complex32": "complex32", "chalf": "complex32", "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "qint8": "qint8", "quint8": "quint8", "qint32": "qint32",
}  # fmt: skip
# ATen's C++ spellings (at::kChar, at::ScalarType::Char, c10::kFloat) → the dtype's name
ATEN_DTYPES = {
    "Float": "float32", "Half": "float16", "BFloat16": "bfloat16", "Double": "float64", "Char": "int8", "Short": "int16",
    "Int": "int32", "Long": "int64", "Byte": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64",
    "Bool": "bool", "ComplexHalf": "complex32", "ComplexFloat": "complex64", "ComplexDouble": "complex128",
    "Float8_e4m3fn": "float8_e4m3fn", "Float8_e5m2": "float8_e5m2", "QInt8": "qint8", "QUInt8": "quint8", "QInt32": "qint32",
}  # fmt: skip
_FACTORIES = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided", "tensor", "arange", "randint"})
_LIKE_FACTORIES = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"})
_NEW_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided"})


def aten_dtype(expression: str) -> str | None:
    """The dtype a C++ expression names (``at::kChar``, ``at::ScalarType::Char``, ``c10::kFloat``), or None."""
    text = expression.strip()
    for prefix in ("at::ScalarType::", "c10::ScalarType::", "ScalarType::", "at::k", "c10::k", "torch::k", "k"):
        if text.startswith(prefix) and text[len(prefix) :] in ATEN_DTYPES:
            return ATEN_DTYPES[text[len(prefix) :]]
    return None


@dataclass(frozen=True)
class CreatedTensor:
    """One tensor a Meta/fake function creates."""

    line: int
    column: int
    call: str  # as written: "torch.empty_like", "x.new_empty"
    dtype: str | None
    device: str | None
    size: str | None
    device_node: ast.expr | None = None  # the ``device=`` argument, when given (its place, for a message)


@dataclass(frozen=True)
class MetaOutputs:
    """What one Meta/fake function creates and returns."""

    created: tuple[CreatedTensor, ...]
    # one per returned item (a tuple's items; one for a single tensor): the creation it returns, else None
    # (a parameter, a call this reader does not follow, branches that disagree); None when the returns
    # disagree in arity or cannot be read at all
    outputs: tuple[CreatedTensor | None, ...] | None


def read_meta_outputs(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> MetaOutputs:
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    body = function.body if isinstance(function.body, list) else [ast.Return(function.body)]
    assigned: dict[str, list[ast.expr]] = {}
    returns: list[ast.expr | None] = []
    calls: list[ast.Call] = []
    for node in _walk_own(body):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts):
                    for t, v in zip(target.elts, node.value.elts):
                        if isinstance(t, ast.Name):
                            assigned.setdefault(t.id, []).append(v)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigned.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Return):
            returns.append(node.value)
    reader = _Reader(params, assigned)
    created = tuple(made for made in map(reader.created, calls) if made is not None)
    return MetaOutputs(created, _outputs(returns, assigned, reader))


def _walk_own(body: list[ast.stmt]):
    """Every node of ``body``, nested function and class bodies left out."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(list(ast.iter_child_nodes(node))):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _outputs(returns: list[ast.expr | None], assigned: dict[str, list[ast.expr]], reader: _Reader) -> tuple[CreatedTensor | None, ...] | None:
    if not returns:
        return None
    shapes = []
    for value in returns:
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        shapes.append([_resolve(item, assigned, reader) for item in items])
    if len({len(s) for s in shapes}) != 1:
        return None
    outputs = []
    for column in zip(*shapes):
        first = column[0]
        same = first is not None and all(c is not None and (c.dtype, c.device) == (first.dtype, first.device) for c in column)
        outputs.append(first if same else None)
    return tuple(outputs)


def _resolve(item: ast.expr | None, assigned: dict[str, list[ast.expr]], reader: _Reader, depth: int = 0) -> CreatedTensor | None:
    if item is None:
        return None
    if isinstance(item, ast.Call):
        return reader.created(item)
    if isinstance(item, ast.Name) and depth < 4:
        values = assigned.get(item.id, [])
        if len(values) == 1:  # assigned once: what it holds is known
            return _resolve(values[0], assigned, reader, depth + 1)
    return None


class _Reader:
    def __init__(self, params: set[str], assigned: dict[str, list[ast.expr]]):
        self.params = params
        self.assigned = assigned
        self.depth = 0

    def like(self, name: str | None, fact: str) -> str | None:
        """``like:name`` for a parameter; for a local made once by a factory, that tensor's own fact."""
        if name is None:
            return None
        if name in self.params:
            return f"like:{name}"
        values = self.assigned.get(name, [])
        if len(values) != 1 or self.depth > 4:
            return None
        self.depth += 1
        try:
            made = _resolve(values[0], self.assigned, self)
        finally:
            self.depth -= 1
        return getattr(made, fact) if made is not None else None

    def created(self, call: ast.Call) -> CreatedTensor | None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        name = func.attr
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        owner = func.value
        like: str | None = None
        if name in _NEW_METHODS:
            like = owner.id if isinstance(owner, ast.Name) else None
            dtype = self.dtype(keywords.get("dtype"), default=self.like(like, "dtype"))
            device = self.device(keywords.get("device"), default=self.like(like, "device"))
            size = ast.unparse(call.args[0]) if call.args else None
        elif _is_torch(owner) and name in _LIKE_FACTORIES and call.args:
            source = call.args[0]
            like = source.id if isinstance(source, ast.Name) else None
            dtype = self.dtype(keywords.get("dtype"), default=self.like(like, "dtype"))
            device = self.device(keywords.get("device"), default=self.like(like, "device"))
            size = self.like(like, "size") if like else ast.unparse(source)
        elif _is_torch(owner) and name in _FACTORIES:
            dtype = self.dtype(keywords.get("dtype"), default="default")
            device = self.device(keywords.get("device"), default="default")
            size = self.size(call.args[0]) if call.args else self.size(keywords.get("size"))
        else:
            return None
        return CreatedTensor(call.lineno, call.col_offset + 1, ast.unparse(func), dtype, device, size, keywords.get("device"))

    def dtype(self, node: ast.expr | None, *, default: str | None) -> str | None:
        if node is None:
            return default
        if isinstance(node, ast.Attribute) and _is_torch(node.value) and node.attr in TORCH_DTYPES:
            return TORCH_DTYPES[node.attr]
        if isinstance(node, ast.Attribute) and node.attr == "dtype" and isinstance(node.value, ast.Name):
            return self.like(node.value.id, "dtype")
        return None

    def device(self, node: ast.expr | None, *, default: str | None) -> str | None:
        if node is None:
            return default
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.split(":", 1)[0]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "device" and _is_torch(node.func.value):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                return node.args[0].value.split(":", 1)[0]
        if isinstance(node, ast.Attribute) and node.attr == "device" and isinstance(node.value, ast.Name):
            return self.like(node.value.id, "device")
        return None

    def size(self, node: ast.expr | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args and isinstance(node.func.value, ast.Name):
            return self.like(node.func.value.id, "size")
        if isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name):
            return self.like(node.value.id, "size")
        return ast.unparse(node)


def _is_torch(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "torch"
