"""`opkit new --style extension`: an Ascend C kernel launched with <<<>>> from C++ registered by TORCH_LIBRARY.

End to end as a user runs it (new → lint clean → check compiles the host code here → verify PASS) for a
functional, an in-place and a multi-output op; the files and the C++ the template derives; `--force`
and `--from`.
"""

from __future__ import annotations

import json
import re

import pytest

from opkit.generate.kernel_launch import NPU_ARCH, UnsupportedArch, cpp_parameter_type, npu_arch
from opkit.generate.spec import SpecError, make_spec
from opkit.signature import Dialect, parse_schema

E2E = [
    ("ext_add", "ext_add(Tensor x, Tensor y) -> Tensor", []),
    ("ext_scale", "ext_scale(Tensor(a!) x, Tensor y, float alpha=1.0) -> ()", []),
    ("ext_norm", "ext_norm(Tensor x, Tensor? w, int[] axes=[-1], SymInt k=2, float eps=1e-06) -> (Tensor y, Tensor rstd)", ["--output", "rstd=size:[x.0, k],dtype:float32"]),
]


def toolchain_or_skip():
    from opkit.check import ToolchainError, find_compiler
    from opkit.check.launcher import find_launcher_headers

    try:
        find_compiler()
        find_launcher_headers()
    except ToolchainError as exc:
        pytest.skip(f"no host toolchain for the launcher check: {exc}")


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
@pytest.mark.parametrize("name, schema, options", E2E, ids=[c[0] for c in E2E])
def test_new_lint_check_verify(tmp_path, run_opkit, name, schema, options):
    toolchain_or_skip()
    project = tmp_path / name
    code, out = run_opkit("new", name, "--style", "extension", "--schema", schema, *options, "-o", str(project), "--no-verify")
    assert code == 0, out
    assert "opkit check (launcher):" in out and "0 error(s), 0 warning(s)" in out  # `opkit new` compiled the host code

    code, out = run_opkit("lint", "--format", "json", str(project))
    assert (code, json.loads(out)) == (0, [])

    code, out = run_opkit("check", str(project))
    assert code == 0, out
    assert f"checked 1 file(s), launcher and registrations against torch's and torch_npu's headers" in out

    code, out = run_opkit("verify", str(project), "--format", "json")
    report = json.loads(out)
    assert code == 0, out
    assert (report["graph_count"], report["graph_break_count"]) == (1, 0)
    assert any(f"schema defined from csrc/{name}.asc:" in note for note in report["notes"])
    assert any(f"Meta loaded unchanged from {name}_ext/{name}_meta.py" in note for note in report["notes"])


def test_the_project_holds_the_extension_files_and_none_of_msopgens(tmp_path, run_opkit):
    project = tmp_path / "ext_add"
    code, out = run_opkit("new", "ext_add", "--style", "extension", "-o", str(project), "--no-verify")
    assert code == 0, out
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file() and ".opkit" not in p.parts)
    assert files == [
        "README.md", "csrc/ext_add.asc", "ext_add_ext/__init__.py", "ext_add_ext/ext_add_meta.py", "mre/ext_add_mre.py",
        "mre/ext_add_mre_cache_compile.py", "opkit.json", "setup.py", "tests/test_ext_add_capture.py", "tests/test_ext_add_graph_entry.py",
    ]  # fmt: skip
    asc = (project / "csrc" / "ext_add.asc").read_text()
    assert asc.count("ext_add_kernel<<<") == 1 and "c10_npu::getCurrentNPUStream().stream(false)" in asc
    assert 'at_npu::native::OpCommand::RunOpApiV2("ext_add", launch);' in asc
    assert 'm.def("ext_add(Tensor x) -> Tensor");' in asc and 'm.impl("ext_add", TORCH_FN(mylib::ext_add));' in asc
    assert "TORCH_LIBRARY_IMPL(mylib, Meta" not in asc  # one Meta: the Python one
    assert "@impl(m, \"ext_add\")" in (project / "ext_add_ext" / "ext_add_meta.py").read_text()
    package = (project / "ext_add_ext" / "__init__.py").read_text()
    assert "torch.ops.load_library" in package and "from . import ext_add_meta" in package
    setup = (project / "setup.py").read_text()
    assert '"dav-2201"' in setup and '"-x", "asc"' in setup and "bisheng" in setup
    capture = (project / "tests" / "test_ext_add_capture.py").read_text()
    assert all(way in capture for way in ("torch.npu.NPUGraph()", "torch.npu.make_graphed_callables", 'backend="npugraph_ex"'))
    assert "import ext_add_ext" in (project / "mre" / "ext_add_mre.py").read_text()
    compile(setup, "setup.py", "exec")
    compile(capture, "capture.py", "exec")


def test_other_styles_get_no_extension_files(tmp_path, run_opkit):
    project = tmp_path / "lib_op"
    assert run_opkit("new", "lib_op", "--style", "library", "-o", str(project), "--no-verify", "--msopgen", "builtin")[0] == 0
    assert not any((project / p).exists() for p in ("csrc", "setup.py", "lib_op_ext", "tests/test_lib_op_capture.py"))


def test_the_launcher_spells_every_schema_type_as_torch_infers_it():
    schema = (
        "f(Tensor a, Tensor(a!) b, Tensor? c, Tensor[] d, Scalar e, Scalar? f, int g, SymInt h, int? i, float k, float? l, bool m, "
        "str o, str? p, int[] q, SymInt[] r, int[]? s, SymInt[]? t, float[] u, float[]? v, bool[] w, bool[2] x, str[] y, ScalarType z, ScalarType? zz) -> Tensor"
    )
    sig = parse_schema(schema, Dialect.TORCH_LIBRARY)
    assert [cpp_parameter_type(a) for a in sig.arguments] == [
        "const at::Tensor &", "at::Tensor &", "const std::optional<at::Tensor> &", "at::TensorList", "const at::Scalar &",
        "const std::optional<at::Scalar> &", "int64_t", "c10::SymInt", "std::optional<int64_t>", "double", "std::optional<double>", "bool",
        "c10::string_view", "std::optional<c10::string_view>", "at::IntArrayRef", "c10::SymIntArrayRef", "at::OptionalIntArrayRef",
        "at::OptionalSymIntArrayRef", "at::ArrayRef<double>", "std::optional<at::ArrayRef<double>>", "c10::List<bool>", "std::array<bool, 2>",
        "c10::List<std::string>", "at::ScalarType", "std::optional<at::ScalarType>",
    ]  # fmt: skip


def test_npu_arch_follows_the_soc_family():
    assert npu_arch(("ascend910b1", "ascend910_9391")) == "dav-2201"  # Atlas A2 and A3: one architecture
    assert npu_arch(("ascend310p3",)) == "dav-2002" and npu_arch(("ascend950pr",)) == "dav-3510"
    with pytest.raises(UnsupportedArch, match=r"needs 2 architectures \(dav-2201, dav-2002\)"):
        npu_arch(("ascend910b1", "ascend310p3"))
    with pytest.raises(SpecError, match="--soc ascend610lite: no bisheng --npu-arch is known"):
        make_spec("f", style="extension", soc="ascend610lite")
    assert set(NPU_ARCH.values()) == {"dav-1001", "dav-2201", "dav-2002", "dav-3002", "dav-3510"}


@pytest.mark.slow
def test_check_reports_a_launch_that_does_not_match_the_kernel_at_its_line(tmp_path, run_opkit):
    toolchain_or_skip()
    project = tmp_path / "ext_add"
    assert run_opkit("new", "ext_add", "--style", "extension", "-o", str(project), "--no-verify")[0] == 0
    asc = project / "csrc" / "ext_add.asc"
    text = asc.read_text()
    broken = re.sub(r"(ext_add_kernel<<<block_dim, nullptr, acl_stream>>>\()x_gm, ", r"\1", text)  # one argument short
    assert broken != text
    asc.write_text(broken)
    line = next(i + 1 for i, t in enumerate(broken.splitlines()) if "ext_add_kernel<<<" in t)
    code, out = run_opkit("check", str(project))
    assert code == 1, out
    assert re.search(rf"^csrc/ext_add\.asc:{line}:\d+: error: too few arguments to function", out, re.M), out


def test_force_keeps_the_users_kernel_body_across_a_schema_change(tmp_path, run_opkit):
    project = tmp_path / "ext_add"
    assert run_opkit("new", "ext_add", "--style", "extension", "-o", str(project), "--no-verify")[0] == 0
    asc = project / "csrc" / "ext_add.asc"
    body = "    // TODO: the kernel body (Ascend C: AscendC::GlobalTensor, TPipe, TQue, DataCopy, ...), splitting\n"
    asc.write_text(asc.read_text().replace(body, "    AscendC::TPipe pipe;  // mine\n"))
    code, out = run_opkit("new", "ext_add", "--style", "extension", "--schema", "ext_add(Tensor x, Tensor y) -> Tensor", "-o", str(project), "--force", "--no-verify")
    assert code == 0, out
    text = asc.read_text()
    assert "AscendC::TPipe pipe;  // mine" in text and "GM_ADDR y," in text and 'm.def("ext_add(Tensor x, Tensor y) -> Tensor");' in text


def test_from_adopts_an_asc_that_registers_with_torch_library(tmp_path, run_opkit):
    source = tmp_path / "ops.asc"
    source.write_text(
        "#include <torch/library.h>\n"
        "at::Tensor my_add(const at::Tensor &x, const at::Tensor &y) { return x; }\n"
        "at::Tensor my_trig(const at::Tensor &x, at::Tensor &s) { return x; }\n"
        "TORCH_LIBRARY_FRAGMENT(my_ops, m)\n{\n"
        '    m.def("my_add(Tensor x, Tensor y) -> Tensor");\n'
        '    m.def("my_trig(Tensor x, Tensor(a!) s) -> Tensor");\n}\n'
        'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_add", TORCH_FN(my_add)); }\n'
    )
    code, out = run_opkit("new", "--from", str(source), "-o", str(tmp_path / "x"), "--no-verify")
    assert code == 2 and "the file defines 2 ops (my_ops::my_add, my_ops::my_trig): choose one with --op NAME" in out
    code, out = run_opkit("new", "--from", str(source), "--op", "my_trig", "-o", str(tmp_path / "t"), "--no-verify")
    assert code == 0, out
    spec = json.loads((tmp_path / "t" / "opkit.json").read_text())
    assert (spec["style"], spec["namespace"], spec["schema"]) == ("extension", "my_ops", "my_trig(Tensor x, Tensor(a!) s) -> Tensor")
    assert "not carried over: output sizes" in out


CPP_META = """
at::Tensor {name}_meta(const at::Tensor &x, const at::Tensor &y)
{{
    return {body};
}}

TORCH_LIBRARY_IMPL(mylib, Meta, m)
{{
    m.impl("{name}", &{name}_meta);
}}
"""


def test_a_cpp_meta_is_found_with_its_text_and_judged_for_torch_npu(tmp_path):
    from opkit.verify.cpp_meta import find_cpp_meta

    text = "#include <torch/library.h>\n#include \"torch_npu/csrc/core/npu/NPUStream.h\"\n" + CPP_META.format(name="f", body="at::empty_like(x)")
    meta = find_cpp_meta(tmp_path / "f.asc", text, "f")
    assert (meta.function, meta.namespace, meta.op, meta.line) == ("f_meta", "mylib", "f", 4)
    assert meta.source.startswith("at::Tensor f_meta(") and meta.source.endswith("}") and "TORCH_LIBRARY" not in meta.source
    assert meta.includes == ("#include <torch/library.h>",) and not meta.needs_torch_npu
    npu = find_cpp_meta(tmp_path / "f.asc", text.replace("at::empty_like(x)", "at::empty_like(x, c10_npu::options())"), "f")
    assert npu.needs_torch_npu
    assert find_cpp_meta(tmp_path / "f.asc", text, "g") is None


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
def test_verify_compiles_and_runs_the_asc_s_own_cpp_meta(tmp_path, run_opkit):
    """The C++ Meta is what verify runs: with the Python Meta deleted the op still verifies, and a C++ Meta that
    needs torch_npu falls back to the Python one, saying so."""
    project = tmp_path / "ext_cm"
    assert run_opkit("new", "ext_cm", "--style", "extension", "--schema", "ext_cm(Tensor x, Tensor y) -> Tensor", "-o", str(project), "--no-verify")[0] == 0
    asc = project / "csrc" / "ext_cm.asc"
    generated = asc.read_text()
    asc.write_text(generated + CPP_META.format(name="ext_cm", body="at::empty_like(x)"))
    python_meta = project / "ext_cm_ext" / "ext_cm_meta.py"
    kept = python_meta.read_text()
    python_meta.unlink()
    code, out = run_opkit("verify", str(project), "--format", "json")
    report = json.loads(out)
    assert code == 0, out
    assert any(n.startswith("Meta: the C++ function ext_cm_meta (csrc/ext_cm.asc:") for n in report["notes"]), report["notes"]

    asc.write_text(generated + CPP_META.format(name="ext_cm", body="at::empty_like(x, x.options().device(c10_npu::current_device()))"))
    python_meta.write_text(kept)
    code, out = run_opkit("verify", str(project), "--format", "json")
    report = json.loads(out)
    assert code == 0, out
    assert any("uses torch_npu, ACL or a kernel launch, so it cannot run on the CPU: the Python Meta ext_cm_ext/ext_cm_meta.py is used" in n for n in report["notes"])


@pytest.mark.slow
def test_torch_accepts_the_launcher_types_for_the_schema(tmp_path):
    """Compile one function per schema (with the launcher's C++ types) and register it with TORCH_FN against
    the schema: torch infers the schema from the C++ signature and refuses a mismatch at registration."""
    from torch.utils import cpp_extension

    from opkit.generate.kernel_launch import CppParam, cpp_return_type

    import torch

    schemas = [
        "t1(Tensor a, Tensor(a!) b, Tensor? c, Tensor[] d, Scalar e, Scalar? f, int g, SymInt h, int? i, float k, float? l, bool m, bool? n, "
        "str o, str? p, int[] q, SymInt[] r, int[]? s, SymInt[]? t, float[] u, float[]? v, ScalarType z, ScalarType? zz, int[2] y) -> Tensor",
        "t2(Tensor a, bool[] b, bool[2] c, str[] d, Tensor(a!)[] e) -> (Tensor, Tensor[])",
        "t3(Tensor! a) -> ()",
    ]
    functions, defs, impls = [], [], []
    for schema in schemas:
        sig = parse_schema(schema, Dialect.TORCH_LIBRARY)
        params = ", ".join(CppParam(cpp_parameter_type(a), a.name).declaration for a in sig.arguments)
        returns = cpp_return_type(sig)
        body = {"at::Tensor": "return a;", "void": "", "std::tuple<at::Tensor, std::vector<at::Tensor>>": "return {a, {a}};"}[returns]
        functions.append(f"{returns} {sig.name}({params}) {{ {body} }}")
        defs.append(f"m.def({json.dumps(schema)});")
        impls.append(f'm.impl("{sig.name}", TORCH_FN({sig.name}));')
    source = "\n".join(
        ["#include <ATen/ATen.h>", "#include <torch/library.h>", *functions,
         "TORCH_LIBRARY_FRAGMENT(opkit_types, m) {", *defs, "}", "TORCH_LIBRARY_IMPL(opkit_types, CPU, m) {", *impls, "}"]
    )  # fmt: skip
    (tmp_path / "types.cpp").write_text(source)
    cpp_extension.load(name="opkit_launcher_types", sources=[str(tmp_path / "types.cpp")], build_directory=str(tmp_path), is_python_module=False, extra_cflags=["-O0", "-w"])
    x = torch.ones(2)
    assert torch.ops.opkit_types.t3(x) is None
    assert torch.ops.opkit_types.t1.default._schema.arguments[1].alias_info.is_write
