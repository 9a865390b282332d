"""Property tests: whatever the input, every rule runs to the end.

A rule that raises becomes an E005 finding (internal error) and linting goes on, so "lint returned"
proves nothing: each property asserts that no E005 appears. The ``@example``s put a value of each
non-string kind (int, float, bool, null, list, mapping) into every field a rule reads.
"""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from opkit.lint import lint

FIELDS = ["func", "op_api", "acl_op", "gen_opapi", "exposed", "tags", "device_check", "dispatch", "structured_inherit",
          "out", "size", "dtype", "exec", "new_params", "all_version", "custom", "official", "name", "x"]  # fmt: skip
ENTRY_FIELDS = ["func", "op_api", "acl_op", "gen_opapi", "exposed", "tags", "device_check", "dispatch", "structured_inherit", "new_params"]
GEN_OPAPI_FIELDS = ["out", "exec", "structured_inherit", "size", "dtype", "out0", "out1"]
NON_STRINGS = [0, 7, -1.5, True, None, [1, None], {"k": 1}, [], {}]
FUNCS = [
    "my_op(Tensor x) -> Tensor",
    "my_op_(Tensor(a!) self) -> Tensor(a!)",
    "my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
    "my_op(Tensor x, Dimname d) -> Tensor",
    "bad(",
    "",
]
scalars = st.one_of(
    st.sampled_from(FUNCS), st.sampled_from(["all_version", "v2.1", "v2.99", "newest", "v2.1, v2.2", "aclnnMyOp", "x", "NoCheck"]),
    st.integers(-3, 3), st.booleans(), st.none(), st.text(max_size=8), st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(FIELDS), children, max_size=5)),
    max_leaves=25,
)
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def with_examples(cases):
    def apply(test):
        for case in cases:
            test = example(*case)(test) if isinstance(case, tuple) else example(case)(test)
        return test

    return apply


def no_internal_error(result) -> None:
    crashes = [f"{f.path}: {f.message}" for f in result.findings if f.code == "E005"]
    assert not crashes, crashes


def yaml_entry(field, value):
    entry = {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", field: value}
    return {"all_version": ["v2.1", "v2.2"], "custom": [entry]}


def gen_opapi_entry(field, value):
    gen = {"out": {"size": "x", "dtype": "x"}, "exec": "aclnnMyOp"}
    gen[field] = value
    return {"custom": [{"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "gen_opapi": gen}]}


YAML_CASES = (
    [yaml_entry(f, v) for f in ENTRY_FIELDS for v in NON_STRINGS]
    + [gen_opapi_entry(f, v) for f in GEN_OPAPI_FIELDS for v in NON_STRINGS]
    + [{section: v} for section in ("custom", "official", "all_version", "symint") for v in NON_STRINGS]
    + [{"custom": [v]} for v in NON_STRINGS]
    + [{"all_version": [v], "custom": [{"func": "my_op(Tensor x) -> Tensor", "op_api": "v2.1"}]} for v in NON_STRINGS]
)


@SETTINGS
@given(values)
@with_examples(YAML_CASES)
def test_any_yaml_document_lints_without_a_crashing_rule(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("y") / "op_plugin_functions.yaml"
    path.write_text(yaml.safe_dump(document))
    result = lint([str(path)])
    no_internal_error(result)
    assert result.exit_code() in (0, 1, 2)


@settings(SETTINGS, max_examples=25)  # each document carries up to 16 entries: the slowest property
@given(st.dictionaries(st.sampled_from(["custom", "official", "all_version"]), st.lists(st.dictionaries(st.sampled_from(FIELDS), values, max_size=6), max_size=4)))
def test_op_plugin_shaped_documents_lint_without_a_crashing_rule(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("y") / "op_plugin_functions.yaml"
    path.write_text(yaml.safe_dump(document))
    no_internal_error(lint([str(path)]))


DESC = {"name": "x", "param_type": "required", "type": ["fp16"], "format": ["ND"]}
ATTR = {"name": "k", "param_type": "optional", "type": "int", "default_value": "1"}


def prototype(where, field, value):
    op = {"op": "MyOp", "input_desc": [dict(DESC)], "output_desc": [dict(DESC, name="y")], "attr": [dict(ATTR)]}
    if where == "op":
        op[field] = value
    else:
        op[where][0][field] = value
    return [op]


JSON_CASES = (
    [prototype("op", f, v) for f in ("op", "input_desc", "output_desc", "attr", "language") for v in NON_STRINGS]
    + [prototype(w, f, v) for w in ("input_desc", "output_desc") for f in ("name", "param_type", "type", "format") for v in NON_STRINGS]
    + [prototype("attr", f, v) for f in ("name", "param_type", "type", "default_value") for v in NON_STRINGS]
    + [[v] for v in NON_STRINGS]
)


@SETTINGS
@given(values)
@with_examples(JSON_CASES)
def test_any_json_document_lints_without_a_crashing_rule(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("j") / "my_op.json"
    path.write_text(json.dumps(document))
    # with a schema, so the project rules (J1xx) compare the prototype too
    no_internal_error(lint([str(path)], schemas=["my_op(Tensor x, int k=1) -> Tensor"]))


PY_LINES = [
    "import torch",
    "from torch.library import Library, impl, custom_op, register_fake",
    'm = Library("npu", "IMPL", "Meta")',
    '@impl(m, "my_op")',
    '@impl(m, "my_op.out")',
    "@impl(m, 3)",
    "@impl(m)",
    '@torch.library.custom_op("mylib::my_op", mutates_args=("x",))',
    '@custom_op("mylib::my_op", mutates_args="unknown")',
    "@torch.library.custom_op(1, mutates_args=2)",
    '@torch.library.custom_op("mylib::my_op", mutates_args=[None, 1.5])',
    "@my_op.register_fake",
    '@torch.library.register_fake("mylib::my_op")',
    "@torch.library.register_fake(None)",
    "def my_op_meta(x, y=1, *, z):",
    "def my_op_meta(x, k=None, *args, **kwargs):",
    "def my_op(x: torch.Tensor, y: list[int] = [1]) -> tuple[torch.Tensor, torch.Tensor]:",
    "def my_op(x: 3, y: None = b'1') -> 7:",
    "def _(x):",
    "    return torch.empty_like(x)",
    "    return x, x",
    "    return",
    "    x.add_(1)",
    "    pass",
]


@SETTINGS
@given(st.lists(st.sampled_from(PY_LINES), max_size=10), st.sampled_from(FUNCS))
@example([PY_LINES[0], PY_LINES[2], "@impl(m, 3)", "def my_op_meta(x):", "    return x"], FUNCS[0])
@example(["import torch", "@torch.library.custom_op(1, mutates_args=2)", "def my_op(x: 3, y: None = b'1') -> 7:", "    pass"], FUNCS[0])
@example(["import torch", '@torch.library.custom_op("mylib::my_op", mutates_args=[None, 1.5])', "def my_op(x: 3, y: None = b'1') -> 7:", "    pass",
          "@my_op.register_fake", "def _(x):", "    return x, x"], FUNCS[0])  # fmt: skip
def test_any_registration_file_lints_without_a_crashing_rule(tmp_path_factory, lines, func):
    folder = tmp_path_factory.mktemp("p")
    (folder / "meta.py").write_text("\n".join(lines) + "\n")
    (folder / "ops.yaml").write_text(yaml.safe_dump({"custom": [{"func": func, "op_api": "all_version"}]}))
    no_internal_error(lint([str(folder)], schemas=[func] if func else []))
