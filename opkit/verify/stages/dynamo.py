"""Dynamo: ``fullgraph=True`` traces the model into ONE graph with ZERO breaks, each target op in it."""

from __future__ import annotations

from opkit.verify import diagnose, graphs
from opkit.verify.report import GraphBreak, Problem, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.context import clone_tree, fresh_entry

def explain_breaks(fn, args, kwargs) -> tuple[int, list[GraphBreak]] | None:
    """All breaks, not only the first that fullgraph=True stops at, as torch._dynamo.explain sees them."""
    import torch._dynamo

    try:
        explained = torch._dynamo.explain(fresh_entry(fn))(*clone_tree(args), **clone_tree(kwargs))
    except Exception:
        return None
    return explained.graph_count, [GraphBreak(b.reason.strip(), _located(b.user_stack)) for b in explained.break_reasons]


def _located(stack) -> str | None:
    """``file:line in function`` of a break's innermost frame (its ``user_stack``); None without one."""
    return f"{stack[-1].filename}:{stack[-1].lineno} in {stack[-1].name}" if stack else None



@stage_unit("dynamo", Stage.DYNAMO)
def dynamo(ctx) -> list[Problem] | None:
    """One graph, zero breaks (a break in the user's own code is located there), every target op in it."""
    compiled = ctx.compiled
    if compiled is None:
        return None
    capture = compiled.capture
    ctx.graph_count = len(capture.dynamo_graphs)
    problems: list[Problem] = []
    if compiled.error is not None and not capture.dynamo_graphs:
        params = {n: ", ".join(a.name for a in s.arguments) for n, s in ctx.signatures.items()}
        problem, brk = diagnose.dynamo_failure(compiled.error, sole_op=ctx.sole_op, schema_params=params, user_code=ctx.overload is None)
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
