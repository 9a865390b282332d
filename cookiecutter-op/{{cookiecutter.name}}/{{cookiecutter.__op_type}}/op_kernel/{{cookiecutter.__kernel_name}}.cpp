{%- set op = opkit_project(cookiecutter) -%}
#include "kernel_operator.h"
#include "{{ op.kernel_name }}_tiling.h"

// Parameters in msOpGen's order: inputs, then outputs (an output named like an input is <name>_ref),
// then workspace and tiling (renamed with a trailing '_' when an operand takes the name).
extern "C" __global__ __aicore__ void {{ op.kernel_name }}({% for p in op.kernel_parameters %}GM_ADDR {{ p }}{% if not loop.last %}, {% endif %}{% endfor %})
{
    REGISTER_TILING_DEFAULT({{ op.op_type }}TilingData);
    GET_TILING_DATA(tilingData, {{ op.tiling_parameter }});
    // TODO: the kernel. msOpGen leaves this body to the operator developer.
}
