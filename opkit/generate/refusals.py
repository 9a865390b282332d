"""Documented refusals: schemas opkit will not generate by design, each answered with why and the corrected
schema (and the exact ``opkit new`` command) to use instead.

A command is suggested only when opkit accepts it: a refusal carries its command as data (``Refusal``), and
the spec layer makes that command into a spec before printing it; where that fails the refusal says so
instead of sending the user to a second refusal. This module never imports the spec layer.

docs/new.md ("Type mapping", the "Refused" paragraph) lists them: a returned mutated input, a returned view, ``Dimname``, ``Generator``/
``Device``/``Layout``/``MemoryFormat`` arguments, non-tensor returns, and ops with no tensor input.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from opkit.generate.outputs import OutputRule, default_out_like
from opkit.samples import optional_dispatch_tensor
from opkit.naming import default_style
from opkit.signature import REFUSED_TYPES, ArgType, Argument, Dialect, OpSignature, Return, SchemaError, parse_schema

# A non-tensor return becomes a 0-dim tensor of this msOpGen dtype (an AI Core op writes only tensors).
_RETURN_DTYPES = {"int": "int64", "SymInt": "int64", "bool": "bool", "float": "float32", "Scalar": "float32"}
NON_TENSOR_RETURN = "an Ascend C kernel writes only tensors: return a 0-dim Tensor and read it with .item() outside the graph"
NO_TENSOR_INPUT = (
    "it has no Tensor input, so torch has no device to dispatch it to ('There were no tensor arguments to this "
    "function') and its Meta function none to take: take a Tensor self whose device and dtype the output takes, "
    "as ATen's new_empty/new_zeros do"
)


def new_command(name: str, schema: str, *, style: str = "", outputs: tuple[OutputRule, ...] = ()) -> str:
    """The ``opkit new`` command line that generates ``schema``, quoted for a POSIX shell."""
    words = ["opkit", "new", name, *(["--style", style] if style else []), "--schema", schema]
    for rule in outputs:
        words += ["--output", str(rule)]
    return shlex.join(words)


def library_command(name: str, schema: str) -> str:
    return new_command(name, schema, style="library")


def torch_library_takes(schema: str) -> bool:
    """Whether torch.library's parser reads ``schema`` (so ``--style library`` may generate it)."""
    try:
        parse_schema(schema, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return False
    return True


@dataclass(frozen=True)
class Refusal:
    """A documented refusal: why (``said``, ending with the corrected schema) and the ``opkit new`` command that
    generates the correction. Printing it gives both; the spec layer prints the command only once it has made
    the command into a spec itself (opkit.generate.spec.refusal_error), so no suggestion is refused in turn."""

    said: str
    name: str
    schema: str
    style: str = ""
    outputs: tuple[OutputRule, ...] = ()

    @property
    def command(self) -> str:
        return new_command(self.name, self.schema, style=self.style, outputs=self.outputs)

    def __str__(self) -> str:
        return f"{self.said} ({self.command})"


def refusal_in_style(schema: str, style: str) -> Refusal | None:
    """A schema the style's own parser rejects for what a documented refusal corrects (torchgen rejects
    ``my_add_(Tensor(a!) x, Tensor y) -> Tensor(a!)``): read with torch.library's parser, corrected in ``style``."""
    try:
        sig = parse_schema(schema, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return None
    dialect = Dialect.OP_PLUGIN if style == "op-plugin" else Dialect.TORCH_LIBRARY
    try:
        return refusal(replace(sig, dialect=dialect), schema, style)
    except SchemaError:
        return None  # the corrected text is not the style's either


def _refused(schema: str, style: str, reasons: list[str], fixed: OpSignature, outputs: tuple[OutputRule, ...] = ()) -> Refusal:
    """The refusal of ``schema``, with ``fixed`` as written and the command that generates it (``--style`` only
    where the corrected name would not get ``style`` by default)."""
    said = f"cannot generate {schema.partition('(')[0]}: {'; '.join(reasons)}. Corrected schema: {fixed.text}"
    return Refusal(said, fixed.name, fixed.text, style=style if style != default_style(fixed.name) else "", outputs=outputs)


def dimname_refusal(schema: str, style: str, dialect: Dialect) -> Refusal | None:
    """torch 2.13's torchgen no longer parses Dimname: the documented refusal, with the int spelling."""
    if not re.search(r"\bDimname\b", schema):
        return None
    fixed = re.sub(r"\bDimname\b", "int", schema)
    try:
        fixed_sig = parse_schema(fixed, dialect)
    except SchemaError:
        return None
    return _refused(schema, style, [f"Dimname: {REFUSED_TYPES['Dimname']}"], fixed_sig)


def _sized_by(arguments: list[Argument]) -> str:
    """The int[] argument a factory op's output is most likely sized by (``size``, else the first)."""
    lists = [a.name for a in arguments if a.type.base in ("int", "SymInt") and a.type.is_list and not a.type.optional]
    return "size" if "size" in lists else (lists[0] if lists else "")


# An out argument whose op or name says it is a store written in place (a KV cache, a scatter target): the
# write is the op's purpose, so its functional twin (a fresh tensor, the store dropped) would be a different op.
_STORE_WRITE = re.compile(r"cache|scatter|index_put|accumulate|state", re.IGNORECASE)


def writes_a_store(sig: OpSignature) -> bool:
    """Whether ``sig``'s mutated keyword arguments are its purpose rather than an ``out=`` buffer: the op or one
    of them is named like a store (``npu_scatter_pa_cache(..., *, Tensor(a!) key_cache)``), or the overload is
    no ``out`` overload and the arguments are not named ``out``."""
    outs = sig.out_arguments
    if not outs:
        return False
    if _STORE_WRITE.search(sig.name) or any(_STORE_WRITE.search(a.name) for a in outs):
        return True
    return "out" not in sig.overload and not all(a.name.startswith("out") for a in outs)


STORE_WRITE = (
    "{names} {are} what the op writes in place (a cache or scatter target, not an out= buffer): a functional twin "
    "returning a fresh tensor would drop {it}; keep Tensor(a!) {names} as {place} and return ()"
)


@dataclass(frozen=True)
class Correction:
    signature: OpSignature
    outputs: tuple[OutputRule, ...] = ()  # the --output rules the corrected schema needs
    adds_input: bool = False  # a Tensor self was added: the op had no tensor input


def corrected(sig: OpSignature) -> Correction | None:
    """The schema to write instead of one opkit refuses by design (and the --output rules it needs), or None.

    Returned mutated inputs are dropped from the returns (a custom op must return () or fresh tensors),
    a trailing in-place '_' goes (torchgen requires such ops to return their input), Generator, Device,
    Layout and MemoryFormat arguments are dropped, a non-tensor return becomes
    a 0-dim Tensor, and an op left without a Tensor input takes ``Tensor self`` first (ATen's new_* ops).
    (A Dimname never parses: ``dimname_refusal`` answers it from the text.)
    """
    changed = False
    arguments = []
    for a in sig.arguments:
        if a.type.refusal:
            changed = True
        elif a.alias is not None and not a.alias.is_write:
            arguments.append(replace(a, alias=None))  # a view's source: nothing aliases it once the return is fresh
        else:
            arguments.append(a)
    # A view (``-> Tensor(a)``) becomes a fresh tensor; a returned mutated input (``-> Tensor(a!)``) goes.
    returns = tuple(replace(r, alias=None) for r in sig.returns if r.alias is None or not r.alias.is_write)
    name, overload = sig.name, sig.overload
    if any(r.alias is not None for r in sig.returns):
        changed = True
    if len(returns) != len(sig.returns):
        changed = True
        if writes_a_store(sig):
            # the store stays a mutated argument, moved before the '*' (torchgen reads a keyword-only mutated
            # argument as an out= buffer, which must be returned); only the aliasing returns go
            stores = [replace(a, kwarg_only=False) for a in arguments if a.kwarg_only and a.is_mutated]
            positional = [a for a in arguments if not a.kwarg_only]
            arguments = positional + stores + [a for a in arguments if a.kwarg_only and not a.is_mutated]
            overload = ""
        elif sig.out_arguments:
            # An out= overload: graph code calls its functional twin, which returns the out tensors fresh.
            outs = {a.name for a in sig.out_arguments}
            named = len(outs) > 1
            returns = returns + tuple(Return(ArgType("Tensor"), a.name if named else None) for a in sig.out_arguments)
            arguments = [a for a in arguments if a.name not in outs]
            overload = ""
        elif sig.is_inplace_name and sig.dialect is Dialect.OP_PLUGIN:
            name = sig.name[:-1]
    scalar_returns = {i: r for i, r in enumerate(returns) if not r.type.is_tensor}
    if scalar_returns:
        returns = tuple(Return(ArgType("Tensor"), r.name) if i in scalar_returns else r for i, r in enumerate(returns))
        changed = True
    fixed = replace(sig, name=name, overload=overload, arguments=tuple(arguments), returns=returns)
    factory = bool(fixed.fresh_returns) and not default_out_like(fixed)
    if factory:
        self_name = "self" if fixed.argument("self") is None else "like"
        fixed = replace(fixed, arguments=(Argument(self_name, ArgType("Tensor")), *fixed.arguments))
        changed = True
    if not changed:
        return None
    fixed = parse_schema(str(fixed), sig.dialect)  # its own text, names and facts, as the user will write it
    outputs = [
        OutputRule(out_name, shape=(), dtype=_RETURN_DTYPES.get(scalar_returns[i].type.base, "float32"))
        for i, out_name in enumerate(fixed.output_names)
        if i in scalar_returns
    ]
    size_arg = _sized_by(list(fixed.arguments)) if factory else ""
    if size_arg:
        outputs += [OutputRule(out_name, size_arg=size_arg) for i, out_name in enumerate(fixed.output_names) if i not in scalar_returns]
    return Correction(fixed, tuple(outputs), factory)


def corrected_schema(sig: OpSignature) -> str | None:
    """The corrected schema's text (see ``corrected``), or None."""
    result = corrected(sig)
    return str(result.signature) if result else None


def refusal(sig: OpSignature, schema: str, style: str) -> Refusal | None:
    """A documented refusal: why, and the corrected schema with the command that generates it.

    Every refusal has a correction: ``corrected`` changes exactly what a reason below names."""
    result = corrected(sig)
    if result is None:
        return None
    reasons = [f"'{a.type} {a.name}': {a.type.refusal}" for a in sig.arguments if a.type.refusal]
    if any(r.alias is not None and not r.alias.is_write for r in sig.returns):
        reasons.insert(0, "it returns a view of an input (-> Tensor(a)); a custom op's outputs must not alias its inputs: return a fresh Tensor")
    if any(r.alias is not None and r.alias.is_write for r in sig.returns):
        if writes_a_store(sig):
            names = [a.name for a in sig.out_arguments]
            one = len(names) == 1
            reasons.insert(0, STORE_WRITE.format(names=", ".join(names), are="is" if one else "are", it="it" if one else "them", place="a positional argument" if one else "positional arguments"))
        reasons.insert(0, "it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; return () or fresh tensors")
    scalars = [f"'{r}'" for r in sig.returns if not r.type.is_tensor]
    if scalars:
        reasons.append(f"it returns {', '.join(scalars)}: {NON_TENSOR_RETURN}")
    if result.adds_input:
        reasons.append(NO_TENSOR_INPUT)
    return _refused(schema, style, reasons, result.signature, result.outputs)


def optional_only_warning(sig: OpSignature) -> str | None:
    """Not a refusal: an op whose tensors are all ``Tensor?`` runs (torch dispatches on the tensors passed),
    but a call passing none of them has no device, and its outputs are sized like the first one."""
    like = optional_dispatch_tensor(sig)
    if not like or not sig.fresh_returns:
        return None
    return (
        f"every tensor of {sig.name} is optional: torch dispatches it on the tensors a call passes, so a call that "
        f"passes none fails ('There were no tensor arguments to this function'); its outputs are sized like {like!r}, "
        f"which a call must pass (or write the sizes in the Meta function)"
    )
