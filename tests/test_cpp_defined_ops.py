"""`opkit new --from` and `opkit verify --from` on an op defined in C++, end to end through the CLI."""

from __future__ import annotations

import json

ASC = """namespace my_ops {
at::Tensor my_scale(const at::Tensor &x, double factor) { return x * factor; }
}
at::Tensor my_scale_meta(const at::Tensor &x, double factor) { return at::empty_like(x); }
TORCH_LIBRARY_FRAGMENT(cppdef_e2e, m)
{
    m.def("my_scale(Tensor x, "
          "float factor=2.0) -> Tensor");
}
TORCH_LIBRARY_IMPL(cppdef_e2e, PrivateUse1, m) { m.impl("my_scale", TORCH_FN(my_ops::my_scale)); }
TORCH_LIBRARY_IMPL(cppdef_e2e, Meta, m) { m.impl("my_scale", &my_scale_meta); }
"""

FAKE = """import torch


@torch.library.register_fake("cppdef_e2e::my_scale")
def my_scale_fake(x, factor=2.0):
    return torch.empty_like(x)
"""


def test_new_from_adopts_the_cpp_def_like_a_yaml_entry(tmp_path, run_opkit):
    source = tmp_path / "my_scale.asc"
    source.write_text(ASC)
    status, out = run_opkit("new", "--from", str(source), "--op", "my_scale", "-o", str(tmp_path / "proj"), "--no-verify")
    assert status == 0, out
    assert "adopted my_scale from" in out and "(C++ TORCH_LIBRARY def)" in out
    spec = json.loads((tmp_path / "proj" / "opkit.json").read_text())
    # an .asc is Ascend C: its op stays defined in C++, the extension style (a plain .cpp gets the library style)
    assert (spec["schema"], spec["style"], spec["namespace"]) == ("my_scale(Tensor x, float factor=2.0) -> Tensor", "extension", "cppdef_e2e")
    cpp = tmp_path / "my_scale.cpp"
    cpp.write_text(ASC)
    status, out = run_opkit("new", "--from", str(cpp), "--op", "my_scale", "-o", str(tmp_path / "lib"), "--no-verify")
    assert status == 0, out
    assert json.loads((tmp_path / "lib" / "opkit.json").read_text())["style"] == "library"


def test_new_from_names_the_defs_when_the_op_is_not_there(tmp_path, run_opkit):
    source = tmp_path / "my_scale.asc"
    source.write_text(ASC)
    status, out = run_opkit("new", "--from", str(source), "--op", "nope", "-o", str(tmp_path / "proj"), "--no-verify")
    assert status == 2 and "no m.def of nope in the file; it defines cppdef_e2e::my_scale" in out
    assert not (tmp_path / "proj").exists()


def test_verify_from_defines_the_schema_and_loads_the_python_fake(tmp_path, run_opkit):
    source = tmp_path / "my_scale.asc"
    source.write_text(ASC)
    fake = tmp_path / "my_scale_fake.py"
    fake.write_text(FAKE)
    status, out = run_opkit("verify", "--from", str(source), "--op", "my_scale", "--meta", str(fake), "--backend", "aot_eager")
    assert status == 0, out
    assert "graph_count=1 graph_break_count=0" in out
    assert f"schema defined from {source}:7 as its m.def would" in out
    assert "CPU kernel: a stand-in derived from the Meta function" in out


def test_verify_from_without_a_python_meta_compiles_the_cpp_meta_of_the_file(tmp_path, run_opkit):
    import pytest

    from opkit.check import ToolchainError, find_compiler

    try:
        find_compiler()
    except ToolchainError as exc:
        pytest.skip(f"no C++ compiler: {exc}")
    source = tmp_path / "my_scale.asc"
    source.write_text(ASC.replace("cppdef_e2e", "cppdef_e2e_nometa"))
    status, out = run_opkit("verify", "--from", str(source), "--backend", "aot_eager")
    assert status == 0, out
    assert f"note: Meta: the C++ function my_scale_meta ({source}:4), compiled on the CPU against torch's headers" in out


def test_verify_from_refuses_a_bad_schema_at_its_cpp_location(tmp_path, run_opkit):
    source = tmp_path / "bad.cpp"
    source.write_text('TORCH_LIBRARY(cppdef_e2e_bad, m) {\n  m.def("bad(Tensr x) -> Tensor");\n}\n')
    status, out = run_opkit("verify", "--from", str(source), "--backend", "aot_eager")
    assert status == 2 and f"--from {source}:2:10: torch refuses the schema of bad" in out
