"""Properties over signatures built from the argument types real custom ops use.

The strategy writes what an op developer writes (tensors first, attributes after, defaults last,
keyword-only flags after ``*``), so most draws are valid and the "accepted means clean" property
runs on many cases; ``test_the_strategy_mostly_draws_valid_signatures`` keeps it that way (>= 70%).
Rejection has properties of its own: each kind of corruption is reported as its own code, located.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opkit.lint import Selection, lint
from opkit.signature import Dialect, SchemaError, parse_schema

# Types of the custom: entries of op-plugin's op_plugin_functions.yaml that msOpGen can express.
TENSORS = ["Tensor", "Tensor?", "Tensor[]"]
ATTRS = {"int": ["0", "1", "-1"], "float": ["0.0", "1e-05", "0.5"], "bool": ["False", "True"], "int[]": ["[]", "[1]", "[0,1]"],
         "float[]": ["[]", "[1.0]"], "str": ['"mean"', '"none"'], "int?": ["None"], "float?": ["None"]}  # fmt: skip
NAMES = ["x", "y", "weight", "bias", "scale", "offset", "gamma", "beta", "query", "key", "value", "mask", "residual",
         "eps", "axis", "dims", "alpha", "mode", "keep_dim", "groups", "num_heads", "block_size", "layout", "k"]  # fmt: skip
OPS = ["my_op", "npu_fused_attention", "rms_norm", "npu_add_rms_norm", "scatter_update", "npu_quant_matmul"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def signatures(draw) -> str:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique=True))
    n_tensors = draw(st.integers(1, len(names)))
    args = [f"{draw(st.sampled_from(TENSORS))} {name}" for name in names[:n_tensors]]
    attrs = names[n_tensors:]
    n_defaults = draw(st.integers(0, len(attrs)))
    for i, name in enumerate(attrs):
        type_ = draw(st.sampled_from(sorted(ATTRS)))
        default = draw(st.sampled_from(ATTRS[type_])) if i >= len(attrs) - n_defaults else None
        args.append(f"{type_} {name}" + (f"={default}" if default is not None else ""))
    if draw(st.booleans()):
        args.append(f"*, bool {draw(st.sampled_from(['deterministic', 'inplace_flag', 'trans']))}=False")
    returns = draw(st.sampled_from(["Tensor", "(Tensor, Tensor)", "Tensor[]", "(Tensor, Tensor, Tensor)"]))
    return f"{draw(st.sampled_from(OPS))}({', '.join(args)}) -> {returns}"


def accepted(schema: str) -> bool:
    try:
        parse_schema(schema, Dialect.OP_PLUGIN)
    except SchemaError:
        return False
    return True


def test_the_strategy_mostly_draws_valid_signatures():
    verdicts: list[bool] = []

    @settings(max_examples=200, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(signatures())
    def draw(schema):
        verdicts.append(accepted(schema))

    draw()
    assert len(verdicts) >= 100 and sum(verdicts) / len(verdicts) >= 0.7, sum(verdicts) / len(verdicts)


@SETTINGS
@given(signatures())
def test_an_accepted_signature_is_canonical_and_lints_without_errors(schema):
    if not accepted(schema):
        return  # e.g. an optional attr whose default torchgen refuses: rejection has its own properties
    assert str(parse_schema(schema, Dialect.OP_PLUGIN)) == schema  # printed back exactly: no S003
    findings = lint(schemas=[schema]).findings
    assert not [f for f in findings if f.code == "E005" or f.code.startswith("S0") or f.code.startswith("S1")], findings


CORRUPTIONS = {
    "S001": lambda s: s.replace(") ->", " ->", 1),  # unbalanced parenthesis
    "S002": lambda s: s.replace("Tensor", "Tensr", 1),  # a misspelled type
    "S106": lambda s: s.replace("(", "(Tensor dup, ", 1).replace(")", ", Tensor dup)", 1),  # a repeated name
}


@SETTINGS
@given(signatures(), st.sampled_from(sorted(CORRUPTIONS)))
def test_each_corruption_is_reported_as_its_own_code_at_the_schema(schema, code):
    broken = CORRUPTIONS[code](schema)
    findings = lint(schemas=[broken]).findings
    assert code in {f.code for f in findings}, (broken, findings)
    assert all(f.path == "<schema>" and f.line == 1 for f in findings)
    assert not [f for f in findings if f.code == "E005"]


@SETTINGS
@given(signatures())
def test_a_default_before_a_required_attribute_is_s107(schema):
    if not accepted(schema):
        return
    broken = schema.replace(") ->", ", int k=1, int[] required_dims) ->", 1).replace("*, ", "", 1)
    if "*" in schema:  # the flag moved before required_dims is then positional with a default: also S107
        broken = schema.split("*, ")[0] + "int k=1, int[] required_dims) -> " + schema.split(" -> ")[1]
    codes = {f.code for f in lint(schemas=[broken], selection=Selection(("S107", "E"))).findings}
    assert codes == {"S107"}, broken
