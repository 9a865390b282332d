"""The one context every stage unit of a check reads: what is checked, how, and the evidence the
stages share, each piece computed once when a unit first asks for it (the eager run, the compile and
its calls, the Meta function's own check)."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema
from opkit.verify import graphs
from opkit.verify.backends import Backend, GraphCapture
from opkit.verify.report import Comparison, GraphBreak, MetaCheck, NpugraphExRun, OpcheckResult, OpInGraph, Problem, SkippedCheck, UncapturableOp

@dataclass
class Target:
    fn: Callable
    label: str
    op_names: list[str]  # "ns::name" of the ops that must appear in the graph
    input_names: list[str] | None = None  # schema argument names when the target is one op



@contextlib.contextmanager
def quiet_torch_logs():
    """Dynamo and FakeTensor log every failure we diagnose anyway; keep the verdict readable.

    Levels are assigned directly and the logging cache cleared once: ``Logger.setLevel`` clears every
    logger's cache on each call, which over torch's ~360 loggers cost a quarter of a second per check."""
    manager = logging.root.manager
    loggers = [lg for n, lg in list(manager.loggerDict.items()) if n.startswith("torch") and isinstance(lg, logging.Logger)]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.level = logging.CRITICAL + 1
    manager._clear_cache()
    try:
        yield
    finally:
        for lg, level in saved:
            lg.level = level
        manager._clear_cache()


def as_target(fn_or_op, ops: Iterable | None) -> Target:
    """Accept an OpOverload, OpOverloadPacket, CustomOpDef, nn.Module or function."""
    qualname = graphs.op_qualname(fn_or_op)
    if qualname is not None:
        op = fn_or_op

        def call_op(*args, **kwargs):
            return op(*args, **kwargs)

        names = None
        schema = getattr(getattr(op, "_opoverload", op), "_schema", None)
        if schema is None and hasattr(op, "default"):
            schema = op.default._schema
        if schema is not None:
            names = [a.name for a in schema.arguments]
        return Target(call_op, qualname, [qualname], names)
    if not callable(fn_or_op):
        raise TypeError(f"expected an op, a module or a function, got {type(fn_or_op).__name__}")
    label = getattr(fn_or_op, "__qualname__", None) or type(fn_or_op).__name__
    names = [n for n in (graphs.op_qualname(o) if not isinstance(o, str) else o for o in ops or ()) if n]
    return Target(fn_or_op, label, names)


def signature_of(op_name: str) -> OpSignature | None:
    """The op's schema as opkit's typed model (schema facts are never re-derived here)."""
    import torch

    ns, _, name = op_name.partition("::")
    packet = getattr(getattr(torch.ops, ns), name, None)
    if packet is None:
        return None
    overload = getattr(packet, packet.overloads()[0])  # torch.ops has a packet only for an op with an overload
    try:
        return parse_schema(str(overload._schema), Dialect.TORCH_LIBRARY)
    except SchemaError:
        return None


def has_fake_impl(op_name: str) -> bool:
    """Every overload has a Meta kernel (``register_fake`` registers its fake function as one) or decomposes
    (CompositeImplicitAutograd)."""
    import torch

    ns, _, name = op_name.partition("::")
    packet = getattr(getattr(torch.ops, ns), name)
    for overload_name in packet.overloads():
        full = packet._qualified_op_name if overload_name == "default" else f"{packet._qualified_op_name}.{overload_name}"
        try:
            if any(torch._C._dispatch_has_kernel_for_dispatch_key(full, key) for key in ("Meta", "CompositeImplicitAutograd")):
                continue
        except RuntimeError:  # a TorchScript-only overload (aten::add.t): not in the dispatcher, never traced
            continue
        return False
    return True



@dataclass
class CheckContext:
    """Inputs of one check, the evidence stages share, and what they found for the report."""

    fn_or_op: Any
    target: Target
    args: tuple
    kwargs: dict
    backend: Backend
    device: str
    fullgraph: bool = True
    dynamic: bool = False
    options: dict | None = None
    real_kernel: bool = True
    opcheck_tests: tuple[str, ...] = ()
    atol: float | None = None
    rtol: float | None = None
    meta_samples: Sequence[tuple[tuple, dict]] = ()
    emulation: Any = None  # opkit.verify.npugraph_ex.Emulation when npugraph_ex runs emulated
    # What the stages found, for the report
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[SkippedCheck] = field(default_factory=list)
    meta_checks: list[MetaCheck] = field(default_factory=list)
    opcheck: list[OpcheckResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    graph_count: int = 0
    ops_in_graph: tuple[OpInGraph, ...] = ()
    uncapturable: list[UncapturableOp] = field(default_factory=list)
    npugraph_ex: NpugraphExRun | None = None
    meta_outputs: list = field(default_factory=list)  # the Meta function's outputs on each sample call

    @property
    def op_names(self) -> list[str]:
        return self.target.op_names

    @property
    def sole_op(self) -> str | None:
        return self.op_names[0] if len(self.op_names) == 1 else None

    @functools.cached_property
    def overload(self):
        """The OpOverload when the target is one op (a custom_op's own), else None."""
        overload = getattr(self.fn_or_op, "_opoverload", self.fn_or_op)
        schema = getattr(overload, "_schema", None)
        return overload if schema is not None and not isinstance(schema, str) else None

    @functools.cached_property
    def undefined(self) -> bool:
        return any(p.check == "undefined_op" for p in self.problems)

    @property
    def signatures(self) -> dict[str, OpSignature]:
        return {n: s for n in self.op_names if (s := signature_of(n)) is not None}

    @functools.cached_property
    def eager(self):
        """The model run once on clones, custom-op calls recorded (opkit.verify.stages.eager)."""
        from opkit.verify.stages.eager import run_eager

        return run_eager(self)

    @functools.cached_property
    def meta_structure(self) -> list[Problem]:
        """The Meta function alone on the sample calls (opkit.verify.stages.meta)."""
        from opkit.verify.stages.meta import check_meta_structure

        if self.overload is None or self.undefined or not has_fake_impl(self.op_names[0]):
            return []
        return check_meta_structure(self.overload, [(self.args, self.kwargs), *self.meta_samples], self.meta_outputs)

    @functools.cached_property
    def compiled(self):
        """torch.compile once, then the calls of ``calls.call_plan`` (None when nothing can compile)."""
        from opkit.verify.stages.calls import run_compiled

        if self.undefined:
            return None
        return run_compiled(self.target.fn, self.args, self.kwargs, self.backend, fullgraph=self.fullgraph, dynamic=self.dynamic, options=self.options)

    @property
    def capture(self) -> GraphCapture:
        return self.compiled.capture if self.compiled is not None else GraphCapture()

    @property
    def reached_aot_graph(self) -> bool:
        """AOTAutograd produced a graph for every graph Dynamo captured."""
        capture = self.capture
        return len(capture.aot_graphs) >= len(capture.dynamo_graphs)

    @functools.cached_property
    def compile_failure(self) -> Problem | None:
        """The failure after Dynamo produced its graphs (AOT or the backend's compile), diagnosed once."""
        from opkit.verify import diagnose

        compiled = self.compiled
        if compiled is None or compiled.error is None:
            return None
        capture = compiled.capture
        if not capture.dynamo_graphs or capture.compiled >= len(capture.dynamo_graphs):
            return None
        return diagnose.compile_failure(
            compiled.error,
            backend=self.backend.name,
            reached_aot_graph=self.reached_aot_graph,
            sees_aot_graph=self.backend.sees_aot_graph,
            sole_op=self.sole_op,
            data_dependent=graphs.data_dependent_ops(capture.aot_graphs),
        )

    @functools.cached_property
    def compared(self) -> tuple[list[Comparison], list[Problem]] | None:
        """Every call against eager (opkit.verify.stages.replay), for the replay and numerics units."""
        from opkit.verify.stages.replay import compare_calls

        return compare_calls(self)
