"""``check_graph_entry``: does a function or op enter ONE graph with ZERO breaks, and replay correctly?

The check runs the stages of graph-entry.md in order, each as one small function that returns the
problems it found: registration (schema facts, a fake/Meta function), eager (the op runs; mutations
match the schema), fake-vs-real metadata and ``torch.library.opcheck`` (only where a real kernel runs),
then one ``torch.compile(fullgraph=True, dynamic=False)`` under ``torch.no_grad()`` through a capturing
backend (Dynamo, AOT functionalization, backend), called twice (capture, replay), and compiled-versus-
eager numerics for outputs and mutated inputs.
"""

from __future__ import annotations

import contextlib
import logging
import time
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema
from opkit.verify import diagnose, graphs
from opkit.verify.backends import Backend, GraphCapture, resolve_backend
from opkit.verify.report import (
    SkippedCheck,
    Comparison,
    GraphBreak,
    GraphEntryReport,
    MetaCheck,
    OpcheckResult,
    Problem,
    Stage,
    Timings,
    UncapturableOp,
)

# Namespaces whose ops are PyTorch's own: never "the custom op under test".
_BUILTIN_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "c10d", "profiler", "_ops"})


@dataclass
class _OpCall:
    """One call of a custom op seen while the model ran eagerly: inputs before, outputs after."""

    op: Any  # torch._ops.OpOverload
    args: tuple
    kwargs: dict
    outputs: Any
    undeclared_mutations: list[str] = field(default_factory=list)


@dataclass
class _Target:
    fn: Callable
    label: str
    op_names: list[str]  # "ns::name" of the ops that must appear in the graph
    input_names: list[str] | None = None  # schema argument names when the target is one op


# ------------------------------------------------------------------------------------------------
# Small helpers
# ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet_torch_logs():
    """Dynamo and FakeTensor log every failure we diagnose anyway; keep the verdict readable."""
    loggers = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.startswith("torch")]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in saved:
            lg.setLevel(level)


def _fresh_entry(fn: Callable) -> Callable:
    """A new code object per check: Dynamo caches per code object, so checks never share cache entries
    (no recompile-limit surprises, and no ``torch._dynamo.reset()``, which costs seconds)."""

    def entry(*args, **kwargs):
        return fn(*args, **kwargs)

    return types.FunctionType(entry.__code__.replace(), entry.__globals__, "opkit_graph_entry", None, entry.__closure__)


def _clone(tree):
    import torch
    from torch.utils._pytree import tree_map_only

    return tree_map_only(torch.Tensor, lambda t: t.detach().clone(), tree)


def _to_device(tree, device: str):
    import torch
    from torch.utils._pytree import tree_map_only

    if device == "cpu":
        return tree
    return tree_map_only(torch.Tensor, lambda t: t.to(device), tree)


def _as_target(fn_or_op, ops: Iterable | None) -> _Target:
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
        return _Target(call_op, qualname, [qualname], names)
    if not callable(fn_or_op):
        raise TypeError(f"expected an op, a module or a function, got {type(fn_or_op).__name__}")
    label = getattr(fn_or_op, "__qualname__", None) or type(fn_or_op).__name__
    names = [n for n in (graphs.op_qualname(o) if not isinstance(o, str) else o for o in ops or ()) if n]
    return _Target(fn_or_op, label, names)


def _signature(op_name: str) -> OpSignature | None:
    """The op's schema as opkit's typed model (schema facts are never re-derived here)."""
    import torch

    ns, _, name = op_name.partition("::")
    packet = getattr(getattr(torch.ops, ns), name, None)
    if packet is None:
        return None
    overload = getattr(packet, packet.overloads()[0]) if packet.overloads() else None
    if overload is None:
        return None
    try:
        return parse_schema(str(overload._schema), Dialect.TORCH_LIBRARY)
    except SchemaError:
        return None


def _has_fake_impl(op_name: str) -> bool:
    import torch
    from torch._library.simple_registry import singleton

    ns, _, name = op_name.partition("::")
    packet = getattr(getattr(torch.ops, ns), name)
    for overload_name in packet.overloads():
        full = packet._qualified_op_name if overload_name == "default" else f"{packet._qualified_op_name}.{overload_name}"
        entry = singleton.get(full)
        if entry is not None and entry.fake_impl.kernel is not None:
            continue
        if any(torch._C._dispatch_has_kernel_for_dispatch_key(full, key) for key in ("Meta", "CompositeImplicitAutograd")):
            continue
        return False
    return True


def _describe(t) -> str:
    return f"shape={tuple(t.shape)} dtype={t.dtype} stride={tuple(t.stride())}"


# ------------------------------------------------------------------------------------------------
# Stage checks: each returns what it found
# ------------------------------------------------------------------------------------------------


def check_registration(op_names: Sequence[str]) -> list[Problem]:
    """Schema defined and a Meta/fake function registered, before anything compiles."""
    import torch

    problems = []
    for op_name in op_names:
        ns, _, name = op_name.partition("::")
        if getattr(getattr(torch.ops, ns), name, None) is None:
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "undefined_op",
                    f"{op_name} is not registered with the dispatcher",
                    "define the schema first: torch_npu does it from op_plugin_functions.yaml; off-NPU "
                    "`Library(ns, \"FRAGMENT\").define(func)` or torch.library.custom_op",
                    op_name,
                )
            )
        elif not _has_fake_impl(op_name):
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "missing_meta",
                    f"no Meta/fake function is registered for {op_name}, so Dynamo cannot trace it with fake tensors",
                    f"register {graphs_meta_hint(op_name)} before torch.compile runs",
                    op_name,
                )
            )
    return problems


def graphs_meta_hint(op_name: str) -> str:
    name = op_name.split("::")[-1]
    return f'`@impl(Library("{op_name.split("::")[0]}", "IMPL", "Meta"), "{name}")` (op-plugin) or `@{name}.register_fake` (custom_op)'


def run_eager(fn: Callable, args: tuple, kwargs: dict) -> tuple[Any, list[_OpCall], float]:
    """Run the model once on clones, recording every custom-op call and any undeclared input mutation."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    calls: list[_OpCall] = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.namespace in _BUILTIN_NAMESPACES:
                return func(*args, **kwargs)
            before_args, before_kwargs = _clone(args), _clone(kwargs)
            out = func(*args, **kwargs)
            call = _OpCall(func, before_args, before_kwargs, _clone(out))
            for i, arg in enumerate(func._schema.arguments):
                value = args[i] if i < len(args) else kwargs.get(arg.name)
                before = before_args[i] if i < len(args) else before_kwargs.get(arg.name)
                if arg.alias_info is not None and arg.alias_info.is_write:
                    continue
                now, _ = tree_flatten(value)
                was, _ = tree_flatten(before)
                for a, b in zip(now, was):
                    if isinstance(a, torch.Tensor) and not torch.equal(a.nan_to_num(), b.nan_to_num()):
                        call.undeclared_mutations.append(arg.name)
                        break
            calls.append(call)
            return out

    start = time.perf_counter()
    with Recorder():
        out = fn(*args, **kwargs)
    return out, calls, time.perf_counter() - start


def check_mutations(calls: list[_OpCall]) -> list[Problem]:
    problems = []
    seen = set()
    for call in calls:
        op_name = call.op._schema.name
        for arg in call.undeclared_mutations:
            if (op_name, arg) in seen:
                continue
            seen.add((op_name, arg))
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "undeclared_mutation",
                    f"the kernel of {op_name} mutates argument {arg!r}, which the schema does not declare mutable",
                    f"declare it 'Tensor(a!) {arg}' in the schema (custom_op: mutates_args=(\"{arg}\",)), or make the "
                    "kernel write a fresh tensor; an undeclared mutation is silently dropped or reordered in a graph",
                    op_name,
                )
            )
    return problems


def check_fake_vs_real(calls: list[_OpCall]) -> tuple[list[MetaCheck], list[Problem]]:
    """The Meta function's output metadata against the kernel's, call by call (what opcheck's test_faketensor does)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._pytree import tree_flatten, tree_map_only

    checks: list[MetaCheck] = []
    problems: list[Problem] = []
    for call in _first_call_per_op(calls):
        op_name = call.op._schema.name
        mode = FakeTensorMode()
        fake_args, fake_kwargs = tree_map_only(torch.Tensor, mode.from_tensor, (call.args, call.kwargs))
        try:
            with mode:
                fake_out = call.op(*fake_args, **fake_kwargs)
        except Exception as exc:  # reported by the Dynamo stage with its own diagnosis
            del exc
            continue
        fakes, _ = tree_flatten(fake_out)
        reals, _ = tree_flatten(call.outputs)
        for i, (f, r) in enumerate(zip(fakes, reals)):
            if not isinstance(r, torch.Tensor):
                continue
            ok = isinstance(f, torch.Tensor) and (f.shape, f.dtype, f.stride()) == (r.shape, r.dtype, r.stride())
            fake_text = _describe(f) if isinstance(f, torch.Tensor) else repr(f)
            checks.append(MetaCheck(op_name, f"output[{i}]", fake_text, _describe(r), ok))
            if not ok:
                problems.append(
                    Problem(
                        Stage.META,
                        "fake_vs_real",
                        f"the Meta function of {op_name} disagrees with its kernel on output[{i}]: "
                        f"Meta gives {fake_text}, the kernel gives {_describe(r)}",
                        f"fix {op_name.split('::')[-1]}_meta to infer the kernel's output shape, dtype and strides; "
                        "a wrong Meta still compiles, and the graph then plans memory for the wrong tensor",
                        op_name,
                    )
                )
        if len(fakes) != len(reals):
            problems.append(
                Problem(
                    Stage.META,
                    "fake_vs_real",
                    f"the Meta function of {op_name} returns {len(fakes)} values, the kernel {len(reals)}",
                    "return exactly what the schema's returns declare",
                    op_name,
                )
            )
    return checks, problems


def check_meta_structure(op, samples: Sequence[tuple[tuple, dict]]) -> list[Problem]:
    """The Meta/fake function alone, under FakeTensorMode, on each sample call (defaults omitted and
    passed): it accepts the call, returns what the schema's returns declare, and returns no input
    (or a view of one) unless the schema says the return aliases it."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._pytree import tree_leaves, tree_map_only

    schema = op._schema
    name = schema.name
    returns = schema.returns
    problems: list[Problem] = []
    for args, kwargs in samples:
        mode = FakeTensorMode(shape_env=ShapeEnv())  # a shape env lets data-dependent sizes be unbacked SymInts
        fake_args, fake_kwargs = tree_map_only(torch.Tensor, mode.from_tensor, (args, kwargs))
        try:
            with mode:
                out = op(*fake_args, **fake_kwargs)
        except Exception as exc:
            text = f"{type(exc).__name__}: {diagnose.first_line(str(exc))}"
            passed = sorted(kwargs) + [a.name for a in schema.arguments[: len(args)]]
            problems.append(
                Problem(
                    Stage.META,
                    "meta_call",
                    f"the Meta function of {name} fails when called with ({', '.join(passed)}): {text}",
                    f"make {diagnose.meta_name(name)} take every schema parameter, defaulted ones included "
                    f"({', '.join(a.name for a in schema.arguments)}), in schema order",
                    name,
                    str(exc),
                )
            )
            continue
        values = () if out is None else (out if isinstance(out, tuple) else (out,))
        if len(values) != len(returns):
            problems.append(
                Problem(
                    Stage.META,
                    "meta_returns",
                    f"the Meta function of {name} returns {len(values)} value(s), the schema declares {len(returns)} "
                    f"({str(schema).rpartition(' -> ')[2]})",
                    "return exactly the schema's returns: None for '-> ()', one tensor for '-> Tensor', a tuple for several",
                    name,
                )
            )
            continue
        inputs = [t for t in tree_leaves((fake_args, fake_kwargs)) if isinstance(t, torch.Tensor)]
        for i, (value, ret) in enumerate(zip(values, returns)):
            if ret.alias_info is not None:
                continue
            for t in tree_leaves(value):
                if isinstance(t, torch.Tensor) and any(torch._C._is_alias_of(t, x) for x in inputs):
                    problems.append(
                        Problem(
                            Stage.META,
                            "meta_alias",
                            f"the Meta function of {name} returns an input (or a view of one) as output {i}, but the "
                            "schema's return is a fresh tensor",
                            "allocate the output (torch.empty_like(x), x.new_empty(shape)); only a return annotated "
                            "Tensor(a) may alias its input",
                            name,
                        )
                    )
                    break
    return problems


# Every opcheck test, always; each failure belongs to the stage whose check it makes.
OPCHECK_ALL = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
OPCHECK_DEFAULT = OPCHECK_ALL
_OPCHECK_STAGE = {
    "test_schema": Stage.REGISTRATION,
    "test_autograd_registration": Stage.REGISTRATION,
    "test_faketensor": Stage.META,
    "test_aot_dispatch_dynamic": Stage.AOT_FUNCTIONALIZATION,
}


def _first_call_per_op(calls: list[_OpCall]) -> list[_OpCall]:
    """One recorded call per op: checking an op's metadata once is enough."""
    first: dict[str, _OpCall] = {}
    for call in calls:
        first.setdefault(call.op._schema.name, call)
    return list(first.values())


def run_opcheck(calls: list[_OpCall], tests: Sequence[str]) -> list[OpcheckResult]:
    import torch

    results = []
    for call in _first_call_per_op(calls):
        op_name = call.op._schema.name
        try:
            raw = torch.library.opcheck(call.op, _clone(call.args), _clone(call.kwargs), test_utils=tuple(tests), raise_exception=False)
        except Exception as exc:  # opcheck itself can trip over exotic argument types
            raw = {"opcheck": exc}
        results.append(OpcheckResult(op_name, tuple((k, v if v == "SUCCESS" else f"{type(v).__name__}: {v}") for k, v in raw.items())))
    return results


def opcheck_problems(results: list[OpcheckResult], already: list[Problem]) -> list[Problem]:
    """opcheck failures not already explained by a more specific check of the same op."""
    explained = {p.op for p in already}
    problems = []
    for r in results:
        if r.ok or r.op in explained:
            continue
        for test, error in r.results:
            if error == "SUCCESS":
                continue
            problems.append(
                Problem(
                    _OPCHECK_STAGE.get(test, Stage.REGISTRATION),
                    f"opcheck.{test}",
                    f"torch.library.opcheck's {test} fails for {r.op}: {diagnose.first_line(error)}",
                    f"run torch.library.opcheck(torch.ops.{r.op.replace('::', '.')}, args, test_utils=({test!r},)) "
                    "and fix what it reports",
                    r.op,
                    error,
                )
            )
    return problems


@dataclass
class _Call:
    """One call of the compiled function: its inputs before, and outputs and inputs right after it
    (copied at once: npugraph_ex returns outputs in graph memory that the next replay overwrites)."""

    label: str
    before: tuple  # (args, kwargs) as passed
    after: tuple | None = None  # (args, kwargs) after the call: in-place effects
    out: Any = None


@dataclass
class _Compiled:
    capture: GraphCapture
    calls: list[_Call] = field(default_factory=list)
    error: BaseException | None = None
    error_call: str | None = None
    first_call_s: float | None = None
    replay_s: float | None = None


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


def call_plan(args, kwargs, *, dynamic: bool) -> list[tuple[str, Callable[[tuple | None], tuple]]]:
    """(label, make inputs from the previous call's inputs) for each call a check makes."""
    if dynamic:
        return [(f"shape {i + 1}", lambda prev, i=i: _fresh((args, kwargs), grow=i)) for i in range(DYNAMIC_SHAPES)]

    def refill(prev):
        _refill(prev)
        return prev

    makers = [lambda prev: _clone((args, kwargs)), lambda prev: _fresh((args, kwargs)), refill, lambda prev: _fresh((args, kwargs))]
    return list(zip(STATIC_CALLS, makers))


def run_compiled(fn, args, kwargs, backend: Backend, *, fullgraph: bool, dynamic: bool, options: dict | None) -> _Compiled:
    """torch.compile once, then call it as ``call_plan`` says, keeping each call's inputs and outputs."""
    import torch

    capture = GraphCapture()
    compile_kwargs: dict[str, Any] = {"backend": backend.make(capture), "fullgraph": fullgraph, "dynamic": dynamic}
    if options:
        compile_kwargs["options"] = options
    compiled = torch.compile(_fresh_entry(fn), **compile_kwargs)
    result = _Compiled(capture)
    inputs = None
    with backend.session(capture):
        for label, make_inputs in call_plan(args, kwargs, dynamic=dynamic):
            inputs = make_inputs(inputs)
            call = _Call(label, _clone(inputs))
            start = time.perf_counter()
            try:
                out = compiled(*inputs[0], **inputs[1])
                if backend.device != "cpu":
                    getattr(torch, backend.device).synchronize()
            except Exception as exc:
                result.error, result.error_call = exc, label
                return result
            elapsed = time.perf_counter() - start
            call.out, call.after = _clone(out), _clone(inputs)
            result.calls.append(call)
            if result.first_call_s is None:
                result.first_call_s = elapsed
            elif result.replay_s is None:
                result.replay_s = elapsed
    return result


def compare_numerics(
    fn: Callable, compiled: _Compiled, input_names: list[str] | None, *, atol: float | None, rtol: float | None
) -> tuple[list[Comparison], list[Problem]]:
    """Each call's outputs and inputs after it (so mutations count) against eager on the same inputs."""
    import torch
    from torch.utils._pytree import keystr, tree_flatten_with_path

    def named(tree, prefix: str, top_names: list[str] | None = None):
        leaves, _ = tree_flatten_with_path(tree)
        for path, leaf in leaves:
            key = keystr(path)
            if top_names is not None and key.startswith("[0]["):
                idx, _, rest = key[len("[0][") :].partition("]")
                if idx.isdigit() and int(idx) < len(top_names):
                    key = f"input {top_names[int(idx)]}{rest}"
            yield (f"{prefix}{key}", leaf)

    comparisons: list[Comparison] = []
    for call in compiled.calls:
        expected_inputs = _clone(call.before)
        expected_out = fn(*expected_inputs[0], **expected_inputs[1])
        pairs = list(zip(named(expected_out, "output"), named(call.out, "output")))
        pairs += list(zip(named(expected_inputs, "", input_names), named(call.after, "", input_names)))
        for (name, want), (_, got) in pairs:
            if not isinstance(want, torch.Tensor):
                ok = want == got
                comparisons.append(Comparison(name, call.label, bool(ok), None if ok else f"{got!r} != {want!r}"))
                continue
            try:
                torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)
                comparisons.append(Comparison(name, call.label, True))
            except AssertionError as exc:
                comparisons.append(Comparison(name, call.label, False, " ".join(str(exc).split())))
    problems = [
        Problem(
            Stage.NUMERICS if c.call == compiled.calls[0].label else Stage.REPLAY,
            "compiled_vs_eager",
            f"{c.name} on the {c.call} call differs from eager: {c.detail}",
            "rerun with backend='aot_eager': if it differs there too, the Meta function or the schema's mutation "
            "annotations mislead the graph; if only npugraph_ex differs, a replay reuses something captured once "
            "(a Python scalar, an input address, state outside the graph)",
        )
        for c in comparisons
        if not c.ok
    ]
    return comparisons, problems[:3]  # the first few say it; the report lists every comparison


def explain_breaks(fn, args, kwargs) -> tuple[int, list[GraphBreak]] | None:
    """All breaks, not only the first that fullgraph=True stops at, as torch._dynamo.explain sees them."""
    import torch._dynamo

    try:
        explained = torch._dynamo.explain(_fresh_entry(fn))(*_clone(args), **_clone(kwargs))
    except Exception:
        return None
    breaks = []
    for b in explained.break_reasons:
        stack = list(getattr(b, "user_stack", None) or [])
        where = f"{stack[-1].filename}:{stack[-1].lineno} in {stack[-1].name}" if stack else None
        breaks.append(GraphBreak(b.reason.strip(), where))
    return explained.graph_count, breaks


def _dedupe(problems: Iterable[Problem]) -> tuple[Problem, ...]:
    seen, out = set(), []
    for p in problems:
        key = (p.stage, p.check, p.op)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# The entry point
# ------------------------------------------------------------------------------------------------


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
) -> GraphEntryReport:
    """Check that ``fn_or_op(*args, **kwargs)`` enters one ``torch.compile`` graph with zero breaks.

    ``fn_or_op`` is an op (``torch.ops.ns.name[.overload]`` or a ``custom_op``), an ``nn.Module`` or a
    function that calls ops. For a module or function the custom (non-ATen) ops it calls are the
    targets, unless ``ops`` names them. ``real_kernel=False`` says the kernel is a stand-in (derived
    from the Meta function): fake-vs-real and numerics then prove nothing and are skipped, and the
    report says so. ``opcheck``: True runs every opcheck test, or name the tests.
    ``backend``: ``auto`` (npugraph_ex on an NPU; off the NPU npugraph_ex's own compiler emulated when a
    torch-npu wheel can be had, else aot_eager), ``npugraph_ex``, ``aot_eager``, ``inductor`` or ``eager``.
    ``dynamic=True`` sweeps shapes and reports recaptures. ``meta_samples``: more calls for the Meta
    function alone (e.g. with defaulted arguments passed).
    """
    import torch

    from opkit.verify.backends import auto_fallback_note

    started = time.perf_counter()
    chosen = resolve_backend(backend)
    device = device or chosen.device
    target = _as_target(fn_or_op, ops)
    kwargs = dict(kwargs or {})
    args, kwargs = _to_device((tuple(args), kwargs), device)
    notes = list(notes)
    skipped: list[SkippedCheck] = []
    if backend == "auto" and (why := auto_fallback_note()) is not None and not chosen.emulated and chosen.name == "aot_eager":
        notes.append(why)
    emulation = None
    if chosen.emulated:
        from opkit.verify import npugraph_ex

        emulation = npugraph_ex.load()
        notes.append(emulation.note)
    if not chosen.sees_aot_graph:
        notes.append(
            f"backend {chosen.name} runs AOTAutograd out of reach: only Dynamo's graph was inspected"
            if chosen.name == "npugraph_ex"
            else f"backend {chosen.name} does not run AOTAutograd: functionalization was not checked"
        )
    if not real_kernel:
        skipped.append(SkippedCheck("numerics", "the kernel is a stand-in derived from the Meta function (add reference.py)"))
        skipped.append(SkippedCheck("opcheck.test_faketensor and fake vs real", "a stand-in kernel agrees with the Meta function by construction"))

    problems: list[Problem] = []
    passed: list[Stage] = []
    with torch.no_grad(), quiet_torch_logs():
        # Registration
        problems += check_registration(target.op_names)
        signatures = {n: s for n in target.op_names if (s := _signature(n)) is not None}
        undefined = any(p.check == "undefined_op" for p in problems)

        # The Meta function alone, on the sample calls: before eager, whose stand-in kernel it may drive
        overload = getattr(fn_or_op, "_opoverload", fn_or_op)  # a custom_op's OpOverload
        sole_overload = not isinstance(getattr(overload, "_schema", None), (str, type(None))) and not undefined
        if sole_overload and _has_fake_impl(target.op_names[0]):
            problems += check_meta_structure(overload, [(args, kwargs), *meta_samples])
        meta_broken = any(p.stage is Stage.META for p in problems)

        # Eager, with custom-op calls recorded for the per-op checks
        calls: list[_OpCall] = []
        eager_s = None
        eager_ok = False
        if not undefined:
            try:
                _, calls, eager_s = run_eager(target.fn, _clone(args), _clone(kwargs))
                eager_ok = True
            except Exception as exc:
                stand_in_of_broken_meta = not real_kernel and meta_broken
                if not stand_in_of_broken_meta and (not any(p.check == "missing_meta" for p in problems) or "fake" not in str(exc).lower()):
                    problems.append(
                        Problem(
                            Stage.EAGER,
                            "eager_run",
                            f"the model fails outside torch.compile: {type(exc).__name__}: {diagnose.first_line(str(exc))}",
                            "fix eager first (graph-entry stage 1): the op needs a kernel for this device; off-NPU "
                            "give the project a reference.py",
                            target.op_names[0] if len(target.op_names) == 1 else None,
                            str(exc),
                        )
                    )
        if not target.op_names and not isinstance(fn_or_op, str):
            target.op_names = sorted({c.op._schema.name for c in calls})
            signatures.update({n: s for n in target.op_names if (s := _signature(n)) is not None})
        if not sole_overload:
            for call in _first_call_per_op(calls):
                problems += check_meta_structure(call.op, [(call.args, call.kwargs)])
        problems += check_mutations(calls)
        meta_checks: list[MetaCheck] = []
        opcheck_results: list[OpcheckResult] = []
        if real_kernel:
            meta_checks, meta_problems = check_fake_vs_real(calls)
            problems += meta_problems
        if opcheck and calls:
            tests = OPCHECK_ALL if opcheck is True else tuple(opcheck)
            if not real_kernel:  # a stand-in kernel agrees with the Meta function by construction
                tests = tuple(t for t in tests if t != "test_faketensor")
            opcheck_results = run_opcheck(calls, tests)
        elif not opcheck:
            skipped.append(SkippedCheck("opcheck", "turned off by the caller (opcheck=False)"))
        if eager_ok:
            passed.append(Stage.EAGER)

        # Dynamo -> AOT functionalization -> backend passes -> capture -> replays
        compiled = None if undefined else run_compiled(target.fn, args, kwargs, chosen, fullgraph=fullgraph, dynamic=dynamic, options=options)
        capture = compiled.capture if compiled else GraphCapture()
        graph_breaks: list[GraphBreak] = []
        graph_count = len(capture.dynamo_graphs)
        sole_op = target.op_names[0] if len(target.op_names) == 1 else None
        if compiled is not None and compiled.error is not None:
            exc = compiled.error
            if not capture.dynamo_graphs:
                params = {n: ", ".join(a.name for a in s.arguments) for n, s in signatures.items()}
                problem, brk = diagnose.dynamo_failure(exc, sole_op=sole_op, schema_params=params, user_code=not sole_overload)
                problems.append(problem)
                explained = explain_breaks(target.fn, args, kwargs)
                graph_count, graph_breaks = (explained[0], explained[1]) if explained else (0, [])
                if not graph_breaks:
                    graph_breaks = [brk]
            elif capture.compiled < len(capture.dynamo_graphs):
                problems.append(
                    diagnose.compile_failure(
                        exc,
                        backend=chosen.name,
                        reached_aot_graph=len(capture.aot_graphs) >= len(capture.dynamo_graphs),
                        sees_aot_graph=chosen.sees_aot_graph,
                        sole_op=sole_op,
                        data_dependent=graphs.data_dependent_ops(capture.aot_graphs),
                    )
                )
            elif not isinstance(exc, _capture_violation_type()):
                problems.append(diagnose.runtime_failure(exc, backend=chosen.name, sole_op=sole_op, call=compiled.error_call))
        elif compiled is not None and graph_count > 1 and not fullgraph:
            explained = explain_breaks(target.fn, args, kwargs)
            graph_breaks = explained[1] if explained else []

        # What the graph holds
        inspected = capture.aot_graphs or capture.dynamo_graphs
        ops_in_graph = graphs.find_ops(target.op_names, capture.aot_graphs, capture.dynamo_graphs) if compiled and capture.dynamo_graphs else ()
        uncapturable = list(graphs.uncapturable_ops(inspected, device=device, npu=chosen.name == "npugraph_ex"))
        uncapturable += [UncapturableOp(n, "random") for n, s in signatures.items() if s.has_generator]
        for u in uncapturable:
            problems.append(_uncapturable_problem(u))
        for o in ops_in_graph:
            if not o.found and capture.compiled:
                problems.append(
                    Problem(
                        Stage.DYNAMO,
                        "op_not_in_graph",
                        f"{o.op} ran eagerly but is not in the captured graph",
                        "call it as torch.ops.<ns>.<name>(...) inside the compiled function; a wrapper Dynamo "
                        "skips (torch._dynamo.disable, allow_in_graph misuse) keeps it out",
                        o.op,
                    )
                )

        # npugraph_ex's own passes and capture (emulated off the NPU)
        run = None
        if capture.observation is not None and emulation is not None:
            from opkit.verify.npugraph_ex import checks

            run = checks.run_record(
                capture.observation,
                source=f"torch-npu {emulation.wheel.version} ({emulation.wheel.source})",
                calls=[c.label for c in compiled.calls] + ([f"{compiled.error_call} (failed)"] if compiled.error_call else []),
            )
            if capture.observation.graphs:
                problems += checks.passes_problems(capture.observation, target.op_names)
            problems += checks.capture_problems(capture.observation)

        # opcheck failures after the stages that explain most of them
        problems += opcheck_problems(opcheck_results, problems)

        # Replays and numerics
        comparisons: list[Comparison] = []
        if compiled is not None and compiled.calls and eager_ok:
            if any(u.kind == "random" for u in uncapturable) or any(p.check == "random" for p in problems):
                skipped.append(SkippedCheck("numerics", "the graph draws random numbers"))
            elif real_kernel:
                comparisons, numeric_problems = compare_numerics(target.fn, compiled, target.input_names, atol=atol, rtol=rtol)
                problems += numeric_problems
        if compiled is not None and compiled.error is None:
            stages = [Stage.DYNAMO, Stage.AOT_FUNCTIONALIZATION, Stage.BACKEND]
            if run is not None:
                stages += [Stage.CAPTURE]
            if comparisons:
                stages += [Stage.REPLAY, Stage.NUMERICS] if len(compiled.calls) > 1 else [Stage.NUMERICS]
            for stage in stages:
                if stage is Stage.AOT_FUNCTIONALIZATION and not chosen.sees_aot_graph:
                    continue
                if not any(p.stage is stage for p in problems):
                    passed.append(stage)
        elif compiled is not None and capture.dynamo_graphs:
            passed.append(Stage.DYNAMO)
        if calls and not any(p.stage is Stage.META for p in problems):
            passed.append(Stage.META)
        if not any(p.stage is Stage.REGISTRATION for p in problems) and not undefined:
            passed.insert(0, Stage.REGISTRATION)

    return GraphEntryReport(
        target=target.label,
        backend=chosen.name,
        device=device,
        graph_count=graph_count,
        graph_break_count=len(graph_breaks) if graph_breaks else (max(graph_count - 1, 0) if compiled and compiled.error is None else 0),
        problems=_dedupe(problems),
        graph_breaks=tuple(graph_breaks),
        ops_in_graph=tuple(ops_in_graph),
        uncapturable_ops=tuple(uncapturable),
        comparisons=tuple(comparisons),
        meta_checks=tuple(meta_checks),
        opcheck=tuple(opcheck_results),
        timings=Timings(
            eager_s=eager_s,
            first_call_s=compiled.first_call_s if compiled else None,
            backend_compile_s=capture.backend_compile_s if capture.dynamo_graphs else None,
            replay_s=compiled.replay_s if compiled else None,
            total_s=time.perf_counter() - started,
        ),
        notes=tuple(dict.fromkeys(notes)),
        graph_code=graphs.graph_code(capture.aot_graphs, capture.dynamo_graphs),
        passed_stages=tuple(sorted(dict.fromkeys(passed), key=list(Stage).index)),
        emulated=chosen.emulated,
        npugraph_ex=run,
        skipped=tuple(dict.fromkeys(skipped)),
    )


def _capture_violation_type() -> type:
    from opkit.verify.npugraph_ex.capture import CaptureViolation

    return CaptureViolation


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
