"""`opkit check`: generated C++ compiled against a stand-in of CANN's host headers (cann_include/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opkit.check import toolchain

from .conftest import needs_compiler

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_INPLACE = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor z"
WITH_LIST = "list_op(Tensor x, float scale, int[] sizes=[1,1], float eps=1e-05, str mode='a', bool flag=True) -> Tensor"


def _mutate(path: Path, old: str, new: str) -> int:
    """Replace the first ``old`` in ``path``; return its 1-based line."""
    text = path.read_text()
    at = text.index(old)
    path.write_text(text[:at] + new + text[at + len(old) :])
    return text[:at].count("\n") + 1


@needs_compiler
@pytest.mark.parametrize(("name", "schema", "op_type"), [("my_op", MY_OP, "MyOp"), ("my_inplace", MY_INPLACE, "MyInplace"), ("list_op", WITH_LIST, "ListOp")])
def test_generated_projects_pass(generated, run_opkit, cann_include, name, schema, op_type):
    project = generated(name, schema)
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert code == 0, output
    assert f"CANN host headers: {cann_include} (from --cann)" in output
    assert "checked 2 file(s)" in output and "0 error(s), 0 warning(s)" in output
    if name == "my_op":  # the Ascend C tree itself is a project too
        assert run_opkit("check", str(project / op_type), "--cann", str(cann_include), "--host-only")[0] == 0


# (directory, text, replacement, message); the error is on the replaced line unless a 5th item names the
# text of the line where the compiler reports it.
MUTATIONS = {
    "unknown attr method": ("op_host", ".Float();", ".Floaty();", "has no member named 'Floaty'"),
    "wrong enum": ("op_host", "ge::DT_FLOAT16,", "ge::DT_HALF,", "'DT_HALF' is not a member of 'ge'"),
    "wrong tiling struct in op_host": ("op_host", "GetTilingData<ListOpTilingData>", "GetTilingData<ListOpTiling>", "'ListOpTiling' was not declared"),
    "wrong tiling struct in kernel": ("op_kernel", "REGISTER_TILING_DEFAULT(ListOpTilingData)", "REGISTER_TILING_DEFAULT(ListOpTiling)", "'ListOpTiling' was not declared"),
    "list default with []": ("op_host", "ListInt({1, 1})", "ListInt([1, 1])", "expected"),
    "kernel without its tiling parameter": ("op_kernel", "GM_ADDR tiling)", "GM_ADDR tiling_data)", "'tiling' was not declared", "GET_TILING_DATA("),
}


@needs_compiler
@pytest.mark.parametrize("mutation", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_mutated_project_fails_at_the_mutated_line(generated, run_opkit, cann_include, mutation):
    kind, old, new, message, *error_at = mutation
    project = generated("list_op", WITH_LIST)
    source = project / "ListOp" / kind / "list_op.cpp"
    line = _mutate(source, old, new)
    if error_at:
        text = source.read_text()
        line = text[: text.index(error_at[0])].count("\n") + 1
    code, output = run_opkit("check", str(project), "--cann", str(cann_include), *(["--host-only"] if kind == "op_host" else []))
    assert code == 1, output
    errors = [row for row in output.splitlines() if ": error: " in row]
    assert errors and all(row.startswith(f"ListOp/{kind}/list_op.cpp:{line}:") for row in errors), output
    assert any(message in row for row in errors), output


@needs_compiler
def test_warnings_are_reported_and_fail_only_on_request(generated, run_opkit, cann_include):
    project = generated("my_op", MY_OP)
    source = project / "MyOp" / "op_host" / "my_op.cpp"
    line = _mutate(source, "    context->SetBlockDim(8);", "    for (int i = 0; i < context->GetInputShape(0)->GetStorageShape().GetDimNum(); i++) {}\n    context->SetBlockDim(8);")
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert code == 0 and f"MyOp/op_host/my_op.cpp:{line}:" in output and "[-Wsign-compare]" in output, output
    assert "0 error(s), 1 warning(s)" in output
    assert run_opkit("check", str(project), "--cann", str(cann_include), "--fail-on", "warning")[0] == 1


@needs_compiler
def test_headers_from_ascend_home_path(generated, run_opkit, cann_include, tmp_path, monkeypatch):
    import shutil

    shutil.copytree(cann_include, tmp_path / "cann" / "include")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "cann"))
    code, output = run_opkit("check", str(generated("my_op", MY_OP)), "--host-only")
    assert code == 0, output
    assert f"CANN host headers: {tmp_path / 'cann' / 'include'} (from $ASCEND_HOME_PATH)" in output
    assert "checked 1 file(s), op_host against the CANN host headers:" in output


@needs_compiler
def test_widened_op_model_surface_compiles(tmp_path, run_opkit, cann_include):
    """What op_host code for richer signatures uses (issue 9) is declared, as CANN declares it."""
    (tmp_path / "op_host").mkdir()
    (tmp_path / "op_host" / "wide.cpp").write_text(
        """#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* dyn = context->GetDynamicInputShape(1, 0);
    const gert::StorageShape* opt = context->GetOptionalInputShape(2);
    int64_t n = dyn->GetStorageShape().GetShapeSize() + (opt == nullptr ? 0 : opt->GetOriginShape().GetDim(0));
    const int64_t* axis = context->GetAttrs()->GetInt(0);
    context->SetBlockDim(static_cast<uint32_t>(n + *axis));
    return ge::GRAPH_SUCCESS;
}
}
namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetDynamicInputShape(1, 0);
    const gert::Shape* opt = context->GetOptionalInputShape(2);
    return opt == nullptr ? GRAPH_SUCCESS : GRAPH_FAILED;
}
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    return context->SetOutputDataType(1, context->GetDynamicInputDataType(1, 0));
}
}
namespace ops {
class Wide : public OpDef {
public:
    explicit Wide(const char* name) : OpDef(name)
    {
        this->Input("value").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND}).Scalar();
        this->Input("xs").ParamType(DYNAMIC).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("k").ParamType(OPTIONAL).DataType({ge::DT_INT64}).Format({ge::FORMAT_ND}).ValueDepend(OPTIONAL);
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("ys").ParamType(DYNAMIC).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("axis").Int(1);
        this->Attr("dtype").AttrType(OPTIONAL).Type(ge::DT_FLOAT16);
        this->Attr("names").AttrType(OPTIONAL).ListString({"a", "b"});
        this->Attr("types").AttrType(OPTIONAL).ListType({ge::DT_FLOAT, ge::DT_INT32});
        this->Attr("pads").AttrType(OPTIONAL).ListListInt({{1, 2}, {3}});
        this->Attr("scales").AttrType(OPTIONAL).ListFloat({1.0f, 0.5f});
        this->Attr("mask").AttrType(OPTIONAL).ListBool({true, false});
        this->Attr("mode").AttrType(OPTIONAL).String("a");
        this->Attr("sizes").AttrType(REQUIRED).ListInt();
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Wide);
}
"""
    )
    code, output = run_opkit("check", str(tmp_path), "--cann", str(cann_include))
    assert code == 0, output


@needs_compiler
def test_missing_headers_is_one_message(generated, run_opkit, tmp_path, monkeypatch):
    project = generated("my_op", MY_OP)
    code, output = run_opkit("check", str(project), "--cann", str(tmp_path))
    assert code == 2 and output.count("\n") == 1 and output.startswith(f"opkit check: --cann {tmp_path}: no register/op_def_registry.h in"), output
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "nowhere"))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setattr(toolchain, "STANDARD_CANN_ROOTS", (str(tmp_path / "standard"),))
    # Only op_host left to check: the missing headers are the one error.
    code, output = run_opkit("check", str(project), "--host-only")
    assert code == 2 and output.count("\n") == 1, output
    assert f"no CANN host headers (register/op_def_registry.h) under {tmp_path / 'nowhere'}, {tmp_path / 'standard'}" in output


@needs_compiler
def test_without_cann_the_kernel_skeleton_is_still_checked_and_the_host_skip_said(generated, run_opkit, tmp_path, monkeypatch):
    project = generated("my_op", MY_OP)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "nowhere"))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setattr(toolchain, "STANDARD_CANN_ROOTS", ())
    code, output = run_opkit("check", str(project))
    lines = output.splitlines()
    assert code == 0, output
    assert lines[1] == "CANN host headers: none"
    assert lines[2].startswith(f"op_host not checked: no CANN host headers (register/op_def_registry.h) under {tmp_path / 'nowhere'}: install")
    assert lines[-1] == (
        "checked 1 file(s), op_kernel skeleton only (opkit's stand-in kernel_operator.h); op_host skipped (no CANN host "
        "headers): 0 error(s), 0 warning(s)"
    )
    # The skeleton really is compiled: a broken kernel fails, at its line.
    kernel = next(project.glob("*/op_kernel/my_op.cpp"))
    line = _mutate(kernel, "{", "{ undeclared_name;")
    code, output = run_opkit("check", str(project))
    assert code == 1 and f"op_kernel/my_op.cpp:{line}:" in output and "undeclared_name" in output, output


def test_missing_compiler_is_one_message(generated, run_opkit, cann_include, tmp_path, monkeypatch):
    project = generated("my_op", MY_OP)
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler there
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert (code, output) == (2, "opkit check: no C++ compiler: none of c++, g++, clang++ is on PATH (Debian/Ubuntu: apt-get install g++)\n")
    monkeypatch.setenv("CXX", "no-such-c++")
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert (code, output) == (2, "opkit check: $CXX is 'no-such-c++', which is not an executable on PATH\n")


def test_no_project_is_one_message(run_opkit, tmp_path):
    code, output = run_opkit("check", str(tmp_path))
    assert code == 2 and "no Ascend C project here" in output and output.count("\n") == 1


@needs_compiler
def test_new_checks_the_host_code_when_headers_are_found(run_opkit, cann_include, tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(cann_include))
    code, output = run_opkit("new", "my_op", "--schema", MY_OP, "--no-verify", "--msopgen", "builtin", "-o", str(tmp_path / "a"))
    assert code == 0, output
    assert f"CANN host headers: {cann_include} (from $ASCEND_HOME_PATH)" in output
    assert "checked 1 file(s), op_host against the CANN host headers: 0 error(s), 0 warning(s)" in output
    monkeypatch.delenv("ASCEND_HOME_PATH")
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setattr(toolchain, "STANDARD_CANN_ROOTS", ())
    code, output = run_opkit("new", "my_op", "--schema", MY_OP, "--no-verify", "--msopgen", "builtin", "-o", str(tmp_path / "b"))
    assert code == 0 and "opkit check skipped: no CANN host headers" in output, output


def test_doctor_reports_compiler_and_headers(cann_include, tmp_path, monkeypatch):
    from opkit.verify import doctor

    monkeypatch.setenv("ASCEND_HOME_PATH", str(cann_include))
    findings = {f.name: f for f in doctor._compile_check_tools()}
    assert findings["CANN host headers"].status == "ok" and str(cann_include) in findings["CANN host headers"].detail
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setattr(toolchain, "STANDARD_CANN_ROOTS", ())
    findings = {f.name: f for f in doctor._compile_check_tools()}
    assert findings["C++ compiler"].status == "info" and "no C++ compiler" in findings["C++ compiler"].detail
    assert findings["CANN host headers"].status == "info" and "needed by opkit check only" in findings["CANN host headers"].detail


@needs_compiler
def test_json_list_defaults_compile_when_msopgen_pastes_them(generated, run_opkit, cann_include):
    """msOpGen pastes default_value into ListInt(...) verbatim: opkit's JSON must carry braces (msopgen.md §6)."""
    import json
    import re

    project = generated("list_op", WITH_LIST)
    (attr,) = [a for a in json.loads((project / "msopgen" / "list_op.json").read_text())[0]["attr"] if a["name"] == "sizes"]
    assert attr["default_value"] == "{1,1}"
    source = project / "ListOp" / "op_host" / "list_op.cpp"
    pasted = re.sub(r"ListInt\(\{1, 1\}\)", "ListInt(" + attr["default_value"] + ")", source.read_text())
    assert "ListInt({1,1})" in pasted
    source.write_text(pasted)
    assert run_opkit("check", str(project), "--cann", str(cann_include), "--host-only")[0] == 0
