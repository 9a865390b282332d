"""What npugraph_ex did during one check: its graphs before and after its passes, the mutated user
inputs it found, captures, fallback to eager, and the warnings it logs instead of failing.

One observation point is added to the imported package: ``_NpuFxCompiler._gen_compiled_gm`` (its
compile of one functionalized graph) is wrapped to keep the graph it received, and, when it returns,
the graph its passes left and the mutated user inputs it found. Everything else is read from npugraph_ex's own logger, its warnings,
Dynamo's ``counters["npugraph_ex"]`` and the capture emulator's log.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from opkit.verify.npugraph_ex import capture


@dataclass
class CompiledGraph:
    """One FX graph npugraph_ex compiled (``after`` stays None when its compile failed)."""

    before: Any  # torch.fx.GraphModule after AOTAutograd, before npugraph_ex's passes
    after: Any = None  # the graph its passes left, which the capture runs
    mutated_user_inputs: tuple[str, ...] = ()
    name: str = ""  # npugraph_ex's graph name ("graph_3"): the key of its capture counters


@dataclass
class Observation:
    graphs: list[CompiledGraph] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)  # npugraph_ex's warnings and errors, in order
    # What a pass raised before npugraph_ex swallowed it ("Skipped fx_pass"): "ExceptionType: message"
    swallowed: list[str] = field(default_factory=list)

    @property
    def skipped_passes(self) -> list[str]:
        return [m for m in self.logged if "Skipped fx_pass" in m]

    @property
    def capture_limit_message(self) -> str | None:
        """npugraph_ex's warning when it gives up capturing and runs eagerly for good."""
        return next((m for m in self.logged if "capture_limit reached" in m), None)

    def counter(self, prefix: str) -> int:
        """npugraph_ex's own counters (``captured_``, ``recapture_due_to_mutated_input_change_``) summed over graphs."""
        from torch._dynamo.utils import counters

        return sum(counters["npugraph_ex"].get(prefix + g.name, 0) for g in self.graphs)


_current: Observation | None = None
_installed = False


def install(module) -> None:
    """Wrap the per-graph compile of the imported npugraph_ex once."""
    global _installed
    if _installed:
        return
    compiler = module.npu_fx_compiler._NpuFxCompiler
    compile_graph = compiler._gen_compiled_gm

    def observed(self, gm, example_inputs, observer):
        entry = CompiledGraph(_copy_graph(gm)) if _current is not None else None
        if entry is not None:
            _current.graphs.append(entry)
        concrete = compile_graph(self, gm, example_inputs, observer)
        if entry is not None and hasattr(concrete, "_aclgraph_cache_info"):
            entry.after = concrete.fx_graph
            entry.mutated_user_inputs = tuple(concrete._aclgraph_cache_info.mutated_user_inputs or ())
            entry.name = concrete.fx_graph_name
        return concrete

    compiler._gen_compiled_gm = observed
    _observe_reinplacing(module)
    _installed = True


def _observe_reinplacing(module) -> None:
    """``_reinplace_inplaceable_ops_pass`` catches every exception but NotImplementedError of the
    re-inplacing it calls and logs only "Skipped fx_pass ...": keep the exception, the reason."""
    import importlib

    try:
        graph_pass = importlib.import_module(f"{module.__name__}._acl_concrete_graph.graph_pass")
    except ImportError:
        return
    reinplace = getattr(graph_pass, "reinplace_with_multi_stream_check", None)
    if reinplace is None:
        return

    def observed(*args, **kwargs):
        try:
            return reinplace(*args, **kwargs)
        except NotImplementedError:
            raise
        except Exception as exc:
            if _current is not None:
                _current.swallowed.append(f"{type(exc).__name__}: {exc}".strip())
            raise

    graph_pass.reinplace_with_multi_stream_check = observed


def _copy_graph(gm):
    import torch

    try:
        return torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    except Exception:
        return gm


class _Collect(logging.Handler):
    def __init__(self, sink: list[str]):
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage())


@contextlib.contextmanager
def observing() -> Iterator[Observation]:
    """Collect what npugraph_ex does inside the block; its own console output is silenced meanwhile."""
    global _current
    from npugraph_ex.core.utils import logger  # type: ignore[import-not-found]

    observation = Observation()
    handler = _Collect(observation.logged)
    saved_handlers, saved_level = list(logger.handlers), logger.level
    logger.handlers[:] = [handler]
    logger.setLevel(logging.WARNING)
    # warning_once is an lru_cache per message: a second check must see the same warning again.
    cache_clear = getattr(getattr(logger, "warning_once", None), "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    capture.LOG.reset()
    _current = observation
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the same messages reach the logger
            yield observation
    finally:
        _current = None
        logger.handlers[:] = saved_handlers
        logger.setLevel(saved_level)
