{%- set op = opkit_project(cookiecutter) -%}
{%- macro tensor(kind, t) %}
        this->{{ kind }}("{{ t.name }}")
            .ParamType({{ t.param_type }})
            .DataType({ {{- t.data_types | join(", ") -}} })
            .Format({ {{- t.formats | join(", ") -}} })
            .UnknownShapeFormat({ {{- t.formats | join(", ") -}} }){% if t.scalar %}
            .Scalar(){% endif %};
{%- endmacro -%}

// PyTorch schema: {{ op.spec.schema | replace("\n", " ") | replace("\r", " ") }}
#include "../op_kernel/{{ op.kernel_name }}_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    // TODO: the op's tiling. This default, msOpGen's, splits nothing: size = element count of input {{ op.tiling_input }}.
    {{ op.op_type }}TilingData* tiling = context->GetTilingData<{{ op.op_type }}TilingData>();
{%- if op.has_inputs %}
    tiling->size = static_cast<uint32_t>({{ op.input_shape(op.tiling_input) }}->GetOriginShape().GetShapeSize());
{%- else %}
    tiling->size = 0;
{%- endif %}
    context->SetBlockDim(8);
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
} // namespace optiling

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    // Every output: the shape of the input its rule names (--output NAME=like:ARG, default --out-like),
    // or the shape its size rule builds from input dims and int attrs (--output NAME=size:[...] / size:ARG).
    // TorchAir derives both functions when inputs and outputs map one to one onto the PyTorch op.
{%- for o in op.infer_rules %}
{%- if o.size_arg %}
    {
        // {{ o.name }}: the shape the int[] attr {{ o.size_arg }} gives (--output {{ o.name }}=size:{{ o.size_arg }})
        const gert::TypedContinuousVector<int64_t>* dims = context->GetAttrs()->GetListInt({{ o.size_attr_index }});
        gert::Shape* shape = context->GetOutputShape({{ o.index }});
        shape->SetDimNum(dims->GetSize());
        for (size_t i = 0; i < dims->GetSize(); ++i) {
            shape->SetDim(i, dims->GetData()[i]);
        }
    }
{%- elif o.shape is not none %}
    {
        // {{ o.name }}: size {{ op.spec.output_rule(o.name).size_text }} (--output {{ o.name }}=size:[...])
        gert::Shape* shape = context->GetOutputShape({{ o.index }});
        shape->SetDimNum({{ o.shape | length }});
{%- for d in o.shape %}
{%- if d.kind == "dim" %}
{%- set source = op.input_shape(d.input_index) %}
        shape->SetDim({{ loop.index0 }}, {{ source }}->GetDim({% if d.index < 0 %}{{ source }}->GetDimNum() - {{ -d.index }}{% else %}{{ d.index }}{% endif %}));  // {{ d.arg }}.{{ d.index }}
{%- elif d.kind == "int" %}
        shape->SetDim({{ loop.index0 }}, *context->GetAttrs()->GetAttrPointer<int64_t>({{ d.attr_index }}));  // attr {{ d.arg }}
{%- else %}
        shape->SetDim({{ loop.index0 }}, {{ d.index }});
{%- endif %}
{%- endfor %}
    }
{%- else %}
    *context->GetOutputShape({{ o.index }}) = *{{ op.input_shape(o.like_index) }};  // {{ o.name }} like {{ o.like }}{% if o.is_list %} (DYNAMIC: instance 0 shown){% endif %}
{%- endif %}
{%- endfor %}
    return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
{%- for o in op.infer_rules %}
{%- if o.dtype %}
    context->SetOutputDataType({{ o.index }}, {{ o.ge_dtype }});  // {{ o.name }}: dtype {{ o.dtype }}
{%- else %}
    context->SetOutputDataType({{ o.index }}, {{ op.input_dtype(o.like_index) }});  // {{ o.name }} like {{ o.like }}
{%- endif %}
{%- endfor %}
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
