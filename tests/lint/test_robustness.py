"""Property tests: whatever the input, `opkit lint` reports findings and never raises."""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opkit.lint import lint

FIELDS = ["func", "op_api", "acl_op", "gen_opapi", "exposed", "tags", "device_check", "dispatch", "structured_inherit",
          "out", "size", "dtype", "exec", "new_params", "all_version", "custom", "official", "name", "x"]  # fmt: skip
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
    st.integers(-3, 3), st.booleans(), st.none(), st.text(max_size=8),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(FIELDS), children, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(values)
def test_any_yaml_document_lints_without_raising(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("y") / "op_plugin_functions.yaml"
    path.write_text(yaml.safe_dump(document))
    result = lint([str(path)])
    assert result.exit_code() in (0, 1, 2)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["custom", "official", "all_version"]), st.lists(st.dictionaries(st.sampled_from(FIELDS), values, max_size=6), max_size=4)))
def test_op_plugin_shaped_documents_lint_without_raising(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("y") / "op_plugin_functions.yaml"
    path.write_text(yaml.safe_dump(document))
    lint([str(path)])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(values)
def test_any_json_document_lints_without_raising(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("j") / "op.json"
    path.write_text(json.dumps(document))
    lint([str(path)])


PY_LINES = [
    "import torch",
    "from torch.library import Library, impl, custom_op, register_fake",
    'm = Library("npu", "IMPL", "Meta")',
    '@impl(m, "my_op")',
    '@impl(m, "my_op.out")',
    '@torch.library.custom_op("mylib::my_op", mutates_args=("x",))',
    '@custom_op("mylib::my_op", mutates_args="unknown")',
    "@my_op.register_fake",
    '@torch.library.register_fake("mylib::my_op")',
    "def my_op_meta(x, y=1, *, z):",
    "def my_op(x: torch.Tensor, y: list[int] = [1]) -> tuple[torch.Tensor, torch.Tensor]:",
    "def _(x):",
    "    return torch.empty_like(x)",
    "    return x, x",
    "    return",
    "    x.add_(1)",
    "    pass",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PY_LINES), max_size=10), st.sampled_from(FUNCS))
def test_any_registration_file_lints_without_raising(tmp_path_factory, lines, func):
    folder = tmp_path_factory.mktemp("p")
    (folder / "meta.py").write_text("\n".join(lines) + "\n")
    (folder / "ops.yaml").write_text(yaml.safe_dump({"custom": [{"func": func, "op_api": "all_version"}]}))
    lint([str(folder)], schemas=[func] if func else [])
