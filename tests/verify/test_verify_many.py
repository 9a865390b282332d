"""`opkit verify --from FILE.cpp` with its Metas found beside it or given with --meta (C++ or Python), and many ops in
one run: every op of a C++ file, every project of a tree; one op's failure, crash or hang fails that op only."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

import pytest

from tests.verify.conftest import write_project

pytestmark = pytest.mark.slow

DEFS = """#include <torch/library.h>
TORCH_LIBRARY(vmany, m) {
  m.def("widen(Tensor x) -> Tensor");
  m.def("pair(Tensor x, Tensor y) -> (Tensor, Tensor)");
}
"""

# The C++ Metas, in a file beside the defs: one names a helper function and a constant of its file.
CPP_METAS = """#include <ATen/ATen.h>
#include <torch/library.h>
namespace vmany_meta {
const int64_t FACTOR = 2;
int64_t widened(int64_t size) { return size * FACTOR; }

at::Tensor widen_meta(const at::Tensor &x)
{
    return at::empty({x.size(0), widened(x.size(1))}, x.options());
}

std::tuple<at::Tensor, at::Tensor> pair_meta(const at::Tensor &x, const at::Tensor &y)
{
    return {at::empty_like(x), at::empty_like(y)};
}
}  // namespace vmany_meta

TORCH_LIBRARY_IMPL(vmany, Meta, m) {
  m.impl("widen", &vmany_meta::widen_meta);
  m.impl("pair", &vmany_meta::pair_meta);
}
"""


def _needs_compiler():
    from opkit.check import ToolchainError, find_compiler

    try:
        find_compiler()
    except ToolchainError as exc:
        pytest.skip(f"no C++ compiler: {exc}")


@pytest.fixture
def cpp_tree(tmp_path):
    _needs_compiler()
    (tmp_path / "binding.cpp").write_text(DEFS)
    (tmp_path / "binding_meta.cpp").write_text(CPP_METAS)
    return tmp_path


def test_the_cpp_meta_beside_the_file_is_compiled_used_and_named(cpp_tree, run_opkit):
    status, out = run_opkit("verify", "--from", str(cpp_tree / "binding.cpp"), "--op", "widen", "--backend", "aot_eager", "--format", "json")
    report = json.loads(out)
    assert status == 0, out
    assert report["graph_count"] == 1 and report["target"] == "vmany::widen"
    meta = f"Meta: the C++ function vmany_meta::widen_meta ({cpp_tree / 'binding_meta.cpp'}:7), compiled on the CPU against torch's headers"
    assert meta in report["notes"], report["notes"]


def test_a_cpp_meta_file_given_with_meta_is_compiled_not_imported(cpp_tree, tmp_path, run_opkit):
    """Formerly a traceback (a .cpp imported as Python); the file may sit anywhere and register several ops."""
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (elsewhere / "binding.cpp").write_text(DEFS)
    meta = cpp_tree / "binding_meta.cpp"
    status, out = run_opkit("verify", "--from", str(elsewhere / "binding.cpp"), "--meta", str(meta), "--backend", "aot_eager")
    assert status == 0, out
    assert out.count("PASS") == 2 and "2 op(s) checked" in out and "0 failed" in out
    assert f"vmany_meta::pair_meta ({meta}:12)" in out


def test_a_cpp_meta_that_does_not_compile_alone_is_reported_and_the_others_still_run(tmp_path, run_opkit):
    _needs_compiler()
    (tmp_path / "binding.cpp").write_text(DEFS)
    broken = CPP_METAS.replace("return {at::empty_like(x), at::empty_like(y)};", "return {at::empty_like(x), helper_of_another_file(y)};")
    (tmp_path / "binding_meta.cpp").write_text(broken)
    status, out = run_opkit("verify", "--from", str(tmp_path / "binding.cpp"), "--backend", "aot_eager")
    assert status == 1, out
    widen, pair = (line for line in out.splitlines() if line.startswith(("PASS", "FAIL")))
    assert widen.startswith("PASS vmany::widen")
    assert pair.startswith("FAIL vmany::pair") and "[registration] missing_meta" in pair
    assert f"C++ Meta vmany_meta::pair_meta ({tmp_path / 'binding_meta.cpp'}:12) not used: it does not compile alone" in out
    assert "helper_of_another_file" in out


PY_DEFS = """TORCH_LIBRARY_FRAGMENT(vmany_py, m) {
  m.def("good(Tensor x) -> Tensor");
  m.def("also_good(Tensor x, float alpha) -> Tensor");
  m.def("raises(Tensor x) -> Tensor");
  m.def("hangs(Tensor x) -> Tensor");
  m.def("crashes(Tensor x) -> Tensor");
  m.def("last_good(Tensor x) -> Tensor");
}
"""

# One Python Meta file registering every op of the file: two good, one raising, one hanging, one crashing the
# interpreter, and a good one after them.
PY_METAS = """
import os
import signal

import torch
from torch.library import Library, impl

lib = Library("vmany_py", "IMPL", "Meta")


@impl(lib, "good")
def good(x):
    return torch.empty_like(x)


@impl(lib, "also_good")
def also_good(x, alpha):
    return torch.empty_like(x)


@impl(lib, "raises")
def raises(x):
    raise RuntimeError("this Meta is broken on purpose")


@impl(lib, "hangs")
def hangs(x):
    while True:
        pass


@impl(lib, "crashes")
def crashes(x):
    os.kill(os.getpid(), signal.SIGSEGV)


@impl(lib, "last_good")
def last_good(x):
    return torch.empty_like(x)
"""


@pytest.fixture
def py_tree(tmp_path):
    (tmp_path / "ops.cpp").write_text(PY_DEFS)
    (tmp_path / "ops_meta.py").write_text(PY_METAS)
    return tmp_path


def _verdicts(out: str) -> list[list[str]]:
    """[verdict, op] of each verdict line."""
    return [[line.split()[0], line.split()[1].rstrip(":")] for line in out.splitlines() if line.startswith(("PASS", "FAIL"))]


def _many(run_opkit, tree, *extra):
    return run_opkit("verify", "--from", str(tree / "ops.cpp"), "--meta", str(tree / "ops_meta.py"), "--backend", "aot_eager", "--timeout", "20", *extra)


def test_many_ops_one_run_a_failing_a_hanging_and_a_crashing_op_take_only_themselves_down(py_tree, run_opkit):
    status, out = _many(run_opkit, py_tree)
    assert status == 1, out
    lines = [line for line in out.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert _verdicts(out) == [
        ["PASS", "vmany_py::good"], ["PASS", "vmany_py::also_good"], ["FAIL", "vmany_py::raises"],
        ["FAIL", "vmany_py::hangs"], ["FAIL", "vmany_py::crashes"], ["PASS", "vmany_py::last_good"],
    ]  # fmt: skip
    assert "this Meta is broken on purpose" in lines[2]
    assert "timeout: the check did not finish within 20 s" in lines[3]
    assert "crashed: the check's process died of SIGSEGV" in lines[4] and "the other ops were checked in a new process" in lines[4]
    assert f"(Meta: the Python Meta in {py_tree / 'ops_meta.py'} (loaded unchanged))" in lines[0]
    assert "6 op(s) checked in" in out and ": 3 passed, 3 failed" in out


def test_many_ops_as_json_junit_and_github(py_tree, run_opkit):
    (py_tree / "ops_meta.py").write_text(PY_METAS.replace("    while True:\n        pass", "    return torch.empty_like(x)"))
    status, out = _many(run_opkit, py_tree, "--format", "json")
    data = json.loads(out)
    assert status == 1
    assert data["summary"]["ops"] == 6 and data["summary"]["failed"] == 2 and data["summary"]["ok"] is False
    assert [r["target"] for r in data["reports"] if not r["ok"]] == ["vmany_py::raises", "vmany_py::crashes"]

    status, out = _many(run_opkit, py_tree, "--format", "junit")
    assert status == 1
    suite = ET.fromstring(out.split("\n", 1)[1]).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("6", "2")
    failures = {case.get("name"): case.find("failure") for case in suite.iter("testcase")}
    assert failures["vmany_py::good"] is None and "this Meta is broken on purpose" in failures["vmany_py::raises"].get("message")
    assert failures["vmany_py::crashes"].get("type") == "crashed"

    status, out = _many(run_opkit, py_tree, "--format", "github")
    assert status == 1
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert any(line.startswith(f"::error file={py_tree / 'ops.cpp'},title=opkit verify vmany_py%3A%3Araises%3A Meta function") for line in errors), out
    assert out.splitlines()[-1].startswith("::error title=opkit verify::6 op(s) checked in") and out.splitlines()[-1].endswith("4 passed, 2 failed")


def test_one_python_meta_file_registering_several_ops_serves_the_op_named(py_tree, run_opkit):
    """Every op of the file is defined before the Meta file is imported: it may register the others too."""
    status, out = run_opkit("verify", "--from", str(py_tree / "ops.cpp"), "--op", "also_good", "--meta", str(py_tree / "ops_meta.py"), "--backend", "aot_eager")
    assert status == 0, out
    assert "PASS: vmany_py::also_good" in out


def test_an_unimportable_meta_module_says_which_import_failed_and_how_to_supply_it(tmp_path, run_opkit):
    (tmp_path / "ops.cpp").write_text(PY_DEFS)
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("import opkit_test_not_installed_xyz\n")
    (package / "meta.py").write_text("import torch\n\nfrom mypkg.helpers import opkit_test_not_installed_xyz\n")
    status, out = run_opkit("verify", "--from", str(tmp_path / "ops.cpp"), "--op", "good", "--meta", str(package / "meta.py"), "--backend", "aot_eager")
    assert status == 1, out
    assert (
        f"[registration] meta_import [vmany_py::good]: {package / 'meta.py'}:3: the Meta file does not import: "
        "`from mypkg.helpers import opkit_test_not_installed_xyz`: no module named 'opkit_test_not_installed_xyz' "
        f"(it belongs to the package mypkg, imported from {tmp_path})"
    ) in out
    assert "install the package that provides 'opkit_test_not_installed_xyz' in this environment" in out
    # its own package resolved: the failure is the missing third-party module, not `mypkg`


def test_a_missing_meta_lists_no_passed_meta_or_dynamo_stage(tmp_path, run_opkit):
    (tmp_path / "ops.cpp").write_text(PY_DEFS)
    status, out = run_opkit("verify", "--from", str(tmp_path / "ops.cpp"), "--op", "good", "--backend", "aot_eager")
    assert status == 1, out
    assert "missing_meta" in out and "no Meta for vmany_py::good in " in out
    passed = next((line for line in out.splitlines() if line.strip().startswith("passed:")), "")
    assert "Meta function" not in passed and "Dynamo" not in passed


META = """
import torch
from torch.library import impl, Library

lib = Library("npu", "IMPL", "Meta")

@impl(lib, "{name}")
def {name}_meta(x):
    return torch.empty_like(x)
"""


def test_a_tree_of_projects_is_checked_project_by_project(tmp_path, run_opkit):
    tree = tmp_path / "tree"
    for name in ("vmany_proj_a", "vmany_proj_b"):
        write_project(tree / "ops" / name, name=name, schema=f"{name}(Tensor x) -> Tensor", meta=textwrap.dedent(META.format(name=name)))
    broken = write_project(tree / "vmany_proj_c", name="vmany_proj_c", schema="vmany_proj_c(Tensor x) -> Tensor", meta="import torch\nraise SystemExit(3)\n")
    (tree / ".hidden").mkdir()
    status, out = run_opkit("verify", str(tree), "--backend", "aot_eager")
    assert status == 1, out
    assert _verdicts(out) == [["PASS", "npu::vmany_proj_a"], ["PASS", "npu::vmany_proj_b"], ["FAIL", "npu::vmany_proj_c"]]
    assert "3 op(s) checked" in out and "2 passed, 1 failed" in out
    assert f"FAIL npu::vmany_proj_c in {broken}: [registration] exited: the checked code called sys.exit(3)" in out

    status, out = run_opkit("verify", str(tree / "ops" / "vmany_proj_a"), str(tree / "ops" / "vmany_proj_b"), "--backend", "aot_eager")
    assert status == 0 and "2 op(s) checked" in out, out
    status, out = run_opkit("verify", str(tmp_path / "tree" / ".hidden"))
    assert status == 2 and "no opkit project" in out


def test_many_ops_refuse_an_example_meant_for_one(py_tree, run_opkit):
    status, out = run_opkit("verify", "--from", str(py_tree / "ops.cpp"), "--example", "torch.randn(2)")
    assert status == 2 and "--example is for one op" in out


def test_a_meta_file_registering_an_op_the_file_does_not_define_says_so(py_tree, run_opkit):
    (py_tree / "ops_meta.py").write_text(PY_METAS + '\n\n@impl(lib, "not_in_the_file")\ndef other(x):\n    return torch.empty_like(x)\n')
    status, out = _many(run_opkit, py_tree, "--op", "good")
    assert status == 1, out
    assert f"{py_tree / 'ops_meta.py'}:42: the Meta file registers an op {py_tree / 'ops.cpp'} does not define" in out
    assert "defines vmany_py::good, vmany_py::also_good, vmany_py::raises" in out
