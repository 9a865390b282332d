"""`opkit lint` on OpDef C++ files: on their own and against the op's schema (yaml, Python registration, --schema)."""

from __future__ import annotations

import re
import subprocess
import sys

from opkit.lint import lint

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"


def _codes(result):
    return sorted({f.code for f in result.findings})


def _host(project):
    (path,) = project.glob("*/op_host/*.cpp")
    return path


def test_generated_projects_lint_clean_with_their_op_host(generate):
    for name, schema, options in [("my_op", MY_OP, {}), ("my_inplace", "my_inplace(Tensor(a!) x, Tensor y) -> Tensor", {}),
                                  ("lib_norm", "mylib::lib_norm(Tensor! x, Tensor w) -> (Tensor y, Tensor rstd)", {"style": "library"})]:  # fmt: skip
        project = generate(name, schema=schema, **options)
        result = lint([str(project)], use_cache=False)
        assert result.findings == (), result.findings
        assert result.files == 4 - (options.get("style") == "library")  # yaml (op-plugin only), Meta, JSON, op_host


def test_drift_between_the_opdef_and_the_yaml_is_reported_at_its_line(generate):
    project = generate("my_op", schema=MY_OP)
    host = _host(project)
    text = host.read_text()
    # swap the declarations of x and y, and make y REQUIRED
    x = re.search(r'        this->Input\("x"\)[^;]*;\n', text)[0]
    y = re.search(r'        this->Input\("y"\)[^;]*;\n', text)[0]
    host.write_text(text.replace(x, "@X@").replace(y, x).replace("@X@", y.replace("OPTIONAL", "REQUIRED")))
    findings = lint([str(project)], use_cache=False).findings
    assert sorted(f.code for f in findings) == ["O102", "O103"]
    line_of_y = host.read_text().splitlines().index('        this->Input("y")') + 1
    o102 = next(f for f in findings if f.code == "O102")
    assert (o102.path, o102.line, o102.op) == (str(host), line_of_y, "MyOp")
    assert "input 'y' is REQUIRED but the schema declares 'Tensor? y' (OPTIONAL)" in o102.message


def test_an_opdef_named_apart_from_its_op_is_paired_through_the_exec_of_its_yaml_entry(generate):
    project = generate("npu_swiglu", schema="npu_swiglu(Tensor x, Tensor w, int dim=-1) -> Tensor", op_type="SwiGlu")
    host = _host(project)
    assert "exec: aclnnSwiGlu\n" in (project / "op_plugin" / "op_plugin_functions.yaml").read_text() and "class SwiGlu " in host.read_text()
    assert _codes(lint([str(project)], use_cache=False)) == []
    host.write_text(re.sub(r'        this->Input\("w"\)[^;]*;\n', "", host.read_text()))
    assert _codes(lint([str(project)], use_cache=False)) == ["O101"]  # paired by exec: aclnnSwiGlu (the name gives Swiglu)


def test_inplace_output_dropped_from_the_opdef(generate):
    project = generate("my_inplace", schema="my_inplace(Tensor(a!) x, Tensor y) -> Tensor")
    host = _host(project)
    host.write_text(re.sub(r'        this->Output\("x"\)[^;]*;\n', "", host.read_text()))
    assert _codes(lint([str(project)], use_cache=False)) == ["O104", "O105"]


def test_opdef_against_a_python_registration_and_against_schema(generate, tmp_path):
    project = generate("lib_norm", schema="mylib::lib_norm(Tensor! x, Tensor w) -> (Tensor y, Tensor rstd)", style="library")
    host = _host(project)
    host.write_text(re.sub(r'        this->Input\("w"\)[^;]*;\n', "", host.read_text()))
    assert _codes(lint([str(project)], use_cache=False)) == ["O101"]  # the schema from meta/*.py's Library.define
    alone = tmp_path / "lib_norm_def.cpp"
    alone.write_text(host.read_text())
    assert _codes(lint([str(alone)], schemas=["lib_norm(Tensor(a!) x, Tensor w) -> (Tensor y, Tensor rstd)"], use_cache=False)) == ["O101"]
    assert _codes(lint([str(alone)], use_cache=False)) == []  # on its own: well-formed


def test_malformed_opdef_is_e002_and_lint_never_imports_torch(tmp_path):
    bad = tmp_path / "bad_def.cpp"
    bad.write_text('class A : public OpDef {\npublic:\n    explicit A(const char* name) : OpDef(name)\n    {\n        this->Input("x").DataType({ge::DT_NOPE});\n    }\n};\n')
    code = f"import sys; from opkit.lint import lint; r = lint([{str(bad)!r}], use_cache=False); print([(f.code, f.line) for f in r.findings]); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[('E002', 5)]", "False"]


AICPU_OP = """\
class Cumprod : public OpDef {
public:
    explicit Cumprod(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("exclusive").AttrType(OPTIONAL).Bool(false);
        this->AICPU().ExtendCfgInfo("opInfo.engine", "DNN_VM_AICPU");
    }
};
OP_ADD(Cumprod);
"""


def test_an_ai_cpu_opdef_needs_no_aicore_config(tmp_path):
    from opkit.adopt import adopt

    path = tmp_path / "cumprod_def.cpp"
    path.write_text(AICPU_OP)
    assert _codes(lint([str(path)], use_cache=False)) == []
    adoption = adopt(str(path))
    assert adoption.spec.schema == "cumprod(Tensor x, bool exclusive=False) -> Tensor y"
    assert any("AI CPU op" in n for n in adoption.notes)
