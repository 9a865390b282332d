"""Capture: what aclgraph cannot hold (host syncs, data-dependent sizes, random ops, host constants),
npugraph_ex's own capture (emulated off the NPU), its fallback to eager, and a first call that fails."""

from __future__ import annotations

from opkit.verify import diagnose, graphs
from opkit.verify.report import Problem, Stage, UncapturableOp
from opkit.verify.stages import stage_unit

_UNCAPTURABLE_ACTIONS = {
    "cpu_constant": (
        "a tensor constant made in the model lives on the host: on the NPU each replay copies it in; create it "
        "once on the device and pass it in, or register it as a buffer of the module"
    ),
    "random": (
        "npugraph_ex cannot capture random-number ops: generate the random tensor outside the compiled region "
        "and pass it in as an input"
    ),
    "data_dependent": "npugraph_ex needs static shapes: replace the op with a fixed-shape form (masking with torch.where)",
    "cpu_sync": "npugraph_ex cannot capture a device-to-host read: keep the value on the device as a tensor",
}


def _uncapturable_problem(u: UncapturableOp) -> Problem:
    return Problem(
        Stage.CAPTURE,
        u.kind,
        f"{u.op} is in the graph and npugraph_ex cannot capture it ({u.kind.replace('_', ' ')})",
        _UNCAPTURABLE_ACTIONS[u.kind],
        u.op,
    )



def _capture_violation_type() -> type:
    from opkit.verify.npugraph_ex.capture import CaptureViolation

    return CaptureViolation


@stage_unit("capture", Stage.CAPTURE)
def capture(ctx) -> list[Problem] | None:
    """Nothing in the graph needs the host, and the backend captures it (npugraph_ex: no fallback to eager)."""
    compiled = ctx.compiled
    if compiled is None or not ctx.capture.dynamo_graphs:
        return None
    cap = ctx.capture
    inspected = cap.aot_graphs or cap.dynamo_graphs
    npu = ctx.backend.name == "npugraph_ex"
    ctx.uncapturable = list(graphs.uncapturable_ops(inspected, device=ctx.device, npu=npu, dynamo_graphs=cap.dynamo_graphs))
    ctx.uncapturable += [UncapturableOp(n, "random") for n, s in ctx.signatures.items() if s.has_generator]
    problems = [_uncapturable_problem(u) for u in ctx.uncapturable]
    if cap.observation is not None and ctx.emulation is not None:
        from opkit.verify.npugraph_ex import checks

        ctx.npugraph_ex = checks.run_record(
            cap.observation,
            source=f"torch-npu {ctx.emulation.wheel.version} ({ctx.emulation.wheel.described})",
            calls=[c.label for c in compiled.calls] + ([f"{compiled.error_call} (failed)"] if compiled.error_call else []),
        )
        problems += checks.capture_problems(cap.observation)
        if ctx.npugraph_ex.captures == 0 and compiled.calls:
            ctx.notes.append(checks.no_capture_note(cap.observation, ctx.options))
    failed_on_first_call = compiled.error is not None and cap.compiled >= len(cap.dynamo_graphs) and not compiled.calls
    if failed_on_first_call and ctx.eager.ok and not isinstance(compiled.error, _capture_violation_type()):
        problems.append(diagnose.runtime_failure(compiled.error, backend=ctx.backend.name, sole_op=ctx.sole_op, call=compiled.error_call))
    if compiled.error is not None and not compiled.calls and not problems:
        return None  # it never got to capture: an earlier stage says why
    return problems
