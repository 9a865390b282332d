{%- set op = opkit_project(cookiecutter) -%}
#ifndef {{ op.kernel_name | upper }}_TILING_H
#define {{ op.kernel_name | upper }}_TILING_H
#include <cstdint>

struct {{ op.op_type }}TilingData {
    uint32_t size;
};

#endif // {{ op.kernel_name | upper }}_TILING_H
