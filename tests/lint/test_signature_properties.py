"""Properties over signatures built from the argument types real custom ops use.

The strategy (tests/signature_strategies.py) writes what an op developer writes, so most draws are
valid and the "accepted means clean" property runs on many cases;
``test_the_strategy_mostly_draws_valid_signatures`` keeps it that way (>= 70%).
Rejection has properties of its own: each kind of corruption is reported as its own code, located.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signature_strategies import share_of, signatures

from opkit.lint import Selection, lint
from opkit.signature import Dialect, SchemaError, parse_schema

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def accepted(schema: str) -> bool:
    try:
        parse_schema(schema, Dialect.OP_PLUGIN)
    except SchemaError:
        return False
    return True


def test_the_strategy_mostly_draws_valid_signatures():
    assert share_of(signatures(), accepted) >= 0.7


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
    "S106": lambda s: s.replace("(", "(Tensor dup, ", 1).replace(") ->", ", Tensor dup) ->", 1),  # a repeated name
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
