"""``check_graph_entry``: does a function or op enter ONE graph with ZERO breaks, and replay correctly?

The check is the pipeline of ``opkit.verify.stages``: small units in the order an op meets them
(registration, eager, Meta function, Dynamo, AOT functionalization, backend passes, capture, replay
and numerics, then opcheck), each reading one shared ``CheckContext`` and returning its problems.
Everything runs under ``torch.no_grad()``, compiled with ``fullgraph=True`` (``dynamic=False`` unless
a shape sweep is asked for).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Sequence

from opkit.verify import graphs, isolation, stages
from opkit.verify.backends import Backend, auto_fallback_note, resolve_backend
from opkit.verify.report import GraphEntryReport, Problem, Timings
from opkit.verify.stages.context import CheckContext, as_target, quiet_torch_logs
from opkit.verify.stages.inputs import to_device
from opkit.verify.stages.opcheck import OPCHECK_ALL

__all__ = ["OPCHECK_ALL", "check_graph_entry"]


def _dedupe(problems: Iterable[Problem]) -> tuple[Problem, ...]:
    seen, out = set(), []
    for p in problems:
        key = (p.stage, p.check, p.op)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return tuple(out)


def backend_notes(requested: str, chosen: Backend, fallback: str | None) -> list[str]:
    """What the report says about the backend ``requested`` resolved to: why ``auto`` ran aot_eager
    (``fallback``: ``auto_fallback_note()``), and what a backend that runs no AOTAutograd here leaves unchecked.
    A pure function of its arguments: the notes of the real NPU backend and of the fallback are tested off the NPU
    and where the emulation loads."""
    notes = [fallback] if requested == "auto" and chosen.name == "aot_eager" and fallback is not None else []
    if not chosen.sees_aot_graph:
        notes.append(
            f"backend {chosen.name} runs AOTAutograd out of reach: only Dynamo's graph was inspected"
            if chosen.name == "npugraph_ex"
            else f"backend {chosen.name} does not run AOTAutograd: functionalization was not checked"
        )
    return notes


def check_graph_entry(
    fn_or_op,
    args: Sequence = (),
    kwargs: dict | None = None,
    *,
    backend: str = "auto",
    device: str | None = None,
    ops: Iterable | None = None,
    fullgraph: bool = True,
    dynamic: bool = False,
    options: dict | None = None,
    real_kernel: bool = True,
    opcheck: bool | Sequence[str] = True,
    atol: float | None = None,
    rtol: float | None = None,
    notes: Sequence[str] = (),
    meta_samples: Sequence[tuple[tuple, dict]] = (),
    isolate: bool | None = None,
    timeout: float | None = None,
) -> GraphEntryReport:
    """Check that ``fn_or_op(*args, **kwargs)`` enters one ``torch.compile`` graph with zero breaks.

    ``fn_or_op`` is an op (``torch.ops.ns.name[.overload]`` or a ``custom_op``), an ``nn.Module`` or a
    function that calls ops. For a module or function the custom (non-ATen) ops it calls are the
    targets, unless ``ops`` names them. ``real_kernel=False`` says the kernel is a stand-in (derived
    from the Meta function): fake-vs-real and numerics then prove nothing; the report names them
    skipped. ``opcheck``: True runs every opcheck test, or name the tests.
    ``backend``: ``auto`` (npugraph_ex on an NPU; off the NPU npugraph_ex's own compiler emulated when a
    torch-npu wheel can be had, else aot_eager), ``npugraph_ex``, ``aot_eager``, ``inductor`` or ``eager``.
    ``dynamic=True`` sweeps shapes and reports recaptures. ``meta_samples``: more calls for the Meta
    function alone (e.g. with defaulted arguments passed).
    ``isolate=True`` runs the check in a forked child, so that code which exits, hangs past ``timeout`` seconds
    (default ``OPKIT_VERIFY_TIMEOUT``, else 120) or crashes the interpreter is a failed stage of this report
    (``opkit.verify.isolation``). Default: in-process (a ``SystemExit`` is still a failed stage), unless a
    ``timeout`` is given or ``OPKIT_VERIFY_ISOLATION=1``; ``opkit verify`` and ``assert_enters_graph`` isolate.
    """
    chosen = resolve_backend(backend)
    device = device or chosen.device
    header = isolation.ReportHeader(as_target(fn_or_op, ops).label, chosen.name, device, chosen.emulated, tuple(notes))
    check = functools.partial(
        _check, fn_or_op, args, kwargs, backend, chosen, device,
        ops=ops, fullgraph=fullgraph, dynamic=dynamic, options=options, real_kernel=real_kernel, opcheck=opcheck,
        atol=atol, rtol=rtol, notes=notes, meta_samples=meta_samples,
    )  # fmt: skip
    return isolation.run_check(check, header, isolate=isolate, timeout=timeout)


def _check(
    fn_or_op, args, kwargs, requested: str, chosen: Backend, device: str, *, ops, fullgraph, dynamic, options, real_kernel, opcheck,
    atol, rtol, notes, meta_samples,
) -> GraphEntryReport:  # fmt: skip
    import torch

    started = time.perf_counter()
    call_args, call_kwargs = to_device((tuple(args), dict(kwargs or {})), device)
    ctx = CheckContext(
        fn_or_op,
        as_target(fn_or_op, ops),
        call_args,
        call_kwargs,
        chosen,
        device,
        fullgraph=fullgraph,
        dynamic=dynamic,
        options=options,
        real_kernel=real_kernel,
        opcheck_tests=() if not opcheck else OPCHECK_ALL if opcheck is True else tuple(opcheck),
        atol=atol,
        rtol=rtol,
        meta_samples=tuple(meta_samples),
        notes=list(notes),
    )
    ctx.notes += backend_notes(requested, chosen, auto_fallback_note() if requested == "auto" else None)
    if chosen.emulated:
        from opkit.verify import npugraph_ex

        ctx.emulation = npugraph_ex.load()
        ctx.notes.append(ctx.emulation.note)
    with torch.no_grad(), quiet_torch_logs():
        ran = stages.run(ctx, on_start=isolation.note_stage)
    problems, warnings = stages.warnings_apart(ran, ctx.problems)

    compiled = ctx.compiled
    capture = ctx.capture
    breaks = len(ctx.graph_breaks) if ctx.graph_breaks else (max(ctx.graph_count - 1, 0) if compiled and compiled.error is None else 0)
    return GraphEntryReport(
        target=ctx.target.label,
        backend=chosen.name,
        device=device,
        graph_count=ctx.graph_count,
        graph_break_count=breaks,
        problems=_dedupe(problems),
        warnings=_dedupe(warnings),
        graph_breaks=tuple(ctx.graph_breaks),
        ops_in_graph=tuple(ctx.ops_in_graph),
        uncapturable_ops=tuple(ctx.uncapturable),
        comparisons=tuple(ctx.comparisons),
        meta_checks=tuple(ctx.meta_checks),
        opcheck=tuple(ctx.opcheck),
        timings=Timings(
            eager_s=ctx.eager.seconds if not ctx.undefined else None,
            first_call_s=compiled.first_call_s if compiled else None,
            backend_compile_s=capture.backend_compile_s if capture.dynamo_graphs else None,
            replay_s=compiled.replay_s if compiled else None,
            total_s=time.perf_counter() - started,
        ),
        notes=tuple(dict.fromkeys(ctx.notes)),
        graph_code=graphs.graph_code(capture.aot_graphs, capture.dynamo_graphs),
        passed_stages=stages.passed_stages(ran, problems),
        emulated=chosen.emulated,
        npugraph_ex=ctx.npugraph_ex,
        skipped=tuple(dict.fromkeys(ctx.skipped)),
    )
