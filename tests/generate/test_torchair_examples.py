"""The torchair custom_op_graph examples, reproduced field for field (msopgen.md §2, the seeds)."""

from __future__ import annotations

import ast
import json

import yaml

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"


def _tensor(name: str, param_type: str) -> dict:
    return {"name": name, "param_type": param_type, "format": ["ND"], "type": ["float"]}


# torchair docs, 非In-place算子 / 算子NPU实现（Ascend C）: my_op.json
DOCUMENTED_MY_OP_JSON = [
    {
        "op": "MyOp",
        "input_desc": [_tensor("x", "required"), _tensor("y", "optional"), _tensor("z", "dynamic")],
        "attr": [
            {"name": "attr1", "param_type": "required", "type": "float"},
            {"name": "attr2", "param_type": "required", "type": "int"},
        ],
        "output_desc": [_tensor("out", "required")],
    }
]
# torchair docs, In-place算子 / 算子NPU实现（Ascend C）: my_inplace.json (the mutated x again as an output)
DOCUMENTED_MY_INPLACE_JSON = [
    {
        "op": "MyInplace",
        "input_desc": [_tensor("x", "required"), _tensor("y", "required")],
        "output_desc": [_tensor("x", "required"), _tensor("z", "required")],
    }
]
# The seed's op-plugin blocks (npugraph_ex-mre-template.md).
DOCUMENTED_MY_OP_ENTRY = {"func": MY_OP, "op_api": "all_version", "gen_opapi": {"out": {"size": "x", "dtype": "x"}, "exec": "aclnnMyOp"}}
DOCUMENTED_MY_INPLACE_ENTRY = {
    "func": "my_inplace(Tensor(a!) x, Tensor y) -> Tensor",
    "op_api": "all_version",
    "gen_opapi": {"out": {"size": "y", "dtype": "y"}, "exec": "aclnnMyInplace"},
}


def _meta(path):
    """(Library(...) args, @impl op name, function name, parameters, returned expression) of a Meta file."""
    tree = ast.parse(path.read_text())
    library = next(n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and getattr(n.value.func, "id", "") == "Library")
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    (decorator,) = fn.decorator_list
    ret = next(n for n in ast.walk(fn) if isinstance(n, ast.Return))
    return (
        [a.value for a in library.args],
        [ast.unparse(a) for a in decorator.args],
        fn.name,
        [a.arg for a in fn.args.args],
        ast.unparse(ret.value),
    )


def _entry(project):
    return yaml.safe_load((project / "op_plugin" / "op_plugin_functions.yaml").read_text())["custom"]


def test_my_op_json_yaml_and_meta(generate):
    project = generate("my_op", schema=MY_OP, dtypes="float")
    assert json.loads((project / "msopgen" / "my_op.json").read_text()) == DOCUMENTED_MY_OP_JSON
    assert _entry(project) == [DOCUMENTED_MY_OP_ENTRY]
    assert _meta(project / "meta" / "my_op_meta.py") == (["npu", "IMPL", "Meta"], ["m", "'my_op'"], "my_op_meta", ["x", "y", "z", "attr1", "attr2"], "torch.empty_like(x)")


def test_my_inplace_yaml_and_meta(generate):
    project = generate("my_inplace", schema="my_inplace(Tensor(a!) x, Tensor y) -> Tensor", dtypes="float")
    assert _entry(project) == [DOCUMENTED_MY_INPLACE_ENTRY]
    # the seed: output like y, and the mutated x is not returned
    assert _meta(project / "meta" / "my_inplace_meta.py") == (["npu", "IMPL", "Meta"], ["m", "'my_inplace'"], "my_inplace_meta", ["x", "y"], "torch.empty_like(y)")
    document = json.loads((project / "msopgen" / "my_inplace.json").read_text())
    # Unnamed, the fresh return is 'out' (msopgen.md §2); everything else is the documented JSON.
    assert document[0]["output_desc"][1]["name"] == "out"
    document[0]["output_desc"][1]["name"] = "z"
    assert document == DOCUMENTED_MY_INPLACE_JSON


def test_my_inplace_named_return_gives_the_documented_json(generate):
    # torchair names the fresh output z: `-> Tensor z` reproduces its JSON exactly.
    project = generate("my_inplace", schema="my_inplace(Tensor(a!) x, Tensor y) -> Tensor z", dtypes="float")
    assert json.loads((project / "msopgen" / "my_inplace.json").read_text()) == DOCUMENTED_MY_INPLACE_JSON
    assert _entry(project)[0]["gen_opapi"] == {"z": {"size": "y", "dtype": "y"}, "exec": "aclnnMyInplace"}
    kernel = (project / "MyInplace" / "op_kernel" / "my_inplace.cpp").read_text()
    assert "my_inplace(GM_ADDR x, GM_ADDR y, GM_ADDR x_ref, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)" in kernel


def test_custom_op_style_follows_the_seed(generate):
    project = generate("my_op_", inplace=True, schema="my_op_(Tensor(a!) x) -> ()", style="custom-op")
    source = (project / "meta" / "my_op__meta.py").read_text()
    assert '@torch.library.custom_op("mylib::my_op_", mutates_args=("x",), device_types="npu")' in source
    assert "def my_op_(x: torch.Tensor) -> None:" in source
    assert "@my_op_.register_fake" in source and "return None" in source
    assert not (project / "op_plugin").exists()
