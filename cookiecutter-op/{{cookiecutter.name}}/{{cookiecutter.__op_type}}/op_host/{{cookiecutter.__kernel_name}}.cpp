{%- set op = opkit_project(cookiecutter) -%}
{%- macro tensor(kind, t) %}
        this->{{ kind }}("{{ t.name }}")
            .ParamType({{ t.param_type }})
            .DataType({ {{- t.data_types | join(", ") -}} })
            .Format({ {{- t.formats | join(", ") -}} })
            .UnknownShapeFormat({ {{- t.formats | join(", ") -}} });
{%- endmacro -%}

#include "../op_kernel/{{ op.kernel_name }}_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    // TODO: the op's tiling. This default, msOpGen's, splits nothing: size = element count of input 0.
    {{ op.op_type }}TilingData* tiling = context->GetTilingData<{{ op.op_type }}TilingData>();
    tiling->size = static_cast<uint32_t>(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
    context->SetBlockDim(8);
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
} // namespace optiling

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    // Default: output 0 has input 0's shape. TorchAir derives both functions when inputs and outputs
    // map one to one onto the PyTorch op, so this may also be deleted.
    const gert::Shape* x0_shape = context->GetInputShape(0);
    gert::Shape* y0_shape = context->GetOutputShape(0);
    *y0_shape = *x0_shape;
    return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    const auto inputDataType = context->GetInputDataType(0);
    context->SetOutputDataType(0, inputDataType);
    return ge::GRAPH_SUCCESS;
}
} // namespace ge

namespace ops {
class {{ op.op_type }} : public OpDef {
public:
    explicit {{ op.op_type }}(const char* name) : OpDef(name)
    {
{%- for t in op.opdef_inputs %}{{ tensor("Input", t) }}{% endfor %}
{%- for t in op.opdef_outputs %}{{ tensor("Output", t) }}{% endfor %}
{%- for a in op.opdef_attrs %}
{%- if a.optional %}
        this->Attr("{{ a.name }}").AttrType(OPTIONAL).{{ a.method }}({{ a.default | cpp_literal }});
{%- else %}
        this->Attr("{{ a.name }}").{{ a.method }}();
{%- endif %}
{%- endfor %}

        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
{%- for family in op.soc_families %}
        this->AICore().AddConfig("{{ family }}");
{%- endfor %}
    }
};

OP_ADD({{ op.op_type }});
} // namespace ops
