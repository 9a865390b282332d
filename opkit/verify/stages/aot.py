"""AOT functionalization, and the backend's compile of the graph it produces."""

from __future__ import annotations

from opkit.verify import diagnose, graphs
from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit


def compile_failure(ctx) -> Problem | None:
    """The failure after Dynamo produced its graphs, diagnosed once for the units that file it."""
    compiled = ctx.compiled
    if compiled is None or compiled.error is None:
        return None
    capture = compiled.capture
    if not capture.dynamo_graphs or capture.compiled >= len(capture.dynamo_graphs):
        return None
    return _diagnosed(ctx)


def _diagnosed(ctx) -> Problem:
    cached = getattr(ctx, "_compile_failure", None)
    if cached is None:
        capture = ctx.compiled.capture
        cached = diagnose.compile_failure(
            ctx.compiled.error,
            backend=ctx.backend.name,
            reached_aot_graph=len(capture.aot_graphs) >= len(capture.dynamo_graphs),
            sees_aot_graph=ctx.backend.sees_aot_graph,
            sole_op=ctx.sole_op,
            data_dependent=graphs.data_dependent_ops(capture.aot_graphs),
        )
        ctx._compile_failure = cached
    return cached


@stage_unit("aot", Stage.AOT_FUNCTIONALIZATION)
def aot(ctx) -> list[Problem] | None:
    """AOTAutograd functionalizes the graph: mutations become auto_functionalized, no return aliases an input."""
    if ctx.compiled is None or not ctx.capture.dynamo_graphs or not ctx.backend.sees_aot_graph:
        return None
    failure = compile_failure(ctx)
    return [failure] if failure is not None and failure.stage is Stage.AOT_FUNCTIONALIZATION else []
