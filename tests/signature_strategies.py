"""Hypothesis strategies for op signatures, shared by tests/lint, tests/generate and tests/signature.

``signatures()`` writes what an op developer writes, from the argument types the real op-plugin
``custom:`` entries use: tensors first (some written in place as ``Tensor(a!)``), attributes after,
defaults last, keyword-only flags after ``*``; it returns fresh tensors, or nothing when it writes an
input. Most draws are therefore valid (each suite checks it draws >= 70% valid ones), so the
"whatever is accepted works" properties run on many cases; rejection gets properties of its own, which
corrupt a valid draw in one known way.
"""

from __future__ import annotations

from hypothesis import strategies as st

# Types of the custom: entries of op-plugin's op_plugin_functions.yaml that msOpGen can express.
TENSORS = ["Tensor", "Tensor", "Tensor?", "Tensor[]"]
ATTRS = {"int": ["0", "1", "-1"], "float": ["0.0", "1e-05", "0.5"], "bool": ["False", "True"], "int[]": ["[]", "[1]", "[0,1]"],
         "float[]": ["[]", "[1.0]"], "str": ['"mean"', '"none"'], "int?": ["None"], "float?": ["None"], "SymInt": ["0"],
         "bool[]": ["[True,False]"], "int[2]": ["[1,1]"]}  # fmt: skip
NAMES = ["x", "y", "weight", "bias", "scale", "offset", "gamma", "beta", "query", "key", "value", "mask", "residual",
         "eps", "axis", "dims", "alpha", "mode", "keep_dim", "groups", "num_heads", "block_size", "layout", "k"]  # fmt: skip
OPS = ["my_op", "npu_fused_attention", "rms_norm", "npu_add_rms_norm", "scatter_update", "npu_quant_matmul"]
FRESH_RETURNS = ["Tensor", "(Tensor, Tensor)", "Tensor[]", "(Tensor, Tensor, Tensor)", "(Tensor out, Tensor rstd)"]


@st.composite
def signatures(draw, *, in_place: bool = True, custom_op: bool = False) -> str:
    """An op-plugin schema (torchgen's canonical spelling, which torch._C.parse_schema also reads).

    ``custom_op``: what torch.library.custom_op can infer from Python annotations (no list defaults, no
    named returns), for the custom-op style."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique=True))
    n_tensors = draw(st.integers(1, len(names)))
    written = draw(st.integers(0, min(2, n_tensors))) if in_place else 0
    args = []
    for i, name in enumerate(names[:n_tensors]):
        type_ = "Tensor" if i == 0 else draw(st.sampled_from(TENSORS))  # the first sizes the outputs
        args.append(f"Tensor({'ab'[i]}!) {name}" if i < written else f"{type_} {name}")
    attrs = names[n_tensors:]
    n_defaults = draw(st.integers(0, len(attrs)))
    for i, name in enumerate(attrs):
        defaulted = i >= len(attrs) - n_defaults
        type_ = draw(st.sampled_from(sorted(t for t in ATTRS if not (custom_op and defaulted and "[" in t))))
        default = draw(st.sampled_from(ATTRS[type_])) if defaulted else None
        args.append(f"{type_} {name}" + (f"={default}" if default is not None else ""))
    if draw(st.booleans()):
        args.append(f"*, bool {draw(st.sampled_from(['deterministic', 'inplace_flag', 'trans']))}=False")
    fresh = [r for r in FRESH_RETURNS if not (custom_op and " out" in r)]
    returns = draw(st.sampled_from(["()", *fresh] if written else fresh))
    return f"{draw(st.sampled_from(OPS))}({', '.join(args)}) -> {returns}"


@st.composite
def specs(draw) -> tuple[str, str]:
    """(schema, style) for `opkit new`: a signature the style can register."""
    style = draw(st.sampled_from(["op-plugin", "library", "custom-op"]))
    return draw(signatures(custom_op=style == "custom-op")), style


def share_of(strategy, verdict, examples: int = 200) -> float:
    """The share of ``examples`` draws of ``strategy`` for which ``verdict(draw)`` is true."""
    from hypothesis import HealthCheck, given, settings

    verdicts: list[bool] = []

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value):
        verdicts.append(bool(verdict(value)))

    draw()
    assert len(verdicts) >= examples // 2, len(verdicts)
    return sum(verdicts) / len(verdicts)
