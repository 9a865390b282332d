"""One sample call of an op, derived from its signature.

The generated MRE and smoke test pass these arguments, and ``opkit verify`` runs them, so what a user
reads in the project is what was verified. Pure data: the generator renders it as Python source,
verify materialises real tensors. No torch import here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opkit.signature import Argument, OpSignature

SAMPLE_SHAPE = (8, 16)  # every tensor the same shape, so elementwise kernels accept them
TENSOR_LIST_LENGTH = 2
_SCALAR_SAMPLES = {"int": 2, "SymInt": 2, "float": 1.5, "bool": False, "str": "default", "Scalar": 1.5}


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


def sample_call(signature: OpSignature) -> tuple[SampleArg, ...]:
    """Arguments for one plausible call: every argument PyTorch cannot omit (it fills in the rest).

    A defaulted argument before one without a default cannot be omitted: it gets its default.
    Optional tensors are passed (an absent one exercises less); lists get two elements.
    """
    return tuple(
        _sample(a) if a.default is None else SampleArg(a.name, "value", a.kwarg_only, a.default_value)
        for a in signature.arguments
        if not signature.is_omittable(a)
    )
