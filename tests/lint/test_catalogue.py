"""The rule catalogue: every registered rule's documented example fires it, and its fixed twin does not.

Driven by the registry, so a new rule is covered the moment it is registered (``fixed`` is a
required argument of ``@rule``). Each example is linted as the file it is written as: a schema
rule's as a ``--schema`` string, a yaml rule's as op_plugin_functions.yaml, a Python rule's as a
registration module, an msOpGen rule's as a prototype JSON, a project rule's as the files it names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opkit.lint import Selection, lint, load_rules
from opkit.lint.registry import example_inputs
from opkit.signature import Dialect

RULES = load_rules()


SNAPSHOT = Path(__file__).parent / "snapshots" / "rule_examples.txt"


def findings_of(tmp_path, scope: str, text: str, selection: Selection = Selection()):
    files, schemas = example_inputs(scope, text)
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)  # a project rule's example names files in folders
        (tmp_path / name).write_text(content)
    dialect = Dialect.TORCH_LIBRARY if any("::" in s for s in schemas) else Dialect.OP_PLUGIN
    result = lint([str(tmp_path)] if files else [], schemas=schemas, dialect=dialect, selection=selection, use_cache=False)
    return result.findings


def codes_of(tmp_path, scope: str, text: str, selection: Selection = Selection()) -> list[str]:
    return sorted(f.code for f in findings_of(tmp_path, scope, text, selection))


@pytest.mark.parametrize("code", sorted(RULES))
def test_example_fires_exactly_its_rule_and_the_fixed_twin_is_silent(tmp_path, code):
    rule = RULES[code]
    assert rule.summary and rule.explanation, code
    (tmp_path / "example").mkdir()
    (tmp_path / "fixed").mkdir()
    assert set(codes_of(tmp_path / "example", rule.scope, rule.example)) == {code}, rule.example
    assert codes_of(tmp_path / "fixed", rule.scope, rule.fixed) == [], rule.fixed


def test_rule_command_prints_the_example_and_the_fix(run_opkit):
    for code, rule in RULES.items():
        status, out = run_opkit("rule", code)
        assert status == 0
        example, fixed = out.split("Example that fires it:")[1].split("Use instead:")
        assert [line.strip() for line in example.strip().splitlines()] == [line.strip() for line in rule.example.splitlines()], code
        assert fixed.strip().splitlines()[0].strip() == rule.fixed.splitlines()[0].strip(), code


def test_example_files_are_split_by_header_and_schema_lines():
    files, schemas = example_inputs("project", "# schema: my_op(Tensor x) -> Tensor\n# file: a.yaml\ncustom: []\n# file: meta.py\nimport torch")
    assert files == {"a.yaml": "custom: []\n", "meta.py": "import torch\n"} and schemas == ["my_op(Tensor x) -> Tensor"]
    assert example_inputs("yaml", "custom: []") == ({"op_plugin_functions.yaml": "custom: []\n"}, [])
    with pytest.raises(ValueError, match="# file: NAME"):
        example_inputs("project", "custom: []")


# Rules no other test named (S102, S103, S105, S106): the cases next to their examples.
@pytest.mark.parametrize(
    "schema, fires",
    [
        ("my_op(Tensor(a!) x, Tensor(a!) y) -> ()", True),  # both written
        ("mylib::my_op(Tensor(a!) x, Tensor(a) y) -> ()", True),  # one written is enough (any, not all)
        ("mylib::my_op(Tensor(a) x, Tensor(a) y) -> Tensor", False),  # views of one another, none written
        ("my_op(Tensor(a!) x, Tensor(b!) y) -> ()", False),
    ],
)
def test_s102_alias_set_shared_by_a_written_argument(schema, fires):
    dialect = Dialect.TORCH_LIBRARY if "::" in schema else Dialect.OP_PLUGIN
    found = {f.code for f in lint(schemas=[schema], dialect=dialect, selection=Selection(("S102",))).findings}
    assert ("S102" in found) is fires


@pytest.mark.parametrize(
    "schema, fires",
    [
        ("mylib::my_op(Tensor x) -> Tensor(b)", True),
        ("mylib::my_op(Tensor(a!) x) -> Tensor(b!)", True),
        ("mylib::my_op(Tensor(a) x) -> Tensor(a)", False),
    ],
)
def test_s103_return_alias_matching_no_argument(schema, fires):
    found = [f for f in lint(schemas=[schema], dialect=Dialect.TORCH_LIBRARY, selection=Selection(("S103",))).findings]
    assert bool(found) is fires
    if fires:
        assert "return alias set 'b' matches no argument" in found[0].message


@pytest.mark.parametrize(
    "name, fires",
    [("out", True), ("out0", True), ("out12", True), ("values_out", True), ("outx", False), ("output", False), ("result", False)],
)
def test_s105_out_named_keyword_tensor_without_write_annotation(name, fires):
    schema = f"mylib::my_op.out(Tensor x, *, Tensor {name}) -> ()"
    found = [f for f in lint(schemas=[schema], dialect=Dialect.TORCH_LIBRARY, selection=Selection(("S105",))).findings]
    assert bool(found) is fires, schema
    if fires:
        assert f"'{name}'" in found[0].message


def test_s106_names_the_repeated_argument_once():
    found = [f for f in lint(schemas=["my_op(Tensor x, int k, Tensor x, Tensor y) -> Tensor"], selection=Selection(("S106",))).findings]
    assert [f.message for f in found] == ["argument 'x' is declared more than once"]
    assert not lint(schemas=["my_op(Tensor x, Tensor y) -> Tensor"], selection=Selection(("S106",))).findings


def test_example_findings_match_the_reviewed_snapshot(tmp_path):
    """What a user reads for each example (file, line, column, message, hint), as ruff snapshots its
    rule fixtures. After a deliberate change: OPKIT_UPDATE_SNAPSHOTS=1 pytest ..., then review the diff."""
    lines = []
    for code, rule in sorted(RULES.items()):
        folder = tmp_path / code
        folder.mkdir()
        lines.append(f"## {code} {rule.name}")
        for f in findings_of(folder, rule.scope, rule.example):
            path = Path(f.path).name if f.path.startswith(str(folder)) else f.path
            message = f.message.replace(str(folder) + os.sep, "")  # evidence names files by where they were written
            lines.append(f"{path}:{f.line}:{f.column}: {f.code} {message} [{f.op}]" + (f"\n    hint: {f.hint}" if f.hint else ""))
    text = "\n".join(lines) + "\n"
    if os.environ.get("OPKIT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()


def test_s002_a_type_torchgen_dropped_is_judged_by_the_versions_that_build_the_entry(tmp_path):
    (schema_finding,) = lint(schemas=["my_op(Tensor x, Dimname d) -> Tensor"]).findings
    assert (schema_finding.code, schema_finding.column) == ("S002", 17)
    assert schema_finding.message.startswith("type 'Dimname' is not parsed by torchgen after v2.12 (named-tensor overloads were dropped")
    assert schema_finding.hint == "drop the overload, or give the entry a version range ending at v2.12"
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(
        "all_version: [v2.1, v2.12, v2.13]\ncustom:\n"
        "  - func: my_op(Tensor x, Dimname d) -> Tensor\n    op_api: [v2.1, v2.12]\n"  # never built by torch 2.13
        "  - func: my_op2(Tensor x, Dimname d) -> Tensor\n    op_api: all_version\n"
    )
    (entry_finding,) = lint([str(path)], selection=Selection(("S002",)), use_cache=False).findings
    assert (entry_finding.line, entry_finding.column, entry_finding.op) == (5, 28, "my_op2")
    assert entry_finding.message == "type 'Dimname' is not parsed by torchgen after v2.12, but the entry is active in v2.13"
    assert entry_finding.hint.startswith("end its op_api/acl_op range at v2.12 (named-tensor")


def test_s002_suggests_the_nearest_type_only_when_one_is_near():
    (near,) = lint(schemas=["my_op(Tensr x) -> Tensor"]).findings
    assert near.hint == "did you mean 'Tensor'?" and near.column == 7
    (far,) = lint(schemas=["my_op(Qwzxv x) -> Tensor"]).findings
    assert far.code == "S002" and "did you mean" not in (far.hint or "")


def test_s204_names_each_reason_and_only_for_new_ops(tmp_path):
    path = tmp_path / "op_plugin_functions.yaml"
    entries = {"custom": ["my_drop(Tensor x, float p, Generator? g=None) -> Tensor", "my_rand(Tensor x) -> Tensor", "my_op(Tensor x) -> Tensor"],
               "official": ["bernoulli(Tensor x, *, Generator? generator=None) -> Tensor"]}  # fmt: skip
    text = ""
    for section, funcs in entries.items():
        text += f"{section}:\n" + "".join(f"  - func: {f}\n    op_api: all_version\n" + ("    tags: nondeterministic_seeded\n" if "rand" in f or "drop" in f else "") for f in funcs)
    path.write_text(text)
    found = [(f.op, f.message) for f in lint([str(path)], selection=Selection(("S204",)), use_cache=False).findings]
    assert found == [
        ("my_drop", "op takes a Generator and is tagged nondeterministic_seeded: npugraph_ex cannot capture random-number ops"),
        ("my_rand", "op is tagged nondeterministic_seeded: npugraph_ex cannot capture random-number ops"),
    ]


def test_the_installed_torch_version_is_read_from_its_wheel_metadata_as_importlib_reads_it():
    from importlib import metadata

    from opkit.lint import torchgen_versions

    assert torchgen_versions._wheel_version("torch") == metadata.version("torch")
    assert torchgen_versions._wheel_version("opkit_no_such_package") is None
    major, minor = metadata.version("torch").split(".")[:2]
    assert torchgen_versions.installed_torch_version() == f"v{major}.{minor}"
