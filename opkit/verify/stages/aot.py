"""AOT functionalization, and the backend's compile of the graph it produces."""

from __future__ import annotations

from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit


@stage_unit("aot", Stage.AOT_FUNCTIONALIZATION)
def aot(ctx) -> list[Problem] | None:
    """AOTAutograd functionalizes the graph: mutations become auto_functionalized, no return aliases an input."""
    if ctx.compiled is None or not ctx.capture.dynamo_graphs or not ctx.backend.sees_aot_graph:
        return None
    failure = ctx.compile_failure
    if failure is not None and failure.stage is not Stage.AOT_FUNCTIONALIZATION and not ctx.reached_aot_graph:
        return None  # the backend's own code failed before AOTAutograd finished: AOT was not checked
    return [failure] if failure is not None and failure.stage is Stage.AOT_FUNCTIONALIZATION else []
