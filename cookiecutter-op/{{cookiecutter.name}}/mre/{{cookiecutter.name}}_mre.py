{%- set op = opkit_project(cookiecutter) -%}
{%- import "mre_macros.jinja" as mre -%}
"""MRE: {{ op.qualified_op }} inside an npugraph_ex graph (Atlas A2/A3, CANN, torch_npu with the op built in)."""

{{ mre.imports(op) }}


class {{ op.model_class }}(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {{ mre.tensor_params(op) }}):
        {{ mre.op_body(op, "        ") }}


def infer_one_step():
    """
    Run {{ op.qualified_op }} once through torch.compile with the npugraph_ex backend.

    Key settings:
    - backend="npugraph_ex": capture & replay (aclgraph); tasks sink to the device, less host dispatch.
    - fullgraph=True: the whole forward must be one graph; a graph break is an error.
    - dynamic=False: fixed shapes; aclgraph has no dynamic shapes (dynamic=True may capture several graphs).
    - torch.no_grad(): npugraph_ex captures inference only.
    """
    config = dict(backend="npugraph_ex", fullgraph=True, dynamic=False)
    model = {{ op.model_class }}().npu().eval()
    compiled_model = torch.compile(model, **config)
    dummy_input = {{ mre.dummy_input(op) }}
    with torch.no_grad():
        output = compiled_model(*dummy_input)
    print(output)


if __name__ == "__main__":
    infer_one_step()
