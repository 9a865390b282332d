"""Hand-written OpDefs covering each construct the reader takes, malformed sources, and the CLI report.

The OpDefs are written for these tests in the shapes real op_host files use (msopgen.md §6: per-SoC
OpAICoreConfig blocks, ValueDepend, Scalar, Follow, DataTypeList, attrs with and without AttrType).
"""

from __future__ import annotations

import json

import pytest

from opkit.adopt import AdoptError, adopt, read_source
from opkit.generate.project import generate_project
from opkit.msopgen import DTYPES, soc_family

SPLIT = """\
#include "register/op_def_registry.h"
namespace ops {
static const std::vector<ge::DataType> kTypes = {ge::DT_FLOAT16, ge::DT_FLOAT};
class SplitVx : public OpDef {
public:
    explicit SplitVx(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType(kTypes)
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .AutoContiguous();
        this->Input("size_splits").ParamType(REQUIRED).ValueDepend(OPTIONAL).DataType({ge::DT_INT64, ge::DT_INT64}).Format({ge::FORMAT_ND});
        this->Input("alpha").ParamType(OPTIONAL).DataType({ge::DT_FLOAT, ge::DT_FLOAT}).Format({ge::FORMAT_ND}).Scalar();
        this->Output("y").ParamType(DYNAMIC).Follow("x");
        this->Attr("split_dim").AttrType(OPTIONAL).Int(0L);
        this->Attr("num_split").Int();  /* required, after an optional one */
        this->Attr("mode").AttrType(OPTIONAL).String("fast");
        this->Attr("k").ListInt({1, 2});
        this->SetInferShape(ge::InferShape);
        this->Frobnicate(3);
        OpAICoreConfig cfg;
        cfg.DynamicCompileStaticFlag(true).DynamicRankSupportFlag(true);
        cfg.Input("x").ParamType(REQUIRED).DataType({ge::DT_BF16});
        this->AICore().AddConfig("ascend910b", cfg);
        this->AICore().AddConfig("ascend310p");
    }
};
OP_ADD(SplitVx);
}
"""

LAYER_NORM = """\
#include "register/op_def_registry.h"

namespace ops {
// Two OpDefs in one file; a comment with a brace { and "a ; )" must not confuse the reader.
class AddLayerNormX : public OpDef {
public:
    explicit AddLayerNormX(const char* name) : OpDef(name)
    {
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma").ParamType(REQUIRED).DataTypeList({ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Input("acc").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND});
        this->Output("acc").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND});
        this->Output("rstd").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6f);
        this->Attr("out_dtype").AttrType(OPTIONAL).Type(ge::DT_INT64);
        this->Attr("flags").AttrType(REQUIRED).ListBool();
        this->Attr("scales").AttrType(OPTIONAL).ListFloat({});
        this->Attr("note").AttrType(OPTIONAL).String("rint");
        /* this->Input("ghost") { */
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(AddLayerNormX);

class Other : public OpDef {
public:
    explicit Other(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Other);
}  // namespace ops
"""

HAND_WRITTEN = {
    "split_vx": (SPLIT, None, "split_vx(Tensor x, Tensor size_splits, Scalar? alpha, *, int split_dim=0, int num_split, str mode='fast', int[] k) -> Tensor[] y"),
    "add_layer_norm_x": (
        LAYER_NORM, "AddLayerNormX",
        "add_layer_norm_x(Tensor x1, Tensor gamma, Tensor(a!) acc, *, float epsilon=1e-06, ScalarType out_dtype=long, bool[] flags, float[] scales=[], str note='rint') -> Tensor rstd",
    ),
}  # fmt: skip


def _declared(op):
    """What an OpDef declares: descriptors with their columns (as ge:: enums), attrs, SoC families."""
    tensor = lambda t: (t.name, t.param_type, tuple(DTYPES[d] for d in t.dtypes), t.formats, t.scalar)  # noqa: E731
    return {
        "inputs": [tensor(t) for t in op.inputs],
        "outputs": [tensor(t) for t in op.outputs],
        "attrs": [(a.name, a.type, a.optional, a.default) for a in op.attrs],
        "socs": [soc_family(s) for s in op.socs],
    }


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_opdef_adopts_and_round_trips(tmp_path, name):
    text, op_type, schema = HAND_WRITTEN[name]
    path = tmp_path / f"{name}_def.cpp"
    path.write_text(text)
    source = read_source(str(path), op_type)
    adoption = adopt(str(path), op=op_type)
    assert adoption.spec.schema == schema
    assert adoption.spec.resolved_op_type == source.op_type and adoption.spec.name == name  # OpType kept, NAME its snake name
    project = generate_project(adoption.spec, tmp_path / "project", msopgen_mode="builtin").path
    (host,) = project.glob("*/op_host/*.cpp")
    regenerated = read_source(str(host))
    assert _declared(regenerated) == _declared(source)  # same inputs, outputs, attrs, columns and SoCs
    assert adopt(str(host)).spec == adoption.spec  # and the generated op_host adopts back to the same spec


def test_split_constructs_are_read_or_listed(tmp_path):
    path = tmp_path / "split_v_def.cpp"
    path.write_text(SPLIT)
    source = read_source(str(path))
    x, size_splits, alpha = source.inputs
    assert x.dtypes == ("float16", "float") and size_splits.value_depend and alpha.scalar and alpha.param_type == "optional"
    (y,) = source.outputs
    assert (y.param_type, y.follow, y.dtypes) == ("dynamic", "x", x.dtypes)  # Follow copies x's columns
    assert source.socs == ("ascend910b", "ascend310p")
    skipped = [(s.line, s.what) for s in source.skipped]
    # the value of REQUIRED attr 'k' (line 19) is CANN's idiom, not a default: k stays required, without a note
    assert skipped == [(21, "unknown call this->Frobnicate(...) skipped")]
    assert not next(a for a in source.attrs if a.name == "k").optional
    (config,) = source.soc_configs  # the per-SoC block is read as its own view of the op
    assert (config.name, config.socs, [(t.name, t.dtypes, t.line) for t in config.inputs], config.outputs) == ("cfg", ("ascend910b",), [("x", ("bfloat16",), 24)], ())
    adoption = adopt(str(path))
    assert "OpAICoreConfig cfg (given to ascend910b) declares 'x' again for its SoCs: not carried over, the op's own columns are used" in adoption.notes
    assert adoption.spec.soc == ("ascend910b1", "ascend310p1")
    assert adoption.spec.output_rule("y").like == "x"  # Follow("x"): sized like x
    assert not any("output sizes" in n for n in adoption.notes)  # a Follow states the size
    assert any("ValueDepend" in n for n in adoption.notes)


def test_layer_norm_columns_attrs_and_output_dtype(tmp_path):
    path = tmp_path / "ln.cpp"
    path.write_text(LAYER_NORM)
    source = read_source(str(path), "AddLayerNormX")
    assert [t.dtypes for t in source.inputs] == [("float16", "bfloat16"), ("float", "float"), ("float16", "bfloat16")]  # a DataTypeList of one: every column
    assert [(a.name, a.default) for a in source.attrs if a.optional][:2] == [("epsilon", 1e-06), ("out_dtype", source.attrs[1].default)]
    adoption = adopt(str(path), op="AddLayerNormX")
    assert {r.name: (r.like, r.dtype) for r in adoption.spec.outputs} == {"rstd": ("x1", "float32")}  # one fixed dtype, unlike x1
    assert any("output sizes" in n and "rstd" in n for n in adoption.notes)


MALFORMED = [
    ("no_opdef.cpp", "int main() { return 0; }\n", 1, "no OpDef found"),
    ("unbalanced.cpp", SPLIT.replace(".Format({ge::FORMAT_ND, ge::FORMAT_ND})", ".Format({ge::FORMAT_ND, ge::FORMAT_ND)"), 11, "unbalanced"),
    ("bad_dtype.cpp", SPLIT.replace("DT_INT64, ge::DT_INT64", "DT_INT64, ge::DT_INT65"), 13, "unknown data type 'ge::DT_INT65'"),
    ("bad_param.cpp", SPLIT.replace("ParamType(OPTIONAL)", "ParamType(SOMETIMES)"), 14, "expected REQUIRED, OPTIONAL or DYNAMIC"),
    ("unterminated.cpp", SPLIT.replace('String("fast")', 'String("fast)'), 18, "unterminated string"),
    ("columns.cpp", SPLIT.replace("DT_INT64, ge::DT_INT64}", "DT_INT64, ge::DT_INT64, ge::DT_INT64}"), 8, "DataType columns"),
    ("bad.json", '[{"op": "MyOp", "input_desc": [{"name": "x", "param_type": "required", "type": ["fp17"], "format": ["ND"]}]}]', 1, "unknown dtype 'fp17'"),
    ("broken.json", '[{"op": "MyOp",\n  "input_desc": [}]', 2, "invalid JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("file", "text", "line", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_source_is_one_located_message_and_exit_2(tmp_path, run_opkit, file, text, line, message):
    path = tmp_path / file
    path.write_text(text)
    with pytest.raises(AdoptError) as info:
        adopt(str(path))
    assert info.value.line == line and message in info.value.message
    code, out = run_opkit("new", "--from", str(path), "--no-verify", "-o", str(tmp_path / "out"))
    assert code == 2 and out.strip().splitlines() == [f"opkit new: {path}:{line}: {info.value.message}"]
    assert not (tmp_path / "out").exists()


def test_yaml_source_needs_op_and_refuses_an_aten_overload(tmp_path, run_opkit):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text("official:\n  - func: abs(Tensor self) -> Tensor\n    op_api: all_version\ncustom:\n  - func: npu_foo(Tensor x) -> Tensor\n    op_api: all_version\n")
    code, out = run_opkit("new", "--from", str(path), "--no-verify", "-o", str(tmp_path / "a"))
    assert code == 2 and "name one with --op NAME" in out
    code, out = run_opkit("new", "--from", str(path), "--op", "abs", "--no-verify", "-o", str(tmp_path / "a"))
    assert code == 2 and f"{path}:2: abs is in the official: section" in out
    code, out = run_opkit("new", "--from", str(path), "--op", "npu_bar", "--no-verify", "-o", str(tmp_path / "a"))
    assert code == 2 and "no entry has func npu_bar(...)" in out


def test_cli_lists_skipped_constructs_and_what_was_not_carried_over(tmp_path, run_opkit):
    path = tmp_path / "split_v_def.cpp"
    path.write_text(SPLIT)
    code, out = run_opkit("new", "--from", str(path), "--no-verify", "-o", str(tmp_path / "p"), "--dtypes", "float16,float;size_splits=int64,int64;alpha=float,float")
    assert code == 0, out
    assert f"skipped: {path}:21: unknown call this->Frobnicate(...) skipped" in out
    assert "not carried over: input 'size_splits' is ValueDepend" in out
    spec = json.loads((tmp_path / "p" / "opkit.json").read_text())
    assert (tmp_path / "p" / "SplitVx" / "op_host" / "split_vx.cpp").is_file()  # the OpType as the source spells it
    assert spec["name"] == "split_vx" and spec["soc"] == ["ascend910b1", "ascend310p1"]


def test_json_with_several_ops_needs_op(tmp_path):
    path = tmp_path / "ops.json"
    op = {"input_desc": [{"name": "x", "param_type": "required", "type": ["float"], "format": ["ND"]}], "output_desc": [{"name": "y", "param_type": "required", "type": ["float"], "format": ["ND"]}]}
    path.write_text(json.dumps([{"op": "AddOne", **op}, {"op": "AddTwo", **op}], indent=1))
    with pytest.raises(AdoptError, match="2 ops \\(AddOne, AddTwo\\); choose one with --op"):
        adopt(str(path))
    assert adopt(str(path), op="AddTwo").spec.schema == "add_two(Tensor x) -> Tensor y"


@pytest.mark.slow
def test_adopted_hand_written_opdef_verifies(tmp_path):
    from opkit.verify import verify_project

    path = tmp_path / "ln.cpp"
    path.write_text(LAYER_NORM)
    spec = adopt(str(path), op="AddLayerNormX").spec
    report = verify_project(generate_project(spec, tmp_path / "p", msopgen_mode="builtin").path)
    assert report.ok, [p.message for p in report.problems]


def test_yaml_gen_opapi_sizes_and_dtypes_become_output_rules(tmp_path):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(
        "custom:\n  - func: npu_rms(Tensor x, Tensor gamma) -> (Tensor y, Tensor rstd)\n    op_api: [v2.1, newest]\n"
        "    gen_opapi:\n      y:\n        size: gamma\n        dtype: gamma\n      rstd:\n        size: 'rstd_size(x)'\n"
        "        dtype: at::kFloat\n      exec: aclnnRmsNormX\n"
    )
    adoption = adopt(str(path), op="npu_rms")
    assert adoption.spec.resolved_op_type == "RmsNormX"  # the OpType exec names
    assert [(r.name, r.like, r.dtype) for r in adoption.spec.outputs] == [("y", "gamma", ""), ("rstd", "x", "float32")]
    assert [n for n in adoption.notes if "rstd_size(x)" in n]  # a size expression is kept in the yaml, and said so
    assert json.loads(adoption.spec.yaml_entry)["gen_opapi"]["rstd"]["size"] == "rstd_size(x)"
