"""Verification as a pipeline of small stage units, in the order an op meets them.

A unit is one function over the shared ``CheckContext`` that returns the problems it found, or None
when it could not run (nothing to check yet); its docstring says what it checks, as lint's rules do.
Units register by decorator; ``UNIT_MODULES`` fixes their order: registration, eager, Meta function,
Dynamo, AOT functionalization, backend passes (npugraph_ex's), capture, replay and numerics, and
opcheck last (most of its failures are explained by a more specific unit before it). A stage passes
when its unit ran and no problem is filed under it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

from opkit.verify.report import Problem, Stage

UNIT_MODULES = ("registration", "eager", "meta", "dynamo", "aot", "passes", "capture", "replay", "numerics", "opcheck")


@dataclass(frozen=True)
class StageUnit:
    name: str  # its module in UNIT_MODULES
    stage: Stage  # where its problems are filed unless they say otherwise
    summary: str
    check: Callable  # (CheckContext) -> list[Problem] | None


UNITS: list[StageUnit] = []


def stage_unit(name: str, stage: Stage) -> Callable:
    """Register the decorated ``check(ctx) -> list[Problem] | None`` as a unit of ``stage``."""

    def register(fn: Callable) -> Callable:
        UNITS.append(StageUnit(name, stage, inspect.cleandoc(fn.__doc__ or "").split("\n")[0], fn))
        return fn

    return register


def units() -> list[StageUnit]:
    """Every unit, in pipeline order (importing the unit modules registers them)."""
    for module in UNIT_MODULES:
        importlib.import_module(f"opkit.verify.stages.{module}")
    return sorted(UNITS, key=lambda unit: UNIT_MODULES.index(unit.name))


def run(ctx, on_start: Callable[[Stage], None] = lambda stage: None) -> list[Stage]:
    """Run every unit on ``ctx``; problems accumulate in ``ctx.problems``. Returns the stages that ran.
    ``on_start(stage)`` is told as each unit starts (a check in a child process reports where it died)."""
    ran: list[Stage] = []
    for unit in units():
        on_start(unit.stage)
        found = unit.check(ctx)
        if found is None:
            continue
        ran.append(unit.stage)
        ctx.problems.extend(found)
    return ran


# Problems that are performance notes once the graph is shown to work: npugraph_ex skipping a pass
# (it logs "Skipped fx_pass ..." and runs the graph without that optimisation, on the NPU too).
# So is the copy-back npugraph_ex's decomposition of auto_functionalized (v1) makes for a Tensor[] argument.
NOTES_WHEN_IT_RUNS = frozenset({"skipped_pass", "v1_list_copy_back"})
_IT_RUNS = (Stage.CAPTURE, Stage.REPLAY, Stage.NUMERICS)


def warnings_apart(ran: list[Stage], problems: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings): a skipped npugraph_ex pass (or a v1 list copy-back) is a warning, not a failed
    stage, when capture, replay and numerics ran and hold; while any of them fails it stays a problem (it
    may be why)."""
    holds = Stage.CAPTURE in ran and Stage.NUMERICS in ran and not any(p.stage in _IT_RUNS for p in problems)
    if not holds:
        return list(problems), []
    return [p for p in problems if p.check not in NOTES_WHEN_IT_RUNS], [p for p in problems if p.check in NOTES_WHEN_IT_RUNS]


def passed_stages(ran: list[Stage], problems: list[Problem]) -> tuple[Stage, ...]:
    """The stages that ran without a problem. Without a schema or a Meta/fake function nothing from the Meta
    stage on checked the op (Dynamo broke the graph around it): none of them passed."""
    failed = {p.stage for p in problems}
    unregistered = any(p.stage is Stage.REGISTRATION and p.check in ("missing_meta", "undefined_op") for p in problems)
    order = list(Stage)
    return tuple(s for s in Stage if s in ran and s not in failed and not (unregistered and order.index(s) >= order.index(Stage.META)))
