"""Compile backends, each wrapped so that the graphs it is given can be inspected afterwards.

A backend here is one small function: it receives a ``GraphCapture`` and returns the callable handed to
``torch.compile(backend=...)``. Every wrapper records Dynamo's FX graph; those that run AOTAutograd
in-process also record the graph after functionalization (where ``auto_functionalized`` appears).
Adding a backend is one decorated function.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opkit.verify.device import npu_unavailable_reason


@dataclass
class GraphCapture:
    """What one ``torch.compile`` saw: mutable while compiling, read by the checks afterwards."""

    dynamo_graphs: list = field(default_factory=list)  # torch.fx.GraphModule, one per Dynamo graph
    aot_graphs: list = field(default_factory=list)  # forward graphs after AOTAutograd functionalization
    backend_compile_s: float = 0.0
    compiled: int = 0  # backend calls that returned a compiled callable
    observation: Any = None  # the emulated npugraph_ex's observe.Observation, when it ran

    def timed(self, compile_fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """Wrap a Dynamo backend: record the graph, time the compile, count successes."""

        def backend(gm, example_inputs, **kwargs):  # kwargs: torch.compile's options=, for backends taking them
            self.dynamo_graphs.append(gm)
            start = time.perf_counter()
            try:
                compiled = compile_fn(gm, example_inputs, **kwargs)
            finally:
                self.backend_compile_s += time.perf_counter() - start
            self.compiled += 1
            return compiled

        return backend

    def record_aot(self, gm, example_inputs=None):
        self.aot_graphs.append(gm)
        return gm


@dataclass(frozen=True)
class Backend:
    name: str
    make: Callable[[GraphCapture], Callable]
    device: str  # where its inputs must live
    sees_aot_graph: bool  # whether the functionalized graph is recorded (else only Dynamo's)
    unavailable: Callable[[], str | None] = lambda: None  # None when usable, else why not
    emulated: bool = False  # npugraph_ex's own compiler behind opkit's stand-in NPU runtime
    session: Callable[[GraphCapture], Any] = lambda capture: contextlib.nullcontext()  # around make, compile and calls


BACKENDS: dict[str, Backend] = {}


def backend(name: str, *, device: str = "cpu", sees_aot_graph: bool, unavailable: Callable[[], str | None] = lambda: None):
    """Register ``make(capture) -> dynamo backend`` under ``name``."""

    def register(make: Callable[[GraphCapture], Callable]) -> Callable[[GraphCapture], Callable]:
        BACKENDS[name] = Backend(name, make, device, sees_aot_graph, unavailable)
        return make

    return register


@backend("aot_eager", sees_aot_graph=True)
def _aot_eager(capture: GraphCapture) -> Callable:
    # The front half npugraph_ex shares: Dynamo, then AOTAutograd functionalization, then the graph runs eagerly.
    from torch._dynamo.backends.common import aot_autograd

    return capture.timed(aot_autograd(fw_compiler=capture.record_aot))


@backend("eager", sees_aot_graph=False)
def _eager(capture: GraphCapture) -> Callable:
    # Dynamo only: a baseline. It cannot see functionalization failures (graph-entry.md).
    return capture.timed(lambda gm, example_inputs: gm.forward)


@backend("inductor", sees_aot_graph=True)
def _inductor(capture: GraphCapture) -> Callable:
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    # The inner graph is recorded when Inductor compiles it; a warm FX-graph cache skips this call.
    def inner(gm, example_inputs, **kwargs):
        capture.record_aot(gm)
        return compile_fx_inner(gm, example_inputs, **kwargs)

    return capture.timed(lambda gm, example_inputs: compile_fx(gm, example_inputs, inner_compile=inner))


def _npugraph_ex_unavailable() -> str | None:
    reason = npu_unavailable_reason()
    return reason and f"npugraph_ex needs an Ascend NPU: {reason}"


@backend("npugraph_ex", device="npu", sees_aot_graph=False, unavailable=_npugraph_ex_unavailable)
def _npugraph_ex(capture: GraphCapture) -> Callable:
    # `import torch_npu` registers "npugraph_ex" with Dynamo (torch_npu/dynamo/__init__.py:
    # _register_npu_backend(_get_npugraph_ex_backend(), "npugraph_ex"); read in the torch-npu 2.13.0
    # wheel, which also lets Dynamo find it through an entry point); it runs TorchAir's own
    # AOTAutograd, passes and aclgraph capture, so only Dynamo's graph is visible from here.
    import torch._dynamo
    import torch_npu  # noqa: F401

    return capture.timed(torch._dynamo.lookup_backend("npugraph_ex"))


def _emulated_unavailable() -> str | None:
    from opkit.verify import npugraph_ex

    reason = npugraph_ex.unavailable_reason()
    return None if reason is None else f"npugraph_ex cannot be emulated: {reason}"


@contextlib.contextmanager
def _observed(capture: GraphCapture):
    # npugraph_ex's process-wide changes (its Meta patches, the stand-in torch_npu, Tensor.is_npu) are in
    # force for this check's compile and calls only.
    from opkit.verify import npugraph_ex
    from opkit.verify.npugraph_ex import observe

    with npugraph_ex.load().scope.inside(), observe.observing() as observation:
        capture.observation = observation
        try:
            yield
        finally:
            # What AOTAutograd handed npugraph_ex: the functionalized graph, before its passes.
            capture.aot_graphs[:] = [g.before for g in observation.graphs]


def _npugraph_ex_emulated(capture: GraphCapture) -> Callable:
    # npugraph_ex's own compiler from the torch-npu wheel (opkit.verify.npugraph_ex), exactly as its
    # entry point builds it: get_npu_backend(compiler_config=CompilerConfig() with mode="npugraph_ex").
    from opkit.verify import npugraph_ex

    return capture.timed(npugraph_ex.backend())


EMULATED_NPUGRAPH_EX = Backend(
    "npugraph_ex", _npugraph_ex_emulated, "cpu", True, _emulated_unavailable, emulated=True, session=_observed
)


def resolve_backend(name: str) -> Backend:
    """``auto`` -> npugraph_ex on an NPU, its emulation off the NPU when a torch-npu wheel can be had,
    else aot_eager. ``npugraph_ex`` off the NPU is the emulation. Raises ValueError for unknown or
    unusable names."""
    if name == "auto":
        preferred = (BACKENDS["npugraph_ex"], EMULATED_NPUGRAPH_EX)
        return next((b for b in preferred if b.unavailable() is None), BACKENDS["aot_eager"])
    try:
        chosen = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of: auto, {', '.join(sorted(BACKENDS))}") from None
    reason = chosen.unavailable()
    if reason is not None and name == "npugraph_ex":
        emulated_reason = EMULATED_NPUGRAPH_EX.unavailable()
        if emulated_reason is None:
            return EMULATED_NPUGRAPH_EX
        raise ValueError(f"{reason}; {emulated_reason}")
    if reason is not None:
        raise ValueError(reason)
    return chosen


def auto_fallback_note() -> str | None:
    """Why ``auto`` chose aot_eager, when it did: said in the report."""
    if BACKENDS["npugraph_ex"].unavailable() is None:
        return None
    reason = EMULATED_NPUGRAPH_EX.unavailable()
    return None if reason is None else f"backend auto ran aot_eager: {reason}"


def backend_names() -> list[str]:
    return ["auto", *sorted(BACKENDS)]
