"""Numerics: the capture call's outputs and inputs after it equal eager's on the same inputs."""

from __future__ import annotations

from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit


@stage_unit("numerics", Stage.NUMERICS)
def numerics(ctx) -> list[Problem] | None:
    """The first (capture) call computes what eager computes, mutated inputs included."""
    result = ctx.compared
    if result is None:
        return None
    return [p for p in result[1] if p.stage is Stage.NUMERICS]
