"""The calls a check makes of the compiled function: capture, then replays with fresh data, a mutated
input refilled in place and one passed as new tensors; or, with ``dynamic=True``, a sweep of shapes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opkit.verify.backends import Backend, GraphCapture
from opkit.verify.stages.inputs import clone_tree, fresh_entry

@dataclass
class CompiledCall:
    """One call of the compiled function: its inputs before, and outputs and inputs right after it
    (copied at once: npugraph_ex returns outputs in graph memory that the next replay overwrites)."""

    label: str
    before: tuple  # (args, kwargs) as passed
    after: tuple | None = None  # (args, kwargs) after the call: in-place effects
    out: Any = None
    compiled_graphs: int = 0  # Dynamo graphs compiled during this call (after the first: recompiles)


@dataclass
class CompileRun:
    capture: GraphCapture
    calls: list[CompiledCall] = field(default_factory=list)
    error: BaseException | None = None
    error_call: str | None = None
    first_call_s: float | None = None
    replay_s: float | None = None

    @property
    def user_graphs(self) -> int:
        """The graphs Dynamo made of the model on its first call (all of them when that call failed). A later
        call's are recompiles of a model already captured, for the check's own new inputs."""
        return self.calls[0].compiled_graphs if self.calls else len(self.capture.dynamo_graphs)

    @property
    def recompiles(self) -> list[tuple[str, int]]:
        """(call label, graphs compiled) for each call after the first that made Dynamo compile again."""
        return [(c.label, c.compiled_graphs) for c in self.calls[1:] if c.compiled_graphs]


# The calls a static check makes: capture, then replays with fresh data; the third refills the previous
# call's tensors in place (a KV cache at the same address), the fourth passes new tensors (a mutated
# graph input at a new address: npugraph_ex recaptures).
STATIC_CALLS = ("capture", "replay", "replay, inputs refilled in place", "replay, new input tensors")


DYNAMIC_SHAPES = 4  # shapes a dynamic=True sweep tries (dim 0 grows by one each time)


def _fresh(tree, *, grow: int = 0):
    """New data of the same kinds: floating tensors redrawn, others kept (indices stay valid)."""
    import torch
    from torch.utils._pytree import tree_map_only

    def fresh(t):
        shape = (t.shape[0] + grow, *t.shape[1:]) if grow and t.dim() else t.shape
        if t.is_floating_point():
            return torch.randn(shape, dtype=t.dtype, device=t.device)
        if grow and t.dim():
            return t.detach().new_zeros(shape)
        return t.detach().clone()

    return tree_map_only(torch.Tensor, fresh, tree)


def _refill(tree) -> None:
    import torch
    from torch.utils._pytree import tree_leaves

    for t in tree_leaves(tree):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            t.copy_(torch.randn_like(t))


def varied_scalars(args, kwargs) -> tuple | None:
    """(args, kwargs) with every Python int and float argument moved by one (bools and tensors kept), or
    None when there is none to vary."""
    varied = False

    def move(value):
        nonlocal varied
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            varied = True
            return value + 1
        return value

    moved = (tuple(move(a) for a in args), {k: move(v) for k, v in kwargs.items()})
    return moved if varied else None


def call_plan(args, kwargs, *, dynamic: bool, vary_scalars: bool = False) -> list[tuple[str, Callable[[tuple | None], tuple]]]:
    """(label, make inputs from the previous call's inputs) for each call a check makes. With
    ``vary_scalars`` (dynamic only), the first shape is called again with its Python scalars moved by one
    (npugraph_ex keys its graphs on the SymInt values too: a new capture), then as at first (a replay)."""
    if dynamic:
        plan = [(f"shape {i + 1}", lambda prev, i=i: _fresh((args, kwargs), grow=i)) for i in range(DYNAMIC_SHAPES)]
        moved = varied_scalars(args, kwargs) if vary_scalars else None
        if moved is not None:
            plan[1:1] = [("shape 1, scalars moved by one", lambda prev: _fresh(moved)), ("shape 1, scalars as at first", lambda prev: _fresh((args, kwargs)))]
        return plan

    def refill(prev):
        _refill(prev)
        return prev

    makers = [lambda prev: clone_tree((args, kwargs)), lambda prev: _fresh((args, kwargs)), refill, lambda prev: _fresh((args, kwargs))]
    return list(zip(STATIC_CALLS, makers))


def _runs_with_scalars_moved(fn, args, kwargs) -> bool:
    """Whether the model still runs eagerly with its Python scalars moved by one (an int may be a dim or an
    index that must not move): only then does the plan vary them."""
    moved = varied_scalars(args, kwargs)
    if moved is None:
        return False
    try:
        fn(*clone_tree(moved[0]), **clone_tree(moved[1]))
    except Exception:
        return False
    return True


def run_compiled(fn, args, kwargs, backend: Backend, *, fullgraph: bool, dynamic: bool, options: dict | None) -> CompileRun:
    """torch.compile once, then call it as ``call_plan`` says, keeping each call's inputs and outputs."""
    import torch

    capture = GraphCapture()
    result = CompileRun(capture)
    inputs = None
    with backend.session(capture):
        compile_kwargs: dict[str, Any] = {"backend": backend.make(capture), "fullgraph": fullgraph, "dynamic": dynamic}
        if options:
            compile_kwargs["options"] = options
        compiled = torch.compile(fresh_entry(fn), **compile_kwargs)
        for label, make_inputs in call_plan(args, kwargs, dynamic=dynamic, vary_scalars=dynamic and _runs_with_scalars_moved(fn, args, kwargs)):
            inputs = make_inputs(inputs)
            call = CompiledCall(label, clone_tree(inputs))
            graphs_before = len(capture.dynamo_graphs)
            start = time.perf_counter()
            try:
                out = compiled(*inputs[0], **inputs[1])
                if backend.device != "cpu":
                    getattr(torch, backend.device).synchronize()
            except Exception as exc:
                result.error, result.error_call = exc, label
                return result
            elapsed = time.perf_counter() - start
            call.compiled_graphs = len(capture.dynamo_graphs) - graphs_before
            call.out, call.after = clone_tree(out), clone_tree(inputs)
            result.calls.append(call)
            if result.first_call_s is None:
                result.first_call_s = elapsed
            elif result.replay_s is None:
                result.replay_s = elapsed
    return result

