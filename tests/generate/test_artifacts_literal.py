"""Generated artifacts, literally: the exact OpDef lines, prototype JSON, yaml entry, Meta signature and kernel
signature for representative schemas.

Every expectation below is written by hand from /work/shared/spec (msopgen.md §1, §2 and §4: the JSON, the
OpDef, the kernel parameters, the SoC families; op-plugin-yaml.md: the entry, gen_opapi, new_params for a
`str`, the Meta function) and never computed from opkit's own tables, so a wrong dtype enum, attr method,
SoC family, column order or output name in the generator fails here.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest


def _constructor(cpp: str) -> str:
    """The OpDef constructor's body, dedented: the declarations msOpGen writes, in order (msopgen.md §4)."""
    body = re.search(r"explicit \w+\(const char\* name\) : OpDef\(name\)\n    \{\n(.*?)\n    \}\n\};", cpp, re.S)[1]
    return textwrap.dedent(body)


def _entry(project) -> str:
    """The yaml fragment's `custom:` section, as text (comments above it dropped)."""
    text = (project / "op_plugin" / "op_plugin_functions.yaml").read_text()
    return text[text.index("custom:") :]


def _meta(project, name: str) -> tuple[str, str]:
    """(the Meta function's def line, its return line)."""
    lines = (project / "meta" / f"{name}_meta.py").read_text().splitlines()
    (define,) = [line for line in lines if line.startswith("def ")]
    (returned,) = [line.strip() for line in lines if line.strip().startswith("return ")]
    return define, returned


def _kernel_signature(project, op_type: str, snake: str) -> str:
    text = (project / op_type / "op_kernel" / f"{snake}.cpp").read_text()
    return next(line for line in text.splitlines() if line.startswith('extern "C"'))


def _tensor(name: str, param_type: str, types: list[str], formats: list[str]) -> dict:
    return {"name": name, "param_type": param_type, "format": formats, "type": types}


def _json(project, name: str) -> list:
    return json.loads((project / "msopgen" / f"{name}.json").read_text())


# The default --dtypes (float16, float, bfloat16), --formats ND: three columns.
DEFAULT_TYPES = ["float16", "float", "bfloat16"]
ND3 = ["ND", "ND", "ND"]
DEFAULT_DECL = """\
    .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
    .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
    .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});"""
FLOAT_DECL = """\
    .DataType({ge::DT_FLOAT})
    .Format({ge::FORMAT_ND})
    .UnknownShapeFormat({ge::FORMAT_ND});"""
TAIL_910B = """
this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
this->AICore().SetTiling(optiling::TilingFunc);
this->AICore().AddConfig("ascend910b");"""


def test_plain_two_inputs(generate):
    project = generate("my_add", schema="my_add(Tensor x, Tensor y) -> Tensor")
    assert _json(project, "my_add") == [
        {
            "op": "MyAdd",
            "input_desc": [_tensor("x", "required", DEFAULT_TYPES, ND3), _tensor("y", "required", DEFAULT_TYPES, ND3)],
            "output_desc": [_tensor("out", "required", DEFAULT_TYPES, ND3)],
        }
    ]
    cpp = (project / "MyAdd" / "op_host" / "my_add.cpp").read_text()
    assert _constructor(cpp) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{DEFAULT_DECL}\n'
        f'this->Input("y")\n    .ParamType(REQUIRED)\n{DEFAULT_DECL}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{DEFAULT_DECL}\n' + TAIL_910B
    )
    assert "OP_ADD(MyAdd);" in cpp
    assert _entry(project) == (
        "custom:\n"
        "  - func: my_add(Tensor x, Tensor y) -> Tensor\n"
        "    op_api: all_version\n"
        "    gen_opapi:\n"
        "      out:\n"
        "        size: x\n"
        "        dtype: x\n"
        "      exec: aclnnMyAdd\n"
    )
    assert _meta(project, "my_add") == ("def my_add_meta(x, y):", "return torch.empty_like(x)")
    assert _kernel_signature(project, "MyAdd", "my_add") == (
        'extern "C" __global__ __aicore__ void my_add(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling)'
    )


ATTRS_SCHEMA = (
    "attrs_op(Tensor x, Tensor? bias=None, int k=1, float eps=1e-05, bool flag=True, str mode='none', "
    "int[2] pads=[1,1], float[] scales=[1.0,2.0], bool[] mask=[True,False]) -> Tensor"
)


def test_optional_input_and_an_attr_of_each_type_with_its_default(generate):
    project = generate("attrs_op", schema=ATTRS_SCHEMA, dtypes="float")
    assert _json(project, "attrs_op") == [
        {
            "op": "AttrsOp",
            "input_desc": [_tensor("x", "required", ["float"], ["ND"]), _tensor("bias", "optional", ["float"], ["ND"])],
            "output_desc": [_tensor("out", "required", ["float"], ["ND"])],
            # an argument with a default is an optional attr carrying default_value; lists with braces, no quotes
            "attr": [
                {"name": "k", "param_type": "optional", "type": "int", "default_value": "1"},
                {"name": "eps", "param_type": "optional", "type": "float", "default_value": "1e-05"},
                {"name": "flag", "param_type": "optional", "type": "bool", "default_value": "true"},
                {"name": "mode", "param_type": "optional", "type": "string", "default_value": "none"},
                {"name": "pads", "param_type": "optional", "type": "list_int", "default_value": "{1,1}"},
                {"name": "scales", "param_type": "optional", "type": "list_float", "default_value": "{1.0,2.0}"},
                {"name": "mask", "param_type": "optional", "type": "list_bool", "default_value": "{true,false}"},
            ],
        }
    ]
    assert _constructor((project / "AttrsOp" / "op_host" / "attrs_op.cpp").read_text()) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Input("bias")\n    .ParamType(OPTIONAL)\n{FLOAT_DECL}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        'this->Attr("k").AttrType(OPTIONAL).Int(1);\n'
        'this->Attr("eps").AttrType(OPTIONAL).Float(1e-05);\n'
        'this->Attr("flag").AttrType(OPTIONAL).Bool(true);\n'
        'this->Attr("mode").AttrType(OPTIONAL).String("none");\n'
        'this->Attr("pads").AttrType(OPTIONAL).ListInt({1, 1});\n'
        'this->Attr("scales").AttrType(OPTIONAL).ListFloat({1.0, 2.0});\n'
        'this->Attr("mask").AttrType(OPTIONAL).ListBool({true, false});\n' + TAIL_910B
    )
    # a str reaches aclnn as char* through new_params (op-plugin-yaml.md), so exec names every argument
    assert _entry(project) == (
        "custom:\n"
        f"  - func: {ATTRS_SCHEMA}\n"
        "    op_api: all_version\n"
        "    gen_opapi:\n"
        "      out:\n"
        "        size: x\n"
        "        dtype: x\n"
        "      new_params:\n"
        "        mode_value: const_cast<char *>(mode.data())\n"
        "      exec: aclnnAttrsOp, x, bias, k, eps, flag, mode_value, pads, scales, mask, out\n"
    )
    assert _meta(project, "attrs_op") == (
        "def attrs_op_meta(x, bias=None, k=1, eps=1e-05, flag=True, mode='none', pads=[1, 1], scales=[1.0, 2.0], mask=[True, False]):",
        "return torch.empty_like(x)",
    )


def test_required_attrs_of_each_type(generate):
    schema = "req_attrs(Tensor x, int k, float alpha, bool flag, str mode, int[] dims, float[] weights, bool[] mask) -> Tensor"
    project = generate("req_attrs", schema=schema, dtypes="float")
    (document,) = _json(project, "req_attrs")
    assert document["attr"] == [
        {"name": "k", "param_type": "required", "type": "int"},
        {"name": "alpha", "param_type": "required", "type": "float"},
        {"name": "flag", "param_type": "required", "type": "bool"},
        {"name": "mode", "param_type": "required", "type": "string"},
        {"name": "dims", "param_type": "required", "type": "list_int"},
        {"name": "weights", "param_type": "required", "type": "list_float"},
        {"name": "mask", "param_type": "required", "type": "list_bool"},
    ]
    assert _constructor((project / "ReqAttrs" / "op_host" / "req_attrs.cpp").read_text()) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        'this->Attr("k").Int();\n'
        'this->Attr("alpha").Float();\n'
        'this->Attr("flag").Bool();\n'
        'this->Attr("mode").String();\n'
        'this->Attr("dims").ListInt();\n'
        'this->Attr("weights").ListFloat();\n'
        'this->Attr("mask").ListBool();\n' + TAIL_910B
    )
    assert _meta(project, "req_attrs") == ("def req_attrs_meta(x, k, alpha, flag, mode, dims, weights, mask):", "return torch.empty_like(x)")


def test_tensor_list_input_is_dynamic(generate):
    project = generate("concat_op", schema="concat_op(Tensor[] xs, int dim) -> Tensor", dtypes="float")
    assert _json(project, "concat_op") == [
        {
            "op": "ConcatOp",
            "input_desc": [_tensor("xs", "dynamic", ["float"], ["ND"])],
            "output_desc": [_tensor("out", "required", ["float"], ["ND"])],
            "attr": [{"name": "dim", "param_type": "required", "type": "int"}],
        }
    ]
    assert _constructor((project / "ConcatOp" / "op_host" / "concat_op.cpp").read_text()) == (
        f'this->Input("xs")\n    .ParamType(DYNAMIC)\n{FLOAT_DECL}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        'this->Attr("dim").Int();\n' + TAIL_910B
    )
    # a Tensor[] is no tensor to name as size/dtype: its first element is
    assert _entry(project) == (
        "custom:\n"
        "  - func: concat_op(Tensor[] xs, int dim) -> Tensor\n"
        "    op_api: all_version\n"
        "    gen_opapi:\n"
        "      out:\n"
        "        size: xs[0].sizes()\n"
        "        dtype: xs[0].scalar_type()\n"
        "      exec: aclnnConcatOp\n"
    )
    assert _meta(project, "concat_op") == ("def concat_op_meta(xs, dim):", "return torch.empty_like(xs[0])")


def test_in_place_input_is_also_an_output_of_the_same_name(generate):
    """torchair's MyInplace: inputs x, y; outputs x and the fresh return; the kernel's second x is x_ref."""
    project = generate("my_inplace", schema="my_inplace(Tensor(a!) x, Tensor y) -> Tensor", dtypes="float")
    assert _json(project, "my_inplace") == [
        {
            "op": "MyInplace",
            "input_desc": [_tensor("x", "required", ["float"], ["ND"]), _tensor("y", "required", ["float"], ["ND"])],
            "output_desc": [_tensor("x", "required", ["float"], ["ND"]), _tensor("out", "required", ["float"], ["ND"])],
        }
    ]
    assert _constructor((project / "MyInplace" / "op_host" / "my_inplace.cpp").read_text()) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Input("y")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Output("x")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n' + TAIL_910B
    )
    assert _kernel_signature(project, "MyInplace", "my_inplace") == (
        'extern "C" __global__ __aicore__ void my_inplace(GM_ADDR x, GM_ADDR y, GM_ADDR x_ref, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling)'
    )


@pytest.mark.parametrize(
    ("name", "schema", "outputs", "op_type"),
    [
        ("topk_pair", "topk_pair(Tensor x, int k) -> (Tensor values, Tensor indices)", ["values", "indices"], "TopkPair"),
        ("split2", "split2(Tensor x, int k) -> (Tensor, Tensor)", ["out0", "out1"], "Split2"),
    ],
)
def test_several_outputs_keep_their_names_or_are_numbered(generate, name, schema, outputs, op_type):
    project = generate(name, schema=schema, dtypes="float")
    (document,) = _json(project, name)
    assert document["output_desc"] == [_tensor(o, "required", ["float"], ["ND"]) for o in outputs]
    assert _constructor((project / op_type / "op_host" / f"{name}.cpp").read_text()) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Output("{outputs[0]}")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        f'this->Output("{outputs[1]}")\n    .ParamType(REQUIRED)\n{FLOAT_DECL}\n'
        'this->Attr("k").Int();\n' + TAIL_910B
    )
    assert _entry(project) == (
        "custom:\n"
        f"  - func: {schema}\n"
        "    op_api: all_version\n"
        "    gen_opapi:\n"
        f"      {outputs[0]}:\n        size: x\n        dtype: x\n"
        f"      {outputs[1]}:\n        size: x\n        dtype: x\n"
        f"      exec: aclnn{op_type}\n"
    )
    assert _meta(project, name) == (f"def {name}_meta(x, k):", "return (torch.empty_like(x), torch.empty_like(x))")
    assert _kernel_signature(project, op_type, name) == (
        f'extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR {outputs[0]}, GM_ADDR {outputs[1]}, GM_ADDR workspace, GM_ADDR tiling)'
    )


def test_dtype_format_columns_soc_families_and_keyword_only_attrs(generate):
    """--dtypes x --formats: column i is (dtype i, format i) in every descriptor; one AddConfig per SoC family."""
    project = generate(
        "dual_fmt",
        schema="dual_fmt(Tensor x, *, int group=1) -> Tensor",
        dtypes="float16,int32",
        formats="ND,NCHW",
        soc="ascend910b1,ascend910_9391,ascend310p3",
    )
    types, formats = ["float16", "float16", "int32", "int32"], ["ND", "NCHW", "ND", "NCHW"]
    assert _json(project, "dual_fmt") == [
        {
            "op": "DualFmt",
            "input_desc": [_tensor("x", "required", types, formats)],
            "output_desc": [_tensor("out", "required", types, formats)],
            "attr": [{"name": "group", "param_type": "optional", "type": "int", "default_value": "1"}],
        }
    ]
    decl = (
        "    .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_INT32, ge::DT_INT32})\n"
        "    .Format({ge::FORMAT_ND, ge::FORMAT_NCHW, ge::FORMAT_ND, ge::FORMAT_NCHW})\n"
        "    .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_NCHW, ge::FORMAT_ND, ge::FORMAT_NCHW});"
    )
    assert _constructor((project / "DualFmt" / "op_host" / "dual_fmt.cpp").read_text()) == (
        f'this->Input("x")\n    .ParamType(REQUIRED)\n{decl}\n'
        f'this->Output("out")\n    .ParamType(REQUIRED)\n{decl}\n'
        'this->Attr("group").AttrType(OPTIONAL).Int(1);\n'
        "\n"
        "this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);\n"
        "this->AICore().SetTiling(optiling::TilingFunc);\n"
        'this->AICore().AddConfig("ascend910b");\n'
        'this->AICore().AddConfig("ascend910_93");\n'
        'this->AICore().AddConfig("ascend310p");'
    )
    presets = json.loads((project / "DualFmt" / "CMakePresets.json").read_text())
    variables = presets["configurePresets"][0]["cacheVariables"]
    assert variables["ASCEND_COMPUTE_UNIT"] == {"type": "STRING", "value": "ascend910b;ascend910_93;ascend310p"}
    assert variables["vendor_name"] == {"type": "STRING", "value": "dual_fmt"}
    assert _meta(project, "dual_fmt") == ("def dual_fmt_meta(x, *, group=1):", "return torch.empty_like(x)")


def test_custom_op_style_fake_function(generate):
    """custom_op style (op-plugin-yaml.md, Meta registrations): annotations that custom_op infers the schema from."""
    project = generate("scale_", schema="scale_(Tensor(a!) x, Tensor? bias=None, *, float s=2.0) -> ()", style="custom-op", namespace="mylib")
    lines = (project / "meta" / "scale__meta.py").read_text().splitlines()
    assert '@torch.library.custom_op("mylib::scale_", mutates_args=("x",), device_types="npu")' in lines
    assert "def scale_(x: torch.Tensor, bias: Optional[torch.Tensor] = None, *, s: float = 2.0) -> None:" in lines
    fake = lines.index("@scale_.register_fake")
    assert lines[fake + 1] == "def _(x: torch.Tensor, bias: Optional[torch.Tensor] = None, *, s: float = 2.0) -> None:"
    assert [line.strip() for line in lines[fake + 2 :] if line.strip().startswith("return")] == ["return None"]


def test_custom_op_style_enum_defaults_are_the_ints_torch_reads(generate):
    """torch._C.parse_schema reads `int r=Mean` as 1, `long` as 4, `float` as 6: custom_op infers `int r=1` from the
    Python default 1, the same schema."""
    project = generate("enum_op", schema="enum_op(Tensor x, int r=Mean, int d=long, int? e=float) -> Tensor", style="custom-op", namespace="mylib")
    lines = (project / "meta" / "enum_op_meta.py").read_text().splitlines()
    assert "def enum_op(x: torch.Tensor, r: int = 1, d: int = 4, e: Optional[int] = 6) -> torch.Tensor:" in lines


def test_npu_prefix_and_operands_named_like_the_kernels_own_parameters(generate):
    """op-plugin-yaml.md: `npu_<x>` gets OpType `<X>` (kernel, aclnn API and yaml line up as real ops do);
    msopgen.md §4: workspace and tiling close the kernel's parameters, so an operand taking a name renames them."""
    project = generate("npu_tile_op", schema="npu_tile_op(Tensor tiling, Tensor workspace) -> Tensor", dtypes="float")
    assert _json(project, "npu_tile_op")[0]["op"] == "TileOp"
    assert _kernel_signature(project, "TileOp", "tile_op") == (
        'extern "C" __global__ __aicore__ void tile_op(GM_ADDR tiling, GM_ADDR workspace, GM_ADDR out, GM_ADDR workspace_, GM_ADDR tiling_)'
    )
    assert _entry(project).endswith("      exec: aclnnTileOp\n")
    assert _meta(project, "npu_tile_op") == ("def npu_tile_op_meta(tiling, workspace):", "return torch.empty_like(tiling)")
