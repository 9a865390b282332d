"""The OpDef reader on the patterns real op_host files use (named constants, named lists, per-SoC
OpAICoreConfig blocks, CANN's newer dtypes, AI CPU ops, helpers): small examples of our own, each
asserting what is read and what `opkit lint` reports (never exit 2 for valid C++)."""

from __future__ import annotations

import pytest

from opkit.adopt import AdoptError, adopt
from opkit.formats.opdef_cpp import read_opdef, read_opdefs
from opkit.lint.engine import lint
from opkit.lint.finding import Severity
from opkit.signature import Dialect


def opdef(body: str, before: str = "", name: str = "MyOp") -> str:
    return (
        '#include "register/op_def_registry.h"\n'
        f"{before}"
        "namespace ops {\n"
        f"class {name} : public OpDef {{\n"
        "public:\n"
        f"    explicit {name}(const char* name) : OpDef(name)\n"
        "    {\n"
        f"{body}"
        '        this->AICore().AddConfig("ascend910b");\n'
        "    }\n"
        "};\n"
        f"OP_ADD({name});\n"
        "}  // namespace ops\n"
    )


X = '        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});\n'
Y = '        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});\n'


def lint_text(tmp_path, text: str, *, schema: str | None = None, name: str = "my_op_def.cpp"):
    path = tmp_path / name
    path.write_text(text)
    result = lint([str(path)], schemas=[schema] if schema else [], dialect=Dialect.TORCH_LIBRARY, use_cache=False)
    return result, [(f.code, f.line, f.message) for f in result.findings]


CONSTANTS = """\
constexpr float DEFAULT_ALPHA = 1.702;
static constexpr int64_t DEFAULT_IGNORE = -100;
#define GROUPS 4
namespace {
const int64_t AXIS = GROUPS * 2 - 1;
}
"""


def test_named_constants_and_constant_expressions_are_defaults(tmp_path):
    body = X + Y + (
        '        this->Attr("alpha").AttrType(OPTIONAL).Float(DEFAULT_ALPHA);\n'
        '        this->Attr("ignore").AttrType(OPTIONAL).Int(DEFAULT_IGNORE);\n'
        '        this->Attr("axis").AttrType(OPTIONAL).Int(AXIS);\n'
        '        this->Attr("limit").AttrType(OPTIONAL).Int(INT64_MAX);\n'
        '        this->Attr("dst_type").AttrType(OPTIONAL).Int(ge::DT_INT8);\n'
        '        this->Attr("scale").AttrType(OPTIONAL).Float(1.0f / 6.0f);\n'
        "        constexpr float kLocal = 0.001f;\n"
        '        this->Attr("eps").AttrType(OPTIONAL).Float(static_cast<float>(kLocal) * 2);\n'
    )
    op = read_opdef("f.cpp", opdef(body, CONSTANTS))
    assert {a.name: a.default for a in op.attrs} == {
        "alpha": 1.702, "ignore": -100, "axis": 7, "limit": 2**63 - 1, "dst_type": 2, "scale": 1.0 / 6.0, "eps": 0.002,
    }  # fmt: skip
    assert op.skipped == ()  # the local constant is read, not listed as a statement skipped
    result, findings = lint_text(tmp_path, opdef(body, CONSTANTS))
    assert result.exit_code() == 0 and findings == []


def test_a_constant_from_elsewhere_is_a_warning_and_adopting_it_is_refused(tmp_path):
    body = X + Y + '        this->Attr("mode").AttrType(OPTIONAL).Int(MODE_FROM_A_HEADER);\n'
    text = opdef(body)
    (attr,) = read_opdef("f.cpp", text).attrs
    assert (attr.optional, attr.default, attr.unread_default) == (True, None, "MODE_FROM_A_HEADER")
    result, findings = lint_text(tmp_path, text)
    assert result.exit_code() == 0  # a warning, never exit 2
    assert findings == [("O001", 9, "MyOp: the value of attr 'mode' (MODE_FROM_A_HEADER) is not read: 'MODE_FROM_A_HEADER' is not a constant declared in the file")]
    path = tmp_path / "my_op_def.cpp"
    with pytest.raises(AdoptError) as err:
        adopt(str(path))
    assert (err.value.line, err.value.message) == (9, "attr 'mode': its default MODE_FROM_A_HEADER is known only when the code runs; give the op's schema with --schema")


LISTS = """\
static const std::vector<ge::DataType> VALUE_TYPES = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
static const std::vector<ge::Format> VALUE_FORMATS(VALUE_TYPES.size(), ge::FORMAT_ND);
static const std::vector<ge::DataType> COPIED = VALUE_TYPES;
#define THREE_ND \\
    {ge::FORMAT_ND, ge::FORMAT_ND, \\
     ge::FORMAT_ND}
"""


def test_named_lists_in_every_real_spelling(tmp_path):
    body = (
        "        std::vector<ge::DataType> local_types = {ge::DT_INT32, ge::DT_INT64, ge::DT_INT32};\n"
        "        std::vector<ge::DataType> index_types{local_types.size(), ge::DT_INT64};\n"
        "        const std::initializer_list<ge::DataType> plain = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};\n"
        '        this->Input("x").ParamType(REQUIRED).DataType(VALUE_TYPES).Format(VALUE_FORMATS).UnknownShapeFormat(VALUE_FORMATS);\n'
        '        this->Input("idx").ParamType(REQUIRED).DataType(index_types).Format({VALUE_FORMATS});\n'
        '        this->Input("k").ParamType(REQUIRED).DataType(std::vector<ge::DataType>(local_types.begin(), local_types.end())).Format(THREE_ND);\n'
        '        this->Output("y").ParamType(REQUIRED).DataType(COPIED).Format(THREE_ND);\n'
        '        this->Output("z").ParamType(REQUIRED).DataType(plain).Format(THREE_ND);\n'
    )
    op = read_opdef("f.cpp", opdef(body, LISTS))
    assert [(t.name, t.dtypes, t.formats) for t in (*op.inputs, *op.outputs)] == [
        ("x", ("float16", "float", "bfloat16"), ("ND",) * 3),
        ("idx", ("int64",) * 3, ("ND",) * 3),
        ("k", ("int32", "int64", "int32"), ("ND",) * 3),
        ("y", ("float16", "float", "bfloat16"), ("ND",) * 3),
        ("z", ("float16", "float", "bfloat16"), ("ND",) * 3),
    ]
    assert op.skipped == ()
    result, findings = lint_text(tmp_path, opdef(body, LISTS))
    assert result.exit_code() == 0 and findings == []


def test_a_list_the_code_computes_leaves_its_columns_unknown_with_a_warning(tmp_path):
    body = (
        "        std::vector<ge::DataType> computed;\n"
        "        for (auto t : {ge::DT_FLOAT, ge::DT_FLOAT16}) { computed.push_back(t); }\n"
        '        this->Input("x").ParamType(REQUIRED).DataType(computed).Format({ge::FORMAT_ND});\n'
        '        this->Input("w").ParamType(REQUIRED).DataType(BuildTypes()).Format({ge::FORMAT_ND});\n' + Y
    )
    op = read_opdef("f.cpp", opdef(body))
    assert [t.dtypes for t in op.inputs] == [("", ""), ("", "")]  # the columns of y, each dtype unknown
    result, findings = lint_text(tmp_path, opdef(body))
    assert result.exit_code() == 0
    assert [(code, line) for code, line, _ in findings] == [("O001", 8), ("O001", 9), ("O001", 10)]
    assert findings[1][2] == "MyOp: DataType(...) not read: list 'computed' is filled by the code, not written out; its columns are unknown"
    assert findings[2][2] == "MyOp: DataType(...) not read: a list only known when the code runs ('BuildTypes()'); its columns are unknown"


def test_every_dtype_of_cann_graph_types_is_read_with_a_note_where_msopgen_cannot_write_it(tmp_path):
    body = (
        '        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_INT4, ge::DT_HIFLOAT8, ge::DT_FLOAT8_E4M3FN}).Format({ge::FORMAT_ND, ge::FORMAT_NCL, ge::FORMAT_ND});\n'
        '        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT8_E5M2, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});\n'
    )
    op = read_opdef("f.cpp", opdef(body))
    assert op.inputs[0].dtypes == ("int4", "hifloat8", "float8_e4m3fn") and op.outputs[0].dtypes == ("bfloat16", "float8_e5m2", "float")
    result, findings = lint_text(tmp_path, opdef(body))
    assert result.exit_code() == 0 and all(f.severity is Severity.INFO for f in result.findings)
    assert findings == [
        ("O005", 7, "MyOp: 'x' uses ge::DT_FLOAT8_E4M3FN, ge::DT_HIFLOAT8, ge::DT_INT4, ge::FORMAT_NCL, which msOpGen 26.0.0 cannot write"),
        ("O005", 8, "MyOp: 'y' uses ge::DT_FLOAT8_E5M2, which msOpGen 26.0.0 cannot write"),
    ]


def test_a_dtype_cann_does_not_define_is_still_an_error(tmp_path):
    result, findings = lint_text(tmp_path, opdef(X.replace("DT_FLOAT}", "DT_FLOAT32}") + Y))
    assert result.exit_code() == 2
    assert findings == [("E002", 7, "cannot read the OpDef: unknown data type 'ge::DT_FLOAT32': CANN's graph/types.h has no such ge::DataType")]


PER_SOC = """\
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_MAX}).Format({ge::FORMAT_END});
        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_MAX}).Format({ge::FORMAT_END});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_MAX}).Format({ge::FORMAT_END});
        OpAICoreConfig config910;
        config910.Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        config910.Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        config910.Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        config910.DynamicShapeSupportFlag(true);
        this->AICore().AddConfig("ascend910_93", config910);
"""
SCHEMA = "my_op(Tensor x, Tensor? bias=None) -> Tensor"


def test_per_soc_configs_are_read_and_compared_per_soc(tmp_path):
    (op,) = read_opdefs("f.cpp", opdef(PER_SOC))
    (config,) = op.soc_configs
    assert config.name == "config910" and config.socs == ("ascend910_93",)
    assert [(t.name, t.param_type, t.dtypes) for t in config.inputs] == [("x", "required", ("float16", "bfloat16")), ("bias", "optional", ("float16", "bfloat16"))]
    assert op.socs == ("ascend910_93", "ascend910b")
    # ascend910b builds the op's own declarations, whose bias is REQUIRED: that SoC drifts from the schema
    result, findings = lint_text(tmp_path, opdef(PER_SOC), schema=SCHEMA)
    assert [(code, line) for code, line, _ in findings if code.startswith("O1")] == [("O102", 8)]


def test_a_placeholder_op_level_declaration_every_soc_overrides_is_no_drift(tmp_path):
    text = opdef(PER_SOC).replace('        this->AICore().AddConfig("ascend910b");\n', "")
    result, findings = lint_text(tmp_path, text, schema=SCHEMA)
    assert [f for f in findings if f[0].startswith("O1")] == []
    assert result.exit_code() == 0


AICPU = """\
        this->Input("x").DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_DOUBLE, ge::DT_FLOAT});
        this->Output("y").DataType({ge::DT_INT32, ge::DT_INT64});
"""


def test_ai_cpu_ops_list_dtypes_per_descriptor_without_columns(tmp_path):
    for tail in ("        this->AICPU().ExtendCfgInfo(\"opInfo.opsFlag\", \"OPS_FLAG_OPEN\");\n", "        ApplyMyAicpuDefaults(*this);\n"):
        text = opdef(AICPU + tail).replace('        this->AICore().AddConfig("ascend910b");\n', "")
        (op,) = read_opdefs("f.cpp", text)
        assert op.aicpu
        result, findings = lint_text(tmp_path, text)
        assert [code for code, _, _ in findings if code in ("O002", "O004")] == []


def test_helpers_that_configure_the_op_are_listed_not_followed(tmp_path):
    text = opdef(X + Y + '        SetAscendConfig(aicoreConfig, "ascend950");\n').replace('        this->AICore().AddConfig("ascend910b");\n', "")
    (op,) = read_opdefs("f.cpp", text)
    assert op.helpers == ("SetAscendConfig",) and op.socs == ()
    result, findings = lint_text(tmp_path, text)
    assert findings == [("O001", 9, "MyOp: SetAscendConfig(...) not followed: what it declares is not read")]  # no O004: the helper may add SoCs


def test_lists_a_generator_fills_and_auto_declared_lists(tmp_path):
    before = "static const auto ND_LIST = std::vector<ge::Format>(2, ge::FORMAT_ND);\n"
    body = (
        "        const auto seq = gen.GetSequence<ge::Format>(\"base\");\n"
        '        this->Input("x").ParamType(REQUIRED).DataType({gen.GetSequence("types")}).Format({seq});\n'
        '        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format(ND_LIST);\n'
    )
    op = read_opdef("f.cpp", opdef(body, before))
    assert op.outputs[0].formats == ("ND", "ND")
    result, findings = lint_text(tmp_path, opdef(body, before))
    assert result.exit_code() == 0
    assert [m for _, _, m in findings] == [  # the const local itself is a declaration, read past without a warning
        "MyOp: DataType(...) not read: a list only known when the code runs ('gen.GetSequence(\"types\")'); its columns are unknown",
        "MyOp: Format(...) not read: 'seq' is not a list declared in the file; its columns are unknown",
    ]


def test_param_types_no_pytorch_argument_has_are_noted_and_not_adopted(tmp_path):
    body = X + '        this->Input("dft").ParamType(VIRTUAL).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});\n' + Y
    op = read_opdef("f.cpp", opdef(body))
    assert [t.param_type for t in op.inputs] == ["required", "virtual"]
    result, findings = lint_text(tmp_path, opdef(body))
    assert result.exit_code() == 0
    assert findings == [("O001", 8, "MyOp: ParamType(VIRTUAL) of input 'dft': no PyTorch argument is VIRTUAL; the O1xx rules and `opkit new --from` do not pair it")]
    with pytest.raises(AdoptError, match="'dft' is ParamType VIRTUAL, which no PyTorch argument is"):
        adopt(str(tmp_path / "my_op_def.cpp"))


def test_adopting_a_dtype_msopgen_cannot_write_is_one_located_message(tmp_path):
    path = tmp_path / "int4_def.cpp"
    path.write_text(opdef(X.replace("ge::DT_FLOAT}", "ge::DT_INT4}") + Y))
    with pytest.raises(AdoptError) as err:
        adopt(str(path))
    assert (err.value.line, err.value.message) == (7, "'x' lists ge::DT_INT4, which msOpGen 26.0.0 cannot write: give the op's columns with --dtypes")
