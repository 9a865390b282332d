"""One sample call of an op, derived from its signature.

The generated MRE and smoke test pass these arguments, and ``opkit verify`` runs them, so what a user
reads in the project is what was verified. Pure data: the generator renders it as Python source,
verify materialises real tensors. No torch import here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opkit.signature import Argument, OpSignature

SAMPLE_DIMS = (8, 16, 4, 2, 2, 2, 2, 2)  # every tensor the same shape, so elementwise kernels accept them
SAMPLE_SHAPE = SAMPLE_DIMS[:2]
TENSOR_LIST_LENGTH = 2
_SCALAR_SAMPLES = {"int": 2, "SymInt": 2, "float": 1.5, "bool": False, "str": "default", "Scalar": 1.5}


def sample_shape(rank: int = 2) -> tuple[int, ...]:
    """The sample tensors' shape: 2-D, or as many dims as an output size rule reads (``size:[x.2]``)."""
    return SAMPLE_DIMS[: max(2, min(rank, len(SAMPLE_DIMS)))]


class NoSample(ValueError):
    """An argument type opkit cannot invent a value for; the user passes one (``--example``)."""


@dataclass(frozen=True)
class SampleArg:
    name: str
    kind: str  # "tensor", "tensor_list", "dtype" (a torch dtype) or "value" (a Python value)
    kwarg_only: bool
    value: Any = None


def _sample(arg: Argument) -> SampleArg:
    t = arg.type
    if t.is_tensor:
        return SampleArg(arg.name, "tensor_list" if t.is_list else "tensor", arg.kwarg_only)
    if t.base == "ScalarType":
        return SampleArg(arg.name, "dtype", arg.kwarg_only)
    if t.base in _SCALAR_SAMPLES:
        scalar = _SCALAR_SAMPLES[t.base]
        return SampleArg(arg.name, "value", arg.kwarg_only, [scalar] * (t.size or 2) if t.is_list else scalar)
    if t.optional:
        return SampleArg(arg.name, "value", arg.kwarg_only, None)
    raise NoSample(f"cannot make a sample for argument '{arg}'")


def optional_dispatch_tensor(signature: OpSignature) -> str:
    """For an op whose tensors are all optional (a metadata op): its first ``Tensor?``, which a call passes
    so that torch has a tensor to dispatch on and the Meta function one to size its outputs like; else ""."""
    if any(a.type.is_tensor and not a.type.optional and not a.type.elem_optional for a in signature.arguments):
        return ""
    return next((a.name for a in signature.arguments if a.type.is_tensor and a.type.optional and not a.type.is_list), "")


def sample_call(signature: OpSignature) -> tuple[SampleArg, ...]:
    """Arguments for one plausible call: every argument PyTorch cannot omit (it fills in the rest).

    A defaulted argument before one without a default cannot be omitted: it gets its default.
    Optional tensors are passed (an absent one exercises less); lists get two elements. An op whose
    tensors are all optional is passed its first one (``optional_dispatch_tensor``), defaulted or not,
    with the arguments before it.
    """
    dispatch = signature.argument(optional_dispatch_tensor(signature))
    through = signature.arguments.index(dispatch) if dispatch is not None else -1
    return tuple(
        _sample(a) if a.default is None or a is dispatch else SampleArg(a.name, "value", a.kwarg_only, a.default_value)
        for i, a in enumerate(signature.arguments)
        if not signature.is_omittable(a) or (i <= through and not a.kwarg_only) or a is dispatch
    )


_INT64_MAX = 2**63 - 1


def _non_default(arg: Argument) -> SampleArg | None:
    """A value for a defaulted argument that differs from its default (PyTorch drops a trailing argument
    equal to its default before calling a Meta function, so passing the default proves nothing)."""
    try:
        default = arg.default_value
    except ValueError:
        return None
    t = arg.type
    if default is None:
        return _sample(arg) if t.is_tensor or t.base in _SCALAR_SAMPLES else None
    if isinstance(default, bool):
        return SampleArg(arg.name, "value", arg.kwarg_only, not default)
    if isinstance(default, int):  # int64's largest value (a common "no limit" default) has no successor
        return SampleArg(arg.name, "value", arg.kwarg_only, default + 1 if default < _INT64_MAX else default - 1)
    if isinstance(default, float):
        return SampleArg(arg.name, "value", arg.kwarg_only, default + 0.5)
    if isinstance(default, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in default):
        return SampleArg(arg.name, "value", arg.kwarg_only, [v + 1 for v in default])
    return None


def _default_or_none(arg: Argument) -> Any:
    try:
        return arg.default_value
    except ValueError:  # an enum-like name torch resolves itself
        return None


def sample_call_passing_defaults(signature: OpSignature) -> tuple[SampleArg, ...] | None:
    """The sample call with every defaulted argument passed a non-default value, where opkit can invent
    one; None when the signature has no such argument (the plain sample call already covers it).

    A Meta function that forgets a defaulted parameter works while the default is omitted and fails
    once a caller passes it: this call is the one that shows it.
    """
    passed: list[SampleArg] = []
    changed = False
    for a in signature.arguments:
        if a.default is None:
            passed.append(_sample(a))
            continue
        value = _non_default(a)
        if value is None:
            # a positional argument keeps its place (its default), or later ones would shift into it
            keep = not signature.is_omittable(a) or not a.kwarg_only
            passed.append(SampleArg(a.name, "value", a.kwarg_only, _default_or_none(a)) if keep else None)
            continue
        passed.append(value)
        changed = True
    if not changed:
        return None
    return tuple(p for p in passed if p is not None)
