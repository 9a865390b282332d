"""Many checks, one run: a worker process checks op after op; one op's crash, exit or hang takes only itself down.

``opkit verify --from FILE.cpp`` without ``--op`` and ``opkit verify DIR...`` check many ops. Each pays torch's
import and the torch-npu wheel's loading once: the parent does both, then forks one worker that runs the
checks one after the other, each in-process as a library call runs it (its registrations undone after it),
and sends back, as JSON lines on a pipe, when each check starts, each stage as it starts and each report
(plain data, as ``opkit.verify.isolation`` does for one check; the parent never unpickles what a child sends).
The parent keeps the timeout of the check in progress. When the worker dies (a signal, ``os._exit``) or its
check outlives the timeout, the parent kills it, builds that check's failed report itself (the stage it had
reached, the signal or the limit, faulthandler's Python stack) and forks a fresh worker for the checks left.

Why a worker and not a fork per check: a check in a fresh fork costs about 1.7x the same check in a warm
process (copy-on-write of the parent's pages and first-use costs, docs/verify-isolation.md); in the worker,
every check after the first costs what an in-process check costs (benchmarks/README.md). The price: checks
that follow one another in a worker share it, as tests of one pytest session do.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from opkit.verify import isolation
from opkit.verify.report import GraphEntryReport, Stage


@dataclass(frozen=True)
class Check:
    """One op's check: its header (for a report the parent builds) and the work that returns its report."""

    header: isolation.ReportHeader
    work: Callable[[], GraphEntryReport]


def run_checks(
    checks: Sequence[Check], *, timeout: float | None = None, refusals: tuple[type[BaseException], ...] = (), isolate: bool = True
) -> Iterator[GraphEntryReport]:
    """Each check's report, in order, as it comes. ``timeout``: seconds per check (default ``OPKIT_VERIFY_TIMEOUT``,
    else 120). An exception of one of ``refusals`` in a check (a usage error of that op alone) is its failed
    report. ``isolate=False`` (or no ``os.fork``) runs the checks here, one after the other."""
    timeout = isolation.default_timeout() if timeout is None else timeout
    if not checks:
        return
    if not isolate or not hasattr(os, "fork") or isolation.in_child():
        for check in checks:
            yield _guarded(check, refusals)
        return
    if any(c.header.emulated for c in checks):
        from opkit.verify import npugraph_ex

        npugraph_ex.load()  # once, in the parent: every worker inherits it loaded
    warm_up(checks[0].header.backend)
    start = 0
    while start < len(checks):
        for index, report in _worker(checks, start, timeout, refusals):
            yield report
            start = index + 1


_WARM_NAMESPACE = "opkit_warm_up"


def warm_up(backend: str) -> None:
    """Check an op of opkit's own here, in the parent, once: the first check in a process pays first-use costs
    (lazy imports of Dynamo, AOTAutograd, fake tensors, opcheck: seconds), and a worker forked after this one
    starts warm, the first and any started after a crash alike. No user code runs here."""
    import torch

    from opkit.verify.check import check_graph_entry
    from opkit.verify.project import _Registrations

    regs = _Registrations()
    regs.qualnames.append(f"{_WARM_NAMESPACE}::scaled")
    try:
        lib = torch.library.Library(_WARM_NAMESPACE, "FRAGMENT")
        regs.libraries.append(lib)
        lib.define("scaled(Tensor x, float alpha) -> Tensor")
        lib.impl("scaled", lambda x, alpha: x * alpha, "CPU")
        lib.impl("scaled", lambda x, alpha: torch.empty_like(x), "Meta")
        with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
            check_graph_entry(torch.ops.opkit_warm_up.scaled.default, (torch.randn(4, 4), 0.5), backend=backend, isolate=False)
    except Exception:  # a warm-up that fails costs the checks time, never a verdict
        pass
    finally:
        regs.undo()


def _guarded(check: Check, refusals) -> GraphEntryReport:
    try:
        return isolation.run_guarded(check.work, check.header)
    except refusals as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return _refused(check.header, message)


def _refused(header: isolation.ReportHeader, message: str) -> GraphEntryReport:
    return isolation.failed(header, Stage.REGISTRATION, "unusable", message, "fix the input the message names; run this op alone to see more")


def _worker(checks: Sequence[Check], start: int, timeout: float, refusals) -> Iterator[tuple[int, GraphEntryReport]]:
    """Fork a worker for ``checks[start:]``; yield (index, report) until it ends, the last a failure it built
    itself when the worker died or hung."""
    key = secrets.token_bytes(32)
    pid, read_end, stacks = isolation.fork_child(lambda stacks: _child(checks, start, stacks, refusals), key)
    current, stage = start, Stage.REGISTRATION
    deadline = time.monotonic() + timeout
    finished = timed_out = running = progressed = False
    forged = 0
    try:
        try:
            for message in isolation.messages(read_end, lambda: deadline, key):
                if message is None:  # not sent by opkit: the op being checked wrote to the channel
                    forged += 1
                elif "start" in message:
                    current, stage, running, forged = int(message["start"]), Stage.REGISTRATION, True, 0
                    deadline = time.monotonic() + timeout
                elif "stage" in message:
                    stage = isolation._stage(message["stage"], stage)
                elif "done" in message:
                    yield current, (isolation.forged_report(checks[current].header, stage, forged) if forged else _report_of(checks[current].header, message, stage))
                    current, running, progressed = current + 1, False, True
                    deadline = time.monotonic() + timeout
                    if current == len(checks):
                        finished = True
                        break
        except TimeoutError:
            timed_out = True
    finally:
        if not finished:
            isolation._stop(pid, ask_for_stack=timed_out)
        status = isolation._reap(pid)
        os.close(read_end)
    try:
        if finished or current >= len(checks) or (progressed and not running):
            return  # done, or the worker ended between two checks: the next worker goes on
        after = "; the other ops were checked in a new process"
        stack = isolation._stack(stacks)
        if timed_out:
            yield current, isolation.ended(checks[current].header, stage, timeout=timeout, stack=stack, after=after)
        else:
            yield current, isolation.ended(checks[current].header, stage, status=status, stack=stack, after=after)
    finally:
        stacks.close()


def _report_of(header: isolation.ReportHeader, message: dict, stage: Stage) -> GraphEntryReport:
    if "report" in message:
        try:
            return GraphEntryReport.from_dict(message["report"])
        except (KeyError, TypeError, ValueError) as exc:
            return isolation.failed(header, stage, "bad_report", f"the check's process sent a report opkit cannot read: {exc}", "report this as an opkit bug")
    if "refused" in message:
        return _refused(header, str(message["refused"]))
    return isolation.failed(
        header, stage, "internal_error", f"the check itself failed during the {stage.title} stage: {message.get('error')}",
        "report this as an opkit bug, with the detail", str(message.get("traceback", "")),
    )  # fmt: skip


def _child(checks: Sequence[Check], start: int, stacks, refusals) -> None:  # pragma: no cover
    """The worker (``isolation.fork_child`` set it up): each check from ``start`` on, in-process, one after the other."""
    for index in range(start, len(checks)):
        stacks.seek(0)
        stacks.truncate()  # the stack of this check only
        isolation._send({"start": index})
        try:
            report = isolation.run_guarded(checks[index].work, checks[index].header)
            isolation._send({"done": index, "report": report.to_dict()})
        except refusals as exc:
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            isolation._send({"done": index, "refused": message})
        except Exception as exc:  # reported as data: the parent builds the failure from it
            import traceback

            isolation._send({"done": index, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]})
