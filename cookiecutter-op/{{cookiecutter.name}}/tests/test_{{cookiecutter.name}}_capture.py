{%- set op = opkit_project(cookiecutter) -%}
{%- import "mre_macros.jinja" as mre -%}
{%- if op.style == "extension" -%}
"""{{ op.qualified_op }} under the three ways of capturing an aclgraph (run on an Atlas A2/A3 NPU, after
`python setup.py bdist_wheel && pip install dist/*.whl`): torch.npu.NPUGraph(), torch.npu.make_graphed_callables
and torch.compile(backend="npugraph_ex"). Each compares the replayed result with the eager call's.

Off the NPU these tests skip; `opkit verify .` (tests/test_{{ op.name }}_graph_entry.py) checks graph entry on a CPU.
"""

import pytest

torch = pytest.importorskip("torch")
torch_npu = pytest.importorskip("torch_npu", reason="needs torch_npu and an NPU")
if not torch.npu.is_available():
    pytest.skip("needs an NPU", allow_module_level=True)

import {{ op.launch.package }}  # noqa: E402,F401  loads the library and the Meta function


class {{ op.model_class }}(torch.nn.Module):
    def forward(self, {{ mre.tensor_params(op) }}):
        {{ mre.op_body(op, "        ") }}


def inputs():
    torch.manual_seed(0)
    return {{ mre.dummy_input(op) }}


def clone(args):
    return [[t.clone() for t in a] if isinstance(a, list) else a.clone() for a in args]


def expected(args):
    """The eager call on copies of ``args`` (an in-place op writes its inputs)."""
    return {{ op.model_class }}()(*clone(args))


def assert_same(actual, wanted):
    flat_actual, _ = torch.utils._pytree.tree_flatten(actual)
    flat_wanted, _ = torch.utils._pytree.tree_flatten(wanted)
    assert len(flat_actual) == len(flat_wanted)
    for a, w in zip(flat_actual, flat_wanted):
        torch.testing.assert_close(a, w)


def test_npugraph_replay():
    static = inputs()
    graph = torch.npu.NPUGraph()
    model = {{ op.model_class }}()
    with torch.npu.graph(graph):
        static_out = model(*static)
    fresh = inputs()
    for s, f in zip(static, fresh):
        for s_t, f_t in zip(s if isinstance(s, list) else [s], f if isinstance(f, list) else [f]):
            s_t.copy_(f_t)
    wanted = expected(fresh)
    graph.replay()
    assert_same(static_out, wanted)


def test_make_graphed_callables():
    args = inputs()
    if any(isinstance(a, list) for a in args):
        pytest.skip("make_graphed_callables takes tensors, not a Tensor[] argument")
    wanted = expected(args)
    graphed = torch.npu.make_graphed_callables({{ op.model_class }}().npu(), tuple(clone(args)))
    assert_same(graphed(*args), wanted)


def test_npugraph_ex_backend():
    args = inputs()
    wanted = expected(args)
    compiled = torch.compile({{ op.model_class }}().npu(), backend="npugraph_ex", fullgraph=True, dynamic=False)
    with torch.no_grad():
        assert_same(compiled(*args), wanted)
{% endif -%}
