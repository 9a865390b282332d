"""Backend passes: the backend compiles the functionalized graph. For npugraph_ex, its own passes
(re-inplacing, auto_functionalized resolved back into the in-place op, no copy-back into a mutated
input) and none of them swallowed."""

from __future__ import annotations

from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit


@stage_unit("passes", Stage.BACKEND)
def passes(ctx) -> list[Problem] | None:
    """The backend compiles the graph; npugraph_ex's passes leave each target op in place and skip none."""
    if ctx.compiled is None or not ctx.capture.dynamo_graphs:
        return None
    failure = ctx.compile_failure
    problems = [failure] if failure is not None and failure.stage is Stage.BACKEND else []
    observation = ctx.capture.observation
    if observation is not None and observation.graphs:
        from opkit.verify.npugraph_ex import checks

        problems += checks.passes_problems(observation, ctx.op_names)
    return problems
