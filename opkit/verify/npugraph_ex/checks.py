"""The npugraph_ex stages of a check, read from one ``observe.Observation``: its passes, then capture.

Each function is one stage unit: it reads what npugraph_ex did and returns the problems it found.
"""

from __future__ import annotations

from collections.abc import Iterable

from opkit.verify.npugraph_ex import capture
from opkit.verify.npugraph_ex.observe import Observation
from opkit.verify.report import NpugraphExRun, Problem, Stage

_WRAPPERS = ("auto_functionalized", "auto_functionalized_v2")


def run_record(observation: Observation, *, source: str, calls: Iterable[str], emulated: bool = True) -> NpugraphExRun:
    graphs = observation.graphs
    return NpugraphExRun(
        emulated=emulated,
        source=source,
        graph_before="\n".join(g.before.code.strip() for g in graphs) or None,
        graph_after="\n".join(g.after.code.strip() for g in graphs if g.after is not None) or None,
        mutated_user_inputs=tuple(name for g in graphs for name in g.mutated_user_inputs),
        captures=capture.LOG.captures,
        recaptures_for_moved_inputs=observation.counter("recapture_due_to_mutated_input_change_"),
        replays=capture.LOG.replays,
        calls=tuple(calls),
        fell_back_to_eager=observation.capture_limit_message,
        skipped_passes=tuple(observation.skipped_passes),
        captured_kernels=tuple(capture.LOG.kernels),
    )


def _name(target) -> str:
    """An op's qualified name; anything else as it prints (a higher-order op prints its name: auto_functionalized)."""
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else str(target)


def passes_problems(observation: Observation, op_names: Iterable[str]) -> list[Problem]:
    """After npugraph_ex's passes: each target op called directly, no functionalization left on it,
    no copy-back of what it wrote into a graph input, and no pass failure swallowed."""
    problems: list[Problem] = []
    wanted = set(op_names)
    for index, line in enumerate(observation.skipped_passes):
        reason = observation.swallowed[index] if index < len(observation.swallowed) else None
        problems.append(
            Problem(
                Stage.BACKEND,
                "skipped_pass",
                f"npugraph_ex skipped a pass and went on: {line.strip()}" + (f" (the pass raised {reason})" if reason else ""),
                "the graph runs without that optimisation (e.g. in-place ops stay copies): it costs memory "
                "and time on the NPU, not correctness"
                + ("" if reason else "; rerun with TORCH_COMPILE_DEBUG=1 to see the exception it swallowed"),
                detail=reason,
            )
        )
    for g in observation.graphs:
        if g.after is None:
            continue
        placeholders = {n.name for n in g.after.graph.nodes if n.op == "placeholder"}
        mutated = set(g.mutated_user_inputs)
        touched = _touched_by(g.after.graph, wanted)
        v1_lists = _v1_list_mutations(g.before.graph, wanted)
        problems += compiler_defects(g.after.graph)
        for node in g.after.graph.nodes:
            if node.op != "call_function":
                continue
            name = _name(node.target)
            if name in _WRAPPERS:
                op = _name(node.args[0]) if node.args else "?"
                if op in wanted:
                    problems.append(
                        Problem(
                            Stage.BACKEND,
                            "not_reinplaced",
                            f"{op} is still wrapped in {name} after npugraph_ex's passes: "
                            "the capture copies its mutated argument instead of writing it in place",
                            "make the mutated argument a graph input or a fresh intermediate, not a view of one "
                            "(npugraph_ex does not re-inplace through views)",
                            op,
                        )
                    )
            elif name == "aten::copy_" and _copies_back(node, placeholders & mutated, touched) and v1_lists:
                problems.append(
                    Problem(
                        Stage.BACKEND,
                        "v1_list_copy_back",
                        f"npugraph_ex left a copy_ into graph input {node.args[0].name}: {', '.join(v1_lists)} "
                        "mutates a Tensor[] under auto_functionalized (v1), which npugraph_ex decomposes by cloning "
                        "each tensor of the list and copying it back (the values stay right, the copies cost time)",
                        "keep torch._inductor.config.enable_auto_functionalized_v2 on (torch's default): under v2 "
                        "npugraph_ex writes the list's tensors in place",
                    )
                )
            elif name == "aten::copy_" and _copies_back(node, placeholders & mutated, touched):
                problems.append(
                    Problem(
                        Stage.BACKEND,
                        "copy_back",
                        f"npugraph_ex left a copy_ into graph input {node.args[0].name} after its passes",
                        "the in-place op was not re-inplaced on the input: check its schema annotates the "
                        "argument Tensor(a!) and the model passes the input itself, not a view",
                    )
                )
    return problems


def _v1_list_mutations(graph, wanted: set[str]) -> list[str]:
    """Target ops wrapped in ``auto_functionalized`` (v1) with a list of tensors among their arguments:
    v1 has no bases to write through, so npugraph_ex clones each list item and copies it back."""
    found = []
    for node in graph.nodes:
        if node.op == "call_function" and _name(node.target) == "auto_functionalized" and node.args:
            op = _name(node.args[0])
            if op in wanted and any(isinstance(v, (list, tuple)) and v for v in node.kwargs.values()):
                found.append(op)
    return sorted(set(found))


def _copies_back(node, inputs: set[str], touched: set) -> bool:
    """A ``copy_`` into one of ``inputs`` of a value computed from what a target op wrote or returned
    (``touched``). A self-copy ``copy_(x, x)`` copies nothing in: npugraph_ex's re-inplacing leaves it on
    purpose (TorchAir's reinplace st, test_self_copy_no_crash). A copy from ATen ops alone (a slice_scatter
    epilogue) is the compiler's own bookkeeping, which no op schema can change."""
    if len(node.args) < 2 or node.args[0].name not in inputs or node.args[1] is node.args[0]:
        return False
    seen, todo = set(), [node.args[1]]
    while todo:
        n = todo.pop()
        if n in touched:
            return True
        if n not in seen and n.op != "placeholder":
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return False


def _touched_by(graph, wanted: set[str]) -> set:
    """Nodes of the target ops (direct or wrapped) and the values they are handed (what they may write)."""
    touched = set()
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        name = _name(node.target)
        op = _name(node.args[0]) if name in _WRAPPERS and node.args else name
        if op in wanted:
            touched.add(node)
            touched.update(n for n in node.all_input_nodes if n.op != "placeholder")
    return touched


_DEFECT_ACTION = (
    "the graph npugraph_ex received was right and its own passes broke it, so no change to the op fixes it: "
    "report it to TorchAir with the graph after its passes (opkit verify --show-graph); meanwhile avoid the "
    "pass's trigger (a functional twin registered as re-inplaceable) or the option that runs it"
)


def _value(node):
    return node.meta.get("val", node.meta.get("fake_result")) if hasattr(node, "meta") else None


def _one_tensor(node) -> bool:
    """The node's value is a single tensor: by the schema of the op it calls now (a pass may have swapped
    the op and left the old op's fake value), or by that fake value."""
    import torch

    schema = getattr(node.target, "_schema", None)
    if schema is not None:
        returns = schema.returns
        return len(returns) == 1 and isinstance(returns[0].type, torch.TensorType)
    return isinstance(_value(node), torch.Tensor)


def compiler_defects(graph) -> list[Problem]:
    """What npugraph_ex's own passes left that cannot be right, whatever the op: a tuple index on a value
    that is one tensor (its multi-inplace re-inplacing swaps a functional twin, whose outputs are a tuple,
    for the in-place op or onto its empty_like buffers, and keeps the indexing). It runs wrong on an NPU too."""
    import operator

    problems = []
    for node in graph.nodes:
        if node.op == "call_function" and node.target is operator.getitem and node.args and hasattr(node.args[0], "target"):
            indexed = node.args[0]
            if indexed.op == "call_function" and _one_tensor(indexed):
                problems.append(
                    Problem(
                        Stage.BACKEND,
                        "backend_defect",
                        f"npugraph_ex's passes left {node.name} = {indexed.name}[{node.args[1]}], a tuple index on "
                        f"{_name(indexed.target)}'s single tensor: its re-inplacing rewired a functional op's outputs and "
                        "kept their indexing, so the graph reads a slice instead of the result (on an NPU too): the "
                        "compiler's defect, not the op's",
                        _DEFECT_ACTION,
                    )
                )
    return problems


_CAPTURE_ACTIONS = {
    "cpu_sync": "keep the value on the device as a tensor: no .item(), .tolist(), .cpu() or Python branching on it in the graph",
    "data_dependent": "npugraph_ex needs static shapes: use a fixed-shape form (masking with torch.where, a padded output)",
    "random": "generate the random tensor outside the compiled region and pass it in as an input",
}


def no_capture_note(observation: Observation, options: dict | None) -> str:
    """What a report whose calls captured no aclgraph says: a PASS then rests on eager runs of the graph."""
    if (options or {}).get("force_eager"):
        why = "force_eager=True runs the FX graph eagerly"
    elif observation.capture_limit_message:
        why = "it fell back to eager"
    else:
        why = "it ran the graph without capturing it"
    return f"npugraph_ex made 0 captures ({why}): no aclgraph was captured or replayed, so capture and replay went unchecked"


def capture_problems(observation: Observation) -> list[Problem]:
    """Capture: what aclgraph refuses, and npugraph_ex giving up capturing for good."""
    problems = [
        Problem(Stage.CAPTURE, v.kind, f"{v.message} (seen by the capture emulator)", _CAPTURE_ACTIONS[v.kind], v.op)
        for v in dict.fromkeys(capture.LOG.violations)
    ]
    if observation.capture_limit_message:
        problems.append(
            Problem(
                Stage.CAPTURE,
                "fallback_to_eager",
                "npugraph_ex reached capture_limit and now runs this graph eagerly for good: "
                + observation.capture_limit_message.split(".")[0],
                "each new shape (dynamic=True) or moved mutated input is a new capture: keep shapes static "
                "(dynamic=False, pad to buckets) or raise options={'capture_limit': N}",
            )
        )
    return problems
