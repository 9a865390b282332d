"""K204-K206: a Meta/fake held to the kernel's allocation, to a literal device, and to op-plugin's gen_opapi;
and the reader they share (what a Python Meta creates and returns). Each case has its twin that is silent."""

from __future__ import annotations

import ast

import pytest

from opkit.formats.meta_outputs import aten_dtype, read_meta_outputs
from opkit.lint import Selection, lint


def lint_files(tmp_path, files: dict[str, str], code: str):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [f for f in lint([str(tmp_path)], selection=Selection((code,)), use_cache=False).findings]


def outputs(source: str):
    fn = ast.parse(source).body[0]
    return read_meta_outputs(fn)


# -- the reader -------------------------------------------------------------------------------------


def test_outputs_are_followed_through_locals_and_like_factories():
    read = outputs(
        "def meta(x, w, *, scale=None):\n"
        "    rstd = torch.empty([x.size(0)], dtype=torch.float32, device='meta')\n"
        "    y = x.new_empty(x.shape, dtype=torch.int8)\n"
        "    return y, torch.empty_like(rstd), torch.empty_like(w), torch.empty(x.size(), dtype=w.dtype, device=x.device)\n"
    )
    facts = [(o.dtype, o.device, o.size) for o in read.outputs]
    assert facts == [("int8", "like:x", "x.shape"), ("float32", "meta", "[x.size(0)]"), ("like:w", "like:w", "like:w"), ("like:w", "like:x", "like:x")]
    assert len(read.created) == 5


def test_returns_that_disagree_or_cannot_be_read_are_none():
    read = outputs(
        "def meta(x, flag):\n"
        "    if flag:\n"
        "        return torch.empty_like(x, dtype=torch.int8), helper(x)\n"
        "    return torch.empty_like(x), helper(x)\n"
    )
    assert read.outputs == (None, None)
    assert outputs("def meta(x):\n    if x:\n        return x\n    return x, x\n").outputs is None
    assert outputs("def meta(x):\n    pass\n").outputs is None


def test_dtype_spellings():
    assert outputs("def m(x):\n    return torch.empty(3, dtype=torch.half)\n").outputs[0].dtype == "float16"
    assert outputs("def m(x):\n    return torch.zeros(3)\n").outputs[0].dtype == "default"
    assert outputs("def m(x):\n    return torch.empty(3, dtype=pick(x))\n").outputs[0].dtype is None
    assert [aten_dtype(t) for t in ("at::kChar", "at::ScalarType::Float", "c10::kBFloat16", "x.scalar_type()", "kLong")] == ["int8", "float32", "bfloat16", None, "int64"]


# -- K205 ---------------------------------------------------------------------------------------------

META_HEAD = 'import torch\nfrom torch.library import Library, impl\n\nm = Library("npu", "IMPL", "Meta")\n\n'


@pytest.mark.parametrize(
    "device, fires",
    [
        ('device="cpu"', True),
        ("device=torch.device('cpu:0')", True),
        ('device="cuda"', True),
        ('device="meta"', False),  # what a Meta kernel's outputs are
        ("device=query.device", False),
        ("", False),
    ],
)
def test_k205_literal_device_in_a_meta(tmp_path, device, fires):
    call = f"torch.empty([query.size(0)], dtype=torch.float32{', ' + device if device else ''})"
    text = META_HEAD + f'@impl(m, "my_attention")\ndef my_attention_meta(query):\n    softmax_max = {call}\n    return softmax_max\n'
    found = lint_files(tmp_path, {"meta.py": text}, "K205")
    assert [f.code for f in found] == (["K205"] if fires else [])
    if fires:
        assert found[0].line == 8 and found[0].column == text.splitlines()[7].index("device=") + len("device=") + 1
        assert "my_attention_meta" in found[0].message and "NPU" in found[0].message


def test_k205_in_a_register_fake_of_a_custom_op(tmp_path):
    text = (
        "import torch\n\n"
        '@torch.library.custom_op("mylib::scale", mutates_args=())\n'
        "def scale(x: torch.Tensor) -> torch.Tensor:\n"
        "    return x * 2\n\n"
        "@scale.register_fake\n"
        "def _(x):\n"
        '    return x.new_empty(x.shape, device="cpu")\n'
    )
    assert [(f.code, f.line) for f in lint_files(tmp_path, {"ops.py": text}, "K205")] == [("K205", 9)]
    twin = tmp_path.parent / (tmp_path.name + "_twin")
    twin.mkdir()
    assert lint_files(twin, {"ops.py": text.replace(', device="cpu"', "")}, "K205") == []


# -- K206 ---------------------------------------------------------------------------------------------

YAML = (
    "all_version: [v2.1]\nofficial: []\nautograd: []\nsymint: []\nquant: []\n"
    "custom:\n"
    "  - func: my_norm(Tensor x, Tensor gamma) -> (Tensor, Tensor)\n"
    "    op_api: all_version\n"
    "    gen_opapi:\n"
    "      y:\n"
    "        size: x\n"
    "        dtype: x\n"
    "      rstd:\n"
    "        size: x\n"
    "        dtype: RSTD\n"
    "      exec: aclnnMyNorm\n"
)


@pytest.mark.parametrize(
    "rstd_yaml, rstd_meta, fires",
    [
        ("at::kFloat", "torch.empty([x.size(0)], dtype=torch.float16, device='meta')", True),
        ("at::kFloat", "torch.empty([x.size(0)], device='meta')", False),  # torch's default dtype: float32
        ("at::kFloat", "torch.empty([x.size(0)], dtype=torch.float32, device='meta')", False),
        ("at::kInt", "torch.empty([x.size(0)], device='meta')", True),
        ("x", "torch.empty([x.size(0)], dtype=torch.float32, device='meta')", False),  # x may be float32: cannot tell
        ("gamma", "torch.empty_like(x)", False),  # two inputs: cannot tell
        ("x.scalar_type() == at::kHalf ? at::kFloat : at::kHalf", "torch.empty([1], dtype=torch.int8)", False),  # not evaluated
        ("at::kFloat", "helper(x)", False),  # the Meta's output is not read
    ],
)
def test_k206_gen_opapi_dtype_against_the_meta(tmp_path, rstd_yaml, rstd_meta, fires):
    yaml = YAML.replace("RSTD", f"'{rstd_yaml}'" if " " in rstd_yaml else rstd_yaml)
    meta = META_HEAD + f'@impl(m, "my_norm")\ndef my_norm_meta(x, gamma):\n    rstd = {rstd_meta}\n    return torch.empty_like(x), rstd\n'
    found = lint_files(tmp_path, {"op_plugin_functions.yaml": yaml, "meta.py": meta}, "K206")
    assert [f.code for f in found] == (["K206"] if fires else [])
    if fires:
        [finding] = found
        assert finding.path.endswith("op_plugin_functions.yaml") and finding.line == yaml.splitlines().index(f"        dtype: {rstd_yaml}") + 1
        assert "rstd (output 1)" in finding.message and "my_norm_meta" in finding.message


# -- K204 ---------------------------------------------------------------------------------------------

KERNEL = """
#include <torch/library.h>
namespace my_ops {
std::tuple<at::Tensor, at::Tensor> my_quant(const at::Tensor &x)
{
    TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16, "x: float16 or bfloat16");
    at::Tensor y = at::empty_like(x, x.options().dtype(at::kChar));
    at::Tensor scale = at::empty({x.size(0)}, x.options().dtype(at::kFloat));
    return std::make_tuple(y, scale);
}
}
TORCH_LIBRARY(my_ops, m) { m.def("my_quant(Tensor x) -> (Tensor, Tensor)"); }
TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_quant", TORCH_FN(my_ops::my_quant)); }
"""


@pytest.mark.parametrize(
    "y_meta, scale_meta, fires",
    [
        ("torch.empty_like(x)", "x.new_empty([x.size(0)], dtype=torch.float32)", [0]),  # x is never int8
        ("torch.empty_like(x, dtype=torch.int8)", "x.new_empty([x.size(0)], dtype=torch.float16)", [1]),
        ("torch.empty_like(x, dtype=torch.int8)", "x.new_empty([x.size(0)], dtype=torch.float32)", []),
        ("torch.empty_like(x, dtype=torch.int8)", "x.new_empty([x.size(0)])", [1]),  # like x, which the kernel checks is never float32
    ],
)
def test_k204_python_meta_against_the_kernels_allocation(tmp_path, y_meta, scale_meta, fires):
    meta = (
        'import torch\nfrom torch.library import Library, impl\n\nm = Library("my_ops", "IMPL", "Meta")\n\n'
        f'@impl(m, "my_quant")\ndef my_quant_meta(x):\n    return {y_meta}, {scale_meta}\n'
    )
    found = lint_files(tmp_path, {"my_ops.cpp": KERNEL, "meta.py": meta}, "K204")
    assert [f.message.split(" makes output ")[1].split(" ")[0] for f in found] == [str(i) for i in fires]
    for finding in found:
        assert finding.path.endswith("meta.py") and finding.line == 8 and "my_ops.cpp:" in finding.message


def test_k204_without_a_dtype_check_an_input_dtype_is_not_called_wrong(tmp_path):
    kernel = KERNEL.replace('    TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16, "x: float16 or bfloat16");\n', "")
    meta = (
        'import torch\nfrom torch.library import Library, impl\n\nm = Library("my_ops", "IMPL", "Meta")\n\n'
        '@impl(m, "my_quant")\ndef my_quant_meta(x):\n    return torch.empty_like(x), x.new_empty([x.size(0)], dtype=torch.float32)\n'
    )
    assert lint_files(tmp_path, {"my_ops.cpp": kernel, "meta.py": meta}, "K204") == []
