"""``--output NAME=RULE``: how one fresh output is sized and typed, parsed once and checked against the schema.

The grammar (docs/new.md, "Styles, names and shapes"), items separated by ',' outside brackets, each key at most once:

    like:ARG          size, dtype and device of a Tensor (or Tensor[]: its first element) argument
    size:[D, D, ...]  a shape from input dims; each D is ARG.N (dim N of tensor ARG, N < 0 counts
                      from the end), ARG (an int/SymInt argument) or a literal int >= 0; size:[] is 0-dim
    size:ARG          the shape an int[]/SymInt[] argument gives (e.g. ``new_zeros(Tensor self, int[] size)``)
    dtype:DTYPE       an msOpGen dtype (float32, int64, ...) instead of like's

With ``size:`` the output still takes its device (and dtype, without ``dtype:``) from ``like``, whose
default is ``--out-like``: a Meta function has no other place to take a device from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from opkit import naming
from opkit.samples import optional_dispatch_tensor
from opkit.signature import Argument, OpSignature

_DIM_RE = re.compile(r"^(?P<arg>[A-Za-z_][A-Za-z0-9_]*)\.(?P<index>-?\d+)$")
_INT_RE = re.compile(r"^\d+$")
_SIZE_INTS = ("int", "SymInt")
SYNTAX = "NAME=like:ARG[,size:[ARG.N, ARG, 8]|size:ARG][,dtype:DTYPE]"


class OutputRuleError(ValueError):
    """A malformed or impossible ``--output`` rule; the message names the rule and the column."""


@dataclass(frozen=True)
class Dim:
    """One entry of ``size:[...]``: a tensor's dimension (``x.0``), an int argument (``n``) or a literal (``8``)."""

    kind: str  # "dim" | "int" | "literal"
    arg: str = ""
    index: int = 0  # the dimension (kind "dim") or the value (kind "literal")
    column: int = 0  # 1-based, in the rule's text

    def __str__(self) -> str:
        return {"dim": f"{self.arg}.{self.index}", "int": self.arg, "literal": str(self.index)}[self.kind]


@dataclass(frozen=True)
class OutputRule:
    """How one fresh output is sized and typed. Empty ``like``: the spec's ``--out-like``."""

    name: str
    like: str = ""
    dtype: str = ""  # an msOpGen dtype; empty: the dtype of ``like``
    shape: tuple[Dim, ...] | None = None  # size:[...]
    size_arg: str = ""  # size:ARG
    text: str = field(default="", compare=False)  # as written: what messages quote, Dim.column counts in

    @property
    def size_text(self) -> str:
        if self.size_arg:
            return self.size_arg
        return "[" + ", ".join(str(d) for d in self.shape) + "]" if self.shape is not None else ""

    def to_json(self) -> dict:
        fields = {"like": self.like, "size": self.size_text, "dtype": self.dtype}
        return {k: v for k, v in fields.items() if v}

    def __str__(self) -> str:
        fields = {"like": self.like, "size": self.size_text, "dtype": self.dtype}
        return f"{self.name}=" + ",".join(f"{k}:{v}" for k, v in fields.items() if v)


def _items(body: str) -> list[tuple[str, int]]:
    """``body`` split at the commas outside brackets, each with its 1-based column in ``body``."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body + ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth <= 0:
            items.append((body[start:i], start + 1))
            start = i + 1
    return items


def _stripped(text: str, column: int) -> tuple[str, int]:
    return text.strip(), column + len(text) - len(text.lstrip())


def _shape(text: str, column: int, fail) -> tuple[Dim, ...]:
    inner = text[1:-1]
    if not inner.strip():
        return ()
    dims = []
    for raw, offset in _items(inner):
        item, at = _stripped(raw, column + offset)
        match = _DIM_RE.match(item)
        if match:
            dims.append(Dim("dim", match["arg"], int(match["index"]), at))
        elif _INT_RE.match(item):
            dims.append(Dim("literal", "", int(item), at))
        elif naming.IDENTIFIER_RE.match(item):
            dims.append(Dim("int", item, 0, at))
        else:
            fail(at, f"{item!r} is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0")
    return tuple(dims)


def parse_rule(text: str) -> OutputRule:
    """One ``NAME=RULE``; raises OutputRuleError naming the column of the first problem."""
    where = text.strip()

    def fail(column: int, problem: str):
        raise OutputRuleError(f"--output {where!r}, column {column}: {problem} (write {SYNTAX}, e.g. rstd=size:[x.0, 1],dtype:float32)")

    if where.count("[") != where.count("]"):
        fail(where.find("[") + 1 if where.count("[") > where.count("]") else where.find("]") + 1, "unbalanced '[' ']'")
    name, eq, body = where.partition("=")
    body_column = len(name) + 1  # the body's columns count from the '=' as written, spaces before it included
    name = name.strip()
    if not eq or not naming.IDENTIFIER_RE.match(name):
        fail(1, "expected an output name and '='")
    fields: dict[str, tuple[str, int]] = {}
    for raw, offset in _items(body):
        item, at = _stripped(raw, offset + body_column)
        key, colon, value = item.partition(":")
        key = key.strip()
        if not colon or key not in ("like", "size", "dtype"):
            fail(at, f"{item!r} is not like:ARG, size:[...], size:ARG or dtype:DTYPE")
        if key in fields:
            fail(at, f"{key}: is given twice; keep one")
        fields[key] = _stripped(value, at + len(item) - len(value))
    values = {key: value for key, (value, _) in fields.items()}
    like, dtype = values.get("like", ""), values.get("dtype", "")
    if "like" in fields and not naming.IDENTIFIER_RE.match(like):
        fail(fields["like"][1], f"like:{like!r} is not an argument name")
    shape, size_arg = None, ""
    if "size" in fields:
        size, size_at = fields["size"]
        if size.startswith("[") and size.endswith("]") and size.count("[") == 1:
            shape = _shape(size, size_at, fail)
        elif naming.IDENTIFIER_RE.match(size):
            size_arg = size
        else:
            fail(size_at, f"size:{size!r} is not [D, ...] or the name of an int[] argument")
    return OutputRule(name, like, dtype, shape, size_arg, where)


def parse_outputs(value: str | list | tuple | dict | None) -> tuple[OutputRule, ...]:
    """``--output rstd=like:x,dtype:float32`` (repeatable; ';' also separates rules), or opkit.json's ``outputs``."""
    if not value:
        return ()
    if isinstance(value, dict):
        return tuple(parse_rule(f"{n}=" + ",".join(f"{k}:{v}" for k, v in r.items() if v)) for n, r in value.items())
    parts = [p for item in ([value] if isinstance(value, str) else value) for p in _semicolon_parts(str(item))]
    return tuple(parse_rule(p) for p in parts)


def _semicolon_parts(text: str) -> list[str]:
    return [p for p in text.split(";") if p.strip()]


# -- checks against the schema ---------------------------------------------------------------------


def can_size_outputs(arg: Argument) -> bool:
    """A Tensor, or a Tensor[] (its first element): always present, so a Meta function can read it."""
    t = arg.type
    return t.is_tensor and not t.optional and not t.elem_optional


def sizing_tensors(sig: OpSignature) -> list[str]:
    return [a.name for a in sig.arguments if can_size_outputs(a)]


def like_problem(sig: OpSignature, like: str, what: str) -> str | None:
    """Why ``like`` cannot size an output, naming the argument and what would work; None if it can."""
    usable = sizing_tensors(sig)
    would = f"use one of: {', '.join(usable)}" if usable else "the schema has no Tensor or Tensor[] argument to size outputs from"
    if not like:
        return f"{what}: no input to size the outputs from; {would}"
    arg = sig.argument(like)
    if arg is None:
        return f"{what} {like!r} is not an argument of the schema; {would}"
    if not can_size_outputs(arg) and like != optional_dispatch_tensor(sig):
        kind = "optional (it may be None)" if arg.type.optional else f"a {arg.type}, not a tensor"
        return f"{what} {like!r} is {kind}: outputs copy the size and dtype of a Tensor or Tensor[] argument; {would}"
    return None


def _is_size_int(arg: Argument) -> bool:
    return arg.type.base in _SIZE_INTS and not arg.type.is_list and not arg.type.optional


def _is_size_list(arg: Argument) -> bool:
    return arg.type.base in _SIZE_INTS and arg.type.is_list and not arg.type.optional


def rank_read(rules: tuple[OutputRule, ...]) -> int:
    """How many dims the inputs need for every ``size:[x.N]`` to exist (``x.2`` and ``x.-3`` need 3); 0 if none."""
    return max((d.index + 1 if d.index >= 0 else -d.index for r in rules for d in r.shape or () if d.kind == "dim"), default=0)


def shape_problem(sig: OpSignature, rule: OutputRule) -> str | None:
    """Why ``rule``'s size: cannot be evaluated from the schema's arguments; None if it can."""
    text = rule.text or str(rule)
    where = f"--output {text!r}"
    if rule.size_arg:
        arg = sig.argument(rule.size_arg)
        lists = [a.name for a in sig.arguments if _is_size_list(a)]
        if arg is None or not _is_size_list(arg):
            what = "is not an argument" if arg is None else f"is a {arg.type}"
            return f"{where}: size:{rule.size_arg} {what}; size:ARG takes an int[] or SymInt[] argument ({', '.join(lists) or 'the schema has none'}), size:[...] takes dims"
        return None
    tensors = sizing_tensors(sig)
    ints = [a.name for a in sig.arguments if _is_size_int(a)]
    for dim in rule.shape or ():
        arg = sig.argument(dim.arg)  # None for a literal: no argument has an empty name
        at = f"{where}, column {dim.column}" if dim.column else where
        if dim.kind == "dim" and (arg is None or not can_size_outputs(arg)):
            what = "is not an argument" if arg is None else f"is a {arg.type}, not a Tensor or Tensor[]"
            return f"{at}: {dim} ({dim.arg} {what}); ARG.N takes the dims of {', '.join(tensors) or 'no argument of this schema'}"
        if dim.kind == "int" and (arg is None or not _is_size_int(arg)):
            what = "is not an argument" if arg is None else f"is a {arg.type}, not an int"
            return f"{at}: {dim} {what}; a bare name takes an int or SymInt argument ({', '.join(ints) or 'the schema has none'}) and ARG.N a tensor's dim"
    return None


def default_out_like(sig: OpSignature) -> str:
    """The tensor whose size and dtype fresh outputs copy: the first plain Tensor that is not written,
    else any plain Tensor, else the first Tensor[] (ops whose tensors are all lists), else the first
    Tensor? (ops whose tensors are all optional).

    torchair's my_inplace example sizes its output like ``y``, the input it does not mutate.
    """
    candidates = [a for a in sig.arguments if can_size_outputs(a) and not a.type.is_list]
    unwritten = [a for a in candidates if not a.is_mutated]
    lists = [a for a in sig.arguments if can_size_outputs(a) and a.type.is_list]
    chosen = unwritten or candidates or lists
    return chosen[0].name if chosen else optional_dispatch_tensor(sig)
