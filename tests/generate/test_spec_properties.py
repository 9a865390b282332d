"""Property tests: any schema `opkit new` accepts yields a project model; any it refuses is one SpecError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opkit.generate.model import ProjectModel
from opkit.generate.project import generate_project
from opkit.generate.spec import SpecError, make_spec
from opkit.lint import lint

TYPES = ["Tensor", "Tensor", "Tensor?", "Tensor[]", "Tensor(a!)", "Tensor(b!)", "int", "int[]", "int[2]", "SymInt", "float", "float[]",
         "bool", "str", "Scalar", "ScalarType?", "Generator?", "Tensor?[]", "int?", "Dimname"]  # fmt: skip
DEFAULTS = {"int": ["0", "3"], "float": ["1.0", "1e-6"], "bool": ["True"], "int[]": ["[1,1]"], "int[2]": ["[1,1]"], "str": ["'a'"],
            "Tensor?": ["None"], "int?": ["None"]}  # fmt: skip
NAMES = ["x", "y", "weight", "attr1", "out", "self", "k2", "class"]
RETURNS = ["()", "Tensor", "(Tensor, Tensor)", "(Tensor a, Tensor b)", "Tensor[]", "Tensor(a!)", "int"]


@st.composite
def signatures(draw):
    args = []
    for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=5)):
        type_ = draw(st.sampled_from(TYPES))
        default = draw(st.sampled_from([None, *DEFAULTS.get(type_, [])]))
        args.append(f"{type_} {name}" + (f"={default}" if default else ""))
    op = draw(st.sampled_from(["my_op", "rms_norm_2d", "conv2d_v2", "scale_"]))
    return op, f"{op}({', '.join(args)}) -> {draw(st.sampled_from(RETURNS))}", draw(st.sampled_from(["op-plugin", "custom-op"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signatures())
def test_accepted_schemas_model_cleanly_and_refused_ones_say_why(case):
    name, schema, style = case
    try:
        spec = make_spec(name, schema=schema, style=style)
    except SpecError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    model = ProjectModel(spec)  # every derived value the templates use must exist
    assert model.prototype.op == spec.signature.op_type
    assert model.dummy_args is not None
    # What opkit new accepts, opkit lint accepts: the spec's schema has no lint error.
    errors = [f for f in lint(schemas=[spec.schema], dialect=spec.dialect).findings if f.severity >= 2]
    assert errors == []


VALID_TYPES = ["Tensor", "Tensor", "Tensor?", "Tensor[]", "Tensor(a!)", "Tensor(b!)", "int", "int[]", "int[2]", "float", "float[]",
               "bool", "str", "bool[]", "SymInt", "SymInt[]"]  # fmt: skip


@st.composite
def plausible_signatures(draw):
    """Mostly signatures `opkit new` accepts, so whole projects get generated."""
    args = []
    for name in draw(st.lists(st.sampled_from(["x", "y", "weight", "attr1", "k2", "scale3", "eps", "mask"]), unique=True, min_size=1, max_size=5)):
        type_ = draw(st.sampled_from(VALID_TYPES))
        default = draw(st.sampled_from([None, *DEFAULTS.get(type_, [])]))
        args.append(f"{type_} {name}" + (f"={default}" if default else ""))
    returns = draw(st.sampled_from(["()", "Tensor", "(Tensor, Tensor)", "(Tensor a, Tensor b)"]))
    return f"my_op({', '.join(args)}) -> {returns}", draw(st.sampled_from(["op-plugin", "custom-op"]))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(plausible_signatures(), st.sampled_from(["float16", "float16,float", "int32"]), st.sampled_from(["ND", "ND,NCHW"]))
def test_every_generated_project_lints_without_errors(tmp_path_factory, case, dtypes, formats):
    schema, style = case
    try:
        spec = make_spec("my_op", schema=schema, style=style, dtypes=dtypes, formats=formats)
    except SpecError:
        return
    project = generate_project(spec, tmp_path_factory.mktemp("p") / "my_op", msopgen_mode="builtin").path
    errors = [(f.code, f.path, f.message) for f in lint([str(project)]).findings if f.severity >= 2]
    assert errors == [], schema
