"""Replay and numerics: each call's outputs and inputs after it (mutations count) equal eager on the
same inputs: the capture call, replays with fresh data, a mutated input refilled in place and one
passed as new tensors (or, with ``dynamic=True``, each shape of the sweep)."""

from __future__ import annotations

from collections.abc import Callable

from opkit.verify import diagnose
from opkit.verify.report import Comparison, Problem, SkippedCheck, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.calls import CompileRun
from opkit.verify.stages.inputs import clone_tree

def _identical(got, want) -> bool:
    """Same metadata and bit-identical values (what a replay of a deterministic kernel gives)."""
    import torch

    same_kind = (got.shape, got.dtype, got.device, got.layout) == (want.shape, want.dtype, want.device, want.layout)
    return same_kind and got.layout == torch.strided and torch.equal(got, want)


def compare_numerics(
    fn: Callable, compiled: CompileRun, input_names: list[str] | None, *, atol: float | None, rtol: float | None
) -> tuple[list[Comparison], list[Problem]]:
    """Each call's outputs and inputs after it (so mutations count) against eager on the same inputs."""
    import torch
    from torch.utils._pytree import keystr, tree_flatten_with_path, tree_leaves

    def named(tree, prefix: str, top_names: list[str] | None = None):
        leaves, _ = tree_flatten_with_path(tree)
        for path, leaf in leaves:
            key = keystr(path)
            if top_names is not None and key.startswith("[0]["):
                idx, _, rest = key[len("[0][") :].partition("]")
                if idx.isdigit() and int(idx) < len(top_names):
                    key = f"input {top_names[int(idx)]}{rest}"
            yield (f"{prefix}{key}", leaf)

    comparisons: list[Comparison] = []
    for call in compiled.calls:
        expected_inputs = clone_tree(call.before)
        expected_out = fn(*expected_inputs[0], **expected_inputs[1])
        # Named by eager's side; the compiled call's leaves in the same order.
        pairs = list(zip(named(expected_out, "output"), tree_leaves(call.out)))
        pairs += list(zip(named(expected_inputs, "", input_names), tree_leaves(call.after)))
        for (name, want), got in pairs:
            if not isinstance(want, torch.Tensor):
                ok = want == got
                comparisons.append(Comparison(name, call.label, bool(ok), None if ok else f"{got!r} != {want!r}"))
                continue
            if isinstance(got, torch.Tensor) and _identical(got, want):  # equal means close: skip assert_close's cost
                comparisons.append(Comparison(name, call.label, True))
                continue
            try:
                torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)
                comparisons.append(Comparison(name, call.label, True))
            except AssertionError as exc:
                comparisons.append(Comparison(name, call.label, False, " ".join(str(exc).split())))
    problems = [
        Problem(
            Stage.NUMERICS if c.call == compiled.calls[0].label else Stage.REPLAY,
            "compiled_vs_eager",
            f"{c.name} on the {c.call} call differs from eager: {c.detail}",
            "rerun with backend='aot_eager': if it differs there too, the Meta function or the schema's mutation "
            "annotations mislead the graph; if only npugraph_ex differs, a replay reuses something captured once "
            "(a Python scalar, an input address, state outside the graph)",
        )
        for c in comparisons
        if not c.ok
    ]
    return comparisons, problems[:3]  # the first few say it; the report lists every comparison



def compare_calls(ctx) -> tuple[list[Comparison], list[Problem]] | None:
    """Every call against eager; None when there is nothing to compare (the report then says why
    numerics were skipped). Read through ``ctx.compared``, computed once."""
    compiled = ctx.compiled
    result = None
    if compiled is None or not compiled.calls or ctx.undefined or not ctx.eager.ok:
        pass
    elif any(u.kind == "random" for u in ctx.uncapturable) or any(p.check == "random" for p in ctx.problems):
        ctx.skipped.append(SkippedCheck("numerics", "the graph draws random numbers"))
    elif not ctx.real_kernel:
        ctx.skipped.append(SkippedCheck("numerics", "the kernel is a stand-in derived from the Meta function (add reference.py)"))
    else:
        result = compare_numerics(ctx.target.fn, compiled, ctx.target.input_names, atol=ctx.atol, rtol=ctx.rtol)
        ctx.comparisons = result[0]
    return result


@stage_unit("replay", Stage.REPLAY)
def replay(ctx) -> list[Problem] | None:
    """Every call after the capture runs and equals eager on its own inputs."""
    compiled = ctx.compiled
    if compiled is None or not compiled.calls:
        return None
    problems: list[Problem] = []
    if compiled.error is not None:
        problems.append(diagnose.runtime_failure(compiled.error, backend=ctx.backend.name, sole_op=ctx.sole_op, call=compiled.error_call))
    result = ctx.compared
    if len(compiled.calls) < 2:
        return problems or None
    # Without a comparison (stand-in kernel, random op) the replays still ran: that much passed.
    return problems + ([p for p in result[1] if p.stage is Stage.REPLAY] if result is not None else [])
