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
    no copy-back into a graph input it mutates, and no pass failure swallowed."""
    problems: list[Problem] = []
    wanted = set(op_names)
    for line in observation.skipped_passes:
        problems.append(
            Problem(
                Stage.BACKEND,
                "skipped_pass",
                f"npugraph_ex skipped a pass and went on: {line.strip()}",
                "the graph runs without that optimisation (e.g. in-place ops stay copies); rerun with "
                "TORCH_COMPILE_DEBUG=1 to see the exception it swallowed",
            )
        )
    for g in observation.graphs:
        if g.after is None:
            continue
        placeholders = {n.name for n in g.after.graph.nodes if n.op == "placeholder"}
        mutated = set(g.mutated_user_inputs)
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
            elif name == "aten::copy_" and node.args and node.args[0].name in placeholders & mutated:  # args[0]: a tensor's node
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


_CAPTURE_ACTIONS = {
    "cpu_sync": "keep the value on the device as a tensor: no .item(), .tolist(), .cpu() or Python branching on it in the graph",
    "data_dependent": "npugraph_ex needs static shapes: use a fixed-shape form (masking with torch.where, a padded output)",
    "random": "generate the random tensor outside the compiled region and pass it in as an input",
}


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
