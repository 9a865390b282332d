{%- set op = opkit_project(cookiecutter) -%}
{%- import "mre_macros.jinja" as mre -%}
"""MRE: {{ op.qualified_op }} through npugraph_ex's compile cache (cache_compile instead of torch.compile)."""

{{ mre.imports(op) }}


class {{ op.model_class }}(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.cached_forward = torch.npu.npugraph_ex.inference.cache_compile(self._forward, **config)

    def forward(self, {{ mre.tensor_params(op) }}):
        """
        Run {{ op.qualified_op }} through the cached npugraph_ex compilation.

        Key settings:
        - torch.npu.npugraph_ex.inference.cache_compile: replaces torch.compile and caches Dynamo's result.
        - dynamic=False: fixed shapes; aclgraph has no dynamic shapes (dynamic=True may capture several graphs).
        - cache_dir: where the cache is saved (default .torchair_cache).
        """
        return self.cached_forward({{ mre.tensor_params(op) }})

    def _forward(self, {{ mre.tensor_params(op) }}):
        {{ mre.op_body(op, "        ") }}


def infer_one_step():
    config = dict(dynamic=False, cache_dir=".torchair_cache")
    compiled_model = {{ op.model_class }}(config).npu().eval()
    dummy_input = {{ mre.dummy_input(op) }}
    with torch.no_grad():
        output = compiled_model(*dummy_input)
    print(output)


if __name__ == "__main__":
    infer_one_step()
