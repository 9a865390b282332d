"""The project model, called directly: the values the templates format, for representative schemas.

Each expectation is written by hand from the specs: msopgen.md (names, OpDef tensors and attrs, ``ge::DT_*`` and
``ge::FORMAT_*``, attr methods, SoC families and the compute unit, the kernel's parameters with ``workspace`` and
``tiling`` last and ``<name>_ref`` for a mutated input), op-plugin-yaml.md (the ``custom:`` entry, ``gen_opapi``
sizes and dtypes as real entries write them, ``new_params`` with ``value_or`` and ``const_cast<char *>``, ``exec:
aclnn<Op>`` then the arguments and the outputs, the Meta function's name and returns) and docs/new.md's type
mapping. No cookiecutter run: these are the model's own values, the templates' only input.
"""

from __future__ import annotations

import json

import pytest

from opkit.generate.model import DummyArg, NewParam, OpDefAttr, OpDefTensor, OutputAlloc, ProjectModel, ShapeDim
from opkit.generate.spec import make_spec
from opkit.signature import DType

ND3 = ("ge::FORMAT_ND",) * 3
DEFAULT_GE = ("ge::DT_FLOAT16", "ge::DT_FLOAT", "ge::DT_BF16")

RICH = (
    'npu_my_op.ov(Tensor x, Tensor? y, Tensor[] z, Scalar s, float attr1, int attr2, int? k=None, str mode="a", int[]? sz=None, '
    "ScalarType? d=None, bool? b=None, float[]? fl=None, str? st=None, bool[2] bb=[True,False], *, int n=Mean, ScalarType t=long) -> (Tensor r0, Tensor r1)"
)


@pytest.fixture(scope="module")
def rich():
    spec = make_spec("npu_my_op", schema=RICH, outputs="r1=size:[x.0, z.-1, attr2, 4],dtype:float32", soc="ascend910b1,ascend910b2,ascend910_9391,ascend310p3")
    return ProjectModel(spec)


def test_names(rich):
    # npu_<x> gets the OpType <X> (op-plugin-yaml.md: npu_add_rms_norm → aclnnAddRmsNorm); files are its snake_case
    assert (rich.name, rich.style, rich.namespace, rich.vendor) == ("npu_my_op", "op-plugin", "npu", "npu_my_op")
    assert (rich.op_type, rich.kernel_name, rich.aclnn_name, rich.model_class) == ("MyOp", "my_op", "aclnnMyOp", "MyOpModel")
    assert rich.meta_function_name == "npu_my_op_ov_meta"
    assert rich.kernel_function_name == "npu_my_op_ov_npu"
    assert rich.qualified_op == "torch.ops.npu.npu_my_op.ov"
    assert rich.library_definition == RICH


def test_soc_families_once_each_in_order_and_the_compute_unit(rich):
    # msopgen.md: ascend910b1…b4 → ascend910b, ascend910_93xx → ascend910_93, ascend310p1/3/5/7 → ascend310p
    assert rich.soc_families == ("ascend910b", "ascend910_93", "ascend310p")
    assert rich.compute_unit == "ai_core-ascend910b1,ai_core-ascend910b2,ai_core-ascend910_9391,ai_core-ascend310p3"


def test_opdef_tensors(rich):
    assert rich.opdef_inputs == (
        OpDefTensor("x", "REQUIRED", DEFAULT_GE, ND3),
        OpDefTensor("y", "OPTIONAL", DEFAULT_GE, ND3),
        OpDefTensor("z", "DYNAMIC", DEFAULT_GE, ND3),
        OpDefTensor("s", "REQUIRED", DEFAULT_GE, ND3, scalar=True),
    )
    assert rich.opdef_outputs == (
        OpDefTensor("r0", "REQUIRED", DEFAULT_GE, ND3),
        OpDefTensor("r1", "REQUIRED", ("ge::DT_FLOAT",) * 3, ND3),
    )
    assert rich.has_inputs is True


def test_opdef_attrs_with_their_documented_defaults(rich):
    assert rich.opdef_attrs == (
        OpDefAttr("attr1", "Float", False),
        OpDefAttr("attr2", "Int", False),
        OpDefAttr("k", "Int", True, 0),
        OpDefAttr("mode", "String", True, "a"),
        OpDefAttr("sz", "ListInt", True, []),
        OpDefAttr("d", "Type", True, DType("undefined")),  # ScalarType?=None → DT_UNDEFINED
        OpDefAttr("b", "Bool", True, False),
        OpDefAttr("fl", "ListFloat", True, []),
        OpDefAttr("st", "String", True, ""),
        OpDefAttr("bb", "ListBool", True, [True, False]),
        OpDefAttr("n", "Int", True, 1),  # int reduction=Mean is 1
        OpDefAttr("t", "Type", True, DType("int64")),  # ScalarType=long
    )


def test_kernel_parameters_and_host_accessors(rich):
    assert rich.kernel_parameters == ("x", "y", "z", "s", "r0", "r1", "workspace", "tiling")
    assert (rich.workspace_parameter, rich.tiling_parameter) == ("workspace", "tiling")
    # GetInput…(i) counts instances: after an optional or dynamic input, the IR-index accessors
    assert [rich.input_shape(i) for i in range(4)] == [
        "context->GetInputShape(0)",
        "context->GetOptionalInputShape(1)",
        "context->GetDynamicInputShape(2, 0)",
        "context->GetRequiredInputShape(3)",
    ]
    assert [rich.input_dtype(i) for i in range(4)] == [
        "context->GetInputDataType(0)",
        "context->GetOptionalInputDataType(1)",
        "context->GetDynamicInputDataType(2, 0)",
        "context->GetRequiredInputDataType(3)",
    ]
    assert rich.tiling_input == 0


def test_fresh_outputs_and_their_sizes(rich):
    shape = (ShapeDim("dim", "x", 0, False, 0, 0), ShapeDim("dim", "z", -1, True, 2, 0), ShapeDim("int", "attr2", 0, False, 0, 1), ShapeDim("literal", "", 4, False, 0, 0))
    assert rich.fresh_outputs == (
        OutputAlloc("r0", "x", index=0),
        OutputAlloc("r1", "x", dtype="float32", index=1, shape=shape),
    )
    assert rich.infer_rules == rich.fresh_outputs
    assert [d.cpp for d in shape] == ["x.size(0)", "z[0].size(-1)", "attr2", "4L"]
    assert (rich.fresh_outputs[1].torch_dtype, rich.fresh_outputs[1].ge_dtype) == ("float32", "ge::DT_FLOAT")
    assert (rich.fresh_outputs[0].torch_dtype, rich.fresh_outputs[0].ge_dtype) == ("", "")
    assert rich.fresh_outputs[1].sized_by_rule and not rich.fresh_outputs[0].sized_by_rule


def test_new_params_follow_the_real_files_conventions(rich):
    assert rich.new_params == (
        NewParam("k", "k_value", "k.value_or(0)"),
        NewParam("mode", "mode_value", "const_cast<char *>(mode.data())"),
        NewParam("sz", "sz_value", "sz.value_or(at::IntArrayRef{})"),
        NewParam("d", "d_value", "d.value_or(at::ScalarType::Undefined)"),
        NewParam("b", "b_value", "b.value_or(false)"),
        NewParam("fl", "fl_value", "fl.value_or(at::ArrayRef<double>{})"),
        NewParam("st", "st_value", "st.has_value() ? const_cast<char *>(st.value().data()) : nullptr"),
    )


def test_yaml_entry(rich):
    assert rich.yaml_entry == {
        "func": RICH,
        "op_api": "all_version",
        "gen_opapi": {
            "r0": {"size": "x", "dtype": "x"},
            "r1": {"size": "{x.size(0), z[0].size(-1), attr2, 4L}", "dtype": "at::kFloat"},
            "new_params": {
                "k_value": "k.value_or(0)",
                "mode_value": "const_cast<char *>(mode.data())",
                "sz_value": "sz.value_or(at::IntArrayRef{})",
                "d_value": "d.value_or(at::ScalarType::Undefined)",
                "b_value": "b.value_or(false)",
                "fl_value": "fl.value_or(at::ArrayRef<double>{})",
                "st_value": "st.has_value() ? const_cast<char *>(st.value().data()) : nullptr",
            },
            "exec": "aclnnMyOp, x, y, z, s, attr1, attr2, k_value, mode_value, sz_value, d_value, b_value, fl_value, st_value, bb, n, t, r0, r1",
        },
    }


def test_python_parameters(rich):
    got = [(p.name, p.annotation, p.default if p.has_default else "-", p.kwarg_only, p.mutated) for p in rich.parameters]
    assert got == [
        ("x", "torch.Tensor", "-", False, False),
        ("y", "Optional[torch.Tensor]", "-", False, False),
        ("z", "list[torch.Tensor]", "-", False, False),
        ("s", "object", "-", False, False),
        ("attr1", "float", "-", False, False),
        ("attr2", "int", "-", False, False),
        ("k", "Optional[int]", None, False, False),
        ("mode", "str", "a", False, False),
        ("sz", "Optional[list[int]]", None, False, False),
        ("d", "Optional[torch.dtype]", None, False, False),
        ("b", "Optional[bool]", None, False, False),
        ("fl", "Optional[list[float]]", None, False, False),
        ("st", "Optional[str]", None, False, False),
        ("bb", "list[bool]", [True, False], False, False),
        ("n", "int", 1, True, False),
        ("t", "torch.dtype", DType("int64"), True, False),
    ]
    assert rich.uses_optional is True
    assert (rich.returns_kind, rich.return_annotation) == ("tuple", "tuple[torch.Tensor, torch.Tensor]")
    assert (rich.mutated_names, rich.mutated_variables) == ((), ())


def test_the_sample_call(rich):
    # docs/new.md, "Type mapping", column "sample": tensors, 2 tensors for a list, Scalar 1.5, float 1.5, int 2; optional arguments omitted
    assert rich.dummy_args == (
        DummyArg("x", "tensor", False, None, "float16", "randn"),
        DummyArg("y", "tensor", False, None, "float16", "randn"),
        DummyArg("z", "tensor_list", False, None, "float16", "randn"),
        DummyArg("s", "value", False, 1.5, "float16", "randn"),
        DummyArg("attr1", "value", False, 1.5, "float16", "randn"),
        DummyArg("attr2", "value", False, 2, "float16", "randn"),
    )
    assert [a.name for a in rich.tensor_dummy_args] == ["x", "y", "z"]
    assert rich.dummy_shape == (8, 16)  # x.0 is read: two dims, as without a rule
    assert rich.tensor_list_length == 2


def test_in_place_op():
    model = ProjectModel(make_spec("my_inplace", inplace=True))
    assert model.opdef_outputs == (OpDefTensor("x", "REQUIRED", DEFAULT_GE, ND3),)
    assert model.kernel_parameters == ("x", "y", "x_ref", "workspace", "tiling")
    assert model.fresh_outputs == ()
    assert model.infer_rules == (OutputAlloc("x", "x"),)
    assert model.yaml_entry == {"func": "my_inplace(Tensor(a!) x, Tensor y) -> ()", "op_api": "all_version", "gen_opapi": {"exec": "aclnnMyInplace"}}
    assert (model.returns_kind, model.return_annotation) == ("none", "None")
    assert (model.mutated_names, model.mutated_variables) == (("x",), ("x",))
    assert [p.mutated for p in model.parameters] == [True, False]
    assert model.uses_optional is False
    assert model.opdef_attrs == ()
    assert model.new_params == ()


def test_mutated_inputs_after_a_fresh_output_keep_their_ir_positions():
    model = ProjectModel(make_spec("f", schema="f(Tensor x, Tensor[] ys, Tensor(a!) self, Tensor(b!)[] zs) -> Tensor", out_like="x"))
    assert [(d.name, d.param_type) for d in model.opdef_outputs] == [("self", "REQUIRED"), ("zs", "DYNAMIC"), ("out", "REQUIRED")]
    assert model.infer_rules == (
        OutputAlloc("self", "self", index=0, like_index=2),
        OutputAlloc("zs", "zs", index=1, like_index=3, like_dynamic=True),
        OutputAlloc("out", "x", index=2),
    )
    assert model.mutated_variables == ("self_", "zs")
    assert model.kernel_parameters == ("x", "ys", "self", "zs", "self_ref", "zs_ref", "out", "workspace", "tiling")
    assert [model.input_shape(i) for i in range(4)] == [
        "context->GetInputShape(0)",
        "context->GetDynamicInputShape(1, 0)",
        "context->GetRequiredInputShape(2)",
        "context->GetDynamicInputShape(3, 0)",
    ]


def test_a_list_like_a_list_return_and_size_rules():
    model = ProjectModel(make_spec("f", schema="f(Tensor[] xs, int[] size) -> (Tensor a, Tensor b, Tensor c, Tensor e)", outputs="a=size:size;b=size:[],dtype:int2;c=dtype:bool;e=dtype:uint1,size:[xs.1]"))
    assert model.fresh_outputs == (
        OutputAlloc("a", "xs", True, index=0, like_dynamic=True, size_arg="size"),
        OutputAlloc("b", "xs", True, "int2", index=1, like_dynamic=True, shape=()),
        OutputAlloc("c", "xs", True, "bool", index=2, like_dynamic=True),
        OutputAlloc("e", "xs", True, "uint1", index=3, like_dynamic=True, shape=(ShapeDim("dim", "xs", 1, True),)),
    )
    gen = model.yaml_entry["gen_opapi"]
    assert gen == {
        "a": {"size": "size", "dtype": "xs[0].scalar_type()"},
        # int2 has no ATen dtype: like's, as every other output without dtype:
        "b": {"size": "at::IntArrayRef{}", "dtype": "xs[0].scalar_type()"},
        "c": {"size": "xs[0].sizes()", "dtype": "at::kBool"},
        "e": {"size": "{xs[0].size(1)}", "dtype": "xs[0].scalar_type()"},
        "exec": "aclnnF",
    }
    assert (model.fresh_outputs[1].torch_dtype, model.fresh_outputs[1].ge_dtype) == ("float32", "ge::DT_INT2")
    assert (model.fresh_outputs[2].torch_dtype, model.fresh_outputs[2].ge_dtype) == ("bool", "ge::DT_BOOL")
    assert model.dummy_shape == (8, 16)
    assert model.opdef_attrs == (OpDefAttr("size", "ListInt", False),)
    assert model.dummy_args == (DummyArg("xs", "tensor_list", False, None, "float16", "randn"), DummyArg("size", "value", False, [2, 2], "float16", "randn"))
    assert [a.name for a in model.tensor_dummy_args] == ["xs"]
    assert [model.input_dtype(0)] == ["context->GetDynamicInputDataType(0, 0)"]


def test_size_arg_attr_index():
    model = ProjectModel(make_spec("f", schema="f(Tensor x, int n, int[] shape, SymInt m) -> Tensor", outputs="out=size:shape"))
    assert model.fresh_outputs == (OutputAlloc("out", "x", size_arg="shape", size_attr_index=1),)
    model = ProjectModel(make_spec("f", schema="f(Tensor x, int n, Tensor y, SymInt m) -> Tensor", outputs="out=size:[m, y.0, n]"))
    assert model.fresh_outputs[0].shape == (ShapeDim("int", "m", 0, False, 0, 1), ShapeDim("dim", "y", 0, False, 1, 0), ShapeDim("int", "n", 0, False, 0, 0))
    assert model.yaml_entry["gen_opapi"]["out"] == {"size": "{m, y.size(0), n}", "dtype": "x"}


def test_a_tensor_list_return_has_no_gen_opapi_and_names_keep_clear_of_keywords():
    spec = make_spec(
        "f",
        schema="ns::f(Tensor[] xs, Tensor? y, Scalar s, Tensor self, Tensor workspace, Tensor k_value, int new, ScalarType d, int? k=None, *, int[2] st=[1,1], str? mode=None) -> Tensor[]",
        dtypes="int32;xs=int8",
        style="library",
    )
    model = ProjectModel(spec)
    assert model.yaml_entry == {"func": spec.schema, "op_api": "all_version"}
    assert model.qualified_op == "torch.ops.ns.f"
    assert model.library_definition == spec.schema.removeprefix("ns::")
    assert model.meta_function_name == "f_meta"
    assert model.kernel_function_name == "f_npu"
    assert (model.returns_kind, model.return_annotation) == ("tensor", "list[torch.Tensor]")
    # an operand named workspace renames the kernel's own parameter
    assert model.kernel_parameters == ("xs", "y", "s", "self", "workspace", "k_value", "out", "workspace_", "tiling")
    assert (model.workspace_parameter, model.tiling_parameter) == ("workspace_", "tiling")
    assert model.new_params == (
        NewParam("k", "k_value_", "k.value_or(0)"),
        NewParam("mode", "mode_value", "mode.has_value() ? const_cast<char *>(mode.value().data()) : nullptr"),
    )
    assert model.fresh_outputs == (OutputAlloc("out", "self", is_list=True, like_index=3),)
    assert model.dummy_args == (
        DummyArg("xs", "tensor_list", False, None, "int8", "randint"),
        DummyArg("y", "tensor", False, None, "int32", "randint"),
        DummyArg("s", "value", False, 1.5, "int32", "randint"),
        DummyArg("self", "tensor", False, None, "int32", "randint"),
        DummyArg("workspace", "tensor", False, None, "int32", "randint"),
        DummyArg("k_value", "tensor", False, None, "int32", "randint"),
        DummyArg("new", "value", False, 2, "int32", "randint"),
        DummyArg("d", "value", False, DType("int32")),
    )
    assert [a.variable for a in model.dummy_args] == ["xs", "y", "s", "self_", "workspace", "k_value", "new", "d"]
    assert [model.input_shape(i) for i in range(3)] == ["context->GetDynamicInputShape(0, 0)", "context->GetOptionalInputShape(1)", "context->GetRequiredInputShape(2)"]
    assert model.tiling_input == 0


def test_tiling_splits_the_first_required_or_dynamic_input():
    model = ProjectModel(make_spec("f", schema="f(Tensor? y, Scalar s, Tensor x) -> Tensor", out_like="x"))
    assert model.tiling_input == 2
    assert model.input_shape(2) == "context->GetRequiredInputShape(2)"


@pytest.mark.parametrize(
    "dtype, torch_dtype, fill",
    [
        ("float", "float32", "randn"), ("float16", "float16", "randn"), ("bfloat16", "bfloat16", "randn"), ("double", "float64", "randn"),
        ("int8", "int8", "randint"), ("int16", "int16", "randint"), ("int32", "int32", "randint"), ("int64", "int64", "randint"),
        ("uint8", "uint8", "randint"), ("uint16", "uint16", "randint"), ("uint32", "uint32", "randint"), ("uint64", "uint64", "randint"),
        ("bool", "bool", "randint"), ("complex64", "complex64", "randn"), ("complex128", "complex128", "randn"), ("complex32", "complex32", "randn"),
        ("int2", "float32", "randn"),  # no torch dtype
    ],
)  # fmt: skip
def test_sample_tensors_take_the_first_dtype_as_torch_names_it(dtype, torch_dtype, fill):
    model = ProjectModel(make_spec("f", dtypes=dtype, outputs=f"out=dtype:{dtype}"))
    assert model.dummy_args == (DummyArg("x", "tensor", False, None, torch_dtype, fill),)
    assert model.fresh_outputs[0].torch_dtype == torch_dtype


@pytest.mark.parametrize(
    "dtype, aten",
    [
        ("float", "at::kFloat"), ("float16", "at::kHalf"), ("bfloat16", "at::kBFloat16"), ("double", "at::kDouble"), ("int8", "at::kChar"),
        ("int16", "at::kShort"), ("int32", "at::kInt"), ("int64", "at::kLong"), ("uint8", "at::kByte"), ("bool", "at::kBool"),
        ("complex64", "at::kComplexFloat"), ("complex128", "at::kComplexDouble"),
    ],
)  # fmt: skip
def test_gen_opapi_dtypes_are_aten_constants(dtype, aten):
    model = ProjectModel(make_spec("f", outputs=f"out=dtype:{dtype}"))
    assert model.yaml_entry["gen_opapi"]["out"] == {"size": "x", "dtype": aten}


def test_optional_attrs_with_given_defaults():
    model = ProjectModel(make_spec("f", schema="f(Tensor x, int? k=3, float? a=0.5, bool? b=True, int[]? s=None, float[]? f=None, bool[]? bs=None, str? m=\"x\") -> Tensor"))
    assert [(p.name, p.expression) for p in model.new_params] == [
        ("k_value", "k.value_or(3)"),
        ("a_value", "a.value_or(0.5)"),
        ("b_value", "b.value_or(true)"),
        ("s_value", "s.value_or(at::IntArrayRef{})"),
        ("f_value", "f.value_or(at::ArrayRef<double>{})"),
        ("bs_value", "bs.value_or(at::ArrayRef<bool>{})"),
        ("m_value", "m.has_value() ? const_cast<char *>(m.value().data()) : nullptr"),
    ]
    assert [(p.name, p.default) for p in model.parameters if p.has_default] == [("k", 3), ("a", 0.5), ("b", True), ("s", None), ("f", None), ("bs", None), ("m", "x")]


def test_an_adopted_entry_is_kept_as_it_is():
    entry = {"func": "my_op(Tensor x) -> Tensor", "op_api": ["v2.1", "newest"], "gen_opapi": {"out": {"size": "x", "dtype": "x"}, "exec": "aclnnOther"}}
    assert ProjectModel(make_spec("my_op", yaml_entry=entry)).yaml_entry == entry


def test_the_msopgen_document_is_a_list_of_one_op():
    model = ProjectModel(make_spec("my_add", schema="my_add(Tensor x, Tensor y) -> Tensor", dtypes="float", soc="ascend310p3"))
    document = [
        {
            "op": "MyAdd",
            "input_desc": [
                {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]},
                {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]},
            ],
            "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["float"]}],
        }
    ]
    assert model.msopgen_document == document
    assert model.msopgen_json == json.dumps(document, indent=4) + "\n"
    assert (model.soc_families, model.compute_unit) == (("ascend310p",), "ai_core-ascend310p3")


def test_annotations_of_list_attrs_and_a_keyword_named_operand():
    model = ProjectModel(make_spec("f", schema="f(Tensor x, Tensor template, float[] fs, bool[] bs, str[] ss, ScalarType t, Tensor[]? zs=None) -> Tensor", style="library"))
    assert [(p.name, p.annotation) for p in model.parameters] == [
        ("x", "torch.Tensor"),
        ("template", "torch.Tensor"),
        ("fs", "list[float]"),
        ("bs", "list[bool]"),
        ("ss", "list[str]"),
        ("t", "torch.dtype"),
        ("zs", "Optional[list[torch.Tensor]]"),
    ]
    # a C++ keyword as an operand: the kernel's parameter gets a trailing '_'
    assert model.kernel_parameters == ("x", "template_", "zs", "out", "workspace", "tiling")
    assert [model.input_shape(i) for i in range(3)] == ["context->GetInputShape(0)", "context->GetInputShape(1)", "context->GetDynamicInputShape(2, 0)"]  # Tensor[]? is dynamic too


def test_tiling_skips_optional_inputs():
    model = ProjectModel(make_spec("f", schema="f(Tensor? y, Tensor(a!)[] x) -> ()"))
    assert model.tiling_input == 1
    assert model.infer_rules == (OutputAlloc("x", "x", like_index=1, like_dynamic=True),)
