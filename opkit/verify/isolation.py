"""Run one check in a child process, so that nothing the checked code does can end or fake the run.

A check executes the user's code (the Meta file, the kernels, ``--load`` files, ``--example``). That code
can call ``sys.exit`` or ``os._exit``, loop forever, or crash the interpreter (a segfault, a glibc abort):
run in-process, each of these ends ``opkit verify`` with no verdict, or with exit status 0 and nothing
checked. ``run(work, ...)`` forks a child that runs ``work()`` (which returns a ``GraphEntryReport``) and
sends back, as JSON lines on a pipe, the stage each unit starts and then the report as plain data; the
parent never unpickles anything the child sends. When the child dies (a signal), ends without a report
(``os._exit``, an exit status), raises ``SystemExit``, or outlives ``timeout`` seconds, the parent builds
a failed report itself, at the stage the child had reached, naming the signal, the status or the
timeout, with the child's Python stack where faulthandler could write it.

The channel is authenticated: each line carries an HMAC-SHA256 under a key drawn for that one check just
before the fork. The checked code runs in the child and could write to any descriptor it holds, but a
line it writes without the key (a forged report, or anything written to an inherited pipe) fails the
MAC, and the parent then fails the check as tampered, whatever report follows. The child's stdout is
its stderr (fd 1 is made a copy of fd 2), so what the checked code prints never mixes into opkit's
own output (``--format json`` stays JSON). The timeout does not depend on the parent being able to
act: a watchdog (``/bin/sh``, posix-spawned in its own session) kills the child's process group at
the deadline and sends the parent SIGCONT, so a SIGSTOP the checked code sends its parent ends in a
timeout report, not a hang. Code that reads the key out of its own process's memory can still forge a
report: verify runs the user's code, it is a test runner, not a sandbox (docs/security.md).

Fork, not spawn: the child inherits the warm interpreter (torch imported, Dynamo warmed, the npugraph_ex
emulation loaded, the user's op objects), so a check costs a fork more than in-process
(docs/verify-isolation.md gives the measurements). The child runs torch single-threaded: the parent's
OpenMP pool does not survive a fork (a parallel kernel in the child would hang).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from opkit.verify.report import GraphEntryReport, Problem, Stage

DEFAULT_TIMEOUT_S = 120.0  # docs/verify-isolation.md: about 16x the slowest check measured on a loaded 2-core machine
TIMEOUT_ENV = "OPKIT_VERIFY_TIMEOUT"
ISOLATION_ENV = "OPKIT_VERIFY_ISOLATION"  # "1": every check in a child, "0": none (unless asked for)
_GRACE_S = 0.5  # after asking a timed-out child for its stack, before killing it

_channel: int | None = None  # in a child: the pipe to the parent
_key: bytes = b""  # in a child: what its messages are authenticated with
_WATCHDOG_SLACK_S = 2.0  # the parent's own deadline comes first; the watchdog only acts when the parent cannot


@dataclass(frozen=True)
class ReportHeader:
    """What a report says of its check before any stage ran: the parent heads a failed report it builds with it."""

    target: str
    backend: str
    device: str
    emulated: bool = False
    notes: tuple[str, ...] = ()


def in_child() -> bool:
    return _channel is not None


def wanted(isolate: bool | None, *, timeout: float | None = None, default: bool = False) -> bool:
    """Whether a check runs in a child: ``isolate`` when given; else ``OPKIT_VERIFY_ISOLATION`` ("1" or "0")
    when set; else ``default`` (the CLI and the pytest helpers: True; library calls: False) or when a
    ``timeout`` is asked for, which only a child can enforce. Never without ``os.fork`` or inside a child."""
    if in_child() or not hasattr(os, "fork"):
        return False
    if isolate is not None:
        return isolate
    env = os.environ.get(ISOLATION_ENV, "")
    if env in ("0", "1"):
        return env == "1"
    return default or timeout is not None


def default_timeout() -> float:
    """``OPKIT_VERIFY_TIMEOUT`` seconds when set (a positive number), else ``DEFAULT_TIMEOUT_S``."""
    text = os.environ.get(TIMEOUT_ENV)
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV}={text!r} is not a number of seconds") from None
    if not value > 0:
        raise ValueError(f"{TIMEOUT_ENV}={text!r}: the timeout must be positive")
    return value


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode()


def _send(message: dict) -> None:
    if _channel is None:
        return
    payload = json.dumps(message).encode()
    data = _mac(_key, payload) + b" " + payload + b"\n"
    while data:
        data = data[os.write(_channel, data) :]


# ------------------------------------------------------------------------------------------------
# Failures the parent reports itself
# ------------------------------------------------------------------------------------------------


def failed(header: ReportHeader, stage: Stage, check: str, message: str, next_action: str, detail: str | None = None) -> GraphEntryReport:
    return GraphEntryReport.failed_before_capture(
        header.target, header.backend, header.device, (Problem(stage, check, message, next_action, None, detail),), emulated=header.emulated, notes=header.notes
    )


def exited(header: ReportHeader, stage: Stage, code) -> GraphEntryReport:
    """The checked code raised ``SystemExit(code)``: a failed stage, whatever the code."""
    return failed(
        header,
        stage,
        "exited",
        f"the checked code called sys.exit({code!r}) during the {stage.title} stage: nothing after it was checked",
        "remove the exit from the Meta file, kernel, --load file or --example: importing or calling them must return",
    )


def run_guarded(work: Callable[[], GraphEntryReport], header: ReportHeader) -> GraphEntryReport:
    """``work()`` in this process, a ``SystemExit`` from it reported as a failed stage."""
    global _stage
    outer, _stage = _stage, Stage.REGISTRATION
    try:
        return work()
    except SystemExit as exc:
        return exited(header, _stage, exc.code)
    finally:
        _stage = outer


_stage: Stage | None = None  # the stage the innermost guarded check has started


def note_stage(stage: Stage) -> None:
    """Called as each stage starts: in a child it goes to the parent; in-process it is remembered for a SystemExit."""
    global _stage
    _stage = stage
    _send({"stage": stage.value})


def run_check(
    work: Callable[[], GraphEntryReport],
    header: ReportHeader,
    *,
    isolate: bool | None = None,
    timeout: float | None = None,
    refusals: tuple[type[BaseException], ...] = (),
) -> GraphEntryReport:
    """``work()`` in a child when ``wanted(isolate, timeout=timeout)``, else in-process, guarded."""
    if not wanted(isolate, timeout=timeout):
        return run_guarded(work, header)
    if header.emulated:
        from opkit.verify import npugraph_ex

        npugraph_ex.load()  # once, in the parent: every child inherits it loaded
    return run(work, header, timeout=timeout, refusals=refusals)


# ------------------------------------------------------------------------------------------------
# The child and the parent
# ------------------------------------------------------------------------------------------------


def run(
    work: Callable[[], GraphEntryReport],
    header: ReportHeader,
    *,
    timeout: float | None = None,
    refusals: tuple[type[BaseException], ...] = (),
) -> GraphEntryReport:
    """``work()`` in a forked child; its report, or a failed report when the child ends without one.
    An exception of one of ``refusals`` in the child is raised here again: the same class, with its message."""
    timeout = default_timeout() if timeout is None else timeout
    key = secrets.token_bytes(32)
    pid, read_end, stacks = fork_child(lambda stacks: _child(work, header, refusals), key)
    watchdog = _watchdog(pid, timeout)
    try:
        return _parent(pid, read_end, key, stacks, header, timeout, refusals)
    finally:
        os.close(read_end)
        stacks.close()
        if watchdog is not None:
            with contextlib.suppress(OSError):
                watchdog.kill()
            watchdog.wait()


def _watchdog(pid: int, timeout: float) -> subprocess.Popen | None:
    """A process of its own that, past the deadline, kills the child's group and wakes the parent (SIGCONT):
    what the parent cannot do while it is stopped. Started with posix_spawn (no copy of this process)."""
    script = 'sleep "$1"; kill -KILL -- "-$2" 2>/dev/null; kill -KILL "$2" 2>/dev/null; kill -CONT "$3" 2>/dev/null'
    try:
        return subprocess.Popen(
            ["/bin/sh", "-c", script, "opkit-verify-watchdog", f"{timeout + _GRACE_S + _WATCHDOG_SLACK_S:.3f}", str(pid), str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
        )  # fmt: skip
    except OSError:
        return None  # no /bin/sh: the parent's own deadline still holds while it runs


def fork_child(body: Callable[[typing.IO[bytes]], None], key: bytes) -> tuple[int, int, typing.IO[bytes]]:
    """Fork a child that runs ``body(stacks)`` and leaves with ``os._exit`` (status 70 when it raises): never the parent's
    atexit handlers, pytest's finalizers, or a second report. The child has its own process group (a timeout
    kills what it started too), its channel to the parent set (``_send``, each message authenticated with
    ``key``), what the checked code prints sent to stderr (never into opkit's report on stdout), faulthandler
    writing its stack into ``stacks``, the file returned (at a crash, or on SIGUSR1) and torch single-threaded.
    Returns (pid, the pipe's read end, that file)."""
    global _channel, _key
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # else the child inherits the buffered text and writes it a second time
    read_end, write_end = os.pipe()
    stacks = tempfile.TemporaryFile(prefix="opkit-verify-stack-")
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: measured through its reports)
        os.close(read_end)
        status = 0
        try:
            os.setpgid(0, 0)
            _channel, _key = write_end, key
            with contextlib.suppress(OSError):
                sys.stdout.flush()
                os.dup2(2, 1)
            sys.stdout = sys.stderr
            import faulthandler

            faulthandler.enable(file=stacks)
            faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=False)
            if "torch" in sys.modules:
                sys.modules["torch"].set_num_threads(1)  # the parent's OpenMP pool is not usable after fork
            body(stacks)
        except BaseException:
            status = 70
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
    os.close(write_end)
    return pid, read_end, stacks


def _child(work, header: ReportHeader, refusals) -> None:  # pragma: no cover
    try:
        report = run_guarded(work, header)
        _send({"report": report.to_dict()})
    except refusals as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)  # click's errors
        _send({"refused": message, "type": next(c.__name__ for c in refusals if isinstance(exc, c))})
    except BaseException as exc:  # reported as data: the parent builds the failure from it
        import traceback

        _send({"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]})


def messages(channel: int, deadline: Callable[[], float], key: bytes) -> Iterator[dict | None]:
    """The child's messages (JSON lines) as they come, until it closes the pipe; None for a line whose MAC does
    not check out with ``key`` (not sent by opkit: forged); TimeoutError once the clock passes ``deadline()``
    (asked again after each message: a run over many ops moves it at each op)."""
    buffer = b""
    while True:
        left = deadline() - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([channel], [], [], left)
        if not ready:
            continue
        chunk = os.read(channel, 1 << 16)
        if not chunk:
            return
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield _authentic(line, key)


def _parent(pid: int, channel: int, key: bytes, stacks, header: ReportHeader, timeout: float, refusals) -> GraphEntryReport:
    deadline = time.monotonic() + timeout
    stage = Stage.REGISTRATION
    result: dict | None = None
    timed_out = finished = False
    forged = 0
    try:
        try:
            for message in messages(channel, lambda: deadline, key):
                if message is None:
                    forged += 1
                    continue
                if "stage" in message:
                    stage = _stage(message["stage"], stage)
                elif message:
                    result = message  # the report (or refusal, or error) is the child's last message
                    break
        except TimeoutError:
            timed_out = True
        finished = not timed_out
    finally:
        if not finished:  # timed out, or interrupted here (Ctrl-C): the child must not outlive the check
            _stop(pid, ask_for_stack=timed_out)
        status = _reap(pid)
    if result is None and time.monotonic() >= deadline:
        timed_out = True  # the watchdog killed it while this process was stopped
    if forged:
        return forged_report(header, stage, forged)
    if timed_out:
        return ended(header, stage, timeout=timeout, stack=_stack(stacks))
    if result is not None and "report" in result:
        try:
            return GraphEntryReport.from_dict(result["report"])
        except (KeyError, TypeError, ValueError) as exc:
            return failed(header, stage, "bad_report", f"the check's process sent a report opkit cannot read: {exc}", "report this as an opkit bug")
    if result is not None and "refused" in result:
        kind = next((c for c in refusals if c.__name__ == result.get("type")), refusals[0])
        raise kind(str(result["refused"]))
    if result is not None and "error" in result:
        return failed(
            header,
            stage,
            "internal_error",
            f"the check itself failed during the {stage.title} stage: {result['error']}",
            "report this as an opkit bug, with the detail",
            str(result.get("traceback", "")),
        )
    return ended(header, stage, status=status, stack=_stack(stacks))


def forged_report(header: ReportHeader, stage: Stage, forged: int) -> GraphEntryReport:
    """The failed report of a check whose channel carried ``forged`` lines opkit did not send."""
    return failed(
        header,
        stage,
        "forged_report",
        f"{forged} message(s) on the check's report channel did not come from opkit (written by the checked code, "
        "or to an inherited pipe): the verdict cannot be trusted, so the check fails",
        "remove the code that writes to file descriptors it did not open from the Meta file, kernel, --load file or --example",
    )


def ended(header: ReportHeader, stage: Stage, *, timeout: float | None = None, status: int = 0, stack: str | None = None, after: str = "") -> GraphEntryReport:
    """The failed report of a check whose process ended without a verdict: it outlived ``timeout`` seconds (when
    given), died of a signal (``status`` < 0) or exited with ``status``. ``after``: what became of the checks
    after it (a run over many ops)."""
    if timeout is not None:
        return failed(
            header,
            stage,
            "timeout",
            f"the check did not finish within {timeout:g} s (stopped during the {stage.title} stage){after}",
            "a Meta function, kernel or example that never returns is stopped here; if the check is only slow, "
            "raise the limit with --timeout SECONDS (or OPKIT_VERIFY_TIMEOUT)",
            stack,
        )
    if status < 0:
        return failed(
            header,
            stage,
            "crashed",
            f"the check's process died of {_signal_name(-status)} during the {stage.title} stage (a native crash in the checked code "
            f"or a library it calls): nothing after it was checked{after}",
            "reproduce with `python -X faulthandler` on the example; the detail is the Python stack at the crash",
            stack,
        )
    return failed(
        header,
        stage,
        "exited",
        f"the check's process ended with exit status {status} during the {stage.title} stage without a verdict "
        f"(os._exit or an exit from native code): nothing after it was checked{after}",
        "remove the exit from the Meta file, kernel, --load file or --example: importing or calling them must return",
    )


def _authentic(line: bytes, key: bytes) -> dict | None:
    """The message of a line the child's opkit code sent (its MAC checks out); None for any other line."""
    mac, _, payload = line.partition(b" ")
    if not hmac.compare_digest(mac, _mac(key, payload)):
        return None
    try:
        message = json.loads(payload)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _stage(value, current: Stage) -> Stage:
    try:
        return Stage(value)
    except ValueError:
        return current


def _stop(pid: int, *, ask_for_stack: bool) -> None:
    """Ask the child for its Python stack (faulthandler writes it), then kill its process group."""
    if ask_for_stack:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGUSR1)
            time.sleep(_GRACE_S)
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill()


def _reap(pid: int) -> int:
    """The child's exit code (negative: the signal that ended it)."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        return os.waitstatus_to_exitcode(status)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stack(stacks) -> str | None:
    with contextlib.suppress(OSError):
        stacks.seek(0)
        text = stacks.read().decode(errors="replace").strip()
        if text:
            return text[:4000]  # faulthandler writes the innermost frame first
    return None
