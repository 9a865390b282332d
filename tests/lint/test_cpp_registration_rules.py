"""`opkit lint` on C++ registrations: what is read, paired and reported, on small examples in real patterns."""

from __future__ import annotations

from opkit.lint import Selection, lint

HEADER = """#pragma once
#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)
"""

BINDING = """#include "utils.h"
namespace ext {
at::Tensor gate(const at::Tensor &x, int64_t k);
void fill(at::Tensor &out, const at::Tensor &src);
}
TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), ops)
{
    ops.def("gate(Tensor x, "
            "int k) -> Tensor");
    ops.impl("gate", torch::kPrivateUse1, &ext::gate);
    ops.def("fill(Tensor(a!) out, Tensor src) -> Tensor(a!)");
    ops.impl("fill", torch::kPrivateUse1, &ext::fill);
}
"""

META_CPP = """#include "utils.h"
namespace ext { namespace meta {
at::Tensor gate_meta(const at::Tensor &x) { return at::empty_like(x); }
} }
TORCH_LIBRARY_IMPL_EXPAND(CONCAT(_C, _ext), Meta, ops) {
    ops.impl("gate", &ext::meta::gate_meta);
}
"""

FAKE_PY = """import torch

@torch.library.register_fake("_C_ext::fill")
def fill_fake(out, src):
    return out
"""


def findings(tmp_path, files: dict[str, str], *paths: str, select=("C", "M", "S", "E")):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    targets = [str(tmp_path / p) for p in paths] or [str(tmp_path)]
    return lint(targets, selection=Selection(tuple(select)), use_cache=False).findings


def test_defs_are_paired_with_cpp_and_python_metas_across_files(tmp_path):
    found = findings(tmp_path, {"utils.h": HEADER, "binding.cpp": BINDING, "binding_meta.cpp": META_CPP, "fake.py": FAKE_PY})
    got = sorted((f.code, f.path.rsplit("/", 1)[-1], f.line, f.column) for f in found)
    # gate has a C++ Meta (with a parameter missing: C001 at the Meta impl); fill a Python fake; S101 on the
    # C++ def's own line and column (it returns its mutated input); fill's void kernel vs Tensor(a!): C001
    assert ("M001" not in {c for c, *_ in got}), got
    assert ("C001", "binding_meta.cpp", 6, 14) in got
    assert ("C001", "binding.cpp", 12, 14) in got
    assert ("S101", "binding.cpp", 11, 14) in got
    messages = sorted(f.message for f in found if f.code == "C001")
    assert "takes 1 parameters, the schema has 2 arguments" in messages[0]
    assert "returns void (()), the schema returns Tensor" in messages[1]


def test_no_meta_anywhere_is_m001_at_the_def(tmp_path):
    found = findings(tmp_path, {"utils.h": HEADER, "binding.cpp": BINDING})
    m001 = sorted((f.line, f.column, f.op) for f in found if f.code == "M001")
    assert m001 == [(8, 14, "gate"), (11, 14, "fill")]
    assert all("cannot enter a graph" in f.message for f in found if f.code == "M001")


def test_a_schema_problem_in_a_later_literal_is_placed_on_its_line(tmp_path):
    text = 'TORCH_LIBRARY(ns, m) {\n  m.def("op(Tensor x, "\n        "Tensr y) -> Tensor", [](const at::Tensor &x, const at::Tensor &y) { return x; });\n}\n'
    found = findings(tmp_path, {"ops.cpp": text})
    (s,) = [f for f in found if f.code.startswith("S")]
    assert (s.line, s.column) == (3, 10) and "Tensr" in s.message


def test_if_arms_define_once_each_and_are_not_doubles(tmp_path):
    text = """at::Tensor a(const at::Tensor &x);
at::Tensor a_meta(const at::Tensor &x) { return at::empty_like(x); }
#ifdef SMALL
TORCH_LIBRARY(ns, m) { m.def("a(Tensor x) -> Tensor"); m.impl("a", torch::kPrivateUse1, &a); }
#else
TORCH_LIBRARY(ns, m) { m.def("a(Tensor x) -> Tensor"); m.impl("a", torch::kPrivateUse1, &a); }
#endif
TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("a", &a_meta); }
"""
    assert findings(tmp_path, {"ops.cpp": text}) == ()


def test_a_named_cpp_file_registering_nothing_is_e006_and_walked_headers_are_skipped(tmp_path):
    (tmp_path / "src").mkdir()
    found = findings(tmp_path, {"src/kernel.cpp": "int add(int a, int b) { return a + b; }\n", "src/util.h": "#pragma once\n"}, "src/kernel.cpp")
    (e,) = found
    assert e.code == "E006" and "no TORCH_LIBRARY block" in e.message
    result = lint([str(tmp_path / "src")], use_cache=False)
    assert result.findings == () and result.exit_code() == 0


def test_kernel_rules_name_the_cpp_function_and_swapped_parameters(tmp_path):
    text = """at::Tensor k(const at::Tensor &y, const at::Tensor &x);
at::Tensor k_meta(const at::Tensor &x, const c10::optional<at::Tensor> &y) { return at::empty_like(x); }
TORCH_LIBRARY(ns, m) { m.def("k(Tensor x, Tensor y) -> Tensor"); }
TORCH_LIBRARY_IMPL(ns, PrivateUse1, m) { m.impl("k", TORCH_FN(k)); m.impl("q", TORCH_FN(k)); }
TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("k", &k_meta); }
TORCH_LIBRARY_IMPL(aten, Meta, m) { m.impl("add.Tensor", &k_meta); }
"""
    found = findings(tmp_path, {"ops.cpp": text})
    codes = sorted((f.code, f.line) for f in found)
    assert codes == [("C001", 5), ("C002", 4), ("C004", 4)]
    (c001,) = [f for f in found if f.code == "C001"]
    assert "parameter 2 (const c10::optional<at::Tensor> & y) is Tensor?, the schema's 'y' is Tensor" in c001.message


def test_a_kernel_declared_in_an_included_header_is_checked(tmp_path):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "gate.h").write_text("#pragma once\nnamespace ext {\nat::Tensor gate(const at::Tensor &x);\n}\n")
    text = (
        '#include "ops/gate.h"\n'
        'at::Tensor gate_meta(const at::Tensor &x, int64_t k) { return at::empty_like(x); }\n'
        'TORCH_LIBRARY(ns, m) { m.def("gate(Tensor x, int k) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(ns, PrivateUse1, m) { m.impl("gate", TORCH_FN(ext::gate)); }\n'
        'TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("gate", &gate_meta); }\n'
    )
    found = findings(tmp_path, {"binding.cpp": text})
    (c001,) = found
    assert (c001.code, c001.line) == ("C001", 4)
    assert "ops/gate.h:3" in c001.message and "takes 1 parameters, the schema has 2 arguments" in c001.message


def test_named_headers_lend_macros_and_declarations_and_are_not_errors(tmp_path):
    declarations = "#pragma once\nnamespace ext {\nvoid fill(at::Tensor &out, const at::Tensor &src);\n}\n"
    found = findings(tmp_path, {"utils.h": HEADER, "ops.h": declarations, "binding.cpp": BINDING}, "binding.cpp", "utils.h", "ops.h", select=("C", "E", "I"))
    assert sorted((f.code, f.path.rsplit("/", 1)[-1]) for f in found) == [("C001", "binding.cpp"), ("I001", "ops.h")]
    assert "read for its macros and declarations" in next(f.message for f in found if f.code == "I001")


def test_a_meta_in_the_other_arm_of_the_same_test_serves_nothing(tmp_path):
    binding = """at::Tensor a(const at::Tensor &x);
#ifdef SMALL_CHIP
TORCH_LIBRARY(ns, m) { m.def("a(Tensor x) -> Tensor"); m.impl("a", torch::kPrivateUse1, &a); }
#else
TORCH_LIBRARY(ns, m) { m.def("a(Tensor x, int k) -> Tensor"); }
#endif
"""
    meta = """at::Tensor a_meta(const at::Tensor &x) { return at::empty_like(x); }
#ifdef SMALL_CHIP
TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("a", &a_meta); }
#endif
"""
    found = findings(tmp_path, {"binding.cpp": binding, "binding_meta.cpp": meta})
    # the Meta (one parameter) is checked against the SMALL_CHIP def only, not the #else one (two):
    # no C001; the #else def has neither a Meta nor a device kernel
    assert sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in found) == [("C003", "binding.cpp", 5), ("M001", "binding.cpp", 5)]


# An aclnn OpDef beside the C++ def that reaches it: the kernel passes `r1, r2` as the OpDef's `cos, sin`.
ROTARY_DEF = """namespace ops {
class RotaryMul : public OpDef {
public:
    explicit RotaryMul(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("cos").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("sin").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(RotaryMul);
}
"""

ROTARY_BINDING = """namespace ext {
at::Tensor rotary_mul(const at::Tensor &x, const at::Tensor &r1, const at::Tensor &r2);
}
TORCH_LIBRARY(ext, m) {
    m.def("rotary_mul(Tensor x, Tensor r1, Tensor r2) -> Tensor");
    m.impl("rotary_mul", torch::kPrivateUse1, &ext::rotary_mul);
}
"""


def test_a_cpp_def_is_not_paired_with_the_opdef_its_kernel_calls(tmp_path):
    found = findings(tmp_path, {"rotary_mul_def.cpp": ROTARY_DEF, "binding.cpp": ROTARY_BINDING}, select=("O",))
    assert [f for f in found if f.code.startswith("O1")] == []
    # the same schema from --schema is the OpDef's interface, and its drift is said: names only (r1/r2 where
    # the OpDef has cos/sin, at the same positions, as aclnn passes them), so the name note O106
    drifted = lint([str(tmp_path / "rotary_mul_def.cpp")], schemas=["rotary_mul(Tensor x, Tensor r1, Tensor r2) -> Tensor"], selection=Selection(("O",)), use_cache=False).findings
    assert "O106" in {f.code for f in drifted}
