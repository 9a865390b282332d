"""S101/S108 know what the build does: op-plugin's generated Functionalize kernels (a ``custom:`` in-place,
out= or mutable entry with a functional twin of the same torchgen ``signature()``), Functionalize kernels
registered in the linted files, ``Tag.inplace``/``Tag.out``; and ops torch_npu already defines, re-declared
by a test stand-in, are not linted as new ops (the op list read from the torch-npu wheel, never imported)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import torchgen
import yaml
from torchgen.model import FunctionSchema

from opkit.lint import Selection, lint
from opkit.signature import Dialect, parse_schema


def codes(tmp_path: Path, files: dict[str, str], select=("S1", "M001")) -> list[tuple[str, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = lint([str(tmp_path)], selection=Selection(tuple(select)), use_cache=False).findings
    return sorted((f.code, f.op) for f in found)


# ---- torchgen's signature(), which the codegen groups by ----------------------------------------------


SIGNATURE_CASES = [
    "my_op_(Tensor(a!) self, Tensor x, float k=1.0) -> Tensor(a!)",
    "my_op(Tensor self, Tensor x, float k=1.0) -> Tensor",
    "my_op.out(Tensor self, Tensor x, float k=1.0, *, Tensor(a!) out) -> Tensor(a!)",
    "my_op.two(Tensor self, *, Tensor(a!) y, Tensor(b!) z) -> (Tensor(a!), Tensor(b!))",
    "my_upd(Tensor x, Tensor(a!) cache, int n) -> Tensor",  # mutable: cache becomes a trailing return
    "my_upd_functional(Tensor x, Tensor cache, int n) -> (Tensor, Tensor)",
    "my_fill_(Tensor(a!) self, *, int? k=None) -> Tensor(a!)",
    "my_new(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "my_new.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)",
    "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
]


@pytest.mark.parametrize("text", SIGNATURE_CASES)
def test_grouping_signature_is_torchgens(text):
    assert parse_schema(text, Dialect.OP_PLUGIN).grouping_signature == str(FunctionSchema.parse(text).signature())


def test_grouping_signature_agrees_with_torchgen_on_native_functions():
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    entries = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    checked = 0
    for entry in entries:
        text = entry["func"]
        try:
            sig = parse_schema(text, Dialect.OP_PLUGIN)
        except ValueError:
            continue
        assert sig.grouping_signature == str(FunctionSchema.parse(text).signature()), text
        checked += 1
    assert checked > 2000


# ---- op-plugin's codegen: a functional twin with the same signature --------------------------------------

YAML_HEAD = "all_version: [v2.1, v2.13]\nofficial:\nautograd:\nsymint:\nquant:\ncustom:\n"


def entry(func: str, versions: str = "all_version") -> str:
    return f"  - func: {func}\n    op_api: {versions}\n"


def test_an_inplace_op_with_its_functional_twin_is_functionalized_by_the_codegen(tmp_path):
    text = YAML_HEAD + entry("my_scale_(Tensor(a!) self, Tensor s) -> Tensor(a!)") + entry("my_scale(Tensor self, Tensor s) -> Tensor")
    assert codes(tmp_path, {"op_plugin_functions.yaml": text}) == []


def test_without_a_twin_s101_names_the_twin_to_add_and_the_other_remedies(tmp_path):
    (tmp_path / "op_plugin_functions.yaml").write_text(YAML_HEAD + entry("my_scale_(Tensor(a!) self, Tensor s) -> Tensor(a!)"))
    (finding,) = lint([str(tmp_path)], selection=Selection(("S101",)), use_cache=False).findings
    assert "return ()" in finding.hint and "my_scale(Tensor self, Tensor s) -> Tensor" in finding.hint
    assert "Functionalize kernel" in finding.hint


@pytest.mark.parametrize(
    "twin",
    [
        "my_scale(Tensor self, Tensor s, float k=1.0) -> Tensor",  # another signature: no group
        "my_scale(Tensor self, Tensor other) -> Tensor",  # argument names are part of the signature
        "my_scale_v2(Tensor self, Tensor s) -> Tensor",  # another name
    ],
)
def test_a_twin_of_another_signature_does_not_count(tmp_path, twin):
    text = YAML_HEAD + entry("my_scale_(Tensor(a!) self, Tensor s) -> Tensor(a!)") + entry(twin)
    assert codes(tmp_path, {"op_plugin_functions.yaml": text}) == [("S101", "my_scale_")]


def test_a_twin_built_for_fewer_versions_leaves_the_others_unserved(tmp_path):
    text = YAML_HEAD + entry("my_scale_(Tensor(a!) self, Tensor s) -> Tensor(a!)") + entry("my_scale(Tensor self, Tensor s) -> Tensor", "[v2.1, v2.6]")
    assert codes(tmp_path, {"op_plugin_functions.yaml": text}) == [("S101", "my_scale_")]


def test_an_out_overload_with_its_twin_is_not_s108_and_one_with_two_outs_stops_the_group(tmp_path):
    served = YAML_HEAD + entry("my_norm(Tensor x) -> Tensor") + entry("my_norm.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    assert codes(tmp_path, {"op_plugin_functions.yaml": served}) == []
    # gen_functionalization_registration emits nothing for a group holding an out= op with two out arguments
    two = YAML_HEAD + entry("my_two(Tensor self) -> (Tensor, Tensor)") + entry("my_two.out(Tensor self, *, Tensor(a!) y, Tensor(b!) z) -> (Tensor(a!), Tensor(b!))")
    assert codes(tmp_path, {"op_plugin_functions.yaml": two}) == [("S108", "my_two.out")]


# ---- a Functionalize kernel in the linted files; tags -------------------------------------------------

PY_DEFINE = """import torch
lib = torch.library.Library("mylib", "DEF")
lib.define("my_scale_(Tensor(a!) x, Tensor s) -> Tensor(a!)"{tags})

@torch.library.impl(lib, "my_scale_", "Meta")
def my_scale_meta(x, s):
    return x
{more}"""


def test_a_python_functionalize_kernel_serves_the_op(tmp_path):
    assert codes(tmp_path, {"ops.py": PY_DEFINE.format(tags="", more="")}) == [("S101", "my_scale_")]
    kernel = "\ndef my_scale_functionalize(x, s):\n    return x\n\nlib.impl(\"my_scale_\", my_scale_functionalize, \"Functionalize\")\n"
    assert codes(tmp_path, {"ops.py": PY_DEFINE.format(tags="", more=kernel)}) == []
    decorated = '\n@torch.library.impl("mylib::my_scale_", "Functionalize")\ndef my_scale_functionalize(x, s):\n    return x\n'
    assert codes(tmp_path, {"ops.py": PY_DEFINE.format(tags="", more=decorated)}) == []


def test_a_functionalize_kernel_for_another_op_does_not_count(tmp_path):
    kernel = "\ndef f(x, s):\n    return x\n\nlib.impl(\"my_other_\", f, \"Functionalize\")\n"
    assert codes(tmp_path, {"ops.py": PY_DEFINE.format(tags="", more=kernel)}) == [("S101", "my_scale_")]


@pytest.mark.parametrize("tag, silent", [("torch.Tag.inplace", True), ("(torch.Tag.out,)", True), ("torch.Tag.pt2_compliant_tag", False)])
def test_python_tags(tmp_path, tag, silent):
    found = codes(tmp_path, {"ops.py": PY_DEFINE.format(tags=f", tags={tag}", more="")})
    assert found == ([] if silent else [("S101", "my_scale_")])


CPP = """#include <torch/library.h>
at::Tensor &my_scale_(at::Tensor &x, const at::Tensor &s) { return x; }
TORCH_LIBRARY(mylib, m) {
    m.def("my_scale_(Tensor(a!) x, Tensor s) -> Tensor(a!)"%s);
}
TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("my_scale_", &my_scale_); }
%s"""


def test_cpp_functionalize_kernel_and_tags(tmp_path):
    assert codes(tmp_path, {"ops.cpp": CPP % ("", "")}) == [("S101", "my_scale_")]
    assert codes(tmp_path, {"ops.cpp": CPP % (", {at::Tag::inplace}", "")}) == []
    impl = 'TORCH_LIBRARY_IMPL(mylib, Functionalize, m) { m.impl("my_scale_", &my_scale_); }\n'
    assert codes(tmp_path, {"ops.cpp": CPP % ("", impl)}) == []


def test_the_tags_are_not_read_as_a_kernel(tmp_path):
    (tmp_path / "ops.cpp").write_text(CPP % (", {at::Tag::inplace}", ""))
    from opkit.formats.cpp_registrations import load_cpp_registrations

    (d,) = load_cpp_registrations(str(tmp_path / "ops.cpp"), (tmp_path / "ops.cpp").read_text(), {}).defs
    assert d.tags == ("inplace",) and d.kernel is None


def test_torch_accepts_aliased_returns_of_inplace_tagged_ops_only():
    """The fact the tags rule rests on, on the installed torch (2.13): auto-functionalization accepts an
    aliased return under Tag.inplace, and rejects the same op untagged."""
    torch = pytest.importorskip("torch")
    from torch._higher_order_ops.auto_functionalize import can_auto_functionalize

    lib = torch.library.Library("opkit_tag_fact", "FRAGMENT")
    lib.define("tagged_(Tensor(a!) x, Tensor y) -> Tensor(a!)", tags=(torch.Tag.inplace,))
    lib.define("plain_(Tensor(a!) x, Tensor y) -> Tensor(a!)")

    def kernel(x, y):
        return x.add_(y)

    for name in ("tagged_", "plain_"):
        lib.impl(name, kernel, "CompositeExplicitAutograd")
        lib.impl(name, kernel, "Meta")
    ops = torch.ops.opkit_tag_fact
    assert can_auto_functionalize(ops.tagged_.default)
    assert not can_auto_functionalize(ops.plain_.default)

    def program(op):
        def f(x, y):
            z = x * 1
            op(z, y)
            return z + 1

        return f

    out = torch.compile(program(ops.tagged_), backend="aot_eager", fullgraph=True)(torch.ones(3), torch.ones(3))
    assert out.tolist() == [3.0, 3.0, 3.0]
    torch._dynamo.reset()
    with pytest.raises(Exception, match="alias annotations"):
        torch.compile(program(ops.plain_), backend="aot_eager", fullgraph=True)(torch.ones(3), torch.ones(3))
    torch._dynamo.reset()


# ---- torch_npu's own ops, re-declared by a test stand-in ----------------------------------------------

OPS_YAML = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
OP_LIST = """backend: NPU
custom:
- func: my_npu_update_(Tensor(a!) self, Tensor src) -> Tensor(a!)
- device_check: NoCheck
  func: my_npu_cast(Tensor self, int dtype) -> Tensor
supported:
- func: not_an_npu_op(Tensor self) -> Tensor
"""
STAND_IN = """import torch
npulib = torch.library.Library("npu", "FRAGMENT")
npulib.define("my_npu_update_(Tensor(a!) x, Tensor src) -> Tensor(a!)")
npulib.define("my_npu_cast(Tensor x, int dtype) -> Tensor")
npulib.define("not_an_npu_op(Tensor x) -> Tensor")
"""


def test_stand_ins_of_torch_npu_ops_are_not_new_ops(tmp_path, monkeypatch):
    wheel_dir = tmp_path / "wheel"
    (wheel_dir / OPS_YAML).parent.mkdir(parents=True)
    (wheel_dir / OPS_YAML).write_text(OP_LIST)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(wheel_dir))
    assert codes(project, {"stand_in.py": STAND_IN}) == [("M001", "not_an_npu_op")]
    # the same from a .whl file, read in place (nothing unpacked)
    whl = tmp_path / "torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as archive:
        archive.writestr(OPS_YAML, OP_LIST)
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(whl))
    assert codes(project, {"stand_in.py": STAND_IN}) == [("M001", "not_an_npu_op")]


def test_without_a_wheel_they_are_linted_as_new_ops(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(tmp_path / "no-wheel-here"))
    found = codes(tmp_path, {"stand_in.py": STAND_IN})
    assert ("S101", "my_npu_update_") in found and ("M001", "my_npu_cast") in found


def test_another_namespace_is_never_torch_npus(tmp_path, monkeypatch):
    wheel_dir = tmp_path / "wheel"
    (wheel_dir / OPS_YAML).parent.mkdir(parents=True)
    (wheel_dir / OPS_YAML).write_text(OP_LIST)
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(wheel_dir))
    project = tmp_path / "project"
    project.mkdir()
    found = codes(project, {"mine.py": STAND_IN.replace('"npu"', '"mylib"')})
    assert ("S101", "my_npu_update_") in found and ("M001", "my_npu_cast") in found


def test_a_python_functionalize_kernel_serves_a_yaml_entry(tmp_path):
    yaml_text = YAML_HEAD + entry("my_scale_(Tensor(a!) self, Tensor s) -> Tensor(a!)")
    meta = 'import torch\nfrom torch.library import Library, impl\nm = Library("npu", "IMPL", "Meta")\n\n@impl(m, "my_scale_")\ndef my_scale__meta(self, s):\n    return self\n'
    assert codes(tmp_path, {"op_plugin_functions.yaml": yaml_text, "meta.py": meta}) == [("S101", "my_scale_")]
    kernel = '\nf = Library("npu", "IMPL", "Functionalize")\n\n@impl(f, "my_scale_")\ndef my_scale__functionalize(self, s):\n    return self\n'
    assert codes(tmp_path, {"op_plugin_functions.yaml": yaml_text, "meta.py": meta + kernel}) == []
