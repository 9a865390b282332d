"""The Python registration reader on patterns beyond opkit's templates (small examples of our own, in the
shapes vllm-ascend and TorchAir write)."""

from __future__ import annotations

from opkit.formats.python_registrations import load_registration_file
from opkit.lint import Selection, lint


def regs(text: str, path: str = "meta.py", modules=None):
    return [(r.namespace, r.op, r.style, r.function.name, r.line) for r in load_registration_file(path, text, modules=modules).registrations]


HELPER = '''import torch
from torch.library import Library

lib = Library("_C_ext", "IMPL")


def register_meta_if_necessary(ns: str, op_name: str, fn, overload: str = ""):
    if overload != "":
        op_name = op_name + "." + overload
    if ns + "::" + op_name in torch._C._dispatch_get_registrations_for_dispatch_key("Meta"):
        return
    lib.impl(op_name, fn, "Meta")


def gate_meta(x, k):
    return torch.empty_like(x)


if not is_small_chip():
    register_meta_if_necessary("_C_ext", "gate", gate_meta)
    register_meta_if_necessary(ns="_C_ext", op_name="gate2", fn=lambda x: x.new_empty(x.shape))
'''


def test_a_helper_of_the_module_registers_at_each_call():
    assert regs(HELPER) == [("_C_ext", "gate", "meta", "gate_meta", 20), ("_C_ext", "gate2", "meta", "<lambda>", 21)]


LOOPS_AND_CALLS = '''import torch
from torch.library import Library, impl, register_fake

m = Library("ns", "IMPL", "Meta")


def a_meta(x):
    return torch.empty_like(x)


def b_meta(x):
    return torch.empty_like(x)


for name, fn in [("a", a_meta), ("b", b_meta)]:
    m.impl(name, fn, "Meta")

try:
    register_fake("ns::c")(a_meta)
except AttributeError:
    register_fake("ns::c")(lambda x: torch.empty_like(x))

impl(m, "d", "Meta")(b_meta)
impl(m, "e", "CompositeExplicitAutograd")(b_meta)
'''


def test_loops_over_literal_lists_call_forms_and_lambdas():
    assert sorted(regs(LOOPS_AND_CALLS)) == [
        ("ns", "a", "meta", "a_meta", 16),
        ("ns", "b", "meta", "b_meta", 16),
        ("ns", "c", "fake", "<lambda>", 21),
        ("ns", "c", "fake", "a_meta", 19),
        ("ns", "d", "meta", "b_meta", 23),
    ]
    (second, first) = [r for r in load_registration_file("meta.py", LOOPS_AND_CALLS).registrations if r.op == "c"]
    assert first.branches != second.branches  # the try body and its handler: alternatives, not a duplicate


SIBLING = '''import torch
from ._lib import lib

if not hasattr(torch.ops.air, "scope_exit"):
    lib.define(
        """
        scope_exit(bool need_execute=False) -> None
        """
    )

    @torch.library.impl(lib, "scope_exit", "Meta")
    def kernel_meta(need_execute=False):
        return None
'''


def test_a_library_from_a_sibling_module_and_a_triple_quoted_define(tmp_path):
    (tmp_path / "_lib.py").write_text('import torch\n\nlib = torch.library.Library("air", "FRAGMENT")\n')
    path = str(tmp_path / "_scope.py")
    files = {str(tmp_path / "_lib.py"): (tmp_path / "_lib.py").read_text()}
    loaded = load_registration_file(path, SIBLING, modules=files.get)
    assert [(r.namespace, r.op, r.style) for r in loaded.registrations] == [("air", "scope_exit", "meta")]
    (site,) = loaded.defined_schemas
    assert (site.text, site.namespace, site.line, site.column) == ("scope_exit(bool need_execute=False) -> None", "air", 7, 9)
    assert load_registration_file(path, SIBLING).registrations == []  # without a module reader: nothing to resolve


def test_lint_reads_the_sibling_and_finds_nothing_wrong(tmp_path):
    (tmp_path / "_lib.py").write_text('import torch\n\nlib = torch.library.Library("air", "FRAGMENT")\n')
    (tmp_path / "_scope.py").write_text(SIBLING)
    result = lint([str(tmp_path / "_scope.py")], use_cache=False)  # _lib.py itself is not named
    assert result.findings == ()


def test_a_schema_error_in_a_concatenated_define_is_placed_in_its_literal(tmp_path):
    (tmp_path / "meta.py").write_text('from torch.library import Library\nm = Library("ns", "DEF")\nm.define("f(Tensor x, "\n         "Tensr y) -> Tensor")\n')
    (found,) = lint([str(tmp_path / "meta.py")], selection=Selection(("S",)), use_cache=False).findings
    assert (found.code, found.line, found.column) == ("S002", 4, 11) and "Tensr" in found.message


def test_a_cpp_def_pairs_with_a_python_meta_through_a_helper(tmp_path):
    (tmp_path / "binding.cpp").write_text(
        'at::Tensor gate(const at::Tensor &x, int64_t k);\n'
        'TORCH_LIBRARY(_C_ext, ops) { ops.def("gate(Tensor x, int k) -> Tensor"); ops.impl("gate", torch::kPrivateUse1, &gate); }\n'
    )
    (tmp_path / "meta.py").write_text(HELPER.replace("lambda x:", "lambda x, k:"))
    found = lint([str(tmp_path)], selection=Selection(("M", "C")), use_cache=False).findings
    # gate is served (no M001); gate2 is defined nowhere, and the C++ TORCH_LIBRARY block owns _C_ext: M011
    assert [(f.code, f.line, f.op) for f in found] == [("M011", 21, "gate2")]
    (tmp_path / "meta.py").write_text(HELPER.replace("def gate_meta(x, k):", "def gate_meta(x):"))
    found = lint([str(tmp_path)], selection=Selection(("M",)), use_cache=False).findings
    assert [(f.code, f.line) for f in found] == [("M002", 20), ("M011", 21)]


def test_registrations_in_two_test_methods_are_not_duplicates_and_define_returns_the_name(tmp_path):
    text = '''import torch


class T:
    def test_a(self):
        lib = torch.library.Library("custom", "FRAGMENT")
        name = lib.define("mutate_op(Tensor(a!)[] y) -> None")

        @torch.library.impl(lib, "mutate_op", "Meta")
        def mutate_meta(y):
            pass

    def test_b(self):
        lib = torch.library.Library("custom", "FRAGMENT")
        op = lib.define("add(Tensor x) -> Tensor")
        lib.impl(op, lambda x: x.new_empty(x.size()), "Meta")

        @torch.library.impl(lib, "mutate_op", "Meta")
        def mutate_meta(y):
            pass
'''
    assert sorted(regs(text)) == [("custom", "add", "meta", "<lambda>", 16), ("custom", "mutate_op", "meta", "mutate_meta", 9), ("custom", "mutate_op", "meta", "mutate_meta", 18)]
    (tmp_path / "test_ops.py").write_text(text)
    assert lint([str(tmp_path / "test_ops.py")], selection=Selection(("M", "S")), use_cache=False).findings == ()
