"""The pieces of a run over many ops that need no compile: finding C++ Metas with what they use, reading the ops of a
file with their Metas, the project tree walk, and the run's JUnit and GitHub output on hostile text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from opkit.verify.report import GraphEntryReport, Problem, Stage

METAS = """#include <ATen/ATen.h>
#include "local.h"
namespace outer { namespace inner {
constexpr int64_t BLOCK = 16;
const int64_t UNUSED = 3;
int64_t blocks(int64_t n) { return (n + BLOCK - 1) / BLOCK; }
int64_t rounded(int64_t n) { return blocks(n) * BLOCK; }

at::Tensor a_meta(const at::Tensor &x) { return at::empty({rounded(x.size(0))}, x.options()); }
at::Tensor b_meta(const at::Tensor &x) { return at::empty_like(x); }
}}
TORCH_LIBRARY_IMPL(units_ns, Meta, m) {
  m.impl("a", &outer::inner::a_meta);
  m.impl("b", &outer::inner::b_meta);
  m.impl("b_twin", &outer::inner::b_meta);
}
"""


def test_a_cpp_meta_carries_the_helpers_and_constants_it_names_and_no_others(tmp_path):
    from opkit.verify.cpp_meta import find_cpp_metas

    metas = {m.op: m for m in find_cpp_metas(tmp_path / "m.cpp", METAS)}
    assert sorted(metas) == ["a", "b", "b_twin"]
    a = metas["a"]
    assert (a.function, a.namespace, a.line) == ("outer::inner::a_meta", "units_ns", 9)
    assert [text.split("(")[0].split("=")[0].strip() for _, _, text in a.helpers] == [
        "constexpr int64_t BLOCK", "int64_t blocks", "int64_t rounded",
    ]  # fmt: skip
    assert [scope for scope, _, _ in a.helpers] == ["", "outer::inner", "outer::inner"]  # a constant takes its user's namespace
    assert metas["b"].helpers == () and metas["b"].source == metas["b_twin"].source
    assert a.includes == ("#include <ATen/ATen.h>",)  # only torch's, ATen's and c10's headers go with it


def test_the_translation_unit_defines_each_function_once_and_registers_each_op(tmp_path):
    from opkit.verify.cpp_meta import _source_file, find_cpp_metas

    metas = tuple(find_cpp_metas(tmp_path / "m.cpp", METAS))
    unit = _source_file(metas)
    assert unit.count("at::Tensor b_meta(") == 1 and unit.count("int64_t blocks(") == 1
    assert f'#line 9 "{tmp_path / "m.cpp"}"' in unit  # the compiler's errors name the user's lines
    for index, op in enumerate(("a", "b", "b_twin")):
        assert f'opkit_meta_libraries[{index}]->impl("{op}"' in unit


def test_compiler_errors_are_blamed_on_the_function_they_point_into(tmp_path):
    from opkit.verify.cpp_meta import _blamed, find_cpp_metas

    a, b, twin = find_cpp_metas(tmp_path / "m.cpp", METAS)
    errors = [f"{tmp_path / 'm.cpp'}:6:40: error: 'BLOCK' was not declared", "opkit-meta-registration:3:5: error: no matching function"]
    blamed = _blamed((a, b, twin), errors)
    assert set(blamed) == {a, twin}  # a through its helper on line 6, the twin through its registration line
    assert blamed[a].endswith("6: 'BLOCK' was not declared")


def test_read_cpp_ops_finds_the_metas_beside_and_refuses_a_meta_of_another_kind(tmp_path):
    from opkit.verify.from_cpp import read_cpp_ops

    (tmp_path / "defs.cpp").write_text('TORCH_LIBRARY(units_ns, m) {\n  m.def("a(Tensor x) -> Tensor");\n  m.def("c(Tensor x) -> Tensor");\n}\n')
    (tmp_path / "metas.cpp").write_text(METAS)
    (tmp_path / "local.h").write_text("#define NOTHING\n")
    ops = read_cpp_ops(str(tmp_path / "defs.cpp"), None)
    assert [d.qualname for d in ops.checked] == ["a", "c"]
    assert ops.cpp_meta(ops.checked[0]).function == "outer::inner::a_meta" and ops.cpp_meta(ops.checked[1]) is None
    assert ops.searched == (str(tmp_path / "defs.cpp"), str(tmp_path / "metas.cpp"))  # headers are not searched

    (tmp_path / "fake.py").write_text("import torch\n")
    with_python = read_cpp_ops(str(tmp_path / "defs.cpp"), "a", [str(tmp_path / "fake.py")])
    assert with_python.python_metas == (str(tmp_path / "fake.py"),) and with_python.cpp_metas == {}  # an explicit Python Meta wins
    with pytest.raises(ValueError, match=r"--meta .*notes\.txt: neither a Python file \(\.py\) nor C\+\+"):
        read_cpp_ops(str(tmp_path / "defs.cpp"), "a", [str(tmp_path / "notes.txt")])


def test_find_projects_walks_the_tree_once_per_project(tmp_path):
    from opkit.verify.project import ProjectError, find_projects

    for where in ("a", "deep/b", "a/nested_in_a", ".hidden/c", "venv/d", "node_modules/e"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "opkit.json").write_text("{}")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    assert find_projects([tmp_path]) == [tmp_path / "a", tmp_path / "deep" / "b"]
    assert find_projects([tmp_path / "deep" / "b", tmp_path]) == [tmp_path / "deep" / "b", tmp_path / "a"]
    (tmp_path / "empty" / "node_modules" / "f").mkdir(parents=True)
    (tmp_path / "empty" / "node_modules" / "f" / "opkit.json").write_text("{}")
    with pytest.raises(ProjectError, match="no opkit project"):
        find_projects([tmp_path / "empty"])


def _report(target: str, problems=()) -> GraphEntryReport:
    return GraphEntryReport(target=target, backend="aot_eager", device="cpu", graph_count=0 if problems else 1, graph_break_count=0, problems=tuple(problems))


def test_junit_holds_hostile_text_as_data():
    from opkit.verify.summary import format_junit

    hostile = 'a "quote" <tag> & \x00\x1b[31m ]]> end'
    reports = [_report("ns::ok"), _report("ns::bad<&>", [Problem(Stage.META, "meta_call", hostile, "fix it")])]
    xml = format_junit(reports, 1.5)
    root = ET.fromstring(xml.split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("time")) == ("2", "1", "1.500")
    bad = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in bad] == ["ns::bad<&>"]
    assert bad[0].find("failure").get("message").startswith('[Meta function] meta_call: a "quote" <tag> & \ufffd\ufffd[31m ]]> end')


def test_github_titles_escape_the_op_name_and_end_with_the_summary():
    from opkit.verify.summary import format_github_run

    reports = [_report("ns::good"), _report("ns::bad", [Problem(Stage.REGISTRATION, "missing_meta", "no Meta\nfor it", "add one")])]
    lines = format_github_run(reports, 2.0, ["f.cpp", "f.cpp"]).splitlines()
    assert lines[0].startswith("::notice file=f.cpp,title=opkit verify ns%3A%3Agood::PASS: ns::good")
    assert lines[1] == "::error file=f.cpp,title=opkit verify ns%3A%3Abad%3A registration%3A missing_meta::no Meta%0Afor it Next: add one"
    assert lines[2] == "::error title=opkit verify::2 op(s) checked in 2.0s: 1 passed, 1 failed"
