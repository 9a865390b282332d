"""Projects in the layout `opkit new` writes, verified on CPU with torch_npu's registration emulated."""

from __future__ import annotations

import json

import pytest

from opkit.verify import Stage, verify_project

pytestmark = pytest.mark.slow

MY_OP_SCHEMA = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_OP_META = '''
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")

@impl(m, "my_op")
def my_op_meta(x, y, z, attr1, attr2):
    return torch.empty_like(x)
'''
MY_INPLACE_SCHEMA = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor"
MY_INPLACE_META = '''
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")

@impl(m, "my_inplace")
def my_inplace_meta(x, y):
    return torch.empty_like(y)
'''
MY_INPLACE_REFERENCE = '''
def my_inplace(x, y):
    x.add_(y)
    return y * 2
'''
CUSTOM_OP_META = '''
import torch

@torch.library.custom_op("mylib::rms_scale_", mutates_args=("x",), device_types="npu")
def rms_scale_(x: torch.Tensor, eps: float) -> None:
    ...

@rms_scale_.register_fake
def _(x, eps):
    return None
'''
CUSTOM_OP_REFERENCE = '''
import torch

def rms_scale_(x, eps):
    x.div_(torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))
'''


@pytest.fixture
def my_op_project(make_project):
    return make_project("my_op", name="my_op", schema=MY_OP_SCHEMA, meta=MY_OP_META)


@pytest.fixture
def my_inplace_project(make_project):
    return make_project("my_inplace", name="my_inplace", schema=MY_INPLACE_SCHEMA, meta=MY_INPLACE_META, reference=MY_INPLACE_REFERENCE)


@pytest.fixture
def custom_op_project(make_project):
    return make_project(
        "rms",
        name="rms_scale_",
        schema="rms_scale_(Tensor(a!) x, float eps) -> ()",
        meta=CUSTOM_OP_META,
        style="custom-op",
        namespace="mylib",
        reference=CUSTOM_OP_REFERENCE,
    )


def test_torchair_my_op_example_without_reference(my_op_project):
    report = verify_project(my_op_project)
    assert report.ok, str(report)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert report.ops_in_graph[0].op == "npu::my_op" and report.ops_in_graph[0].form == "direct"
    assert any(s.check == "numerics" and "stand-in" in s.reason for s in report.skipped)
    assert any("Library('npu', 'FRAGMENT').define" in n for n in report.notes)
    assert Stage.NUMERICS not in report.passed_stages


def test_torchair_my_inplace_example_is_functionalized(my_inplace_project):
    report = verify_project(my_inplace_project)
    assert report.ok, str(report)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert report.ops_in_graph[0].form.startswith("auto_functionalized")
    assert any(c.name == "input x" and c.ok for c in report.comparisons)
    assert "auto_functionalized" in report.graph_code


def test_custom_op_style_inplace_project(custom_op_project):
    report = verify_project(custom_op_project)
    assert report.ok, str(report)
    assert report.ops_in_graph[0].op == "mylib::rms_scale_"
    assert report.ops_in_graph[0].form.startswith("auto_functionalized")
    assert any("PrivateUse1" in n for n in report.notes) or any("Meta loaded" in n for n in report.notes)


def test_a_project_can_be_verified_twice_in_one_process(my_inplace_project):
    assert verify_project(my_inplace_project).ok
    assert verify_project(my_inplace_project).ok  # registrations were undone in between


def test_cli_verify_project_text_and_json(run_opkit, my_op_project, my_inplace_project):
    code, out = run_opkit("verify", str(my_op_project))
    assert code == 0, out
    assert out.startswith("PASS: npu::my_op") and "graph_count=1 graph_break_count=0" in out
    code, out = run_opkit("verify", str(my_inplace_project), "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    assert data["ok"] and data["graph_count"] == 1 and data["graph_break_count"] == 0
    assert data["ops_in_graph"][0]["form"].startswith("auto_functionalized")


def test_cli_exit_1_for_a_project_that_returns_its_mutated_input(run_opkit, make_project):
    root = make_project(
        "bad",
        name="bad_inplace",
        schema="bad_inplace(Tensor(a!) x, Tensor y) -> Tensor(a!)",
        generated_schema="bad_inplace(Tensor(a!) x, Tensor y) -> ()",
        meta='''
        from torch.library import Library, impl
        m = Library("npu", "IMPL", "Meta")
        @impl(m, "bad_inplace")
        def bad_inplace_meta(x, y):
            return x
        ''',
    )
    code, out = run_opkit("verify", str(root))
    assert code == 1
    assert "FAIL" in out and "AOT functionalization" in out


def test_meta_file_that_does_not_import(make_project):
    root = make_project("broken", name="broken_op", schema="broken_op(Tensor x) -> Tensor", meta="import no_such_module_opkit\n")
    report = verify_project(root)
    assert report.failed_stage is Stage.REGISTRATION
    assert report.problems[0].check == "meta_import"


def test_cli_usage_errors(run_opkit, tmp_path):
    code, out = run_opkit("verify")
    assert code == 2
    code, out = run_opkit("verify", str(tmp_path))
    assert code == 2  # not a project: no opkit.json


def test_cli_verify_op_with_example(run_opkit, tmp_path):
    defs = tmp_path / "defs.py"
    defs.write_text(
        "import torch\n"
        "@torch.library.custom_op('opkit_t_cli::twice', mutates_args=())\n"
        "def twice(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n"
        "@twice.register_fake\n"
        "def _(x):\n    return torch.empty_like(x)\n"
    )
    code, out = run_opkit("verify", "--op", "opkit_t_cli::twice", "--load", str(defs), "--example", "torch.randn(2, 3)")
    assert code == 0, out
    assert "op opkit_t_cli::twice: as direct in the aot graph" in out


def test_cli_verify_project_honours_example(run_opkit, my_op_project):
    project = str(my_op_project)
    code, out = run_opkit("verify", project, "--example", "this is not python")
    # (valid syntax, `this is (not python)`, so it fails on its first name)
    assert code == 2 and "--example 'this is not python' does not evaluate: NameError: name 'this' is not defined" in out, out
    code, out = run_opkit("verify", project, "--example", "torch.randn(4,")
    assert code == 2 and "--example 'torch.randn(4,' does not evaluate: SyntaxError" in out, out
    # The project's op, called as the example says: Tensor? y given None, three list elements, other attributes.
    example = "torch.randn(4, 5), None, [torch.randn(4, 5)] * 3, 0.5, 7"
    code, out = run_opkit("verify", project, "--example", example, "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    assert "sample call: the example arguments given (--example), not the schema's sample inputs" in report["notes"]
    # An example that cannot be a call of the op is refused, saying why.
    for wrong, why in [
        ("torch.randn(4, 5)", "no value for y, z, attr1, attr2"),
        ("torch.randn(4, 5), None, [], 0.5, 7, 8", "6 positional arguments, the schema takes 5"),
        ("{'x': torch.randn(4, 5), 'w': 1}", "the schema has no argument 'w'"),
    ]:
        code, out = run_opkit("verify", project, "--example", wrong)
        assert code == 2 and f"float attr1, int attr2): {why}" in out, out
    code, out = run_opkit("verify", project, "--example", "{'x': torch.randn(4, 5), 'y': None, 'z': [torch.randn(4, 5)], 'attr1': 1.0, 'attr2': 2}")
    assert code == 0, out


def test_cli_verify_project_refuses_load(run_opkit, my_op_project, tmp_path):
    defs = tmp_path / "defs.py"
    defs.write_text("import torch\n")
    code, out = run_opkit("verify", str(my_op_project), "--load", str(defs))
    assert code == 2 and "--load is for --op" in out, out


@pytest.mark.parametrize(
    "file, content, message",
    [
        ("opkit.json", b"\xff\xfe", "not UTF-8"),
        ("opkit.json", b"[" * 100000 + b"]" * 100000, "nested too deeply"),
        ("opkit.json", b'{"name": "my_op"}', "opkit.json: (top level): 'schema' is a required property"),
        ("op_plugin/op_plugin_functions.yaml", b"custom: " + b"[" * 100000 + b"]" * 100000, "nested more than 500 levels deep"),
        ("op_plugin/op_plugin_functions.yaml", b"custom: [\n", "op_plugin_functions.yaml:2:1: not valid YAML"),
    ],
    ids=["binary-spec", "deep-spec", "incomplete-spec", "deep-yaml", "bad-yaml"],
)
def test_unreadable_project_files_are_one_message_and_exit_2(run_opkit, my_op_project, file, content, message):
    (my_op_project / file).write_bytes(content)
    code, out = run_opkit("verify", str(my_op_project))
    assert code == 2
    assert message in out and "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_two_projects_defining_one_op_name_differently_verify_in_one_process(make_project):
    """Undoing a project's registration forgets torch's cached schema of the op (torch.ops, torch.fx)."""
    first = make_project(
        "first",
        name="same_op",
        schema="same_op(Tensor(a!) x, Tensor y) -> ()",
        style="custom-op",
        namespace="opkit_same",
        meta="""
        import torch

        @torch.library.custom_op("opkit_same::same_op", mutates_args=("x",), device_types="npu")
        def same_op(x: torch.Tensor, y: torch.Tensor) -> None:
            raise NotImplementedError

        @same_op.register_fake
        def _(x: torch.Tensor, y: torch.Tensor) -> None:
            return None
        """,
    )
    second = make_project(
        "second",
        name="same_op",
        schema="same_op(Tensor(a!) x, bool[] flags) -> ()",
        style="custom-op",
        namespace="opkit_same",
        meta="""
        import torch

        @torch.library.custom_op("opkit_same::same_op", mutates_args=("x",), device_types="npu")
        def same_op(x: torch.Tensor, flags: list[bool]) -> None:
            raise NotImplementedError

        @same_op.register_fake
        def _(x: torch.Tensor, flags: list[bool]) -> None:
            return None
        """,
    )
    for root in (first, second, first):
        report = verify_project(root)
        assert report.ok, str(report)


def test_cli_github_annotations_and_a_coloured_verdict_only_when_asked(run_opkit, make_project, monkeypatch):
    from opkit.cli.verify import wants_color
    from opkit.verify.report import format_report

    root = make_project(
        "alias",
        name="alias_op",
        schema="alias_op(Tensor x) -> Tensor",
        meta="""
        from torch.library import Library, impl
        m = Library("npu", "IMPL", "Meta")
        @impl(m, "alias_op")
        def alias_op_meta(x):
            return x
        """,
    )
    code, out = run_opkit("verify", str(root), "--format", "github")
    assert code == 1
    assert out.startswith(f"::error file={root},title=opkit verify%3A Meta function%3A meta_alias::")
    report = verify_project(root)
    assert format_report(report, color=True).startswith("\033[31mFAIL\033[0m")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color()


def test_failed_assertion_has_a_one_line_summary(make_project):
    from opkit.verify import GraphEntryError, assert_project_enters_graph

    root = make_project("nometa", name="nometa_op", schema="nometa_op(Tensor x) -> Tensor", meta="x = 1\n")
    with pytest.raises(GraphEntryError) as info:
        assert_project_enters_graph(root)
    first = str(info.value).splitlines()[0]
    assert first.startswith("npu::nometa_op does not enter one graph (registration): no Meta/fake function")
