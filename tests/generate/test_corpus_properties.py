"""A property over signatures built from the argument types the real corpus uses.

Whatever `opkit new` accepts, it generates, lints without errors and verifies; whatever it refuses is
one SpecError with a one-line message. The signatures are mostly plausible (tensors first, defaults
last), so most are accepted and the property exercises generation, not only refusal.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opkit.generate import SpecError, make_spec
from opkit.generate.project import generate_project
from opkit.lint import Severity, lint

# Argument types of the corpus's custom: section, weighted by their counts there (the refused Generator?,
# Layout? and Device? five times theirs, so refusals are exercised too). The first tensor is a Tensor or
# Tensor[], as in the real ops: outputs are sized like it.
FIRST_TENSOR_TYPES = {"Tensor": 1210, "Tensor[]": 16}
TENSOR_TYPES = {"Tensor": 1210, "Tensor?": 708, "Tensor(a!)": 94, "Tensor[]": 16, "Tensor[]?": 19, "Scalar": 61, "Scalar?": 2}
ATTR_TYPES = {"int": 604, "int?": 267, "float": 195, "bool": 192, "str": 138, "int[]": 105, "int[]?": 76, "str?": 33, "SymInt[]?": 24,
              "bool?": 22, "int[2]": 21, "float?": 16, "bool[3]": 10, "ScalarType?": 10, "SymInt[]": 8, "ScalarType": 8, "float[]?": 5,
              "SymInt": 4, "Generator?": 10, "Layout?": 5, "Device?": 5}  # fmt: skip
# Defaults in the corpus's spelling, per type (None for the optional ones).
DEFAULTS = {"int": ["0", "-1", "Mean"], "float": ["1.", "1e-06"], "bool": ["False", "True"], "str": ["'BSH'", '"mean"'], "int[]": ["[1,1]"],
            "int[2]": ["[1,1]"], "bool[3]": ["[True,True,True]"], "SymInt[]": ["[]"], "SymInt": ["0"], "ScalarType": ["long"],
            "Tensor?": ["None"], "Scalar": ["1"], "Scalar?": ["None"]}  # fmt: skip
NAMES = ["x", "self", "weight", "bias", "scale", "dim", "eps", "mode", "workspace", "group_list", "dtype", "k", "layout", "alpha", "beta", "new"]
RETURNS = ["Tensor", "Tensor", "(Tensor, Tensor)", "(Tensor out, Tensor rstd)", "Tensor[]"]


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _default(rng: random.Random, type_: str) -> str | None:
    if type_.endswith("?") and type_ not in DEFAULTS:
        return "None"
    return rng.choice(DEFAULTS[type_]) if type_ in DEFAULTS else None


def corpus_like_schema(rng: random.Random) -> str:
    """One signature from the corpus's types: tensors, then attrs; defaults only on a trailing run."""
    names = rng.sample(NAMES, rng.randint(2, 6))
    tensors = rng.randint(1, min(3, len(names)))
    types = [_pick(rng, FIRST_TENSOR_TYPES)] + [_pick(rng, TENSOR_TYPES) for _ in range(tensors - 1)]
    types += [_pick(rng, ATTR_TYPES) for _ in range(len(names) - tensors)]
    first_default = rng.randint(1, len(names))
    args = []
    for i, (name, type_) in enumerate(zip(names, types)):
        default = _default(rng, type_) if i >= first_default else None
        if i >= first_default and default is None:
            default = "None" if type_.endswith("?") else None
        args.append(f"{type_} {name}" + (f"={default}" if default else ""))
    mutated = any("(a!)" in a for a in args)
    returns = rng.choice(["()", *RETURNS] if mutated else RETURNS)
    return f"my_op({', '.join(args)}) -> {returns}"


def _accepted(schema: str):
    try:
        return make_spec("my_op", schema=schema, style="op-plugin")
    except SpecError as exc:
        message = str(exc)
        assert message and "\n" not in message and "Traceback" not in message
        return None


def test_most_corpus_like_signatures_are_accepted():
    rng = random.Random(9)
    schemas = [corpus_like_schema(rng) for _ in range(200)]
    accepted = sum(_accepted(s) is not None for s in schemas)
    assert accepted / len(schemas) >= 0.7, accepted


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.randoms(use_true_random=False))
def test_accepted_generates_lints_and_verifies_refused_is_one_spec_error(tmp_path_factory, rng):
    from opkit.verify import verify_project

    schema = corpus_like_schema(rng)
    spec = _accepted(schema)
    if spec is None:
        return
    project = generate_project(spec, tmp_path_factory.mktemp("p") / "my_op", msopgen_mode="builtin").path
    errors = [(f.code, f.message) for f in lint([str(project)]).findings if f.severity >= Severity.ERROR]
    assert errors == [], schema
    report = verify_project(project)
    assert report.ok, f"{schema}\n{report}"
