"""The Meta/fake function: alone under FakeTensorMode on every sample call (defaults omitted and passed),
then against the real kernel's outputs (what opcheck's test_faketensor does)."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify import diagnose, graphs
from opkit.verify.report import MetaCheck, Problem, SkippedCheck, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.eager import OpCall, run_recorded

def _metadata(t) -> tuple | None:
    """(shape, dtype, stride) of a real or fake tensor, symbolic sizes at their hints; None when a size
    depends on data (no hint: nothing to compare)."""
    import torch

    def concrete(sizes):
        values = [s.node.hint if isinstance(s, torch.SymInt) else s for s in sizes]
        return None if any(v is None for v in values) else tuple(int(v) for v in values)

    shape, stride = concrete(t.shape), concrete(t.stride())
    return None if shape is None or stride is None else (shape, t.dtype, stride)


def _describe(meta: tuple) -> str:
    shape, dtype, stride = meta
    return f"shape={shape} dtype={dtype} stride={stride}"


def check_fake_vs_real(calls: list[OpCall], meta_outputs: dict | None = None) -> tuple[list[MetaCheck], list[Problem]]:
    """The Meta function's output metadata against the kernel's, call by call (what opcheck's test_faketensor
    does). ``meta_outputs``: op name -> what its Meta function already returned on that very call (the
    structure check's first sample), so it is not run a second time."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._pytree import tree_flatten, tree_map_only

    checks: list[MetaCheck] = []
    problems: list[Problem] = []
    for call in first_call_per_op(calls):
        op_name = call.op._schema.name
        if op_name in (meta_outputs or {}):
            fake_out = meta_outputs[op_name]
        else:
            mode = FakeTensorMode()
            fake_args, fake_kwargs = tree_map_only(torch.Tensor, mode.from_tensor, (call.args, call.kwargs))
            try:
                with mode:
                    fake_out = call.op(*fake_args, **fake_kwargs)
            except Exception as exc:  # reported by the Dynamo stage with its own diagnosis
                del exc
                continue
        fakes, _ = tree_flatten(fake_out)
        reals, _ = tree_flatten(call.outputs)
        fake_meta = [_metadata(f) if isinstance(f, torch.Tensor) else f for f in fakes]
        if any(isinstance(f, torch.Tensor) and m is None for f, m in zip(fakes, fake_meta)):
            continue  # a data-dependent size: the Meta function cannot know it
        for i, (f, m, r) in enumerate(zip(fakes, fake_meta, reals)):
            if not isinstance(r, torch.Tensor):
                continue
            real = _metadata(r)
            ok = isinstance(f, torch.Tensor) and m == real
            fake_text = _describe(m) if isinstance(f, torch.Tensor) else repr(f)
            checks.append(MetaCheck(op_name, f"output[{i}]", fake_text, _describe(real), ok))
            if not ok:
                problems.append(
                    Problem(
                        Stage.META,
                        "fake_vs_real",
                        f"the Meta function of {op_name} disagrees with its kernel on output[{i}]: "
                        f"Meta gives {fake_text}, the kernel gives {_describe(real)}",
                        f"fix {op_name.split('::')[-1]}_meta to infer the kernel's output shape, dtype and strides; "
                        "a wrong Meta still compiles, and the graph then plans memory for the wrong tensor",
                        op_name,
                    )
                )
        if len(fakes) != len(reals):
            problems.append(
                Problem(
                    Stage.META,
                    "fake_vs_real",
                    f"the Meta function of {op_name} returns {len(fakes)} values, the kernel {len(reals)}",
                    "return exactly what the schema's returns declare",
                    op_name,
                )
            )
    return checks, problems


def check_meta_structure(op, samples: Sequence[tuple[tuple, dict]], outputs: list | None = None) -> list[Problem]:
    """The Meta/fake function alone, under FakeTensorMode, on each sample call (defaults omitted and
    passed): it accepts the call, returns what the schema's returns declare, and returns no input
    (or a view of one) unless the schema says the return aliases it. ``outputs`` collects what it
    returned on each sample (None where it failed)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._pytree import tree_leaves, tree_map_only

    schema = op._schema
    name = schema.name
    returns = declared_returns(schema)
    problems: list[Problem] = []
    for args, kwargs in samples:
        mode = FakeTensorMode(shape_env=ShapeEnv())  # a shape env lets data-dependent sizes be unbacked SymInts
        fake_args, fake_kwargs = tree_map_only(torch.Tensor, mode.from_tensor, (args, kwargs))
        if outputs is not None:
            outputs.append(None)
        try:
            with mode:
                out = op(*fake_args, **fake_kwargs)
        except Exception as exc:
            passed = sorted(kwargs) + [a.name for a in schema.arguments[: len(args)]]
            params = ", ".join(a.name for a in schema.arguments)
            what, action = diagnose.meta_call_hint(exc, diagnose.meta_name(name), params, diagnose.returns_text(schema))
            problems.append(
                Problem(Stage.META, "meta_call", f"the Meta function of {name} fails when called with ({', '.join(passed)}): {what}", action, name, str(exc))
            )
            continue
        if outputs is not None:
            outputs[-1] = out
        values = () if out is None else (out if isinstance(out, tuple) else (out,))
        if len(values) != len(returns):
            problems.append(
                Problem(
                    Stage.META,
                    "meta_returns",
                    f"the Meta function of {name} returns {len(values)} value(s), the schema declares {len(returns)} "
                    f"({str(schema).rpartition(' -> ')[2]})",
                    "return exactly the schema's returns: None for '-> ()', one tensor for '-> Tensor', a tuple for several",
                    name,
                )
            )
            continue
        inputs = [t for t in tree_leaves((fake_args, fake_kwargs)) if isinstance(t, torch.Tensor)]
        for i, (value, ret) in enumerate(zip(values, returns)):
            if ret.alias_info is not None:
                continue
            for t in tree_leaves(value):
                if isinstance(t, torch.Tensor) and any(torch._C._is_alias_of(t, x) for x in inputs):
                    problems.append(
                        Problem(
                            Stage.META,
                            "meta_alias",
                            f"the Meta function of {name} returns an input (or a view of one) as output {i}, but the "
                            "schema's return is a fresh tensor",
                            "allocate the output (torch.empty_like(x), x.new_empty(shape)); only a return annotated "
                            "Tensor(a) may alias its input",
                            name,
                        )
                    )
                    break
    return problems


def declared_returns(schema) -> list:
    """The values a schema's returns declare. torch parses ``-> None`` as ONE return of type NoneType (the
    in-place ops of TorchAir and npugraph_ex are declared so); a function for it returns None, as for
    ``-> ()``: zero values."""
    import torch

    returns = list(schema.returns)
    return [] if len(returns) == 1 and isinstance(returns[0].type, torch._C.NoneType) else returns


def functional_twin_calls(ctx) -> list[OpCall]:
    """The custom ops a target op's own Functionalize kernel calls instead of it (TorchAir's multi-inplace
    ops call a functional twin), recorded with real tensors by running the model under functionalization.
    Only those ops reach the graph, so the graph's shapes are their Meta functions' (npugraph_ex's passes
    drop views that a wrong twin Meta makes look like no-ops). Empty when no target op has such a kernel."""
    import torch

    if not any(graphs.has_functionalize_kernel(name) for name in ctx.op_names):
        return []
    run = run_recorded(torch.func.functionalize(ctx.target.fn), ctx.args, ctx.kwargs)
    return [c for c in run.calls if c.op._schema.name not in ctx.op_names] if run.ok else []


def first_call_per_op(calls: list[OpCall]) -> list[OpCall]:
    """One recorded call per op: checking an op's metadata once is enough."""
    first: dict[str, OpCall] = {}
    for call in calls:
        first.setdefault(call.op._schema.name, call)
    return list(first.values())



@stage_unit("meta", Stage.META)
def meta(ctx) -> list[Problem] | None:
    """The Meta function accepts every sample call, returns the schema's structure without aliasing
    inputs, and agrees with the kernel on shape, dtype and strides."""
    problems = list(ctx.meta_structure)
    calls = ctx.eager.calls if not ctx.undefined else []
    if ctx.overload is None:
        for call in first_call_per_op(calls):
            problems += check_meta_structure(call.op, [(call.args, call.kwargs)])
    if ctx.real_kernel:
        # The structure check's first sample is the checked call itself: its Meta outputs serve here too.
        first = ctx.meta_outputs[0] if ctx.overload is not None and ctx.meta_outputs else None
        ctx.meta_checks, found = check_fake_vs_real(calls, {ctx.sole_op: first} if first is not None else None)
        problems += found
        twins = functional_twin_calls(ctx) if calls else []
        twin_checks, found = check_fake_vs_real(twins)
        ctx.meta_checks += twin_checks
        problems += found
        ctx.notes += [
            f"{name} is what a target op's own Functionalize kernel calls in the graph: its Meta function was "
            "checked against its kernel too"
            for name in dict.fromkeys(c.op._schema.name for c in twins)
        ]
    else:
        ctx.skipped.append(SkippedCheck("fake vs real", "a stand-in kernel agrees with the Meta function by construction"))
    if not calls and ctx.overload is None:
        return None
    return problems
