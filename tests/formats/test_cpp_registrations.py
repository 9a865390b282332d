"""The C++ registration reader on small examples written in the patterns real projects use."""

from __future__ import annotations

import pytest

from opkit.formats.cpp_registrations import (
    CppReadError,
    exclusive,
    macro_definitions,
    read_cpp_registrations,
    registers_anything,
    schema_type_of,
)
from opkit.formats.cpp_tokens import tokenize

# vllm-ascend's pattern: a namespace pasted by macros, adjacent literals, #ifdef / #else arms.
WRAPPED = r'''
#include "utils.h"
namespace my_ext {
at::Tensor scale(const at::Tensor &x, double factor) { return x * factor; }
std::tuple<at::Tensor, at::Tensor> norm(const at::Tensor &x, const c10::optional<at::Tensor> &w, int64_t k);
}  // namespace my_ext

#ifdef SMALL_CHIP
TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), ops)
{
    ops.def("scale(Tensor x, float factor) -> Tensor");
    ops.impl("scale", torch::kPrivateUse1, &my_ext::scale);
}
#else
TORCH_LIBRARY_EXPAND(CONCAT(_C, _ext), ops)
{
    // the same op, the other arm
    ops.def(
        "scale(Tensor x, "
        "      float factor) -> Tensor");
    ops.impl("scale", torch::kPrivateUse1, &my_ext::scale);
    ops.def("norm(Tensor x, Tensor? w, int k) -> (Tensor, Tensor)");
    ops.impl("norm", c10::DispatchKey::CompositeExplicitAutograd, &my_ext::norm);
}
#endif
'''

UTILS_H = r'''
#pragma once
#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) \
  TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)
'''


def test_wrapped_macros_resolve_the_namespace_from_the_header():
    macros = macro_definitions("utils.h", UTILS_H)
    assert registers_anything(WRAPPED, macros)
    got = read_cpp_registrations("binding.cpp", WRAPPED, macros)
    assert [(b.macro, b.written_as, b.namespace, b.namespace_note) for b in got.blocks] == [
        ("TORCH_LIBRARY", "TORCH_LIBRARY_EXPAND", "_C_ext", None),
        ("TORCH_LIBRARY", "TORCH_LIBRARY_EXPAND", "_C_ext", None),
    ]
    assert [(d.namespace, d.schema) for d in got.defs] == [
        ("_C_ext", "scale(Tensor x, float factor) -> Tensor"),
        ("_C_ext", "scale(Tensor x,       float factor) -> Tensor"),
        ("_C_ext", "norm(Tensor x, Tensor? w, int k) -> (Tensor, Tensor)"),
    ]
    assert [(i.op, i.dispatch_key, i.kernel.kind, i.kernel.name) for i in got.impls] == [
        ("scale", "PrivateUse1", "function", "my_ext::scale"),
        ("scale", "PrivateUse1", "function", "my_ext::scale"),
        ("norm", "CompositeExplicitAutograd", "function", "my_ext::norm"),
    ]



def test_a_macro_body_is_cut_by_the_one_cpp_lexer():
    """A raw string with quotes inside, an encoding prefix and ``#x`` in a ``#define``'s body: the same
    tokens as the file's own (ops-math's tiling tests put raw JSON strings in macros)."""
    header = '#define INFO(x) std::string s = R"({"a": 1, "b": )" + #x + u8"c" ;\n'
    body = macro_definitions("info.h", header)["INFO"].body
    assert body == ("std", "::", "string", "s", "=", 'R"({"a": 1, "b": )"', "+", "#", "x", "+", 'u8"c"', ";")
    assert [t.text for t in tokenize('std::string s = R"({"a": 1, "b": )" + x + u8"c" ;')] == [t for t in body if t != "#"]


def test_a_define_is_a_directive_only_first_on_its_line_and_not_inside_another():
    text = "#define A 1\n  #define B(x) x \\\n  #define C 3\nfoo #define D 4\n\t# define E \\\r\n5\n\r#define G 7\n#defineH 8\n#define I\\\n\\\n9\n"
    macros = macro_definitions("m.h", text)
    assert [(m.name, m.line) for m in macros.values()] == [("A", 1), ("B", 2), ("E", 5), ("I", 9)]
    assert macros["B"].body == ("x", "#", "define", "C", "3")  # the continued line is B's body, not a define of its own


def test_if_arms_are_maybe_and_exclusive_not_doubled():
    got = read_cpp_registrations("binding.cpp", WRAPPED, macro_definitions("utils.h", UTILS_H))
    first, second, third = got.defs
    assert first.maybe and first.conditions[0].condition == "#ifdef SMALL_CHIP" and first.conditions[0].arm == 0
    assert second.conditions[0].condition == "#else" and second.conditions[0].arm == 1
    assert exclusive(first.conditions, second.conditions)
    assert not exclusive(second.conditions, third.conditions)
    # across files, arms of conditionals opened by the same test are alternatives too
    other_file = read_cpp_registrations("meta.cpp", "\n\n#ifdef SMALL_CHIP\nTORCH_LIBRARY(ns, m) {}\n#endif\n").blocks[0].conditions
    assert second.conditions[0].opening == "#ifdef SMALL_CHIP" and exclusive(second.conditions, other_file, same_file=False)
    assert not exclusive(first.conditions, other_file, same_file=False)


def test_without_the_macro_definitions_the_namespace_is_taken_as_written():
    got = read_cpp_registrations("binding.cpp", WRAPPED)  # utils.h not given: the wrapper is read by its name
    assert [(b.macro, b.namespace) for b in got.blocks] == [("TORCH_LIBRARY", "CONCAT(_C, _ext)")] * 2
    assert "TORCH_LIBRARY_EXPAND is not defined in the files given: read as TORCH_LIBRARY" in got.blocks[0].namespace_note
    assert len(got.defs) == 3
    wrapped_here = UTILS_H.replace("#define _CONCAT(A, B) A##B\n#define CONCAT(A, B) _CONCAT(A, B)\n", "") + WRAPPED
    got = read_cpp_registrations("binding.cpp", wrapped_here)
    assert {b.namespace for b in got.blocks} == {"CONCAT(_C, _ext)"}
    assert "taken as written" in got.blocks[0].namespace_note
    assert got.defs[0].namespace == "CONCAT(_C, _ext)"


def test_adjacent_literals_map_each_schema_character_to_its_file_position():
    got = read_cpp_registrations("binding.cpp", WRAPPED, macro_definitions("utils.h", UTILS_H))
    second = got.defs[1]
    lines = WRAPPED.splitlines()
    assert (second.line, second.column) == (19, 10) and lines[18][9] == "s"  # 's' of scale
    index = second.schema.index("float")
    line, column = second.position(index)
    assert lines[line - 1][column - 1 : column + 4] == "float"


# sgl-kernel-npu's pattern: FRAGMENT with lambdas as catch-all kernels, IMPL with TORCH_FN, a lambda impl.
FRAGMENT = r'''
namespace {
TORCH_LIBRARY_FRAGMENT(npu, m)
{
    m.def("print_version() -> ()", []() { printf("%s\n", "1.0"); });
    m.def("fill_(Tensor! out, Tensor src) -> bool");
#ifdef WITH_EXTRA
    m.def("extra(Tensor x) -> Tensor");
#endif
}
}  // namespace

namespace {
TORCH_LIBRARY_IMPL(npu, PrivateUse1, m)
{
    m.impl("fill_", TORCH_FN(kern::fill_));
    m.impl("gate", [](at::Tensor logits, const c10::optional<at::Tensor> &mask) { return logits; });
}
}
'''


def test_fragment_lambdas_torch_fn_and_block_keys():
    got = read_cpp_registrations("ext.cpp", FRAGMENT)
    assert [(b.macro, b.namespace, b.dispatch_key) for b in got.blocks] == [("TORCH_LIBRARY_FRAGMENT", "npu", None), ("TORCH_LIBRARY_IMPL", "npu", "PrivateUse1")]
    version, fill, extra = got.defs
    assert version.kernel.kind == "lambda" and version.kernel.signature.parameters == ()
    assert fill.kernel is None and not fill.maybe
    assert extra.maybe and extra.conditions[0].condition == "#ifdef WITH_EXTRA"
    fill_impl, gate = got.impls
    assert (fill_impl.op, fill_impl.dispatch_key, fill_impl.kernel.name) == ("fill_", "PrivateUse1", "kern::fill_")
    assert gate.kernel.kind == "lambda"
    assert [(p.type, p.name, p.schema_type) for p in gate.kernel.signature.parameters] == [
        ("at::Tensor", "logits", "Tensor"),
        ("const c10::optional<at::Tensor> &", "mask", "Tensor?"),
    ]


# TorchAir's .asc pattern: kernel, launcher, def, PrivateUse1 impl and a C++ Meta in one file.
ASC = r'''
extern "C" __global__ __aicore__ void add_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n) { }
namespace my_ops {
at::Tensor my_add(const at::Tensor &x, const at::Tensor &y)
{
    at::Tensor z = at::empty_like(x);
    add_kernel<<<8, nullptr, stream>>>(x.data_ptr(), y.data_ptr(), z.data_ptr(), 1);
    return z;
}
}  // namespace my_ops

at::Tensor my_add_meta(const at::Tensor& x, const at::Tensor& y) { return at::empty_like(x); }

TORCH_LIBRARY_FRAGMENT(my_ops, m) { m.def(R"sig(my_add(Tensor x,
  Tensor y) -> Tensor)sig"); }
TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_add", TORCH_FN(my_ops::my_add)); }
TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_add", &my_add_meta); }
'''


def test_asc_file_def_impl_meta_and_functions():
    got = read_cpp_registrations("my_add.asc", ASC)
    (d,) = got.defs
    assert d.schema == "my_add(Tensor x,\n  Tensor y) -> Tensor"
    assert d.position(d.schema.index("Tensor y")) == (15, 3)  # the raw string's second line
    assert [(i.op, i.dispatch_key, i.kernel.name) for i in got.impls] == [("my_add", "PrivateUse1", "my_ops::my_add"), ("my_add", "Meta", "my_add_meta")]
    functions = {f.name: f for f in got.functions}
    assert set(functions) >= {"add_kernel", "my_ops::my_add", "my_add_meta"}
    meta = functions["my_add_meta"]
    assert meta.returns == "at::Tensor" and [(p.name, p.schema_type) for p in meta.parameters] == [("x", "Tensor"), ("y", "Tensor")]


def test_impl_forms_string_keys_static_cast_and_qualified_names():
    text = r'''
TORCH_LIBRARY_IMPL(ns, CPU, m) {
  m.impl("a", "Meta", &meta::a);
  m.impl("ns::b.out", torch::kCPU, b_out);
  m.impl("c", c10::DispatchKey::CompositeExplicitAutograd,
         static_cast<void (*)(c10::string_view, int64_t)>(&show));
  m.impl("d", d_kernel);
  m.impl("e", torch::CppFunction::makeFromBoxedFunction<&boxed>());
}
'''
    got = read_cpp_registrations("x.cpp", text)
    a, b, c, d, e = got.impls
    assert (a.dispatch_key, a.kernel.name) == ("Meta", "meta::a")
    assert (b.namespace, b.op, b.dispatch_key, b.kernel.name) == ("ns", "b.out", "CPU", "b_out")
    assert c.kernel.name == "show" and [p.schema_type for p in c.kernel.signature.parameters] == ["str", "int"]
    assert c.kernel.signature.returns == "void"
    assert (d.dispatch_key, d.kernel.name) == ("CPU", "d_kernel")  # the block's key
    assert e.kernel.kind == "boxed"


@pytest.mark.parametrize(
    ("cpp", "schema"),
    [
        ("const at::Tensor &", "Tensor"),
        ("at::Tensor&", "Tensor"),
        ("c10::optional<at::Tensor>", "Tensor?"),
        ("const std::optional<at::Tensor>&", "Tensor?"),
        ("at::TensorList", "Tensor[]"),
        ("std::vector<at::Tensor>", "Tensor[]"),
        ("int64_t", "int"),
        ("c10::SymInt", "int"),
        ("double", "float"),
        ("c10::optional<double>", "float?"),
        ("at::IntArrayRef", "int[]"),
        ("c10::SymIntArrayRef", "int[]"),
        ("c10::optional<c10::string_view>", "str?"),
        ("std::tuple<at::Tensor, at::Tensor>", "(Tensor, Tensor)"),
        ("std::tuple<at::Tensor &, at::Tensor &>", "(Tensor, Tensor)"),
        ("std::tuple<at::Tensor>", "Tensor"),
        ("void", "()"),
        ("float", None),
        ("MyStruct", None),
    ],
)
def test_cpp_types_map_to_the_schema_types_torch_infers(cpp, schema):
    assert schema_type_of(cpp) == schema


def test_unreadable_text_is_one_located_error():
    with pytest.raises(CppReadError) as info:
        read_cpp_registrations("x.cpp", 'TORCH_LIBRARY(ns, m) {\n  m.def("a(Tensor x) -> Tensor);\n}\n')
    assert (info.value.line, info.value.column) == (2, 9) and "unterminated string" in info.value.message
    with pytest.raises(CppReadError) as info:
        read_cpp_registrations("x.cpp", 'TORCH_LIBRARY(ns, m) {\n  m.def("a(Tensor x) -> Tensor");\n')
    assert info.value.line == 1 and "never closed" in info.value.message


def test_comments_and_strings_do_not_register_anything():
    text = '// TORCH_LIBRARY(ns, m) { m.def("a() -> ()"); }\nconst char *s = "TORCH_LIBRARY(ns, m) {}";\n/* TORCH_LIBRARY_IMPL(ns, CPU, m) {} */\n'
    got = read_cpp_registrations("x.cpp", text)
    assert got.blocks == [] and got.defs == [] and got.impls == []


def test_tokens_keep_escapes_and_positions():
    (token,) = [t for t in tokenize('x = "a\\"b\\n" u8"c";') if t.kind == "string"][:1]
    assert token.value == 'a"b\n'
    assert [t.value for t in tokenize('u8"c" L"d"')] == ["c", "d"]


def test_one_op_of_a_file_with_macros_from_its_quoted_includes(tmp_path):
    from opkit.formats.cpp_registrations import find_def, read_cpp_def, read_with_includes
    from opkit.formats.files import read_text

    (tmp_path / "utils.h").write_text(UTILS_H)
    path = tmp_path / "binding.cpp"
    path.write_text(WRAPPED.replace('ops.def("scale(Tensor x, float factor) -> Tensor");', 'ops.def("scale(Tensor x) -> Tensor");'))
    records = read_with_includes(str(path), path.read_text(), read_text)
    chosen, notes = find_def(records, "_C_ext::scale")
    assert (chosen.namespace, chosen.schema, chosen.line) == ("_C_ext", "scale(Tensor x) -> Tensor", 11)
    assert notes == ["line 19: another def of _C_ext::scale (another #if arm) not adopted; line 11 under #ifdef SMALL_CHIP is"]
    source = read_cpp_def(str(path), path.read_text(), "norm", read_text)
    assert (source.kind, source.schema, dict(source.entry)) == ("C++ TORCH_LIBRARY def", "norm(Tensor x, Tensor? w, int k) -> (Tensor, Tensor)", {"namespace": "_C_ext"})
    with pytest.raises(ValueError, match="defines 2 ops"):
        find_def(records, None)
