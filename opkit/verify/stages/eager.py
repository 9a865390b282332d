"""Eager: the model runs outside any graph; each custom-op call is recorded for the per-op checks, with
any input the kernel mutates although the schema does not declare it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from opkit.verify import diagnose
from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.inputs import clone_tree

# Namespaces whose ops are PyTorch's own: never "the custom op under test".
_BUILTIN_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "c10d", "profiler", "_ops"})


@dataclass
class OpCall:
    """One call of a custom op seen while the model ran eagerly: inputs before, outputs after."""

    op: Any  # torch._ops.OpOverload
    args: tuple
    kwargs: dict
    outputs: Any
    undeclared_mutations: list[str] = field(default_factory=list)



@dataclass
class EagerRun:
    calls: list[OpCall] = field(default_factory=list)
    seconds: float | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_eager(ctx) -> EagerRun:
    """Run the model once on clones, recording every custom-op call and any undeclared input mutation."""
    return run_recorded(ctx.target.fn, ctx.args, ctx.kwargs)


def run_recorded(fn, args, kwargs) -> EagerRun:
    """Call ``fn`` once on clones of its inputs, recording every custom-op call the dispatcher makes with
    real tensors, and any input a kernel mutates that its schema does not declare."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    calls: list[OpCall] = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.namespace in _BUILTIN_NAMESPACES:
                return func(*args, **kwargs)
            before_args, before_kwargs = clone_tree(args), clone_tree(kwargs)
            out = func(*args, **kwargs)
            call = OpCall(func, before_args, before_kwargs, clone_tree(out))
            schema_args = func._schema.arguments
            values = [args[i] if i < len(args) else kwargs.get(a.name) for i, a in enumerate(schema_args)]
            # Memory the schema declares written: an argument passed that very memory too (sin(out, out))
            # changes with it, and that is the declared write, not an undeclared one.
            written = {
                t.untyped_storage().data_ptr()
                for a, value in zip(schema_args, values)
                if a.alias_info is not None and a.alias_info.is_write
                for t in tree_flatten(value)[0]
                if isinstance(t, torch.Tensor)
            }
            for i, (arg, value) in enumerate(zip(schema_args, values)):
                before = before_args[i] if i < len(args) else before_kwargs.get(arg.name)
                if arg.alias_info is not None and arg.alias_info.is_write:
                    continue
                now, _ = tree_flatten(value)
                was, _ = tree_flatten(before)
                for a, b in zip(now, was):
                    if not isinstance(a, torch.Tensor) or a.untyped_storage().data_ptr() in written:
                        continue
                    if not torch.equal(a.nan_to_num(), b.nan_to_num()):
                        call.undeclared_mutations.append(arg.name)
                        break
            calls.append(call)
            return out

    args, kwargs = clone_tree((args, kwargs))
    start = time.perf_counter()
    try:
        with Recorder():
            fn(*args, **kwargs)
    except Exception as exc:
        return EagerRun(calls, None, exc)
    return EagerRun(calls, time.perf_counter() - start)


def check_mutations(calls: list[OpCall]) -> list[Problem]:
    problems = []
    seen = set()
    for call in calls:
        op_name = call.op._schema.name
        for arg in call.undeclared_mutations:
            if (op_name, arg) in seen:
                continue
            seen.add((op_name, arg))
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "undeclared_mutation",
                    f"the kernel of {op_name} mutates argument {arg!r}, which the schema does not declare mutable",
                    f"declare it 'Tensor(a!) {arg}' in the schema (custom_op: mutates_args=(\"{arg}\",)), or make the "
                    "kernel write a fresh tensor; an undeclared mutation is silently dropped or reordered in a graph",
                    op_name,
                )
            )
    return problems



@stage_unit("eager", Stage.EAGER)
def eager(ctx) -> list[Problem] | None:
    """The model runs eagerly on its device, and its kernels mutate only what the schema declares."""
    if ctx.undefined:
        return None
    run = ctx.eager
    problems = check_mutations(run.calls)
    exc = run.error
    if exc is None:
        if not ctx.op_names and not isinstance(ctx.fn_or_op, str):
            ctx.target.op_names = sorted({c.op._schema.name for c in run.calls})
        return problems
    # A stand-in kernel runs the Meta function: its failure is the Meta stage's to report.
    stand_in_of_broken_meta = not ctx.real_kernel and bool(ctx.meta_structure)
    missing_meta = any(p.check == "missing_meta" for p in ctx.problems) and "fake" in str(exc).lower()
    if not stand_in_of_broken_meta and not missing_meta:
        problems.append(
            Problem(
                Stage.EAGER,
                "eager_run",
                f"the model fails outside torch.compile: {type(exc).__name__}: {diagnose.first_line(str(exc))}",
                "fix eager first (graph-entry stage 1): the op needs a kernel for this device; off-NPU "
                "give the project a reference.py",
                ctx.sole_op,
                str(exc),
            )
        )
    return problems
