"""What verify knows of an op's kernel: the kernel-effects model (``opkit.effects``), read from the same
source lint reads, and what it means for an op the compiler dropped.

A custom op's Python kernel is read from its module's source (``inspect``: the function ``custom_op``
wrapped); a project ``opkit new`` wrote is read through ``opkit.effects.build`` over its files. Where the
model says "unknown", verify says it did not know.
"""

from __future__ import annotations

import inspect
from typing import Any

from opkit.effects.model import Knowledge, OpEffects
from opkit.verify.report import Problem, Stage


# The model of each op whose kernel verify stands in for (a project's, a --from C++ file's), by "ns::name":
# what the stand-in writes, and what a problem about the op cites.
_STOOD_IN: dict[str, OpEffects] = {}


# The files read around a --from file for its kernels: its directory, unless that holds more lint inputs than this
# (a file in a home directory): then the file alone.
MAX_SOURCE_FILES = 5000


def read_all(paths: list[str]) -> dict[str, OpEffects]:
    """Every op's effects model, read from ``paths`` as ``opkit lint`` reads them; {} where they cannot be read
    (lint reports that; verify goes on without the model)."""
    from opkit.effects.build import compute
    from opkit.lint.engine import load_project

    try:
        return compute(load_project(paths))
    except Exception:
        return {}


def effects_of(effects: dict[str, OpEffects], qualname: str) -> OpEffects | None:
    """Op ``qualname``'s ("ns::name") model in ``effects``, when some kernel of it was read."""
    found = effects.get(qualname) or next((e for op, e in effects.items() if op.split(".", 1)[0] == qualname), None)
    return found if found is not None and found.kernels else None


def read_effects(paths: list[str], qualname: str) -> OpEffects | None:
    """The effects model of op ``qualname`` ("ns::name"), read from ``paths`` as ``opkit lint`` reads them."""
    return effects_of(read_all(paths), qualname)


def kernel_sources(path: str) -> list[str]:
    """Where the kernels of the ops a C++ file defines are read: the file's directory (its headers, OpDefs and
    device kernels sit around it, as vllm-ascend's csrc/ holds them), or the file alone when that directory holds
    more than ``MAX_SOURCE_FILES`` files lint reads."""
    import os

    from opkit.lint.discovery import count_inputs

    directory = os.path.dirname(os.path.abspath(path))
    return [directory] if count_inputs(directory, MAX_SOURCE_FILES) <= MAX_SOURCE_FILES else [path]


def stand_in_for(qualname: str, effects: OpEffects | None) -> None:
    """Record the model the stand-in kernel of ``qualname`` follows (None: forget it)."""
    if effects is None:
        _STOOD_IN.pop(qualname, None)
    else:
        _STOOD_IN[qualname] = effects


def effects_for(overload: Any) -> OpEffects | None:
    """The model verify has of ``overload``'s kernel: the one its stand-in follows, else its Python kernel's."""
    return _STOOD_IN.get(overload._schema.name) or python_kernel_effects(overload)


def stand_in_notes(qualname: str, effects: OpEffects | None) -> list[str]:
    """What the report says of the stand-in's writes: which it makes, and where the model did not know."""
    if effects is None:
        return [f"the kernel of {qualname} was not read: the stand-in writes only what the schema declares"]
    notes = []
    if effects.written:
        notes.append(f"the stand-in writes what the kernel writes: {', '.join(effects.written)} ({'; '.join(str(a.evidence[0]) for a in effects.arguments if a.evidence)})")
    unknown = [a for a in effects.arguments if a.written is Knowledge.UNKNOWN]
    if unknown:
        notes.append(
            "opkit did not know whether the kernel writes " + ", ".join(a.name for a in unknown) + f" ({unknown[0].unknown_because}): the stand-in leaves it as the schema says"
        )
    return notes


def python_kernel_effects(overload: Any) -> OpEffects | None:
    """The effects of ``overload``'s Python kernel (a ``torch.library.custom_op``), read from its source; None
    where the op has no Python kernel opkit can find or its source cannot be read."""
    from opkit.effects.python import op_effects
    from opkit.formats.files import InputError, read_text
    from opkit.formats.python_kernels import read_python_kernels
    from opkit.signature import Dialect, SchemaError, parse_schema

    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:  # pragma: no cover - every supported torch has it
        return None
    name = overload._schema.name
    opdef = OPDEFS.get(name)
    fn = getattr(opdef, "_init_fn", None)
    if fn is None:
        return None
    try:
        path = inspect.getsourcefile(fn)
        text = read_text(path) if path else None
    except (TypeError, OSError, InputError):
        return None
    if text is None:
        return None
    try:
        file = read_python_kernels(path, text)
        sig = parse_schema(str(overload._schema), Dialect.TORCH_LIBRARY)
    except (InputError, SchemaError):
        return None
    kernels = [(file, k) for k in file.kernels if k.qualname == name and k.body.function == fn.__name__]
    if not kernels:
        return None
    return op_effects(name, kernels[:1], lambda q: sig if q.split(".", 1)[0] == name else None)


def dropped_call(overload: Any, undeclared_writes: list[str], effects: OpEffects | None) -> Problem:
    """The op ran eagerly but the compiled graph does not hold it, and nothing made the compiler keep it:
    ``is_impure`` (torch 2.13) keeps a call whose result is unused only for a mutable schema, a
    ``has_side_effect`` declaration or an effectful registration. Say what the dropped call did."""
    name = overload._schema.name
    written = list(dict.fromkeys([*undeclared_writes, *(effects.written if effects else ())]))
    where = {}
    if effects is not None:
        for a in effects.arguments:
            if a.written is Knowledge.YES and a.evidence:
                where[a.name] = str(a.evidence[0])
    why = (
        f"torch.compile removed the call as dead code: nothing uses its result, and its schema declares no "
        f"written argument (a!) and no side effect, so is_impure lets dead-code elimination drop it"
    )
    if written:
        lost = ", ".join(repr(w) for w in written)
        seen = "; ".join(f"the kernel writes {w} at {where[w]}" for w in written if w in where)
        return Problem(
            Stage.DYNAMO,
            "call_removed",
            f"{name} is not in the compiled graph: the call was removed: its write to {lost} is lost ({why}"
            + (f"; {seen}" if seen else "") + ")",
            "declare what the kernel writes: " + ", ".join(f"'Tensor(a!) {w}'" for w in written)
            + " in the schema (custom_op: mutates_args=(" + ", ".join(f'"{w}"' for w in written) + ",)); for an op "
            "that acts outside its arguments, torch.fx.node.has_side_effect(" + _packet_text(name) + ")",
            name,
        )
    unknown = [a for a in effects.arguments if a.written is Knowledge.UNKNOWN] if effects is not None else []
    if effects is None or unknown or effects.unknowns:
        because = unknown[0].unknown_because if unknown else (effects.unknowns[0] if effects is not None and effects.unknowns else "its kernel was not read")
        known = "opkit did not know whether the kernel writes an argument (" + because + ")"
    else:
        known = "its kernel writes none of its arguments, as opkit read it"
    return Problem(
        Stage.DYNAMO,
        "call_removed",
        f"{name} is not in the compiled graph: {why}; {known}",
        "use the op's result in the compiled function; if the kernel writes an argument, annotate it Tensor(a!); if it "
        f"acts outside its arguments, declare torch.fx.node.has_side_effect({_packet_text(name)})",
        name,
    )


def _packet_text(name: str) -> str:
    ns, _, op = name.partition("::")
    return f"torch.ops.{ns}.{op}.default"


def is_impure(overload: Any) -> bool:
    """torch's own verdict: whether dead-code elimination keeps an unused call of ``overload``."""
    try:
        from torch._library.utils import is_impure as torch_is_impure
    except ImportError:  # pragma: no cover - older torch: the schema alone
        return bool(overload._schema.is_mutable)
    return bool(torch_is_impure(overload))
