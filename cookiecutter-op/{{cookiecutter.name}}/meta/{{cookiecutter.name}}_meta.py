{%- set op = opkit_project(cookiecutter) -%}
{%- macro params(annotated) -%}
{%- for p in op.parameters -%}
{%- if p.kwarg_only and (loop.first or not loop.previtem.kwarg_only) %}*, {% endif -%}
{{ p.name }}{% if annotated %}: {{ p.annotation }}{% endif %}{% if p.has_default %}{{ " = " if annotated else "=" }}{{ p.default | py_literal }}{% endif %}
{%- if not loop.last %}, {% endif -%}
{%- endfor -%}
{%- endmacro -%}
{%- macro py_dim(d) -%}
{%- if d.kind == "dim" %}{{ d.arg }}{% if d.arg_is_list %}[0]{% endif %}.shape[{{ d.index }}]{% elif d.kind == "int" %}{{ d.arg }}{% else %}{{ d.index }}{% endif -%}
{%- endmacro -%}
{%- macro alloc(o, t) -%}
{#- One output (t: the tensor it takes its device from): like's size, or its size rule; like's dtype, or its own. -#}
{%- set dtype = ", dtype=torch." ~ o.torch_dtype if o.dtype else "" -%}
{%- if o.size_arg -%}
{{ t }}.new_empty({{ o.size_arg }}{{ dtype }})
{%- elif o.shape is not none -%}
{{ t }}.new_empty([{% for d in o.shape %}{{ py_dim(d) }}{% if not loop.last %}, {% endif %}{% endfor %}]{{ dtype }})
{%- else -%}
torch.empty_like({{ t }}{{ dtype }})
{%- endif -%}
{%- endmacro -%}
{%- macro allocation(o) -%}
{%- if o.is_list -%}
[{{ alloc(o, "t") }} for t in {{ o.like if o.like_is_list else "[" ~ o.like ~ "]" }}]
{%- else -%}
{{ alloc(o, o.like ~ "[0]" if o.like_is_list else o.like) }}
{%- endif -%}
{%- endmacro -%}
{%- macro fake_body() -%}
{%- if op.returns_kind == "none" %}
    # {{ op.mutated_names | join(", ") }} {{ "is" if op.mutated_names | length == 1 else "are" }} written in place: nothing to allocate, and the schema returns nothing.
    return None
{%- elif op.returns_kind == "tensor" %}
    # Output size and dtype: {{ op.fresh_outputs[0].name }} like {{ op.fresh_outputs[0].like }}{% if op.fresh_outputs[0].sized_by_rule %}, size {{ op.spec.output_rule(op.fresh_outputs[0].name).size_text }}{% endif %}{% if op.fresh_outputs[0].dtype %}, dtype {{ op.fresh_outputs[0].dtype }}{% endif %} (--output / --out-like); change this if the op reshapes.
    return {{ allocation(op.fresh_outputs[0]) }}
{%- else %}
    # Output sizes and dtypes follow each output's rule (--output NAME=like:ARG,size:[...],dtype:DTYPE; default --out-like {{ op.spec.out_like }}).
    return ({% for o in op.fresh_outputs %}{{ allocation(o) }}{% if not loop.last %}, {% endif %}{% endfor %})
{%- endif %}
{%- endmacro -%}
{%- if op.style in ("op-plugin", "extension") -%}
{%- if op.style == "op-plugin" -%}
"""Meta registration of torch.ops.{{ op.namespace }}.{{ op.signature.full_name }} (op-plugin style).

In torch_npu this function belongs in op_plugin/python/meta/_meta_registrations.py; it must be
registered before torch.compile runs. Its parameters are exactly the schema's, with its defaults:
{%- else -%}
"""Meta (fake) function of torch.ops.{{ op.namespace }}.{{ op.signature.full_name }}, defined in C++ by csrc/{{ op.name }}.asc.

{{ op.launch.package }}/__init__.py imports this module right after loading the library, so the op has its
Meta before torch.compile runs. Its parameters are exactly the schema's, with its defaults:
{%- endif %}

    {{ op.signature.text }}
"""

import torch
from torch.library import Library, impl

m = Library("{{ op.namespace }}", "IMPL", "Meta")


@impl(m, "{{ op.signature.full_name }}")
def {{ op.meta_function_name }}({{ params(false) }}):
{{- fake_body() }}
{% elif op.style == "library" -%}
"""torch.ops.{{ op.namespace }}.{{ op.signature.full_name }} through torch.library.Library (the Python twin of TORCH_LIBRARY).

The schema is defined as written, in torch.library's dialect (named returns, Tensor!, list defaults):

    {{ op.signature.text }}
"""

import torch
from torch.library import Library, impl

lib = Library("{{ op.namespace }}", "FRAGMENT")
lib.define({{ op.library_definition | py_literal }})

meta = Library("{{ op.namespace }}", "IMPL", "Meta")


@impl(lib, "{{ op.signature.full_name }}", "PrivateUse1")
def {{ op.kernel_function_name }}({{ params(false) }}):
    # <user implementation>: launch {{ op.aclnn_name }} from the {{ op.op_type }} package built from {{ op.op_type }}/.
    raise NotImplementedError("{{ op.signature.full_name }}: call the {{ op.aclnn_name }} kernel here")


@impl(meta, "{{ op.signature.full_name }}")
def {{ op.meta_function_name }}({{ params(false) }}):
{{- fake_body() }}
{% else -%}
"""torch.ops.{{ op.namespace }}.{{ op.name }} as a torch.library custom_op, with its fake (Meta) function.

custom_op infers the schema from the annotations below; it must read

    {{ op.signature.text }}
"""
{%- if op.uses_optional %}

from typing import Optional
{%- endif %}

import torch


@torch.library.custom_op("{{ op.namespace }}::{{ op.name }}", mutates_args=({% for n in op.mutated_names %}"{{ n }}",{% if not loop.last %} {% endif %}{% endfor %}), device_types="npu")
def {{ op.name }}({{ params(true) }}) -> {{ op.return_annotation }}:
    # <user implementation>: launch {{ op.aclnn_name }} from the {{ op.op_type }} package built from {{ op.op_type }}/.
    raise NotImplementedError("{{ op.name }}: call the {{ op.aclnn_name }} kernel here")


@{{ op.name }}.register_fake
def _({{ params(true) }}) -> {{ op.return_annotation }}:
{{- fake_body() }}
{% endif -%}
