"""Dynamo: ``fullgraph=True`` traces the model into ONE graph with ZERO breaks, each target op in it."""

from __future__ import annotations

from opkit.verify import diagnose, graphs
from opkit.verify.report import GraphBreak, Problem, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.inputs import clone_tree, fresh_entry

def explain_breaks(fn, args, kwargs) -> tuple[int, list[GraphBreak]] | None:
    """All breaks, not only the first that fullgraph=True stops at, as torch._dynamo.explain sees them."""
    import torch._dynamo

    try:
        explained = torch._dynamo.explain(fresh_entry(fn))(*clone_tree(args), **clone_tree(kwargs))
    except Exception:
        return None
    return explained.graph_count, [GraphBreak(b.reason.strip(), _located(b.user_stack)) for b in explained.break_reasons]


def _located(stack) -> str | None:
    """``file:line in function`` of a break's innermost frame of the user's (its ``user_stack``, opkit's own
    harness frames skipped); None without one."""
    return diagnose.innermost_user_frame([(f.filename, f.lineno, f.name) for f in stack or ()])[0]



def recompile_note(recompiles: list[tuple[str, int]]) -> str:
    """What a report says of the graphs Dynamo compiled during a shape sweep after the model's first call:
    recompiles opkit's own sweep shapes caused, counted neither as the model's graphs nor as breaks."""
    calls = ", ".join(f"{label} ({n} graph{'s' if n > 1 else ''})" for label, n in recompiles)
    return (
        f"Dynamo recompiled the model for opkit's own sweep shapes: {calls}. The sweep grows dim 0 of every "
        "input, which breaks what Dynamo specialised on the first shape (equal sizes duck-sized to one symbol, "
        "a size of 0 or 1, a size a shape formula reaches 1 at); these graphs are not counted as the model's "
        "graphs or breaks"
    )


def recompile_problem(recompiles: list[tuple[str, int]]) -> Problem:
    """A static check whose later calls, with the first call's shapes and dtypes, made Dynamo compile again:
    the model's own guards change between calls, and npugraph_ex captures a new graph each time."""
    calls = ", ".join(label for label, _ in recompiles)
    return Problem(
        Stage.DYNAMO,
        "recompile",
        f"Dynamo compiled the model again on the {calls} call(s), with the first call's shapes and dtypes: something "
        "it guards on changes from call to call (a Python value the model reads, an object it creates per call)",
        "run with TORCH_LOGS=recompiles to see the guard that failed; keep that value out of the compiled function "
        "or pass it as a tensor",
    )


@stage_unit("dynamo", Stage.DYNAMO)
def dynamo(ctx) -> list[Problem] | None:
    """One graph, zero breaks (a break in the user's own code is located there), every target op in it."""
    compiled = ctx.compiled
    if compiled is None:
        return None
    capture = compiled.capture
    # A static check repeats the first call's shapes, so a recompile there is the model's own (a guard on
    # changing Python state) and counts; in a shape sweep the new shapes are opkit's, and so are the recompiles.
    ctx.graph_count = compiled.user_graphs if ctx.dynamic else len(capture.dynamo_graphs)
    if ctx.dynamic and compiled.recompiles:
        ctx.notes.append(recompile_note(compiled.recompiles))
    problems: list[Problem] = [] if ctx.dynamic or not compiled.recompiles else [recompile_problem(compiled.recompiles)]
    if compiled.error is not None and not capture.dynamo_graphs:
        params = {n: ", ".join(a.name for a in s.arguments) for n, s in ctx.signatures.items()}
        returns = {n: diagnose.returns_text(s) for n, s in ctx.signatures.items()}
        problem, brk = diagnose.dynamo_failure(compiled.error, sole_op=ctx.sole_op, schema_params=params, user_code=ctx.overload is None, schema_returns=returns)
        problems.append(problem)
        explained = explain_breaks(ctx.target.fn, ctx.args, ctx.kwargs)
        ctx.graph_count, ctx.graph_breaks = (explained[0], explained[1]) if explained else (0, [])
        if not ctx.graph_breaks:
            ctx.graph_breaks = [brk]
        return problems
    if compiled.error is None and ctx.graph_count > 1 and not ctx.fullgraph:
        explained = explain_breaks(ctx.target.fn, ctx.args, ctx.kwargs)
        ctx.graph_breaks = explained[1] if explained else []
    if capture.dynamo_graphs:
        ctx.ops_in_graph = graphs.find_ops(ctx.op_names, capture.aot_graphs, capture.dynamo_graphs)
    ctx.notes += [
        f"{o.op} has its own Functionalize kernel: the functionalized graph holds what that kernel calls (its "
        "functional twin), so the op's presence was read from Dynamo's graph"
        for o in ctx.ops_in_graph
        if o.form == graphs.FUNCTIONALIZE_KERNEL_FORM
    ]
    for o in ctx.ops_in_graph:
        if not o.found and capture.compiled:
            dropped = _dropped_call(ctx, o.op)
            if dropped is not None:
                problems.append(dropped)
                continue
            problems.append(
                Problem(
                    Stage.DYNAMO,
                    "op_not_in_graph",
                    f"{o.op} ran eagerly but is not in the captured graph",
                    "call it as torch.ops.<ns>.<name>(...) inside the compiled function; a wrapper Dynamo "
                    "skips (torch._dynamo.disable, allow_in_graph misuse) keeps it out",
                    o.op,
                )
            )
    return problems


def _dropped_call(ctx, op_name: str) -> Problem | None:
    """An op that ran eagerly and is missing from the graph because the compiler dropped it as dead code
    (``is_impure`` false): what its dropped call did, from the eager run and the kernel-effects model."""
    from opkit.verify import kernel_effects

    calls = [c for c in ctx.eager.calls if c.op._schema.name == op_name]
    if not calls or kernel_effects.is_impure(calls[0].op):
        return None
    undeclared = list(dict.fromkeys(a for c in calls for a in c.undeclared_mutations))
    return kernel_effects.dropped_call(calls[0].op, undeclared, kernel_effects.effects_for(calls[0].op))
