"""Property tests: any schema `opkit new` accepts yields a project model; any it refuses is one SpecError.

The signatures come from tests/signature_strategies.py (the argument types real ops use, >= 70% accepted,
checked below); refusals are valid signatures broken in one documented way each.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signature_strategies import share_of, specs

from opkit.generate.model import ProjectModel
from opkit.generate.project import generate_project
from opkit.generate.spec import SpecError, make_spec
from opkit.lint import lint

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make(case):
    schema, style = case
    return make_spec(schema.split("(", 1)[0], schema=schema, style=style)


def accepted(case) -> bool:
    try:
        make(case)
    except SpecError:
        return False
    return True


def test_the_strategy_mostly_draws_signatures_opkit_new_accepts():
    assert share_of(specs(), accepted) >= 0.7


@SETTINGS
@given(specs())
def test_accepted_schemas_model_cleanly(case):
    try:
        spec = make(case)
    except SpecError:
        return  # rejection has its own properties below
    model = ProjectModel(spec)  # every derived value the templates use must exist
    assert model.prototype.op == spec.signature.op_type
    assert model.dummy_args is not None
    # What opkit new accepts, opkit lint accepts: the spec's schema has no lint error.
    errors = [f for f in lint(schemas=[spec.schema], dialect=spec.dialect).findings if f.severity >= 2]
    assert errors == []


# One way to break a valid signature -> (what the refusal names, the corrupted schema). Each is a documented
# refusal (msopgen.md §2, op-plugin-yaml.md): a type with no faithful attr or operand, a returned input,
# a non-tensor return, a misspelled type.
REFUSALS = {
    "Generator": lambda s: s.replace(") ->", ", Generator? generator=None) ->", 1),
    "Tensor?[]": lambda s: s.replace("(", "(Tensor?[] indices, ", 1),
    "Tensor(a!)": lambda s: s.replace("(Tensor ", "(Tensor(a!) ", 1).rsplit(" -> ", 1)[0] + " -> Tensor(a!)",
    "returns 'int'": lambda s: s.rsplit(" -> ", 1)[0] + " -> int",
    "Tensr": lambda s: s.replace("Tensor", "Tensr", 1),
}


@SETTINGS
@given(specs(), st.sampled_from(sorted(REFUSALS)))
def test_each_refusal_is_one_line_that_names_the_problem(case, named):
    schema, style = case
    broken = REFUSALS[named](schema)
    with pytest.raises(SpecError) as refused:
        make((broken, style))
    message = str(refused.value)
    assert message and "\n" not in message
    assert named in message, (broken, message)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(specs(), st.sampled_from(["float16", "float16,float", "int32"]), st.sampled_from(["ND", "ND,NCHW"]))
def test_every_generated_project_lints_without_errors(tmp_path_factory, case, dtypes, formats):
    schema, style = case
    name = schema.split("(", 1)[0]
    try:
        spec = make_spec(name, schema=schema, style=style, dtypes=dtypes, formats=formats)
    except SpecError:
        return
    project = generate_project(spec, tmp_path_factory.mktemp("p") / name, msopgen_mode="builtin").path
    errors = [(f.code, f.path, f.message) for f in lint([str(project)]).findings if f.severity >= 2]
    assert errors == [], schema
