"""Small real ops for the stage unit tests, under the namespace ``opkit_stage_units``: CPU kernels and Meta
functions, some broken on purpose (each says how), and a CheckContext built as check_graph_entry builds it."""

from __future__ import annotations

import torch

from opkit.verify.backends import BACKENDS
from opkit.verify.stages.context import CheckContext, as_target
from oplib import OpLibrary

NS = "opkit_stage_units"
OPS = getattr(torch.ops, NS)

_lib = OpLibrary(NS)
_lib.op("add_one(Tensor x) -> Tensor", lambda x: x + 1, lambda x: torch.empty_like(x))
# The kernel writes y although the schema does not declare it.
_lib.op("sneaky(Tensor x, Tensor y) -> Tensor", lambda x, y: (y.add_(1), x * 2)[1], lambda x, y: torch.empty_like(x))
# The schema declares x written: no undeclared mutation.
_lib.op("bump_(Tensor(a!) x) -> ()", lambda x: (x.add_(1), None)[1], lambda x: None)
# Meta gives the wrong shape and dtype (the kernel sums dim 0 to a float64).
_lib.op("col_sum(Tensor x) -> Tensor", lambda x: x.sum(0).double(), lambda x: torch.empty_like(x))
# Meta returns its input: an alias where the schema promises a fresh tensor.
_lib.op("alias_meta(Tensor x) -> Tensor", lambda x: x.clone(), lambda x: x)
# Meta takes no k: any call passing k fails.
_lib.op("takes_k(Tensor x, int k=1) -> Tensor", lambda x, k=1: x * k, lambda x: torch.empty_like(x))
# Kernel returns a non-contiguous tensor; Meta a contiguous one: strides differ.
_lib.op("transposed(Tensor x) -> Tensor", lambda x: x.t().contiguous().t(), lambda x: torch.empty_like(x, memory_format=torch.contiguous_format))
# A kernel that returns an int alongside a tensor.
_lib.op("with_count(Tensor x) -> (Tensor, int)", lambda x: (x + 1, 3), lambda x: (torch.empty_like(x), 3))


def _fake_op(schema: str, kernel, fake) -> None:
    """custom_op style: a fake function registered with torch.library.register_fake (whose return the
    dispatcher does not check against the schema)."""
    name = schema.split("(", 1)[0]
    _lib._lib.define(schema)
    _lib._cpu.impl(name, kernel)
    torch.library.register_fake(f"{NS}::{name}", fake, lib=_lib._lib)


# The fake function returns one value, the schema two.
_fake_op("two(Tensor x) -> (Tensor, Tensor)", lambda x: (x + 1, x + 2), lambda x: (torch.empty_like(x),))
# The fake output's size depends on the data: an unbacked SymInt (no hint to compare).
_fake_op("pick(Tensor x) -> Tensor", lambda x: x[x > 0], lambda x: x.new_empty(torch.library.get_ctx().new_dynamic_size()))
# One value from the fake function, two in the schema, whose default holds the text " -> ".
_fake_op('arrow(Tensor x, str sep=" -> ") -> (Tensor, Tensor)', lambda x, sep=" -> ": (x + 1, x + 2), lambda x, sep=" -> ": (torch.empty_like(x),))
# Draws random numbers from a generator argument.
_lib.op("noisy(Tensor x, *, Generator? generator=None) -> Tensor", lambda x, generator=None: x + 1, lambda x, generator=None: torch.empty_like(x))
# Kernel only: no Meta function.
_plain = torch.library.Library(NS, "FRAGMENT")
_plain.define("no_meta(Tensor x) -> Tensor")
_plain_cpu = torch.library.Library(NS, "IMPL", "CPU")
_plain_cpu.impl("no_meta", lambda x: x + 1)
# The kernel writes its keyword-only y, undeclared.
_lib.op("sneaky_kw(Tensor x, *, Tensor y) -> Tensor", lambda x, *, y: (y.add_(1), x * 2)[1], lambda x, *, y: torch.empty_like(x))
# The kernel writes x (declared) and y (undeclared).
_lib.op("bump_both_(Tensor(a!) x, Tensor y) -> ()", lambda x, y: (x.add_(1), y.add_(1), None)[2], lambda x, y: None)
# A keyword-only tensor argument, written by nothing.
_lib.op("mul_kw(Tensor x, *, Tensor y) -> Tensor", lambda x, *, y: x * y, lambda x, *, y: torch.empty_like(x))


def _static_meta(x):
    if not isinstance(x.shape[0], int):  # a Meta function that cannot take symbolic sizes (dynamic=True)
        raise TypeError("static sizes only")
    return torch.empty_like(x)


_lib.op("static_meta(Tensor x) -> Tensor", lambda x: x + 1, _static_meta)
# Writes acc (declared) and returns a copy of it: calling it twice on the same inputs gives two answers.
_lib.op("accumulate_(Tensor(a!) acc, Tensor x) -> Tensor", lambda acc, x: acc.add_(x).clone(), lambda acc, x: torch.empty_like(acc))
# A number before the tensor among the returns.
_lib.op("count_first(Tensor x) -> (int, Tensor)", lambda x: (3, x + 1), lambda x: (3, torch.empty_like(x)))
# The first return may alias x (Tensor(a)), the second may not; the Meta function returns x for both.
_lib.op("view_pair(Tensor(a) x) -> (Tensor(a), Tensor)", lambda x: (x, x.clone()), lambda x: (x, x))
# Its Meta function counts its calls.
COUNTED_META_CALLS: list = []
_lib.op("counted(Tensor x) -> Tensor", lambda x: x * 3, lambda x: (COUNTED_META_CALLS.append(x.shape), torch.empty_like(x))[1])
# Decomposes (CompositeImplicitAutograd): traced through its body, no Meta function needed.
_plain_composite = torch.library.Library(NS, "IMPL", "CompositeImplicitAutograd")
_plain.define("composite(Tensor x) -> Tensor")
_plain_composite.impl("composite", lambda x: x * 2)
# Two overloads, the second without a Meta function.
_lib.op("twice(Tensor x) -> Tensor", lambda x: x * 2, lambda x: torch.empty_like(x))
_plain.define("twice.scaled(Tensor x, int k) -> Tensor")
_plain_cpu.impl("twice.scaled", lambda x, k: x * k)
# Meta raises while the kernel runs: what a stand-in kernel derived from the Meta function does.
_lib.op("meta_fails(Tensor x) -> Tensor", lambda x: x + 1, lambda x: (_ for _ in ()).throw(RuntimeError("meta broke")))


def context(fn_or_op, *args, ops=None, real_kernel: bool = True, opcheck_tests=(), backend=None, device="cpu", **kwargs) -> CheckContext:
    """A CheckContext on backend aot_eager and the CPU, as check_graph_entry makes it (nothing run yet)."""
    return CheckContext(
        fn_or_op,
        as_target(fn_or_op, ops),
        args,
        kwargs,
        backend or BACKENDS["aot_eager"],
        device,
        real_kernel=real_kernel,
        opcheck_tests=tuple(opcheck_tests),
    )
# Returns the input it writes (-> Tensor(a!)): Dynamo traces it, AOTAutograd refuses it (graph-entry.md).
_lib.op("returns_mutated_(Tensor(a!) x) -> Tensor(a!)", lambda x: x.add_(1), lambda x: x)
# Not bit-exact: each call adds fresh noise below 1e-3, so compiled and eager differ within a tolerance.
_lib.op("jitter(Tensor x) -> Tensor", lambda x: x + torch.rand_like(x) * 1e-3, lambda x: torch.empty_like(x))
