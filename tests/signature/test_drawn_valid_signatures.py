"""Properties over valid signatures (tests/signature_strategies.py: the argument types real ops use).

test_dialect_agreement.py draws mostly malformed schemas, to compare what each parser refuses; here
most draws are valid (>= 70%, checked), so "whatever is accepted is modelled faithfully" runs on many.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from signature_strategies import share_of, signatures
from torchgen.model import FunctionSchema

from opkit.signature import Dialect, SchemaError, parse_schema

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def accepted(schema: str) -> bool:
    try:
        parse_schema(schema, Dialect.OP_PLUGIN)
        parse_schema(schema, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return False
    return True


def test_the_strategy_mostly_draws_signatures_both_dialects_accept():
    assert share_of(signatures(), accepted) >= 0.7


@SETTINGS
@given(signatures())
def test_an_accepted_signature_is_what_torch_and_torchgen_read(schema):
    if not accepted(schema):
        return
    plugin = parse_schema(schema, Dialect.OP_PLUGIN)
    assert str(plugin) == str(FunctionSchema.parse(schema)) == schema
    library = parse_schema(schema, Dialect.TORCH_LIBRARY)
    theirs = torch._C.parse_schema(schema)
    assert [a.name for a in library.arguments] == [a.name for a in theirs.arguments]
    assert [a.kwarg_only for a in library.arguments] == [a.kwarg_only for a in theirs.arguments]
    assert [a.is_mutated for a in library.arguments] == [bool(a.alias_info and a.alias_info.is_write) for a in theirs.arguments]
    assert len(library.returns) == len(theirs.returns)
    assert [a.name for a in plugin.mutated_arguments] == [a.name for a in theirs.arguments if a.alias_info and a.alias_info.is_write]
    assert str(torch._C.parse_schema(str(library))) == str(theirs)
