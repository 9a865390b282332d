"""The graph-entry verdict: typed, immutable, printable, and JSON-able. Imports no torch.

A report answers one question per op: did ``torch.compile(backend=..., fullgraph=True, dynamic=False)``
capture it in ONE graph with ZERO breaks, functionalized, with a Meta function that agrees with the
kernel, replaying to the eager result? JSON keys use Dynamo's own names (``graph_count``,
``graph_break_count``) so that users can line them up with ``torch._dynamo.explain``.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass

from opkit.escaping import github_escape, one_line


class Stage(str, enum.Enum):
    """Where, in the order an op meets them, a check failed (graph-entry.md, "The stages an op must pass")."""

    REGISTRATION = "registration"  # schema defined, a Meta/fake function registered, schema and kernel agree
    EAGER = "eager"  # the op runs on its device outside any graph
    META = "meta"  # the Meta/fake function: structure and aliasing as the schema says, metadata as the kernel's
    DYNAMO = "dynamo"  # fullgraph tracing: one graph, zero breaks
    AOT_FUNCTIONALIZATION = "aot_functionalization"  # AOTAutograd turns mutations into auto_functionalized
    BACKEND = "backend"  # the backend's compile: npugraph_ex's passes (re-inplacing, ...) and codegen
    CAPTURE = "capture"  # aclgraph capture: no host sync, no data-dependent size, no random op, no fallback
    REPLAY = "replay"  # replays with fresh data, a mutated input at the same and at a new address
    NUMERICS = "numerics"  # compiled outputs and mutated inputs equal eager ones

    @property
    def title(self) -> str:
        return {
            Stage.REGISTRATION: "registration",
            Stage.EAGER: "eager",
            Stage.META: "Meta function",
            Stage.DYNAMO: "Dynamo",
            Stage.AOT_FUNCTIONALIZATION: "AOT functionalization",
            Stage.BACKEND: "backend passes",
            Stage.CAPTURE: "capture",
            Stage.REPLAY: "replay",
            Stage.NUMERICS: "numerics",
        }[self]


@dataclass(frozen=True)
class Problem:
    """One failed check: the stage it belongs to, what was seen, and the smallest next action."""

    stage: Stage
    check: str  # short machine name: "missing_meta", "fake_vs_real", "graph_break", ...
    message: str
    next_action: str
    op: str | None = None  # "ns::name" when the problem is about one op
    detail: str | None = None  # the underlying exception text, trimmed


@dataclass(frozen=True)
class GraphBreak:
    """A Dynamo graph break as ``torch._dynamo.explain`` reports it."""

    reason: str
    location: str | None = None  # "file:line in function" of the user code that broke the graph


@dataclass(frozen=True)
class OpInGraph:
    """Whether a target op was captured, and in which form."""

    op: str
    found: bool
    form: str | None = None  # "direct", "auto_functionalized" or "auto_functionalized_v2"
    graph: str | None = None  # "aot" (after functionalization) or "dynamo"


@dataclass(frozen=True)
class UncapturableOp:
    """An op in the captured graph that npugraph_ex cannot put into an aclgraph."""

    op: str
    kind: str  # "random", "data_dependent" or "cpu_sync"


@dataclass(frozen=True)
class Comparison:
    """Compiled-versus-eager comparison of one value (an output or a mutated input) on one call."""

    name: str  # "output[0]", "mutated input x", ...
    call: str  # "capture" or "replay"
    ok: bool
    detail: str | None = None


@dataclass(frozen=True)
class MetaCheck:
    """Fake (Meta) output against the real kernel's output for one tensor of one op call."""

    op: str
    output: str
    fake: str  # "shape=(2, 3) dtype=torch.float32 stride=(3, 1)"
    real: str
    ok: bool


@dataclass(frozen=True)
class OpcheckResult:
    """``torch.library.opcheck``'s verdict for one op: test name → "SUCCESS" or the error text."""

    op: str
    results: tuple[tuple[str, str], ...]

    @property
    def ok(self) -> bool:
        return all(v == "SUCCESS" for _, v in self.results)


@dataclass(frozen=True)
class SkippedCheck:
    """A check that ran not at all, or could prove nothing, and why."""

    check: str
    reason: str


@dataclass(frozen=True)
class NpugraphExRun:
    """What npugraph_ex's own compiler did (emulated off the NPU): its passes, captures and replays."""

    emulated: bool
    source: str  # "torch-npu 2.13.0 (cache)"
    graph_before: str | None = None  # the functionalized graph it received
    graph_after: str | None = None  # the graph its passes left, which is captured
    mutated_user_inputs: tuple[str, ...] = ()
    captures: int = 0  # aclgraph captures (one per graph key, plus recaptures)
    recaptures_for_moved_inputs: int = 0  # a mutated graph input came at a new address
    replays: int = 0
    calls: tuple[str, ...] = ()  # the calls made, in order
    fell_back_to_eager: str | None = None  # npugraph_ex's capture_limit message, when it gave up capturing
    skipped_passes: tuple[str, ...] = ()  # "Skipped fx_pass ..." lines it logged instead of failing
    captured_kernels: tuple[str, ...] = ()  # the ops of the last capture, in launch order


@dataclass(frozen=True)
class Timings:
    """Seconds. ``first_call_s`` includes Dynamo tracing, AOTAutograd and the backend's compile."""

    eager_s: float | None = None
    first_call_s: float | None = None
    backend_compile_s: float | None = None
    replay_s: float | None = None
    total_s: float | None = None


@dataclass(frozen=True)
class GraphEntryReport:
    """The verdict for one function or op on one backend and device."""

    target: str
    backend: str
    device: str
    graph_count: int
    graph_break_count: int
    problems: tuple[Problem, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()
    ops_in_graph: tuple[OpInGraph, ...] = ()
    uncapturable_ops: tuple[UncapturableOp, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    meta_checks: tuple[MetaCheck, ...] = ()
    opcheck: tuple[OpcheckResult, ...] = ()
    timings: Timings = field(default_factory=Timings)
    notes: tuple[str, ...] = ()  # what was emulated or not checked, said plainly
    graph_code: str | None = None  # the captured graph after functionalization (or Dynamo's), for humans
    passed_stages: tuple[Stage, ...] = ()
    emulated: bool = False  # the backend was npugraph_ex's compiler behind opkit's stand-in NPU runtime
    npugraph_ex: NpugraphExRun | None = None
    skipped: tuple[SkippedCheck, ...] = ()
    # Findings that do not fail the verdict: a pass npugraph_ex skipped while capture, replay and
    # numerics held (a performance note on the NPU)
    warnings: tuple[Problem, ...] = ()

    @classmethod
    def failed_before_capture(
        cls, target: str, backend: str, device: str, problems: tuple[Problem, ...], *, emulated: bool = False, notes: tuple[str, ...] = ()
    ) -> GraphEntryReport:
        """The report of a check that stopped before any graph was captured: no graphs, only its ``problems``."""
        return cls(target=target, backend=backend, device=device, emulated=emulated, graph_count=0, graph_break_count=0, problems=problems, notes=notes)

    @property
    def ok(self) -> bool:
        """One graph, no breaks, every target op captured, and no failed check."""
        return (
            not self.problems
            and self.graph_count == 1
            and self.graph_break_count == 0
            and all(o.found for o in self.ops_in_graph)
        )

    @property
    def failed_stage(self) -> Stage | None:
        """The earliest stage with a problem (stages run in declaration order)."""
        stages = [p.stage for p in self.problems]
        return min(stages, key=list(Stage).index) if stages else None

    def problems_at(self, stage: Stage) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.stage is stage)

    # -- serialisation -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        data = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        data["ok"] = self.ok
        data["failed_stage"] = self.failed_stage.value if self.failed_stage else None
        return data

    def to_json(self, **kwargs) -> str:
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> GraphEntryReport:
        """The report ``to_dict`` gave (keys it derives, ``ok`` and ``failed_stage``, are recomputed).
        Data only: how a check run in a child process comes back (``opkit.verify.isolation``)."""
        return _from_plain(cls, data)

    def __str__(self) -> str:
        return format_report(self)


def _from_plain(kind, value):
    """``value`` (JSON data) as ``kind``, a type of the report's fields; the inverse of ``_plain``."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        return _from_plain(next(a for a in args if a is not type(None)), value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_plain(args[0], v) for v in value)
        return tuple(_from_plain(a, v) for a, v in zip(args, value, strict=True))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(value)
    if is_dataclass(kind):
        if kind is OpcheckResult:
            value = {"op": value["op"], "results": list(value["results"].items())}
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: _from_plain(hints[f.name], value[f.name]) for f in fields(kind) if f.name in value})
    if kind is float and isinstance(value, int):
        return float(value)
    if isinstance(kind, type) and not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _plain(value):
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, OpcheckResult):  # its results are a mapping, also when no test ran
        return {"op": value.op, "results": dict(value.results), "ok": value.ok}
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_GREEN, _RED, _RESET = "\033[32m", "\033[31m", "\033[0m"


def format_report(report: GraphEntryReport, *, show_graph: bool = False, color: bool = False) -> str:
    """The one-screen human verdict: the answer first, then why, then what to do."""
    lines: list[str] = []
    verdict = "PASS" if report.ok else "FAIL"
    backend = f"{report.backend} (emulated)" if report.emulated else report.backend
    run = report.npugraph_ex
    unseen = " (0 captures: nothing was captured or replayed)" if run is not None and run.calls and run.captures == 0 else ""
    lines.append(
        f"{verdict}{unseen}: {report.target} on backend={backend} device={report.device}: "
        f"graph_count={report.graph_count} graph_break_count={report.graph_break_count}"
    )
    for skipped in report.skipped:
        lines.append(f"  skipped: {skipped.check}: {skipped.reason}")
    if report.failed_stage is not None:
        lines.append(f"  failed at stage: {report.failed_stage.title}")
    if report.passed_stages:
        lines.append("  passed: " + ", ".join(s.title for s in report.passed_stages))
    for o in report.ops_in_graph:
        where = f"as {o.form} in the {o.graph} graph" if o.found else "NOT in the captured graph"
        lines.append(f"  op {o.op}: {where}")
    for p in report.problems:
        op = f" [{p.op}]" if p.op else ""
        lines.append(f"  [{p.stage.title}] {p.check}{op}: {p.message}")
        lines.append(f"      next: {p.next_action}")
        if p.detail:
            lines.append(f"      detail: {_short(p.detail)}")
    for w in report.warnings:
        op = f" [{w.op}]" if w.op else ""
        lines.append(f"  warning [{w.stage.title}] {w.check}{op}: {w.message}")
        lines.append(f"      next: {w.next_action}")
    for b in report.graph_breaks:
        at = f" at {b.location}" if b.location else ""
        lines.append(f"  graph break{at}: {_short(b.reason, 200)}")
    for u in report.uncapturable_ops:
        lines.append(f"  not capturable by npugraph_ex ({u.kind}): {u.op}")
    failed_cmp = [c for c in report.comparisons if not c.ok]
    if report.comparisons:
        lines.append(f"  compiled vs eager: {len(report.comparisons) - len(failed_cmp)}/{len(report.comparisons)} values equal")
    for c in failed_cmp:
        lines.append(f"      {c.name} ({c.call}) differs" + (f": {_short(c.detail, 200)}" if c.detail else ""))
    if report.meta_checks:
        bad = [m for m in report.meta_checks if not m.ok]
        lines.append(f"  fake vs real: {len(report.meta_checks) - len(bad)}/{len(report.meta_checks)} tensors agree")
    for oc in report.opcheck:
        lines.append(f"  opcheck {oc.op}: " + ", ".join(f"{k}={'ok' if v == 'SUCCESS' else 'FAILED'}" for k, v in oc.results))
    if run is not None:
        lines.append(
            f"  npugraph_ex ({run.source}): captures={run.captures} recaptures_for_moved_inputs={run.recaptures_for_moved_inputs} "
            f"replays={run.replays} over {len(run.calls)} calls"
        )
        lines.append("    mutated_user_inputs: " + (", ".join(run.mutated_user_inputs) or "none"))
        if run.captured_kernels:
            lines.append("    captured kernels: " + ", ".join(run.captured_kernels))
        if run.fell_back_to_eager:
            lines.append(f"    fell back to eager: {_short(run.fell_back_to_eager, 200)}")
        for line in run.skipped_passes:
            lines.append(f"    swallowed pass failure: {_short(line, 200)}")
        if show_graph and run.graph_after:
            lines.append("    graph after npugraph_ex's passes:")
            lines.extend("      " + line for line in run.graph_after.strip().splitlines())
    t = report.timings
    parts = [
        f"{name}={value * 1000:.1f}ms"
        for name, value in (
            ("eager", t.eager_s),
            ("first_call", t.first_call_s),
            ("backend_compile", t.backend_compile_s),
            ("replay", t.replay_s),
            ("total", t.total_s),
        )
        if value is not None
    ]
    if parts:
        lines.append("  timings: " + " ".join(parts))
    for n in report.notes:
        lines.append(f"  note: {n}")
    if show_graph and report.graph_code:
        lines.append("  captured graph:")
        lines.extend("    " + line for line in report.graph_code.strip().splitlines())
    # every line built above stays one line, with no terminal escapes: values from the checked code and its paths are data
    lines = [one_line(line) for line in lines]
    if color:  # added after escaping: the only escape sequences are opkit's own
        lines[0] = f"{_GREEN if report.ok else _RED}{verdict}{_RESET}" + lines[0][len(verdict) :]
    return "\n".join(lines)


def format_github(report: GraphEntryReport, *, file: str | None = None, title: str = "opkit verify") -> str:
    """GitHub Actions workflow commands: one ``::error`` per problem, a ``::notice`` for a pass, a ``::warning``
    per warning. ``title`` heads each (a run over many ops names the op in it); escaped here, as every value."""

    def command(kind: str, title: str, message: str) -> str:
        params = ",".join(p for p in (f"file={github_escape(file, property_value=True)}" if file else "", f"title={github_escape(title, property_value=True)}") if p)
        return f"::{kind} {params}::{github_escape(message)}"

    verdict = format_report(report).splitlines()[0]
    warnings = [command("warning", f"{title}: {w.stage.title}: {w.check}", f"{w.message} Next: {w.next_action}") for w in report.warnings]
    if report.ok:
        return "\n".join([command("notice", title, verdict), *warnings])
    lines = [command("error", f"{title}: {p.stage.title}: {p.check}", f"{p.message} Next: {p.next_action}") for p in report.problems]
    return "\n".join([*(lines or [command("error", title, verdict)]), *warnings])
