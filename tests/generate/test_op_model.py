"""Each new type and shape, checked artifact against artifact (docs/new.md, "Type mapping").

For every case the msOpGen JSON, the OpDef parsed back from the C++, the yaml entry, the Meta function's
parameters and returns, the MRE's sample call and the InferShape/InferDataType bodies must say the same
thing; every document validates against schemas/, every .py compiles, and the project verifies.
"""

from __future__ import annotations

import ast
import json
import py_compile
import re

import pytest
import yaml
from test_signatures import _cpp_default, _declared_by_json, _opdef

from opkit import msopgen, naming
from opkit.generate.schemas import validate_document
from opkit.generate.spec import load_spec
from opkit.lint import Severity, lint
from opkit.samples import sample_call
from opkit.signature import Dialect, parse_schema

# (name, schema, make_spec options)
CASES = [
    ("scalar_op", "scalar_op(Tensor x, Scalar alpha, Scalar? beta=None) -> Tensor", {}),
    ("dtype_op", "dtype_op(Tensor x, ScalarType dtype, ScalarType? out_dtype=None) -> Tensor", {}),
    ("opt_attrs", "opt_attrs(Tensor x, int? k=None, float? eps=None, bool? flag=None, int[]? dims=None, float[]? w=None, str? mode=None, int? g=3) -> Tensor", {}),
    ("enum_default", "enum_default(Tensor x, Tensor y, int reduction=Mean) -> Tensor", {}),
    ("sym_str", "sym_str(Tensor x, SymInt n=4, SymInt[] sizes=[1,2], str layout='BSH') -> Tensor", {}),
    ("split_list", "split_list(Tensor x, int[] sizes) -> Tensor[]", {}),
    ("all_lists", "all_lists(Tensor[] xs, Tensor[] ys) -> Tensor", {}),
    ("list_split", "list_split(Tensor[] xs, float alpha=1.0) -> Tensor[]", {}),
    ("inplace_list", "inplace_list(Tensor(a!)[] xs, Tensor y) -> ()", {}),
    ("npu_rms_norm", "npu_rms_norm(Tensor x, Tensor gamma, float epsilon=1e-06) -> (Tensor y, Tensor rstd)",
     {"outputs": "rstd=like:x,dtype:float32", "dtypes": "float16,float;rstd=float,float"}),
    ("gather_idx", "gather_idx(Tensor x, Tensor indices) -> Tensor", {"dtypes": "float16,float;indices=int32,int32"}),
    ("npu_max", "npu_max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", {"outputs": "indices=like:self,dtype:int64"}),
    ("kw_names", "kw_names(Tensor self, Tensor workspace, Tensor tiling, Tensor new, int template=1) -> Tensor", {}),
    ("npu_swiglu", "npu_swiglu(Tensor x, int dim=-1) -> Tensor", {"op_type": "SwiGlu", "soc": "ascend950pr,ascend910b1,ascend310p3vir01"}),
    ("cplx", "cplx(Tensor x) -> Tensor", {"dtypes": "float;out=complex64", "outputs": "out=like:x,dtype:complex64"}),
    ("lib_norm", "mylib::lib_norm(Tensor! x, Tensor w, int[] k=[1,2]) -> (Tensor y, Tensor rstd)", {"style": "library", "outputs": "rstd=like:w,dtype:float32"}),
    # size rules: input dims, int arguments, literals, 0-dim, an int[] argument, a Tensor[]'s dims
    ("npu_group_stats", "npu_group_stats(Tensor input, int num_groups, float eps=1e-05) -> (Tensor y, Tensor mean, Tensor rstd)",
     {"outputs": "mean=size:[input.0, num_groups],dtype:float32;rstd=size:[input.-1, num_groups, 8],dtype:float32"}),
    ("count_op", "count_op(Tensor x) -> (Tensor y, Tensor n)", {"outputs": "n=size:[],dtype:int64"}),
    ("new_zeros_op", "new_zeros_op(Tensor self, int[] size, *, int fill=0) -> Tensor", {"outputs": "out=size:size"}),
    ("list_dims", "list_dims(Tensor[] xs, Tensor? w, SymInt k) -> Tensor", {"outputs": "out=size:[xs.-1, k, 4]"}),
    # a rule reading a third dim: the sample tensors (MRE and verify) get three dims
    ("head_stats", "head_stats(Tensor q, int heads) -> (Tensor y, Tensor lse)", {"outputs": "lse=size:[q.0, q.2, heads],dtype:float32"}),
    ("mylib_topk", "mylib::mylib_topk(Tensor x, int k) -> (Tensor, Tensor)",
     {"style": "custom-op", "outputs": "out0=size:[x.0, k];out1=size:[x.0, k],dtype:int64"}),
]  # fmt: skip


def _yaml_dims(size: str, sig) -> tuple:
    """gen_opapi's ``{x.size(0), k, 8L}`` (or an int[] argument's name) as (kind, argument, index) triples."""
    if not size.startswith("{"):
        return (("list", size, 0),) if sig.argument(size) is not None and sig.argument(size).type.is_list and not sig.argument(size).is_tensor else ("like", size)
    dims = []
    for item in filter(None, (p.strip() for p in size[1:-1].split(","))):
        m = re.fullmatch(r"(\w+)(?:\[0\])?\.size\((-?\d+)\)", item)
        dims.append(("dim", m[1], int(m[2])) if m else ("literal", "", int(item[:-1])) if re.fullmatch(r"\d+L", item) else ("int", item, 0))
    return tuple(dims)


def _meta_dims(expression: ast.expr) -> tuple:
    """The Meta function's ``t.new_empty([x.shape[0], k, 8])`` (or ``new_empty(size)``) as the same triples."""
    assert isinstance(expression, ast.Call) and ast.unparse(expression.func).endswith(".new_empty"), ast.unparse(expression)
    (shape,) = expression.args
    if isinstance(shape, ast.Name):
        return (("list", shape.id, 0),)
    dims = []
    for e in shape.elts:
        if isinstance(e, ast.Constant):
            dims.append(("literal", "", e.value))
        elif isinstance(e, ast.Name):
            dims.append(("int", e.id, 0))
        else:  # x.shape[N] or xs[0].shape[N]
            arg = e.value.value
            arg = arg.value if isinstance(arg, ast.Subscript) else arg
            dims.append(("dim", arg.id, ast.literal_eval(e.slice)))
    return tuple(dims)


def _infer_shape_dims(host: str, index: int, inputs: list[str], attrs: list[str]) -> tuple:
    """The op_host InferShape block of output ``index``, read back as the same triples."""
    block = host.split(f"context->GetOutputShape({index});", 1)[1].split("}", 1)[0]
    if "GetListInt(" in block or "GetListInt(" in host.split(f"context->GetOutputShape({index});", 1)[0].rsplit("{", 1)[1]:
        k = int(re.search(r"GetListInt\((\d+)\)", host.split(f"context->GetOutputShape({index});", 1)[0].rsplit("{", 1)[1])[1])
        return (("list", attrs[k], 0),)
    count = int(re.search(r"SetDimNum\((\d+)\)", block)[1])
    dims = []
    for line in re.findall(r"SetDim\(\d+, (.*)\);", block):
        shape = re.match(r"context->Get(?:Required|Dynamic)?InputShape\((\d+)(?:, 0)?\)->GetDim\((.*)\)$", line)
        attr = re.match(r"\*context->GetAttrs\(\)->GetAttrPointer<int64_t>\((\d+)\)", line)
        if shape:
            n = shape[2].rsplit(" - ", 1)
            dims.append(("dim", inputs[int(shape[1])], -int(n[1]) if len(n) == 2 else int(n[0])))
        elif attr:
            dims.append(("int", attrs[int(attr[1])], 0))
        else:
            dims.append(("literal", "", int(line)))
    assert count == len(dims)
    return tuple(dims)


def _rule_dims(rule) -> tuple:
    if rule.size_arg:
        return (("list", rule.size_arg, 0),)
    return tuple((d.kind, d.arg, d.index) for d in rule.shape)


def _torch_dtype(dtype: str) -> str:
    import torch

    return str(getattr(torch, {"float": "float32"}.get(dtype, dtype))).removeprefix("torch.")


def _meta_function(project, name: str) -> ast.FunctionDef:
    tree = ast.parse(next((project / "meta").glob("*.py")).read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.endswith("_meta") or (isinstance(n, ast.FunctionDef) and n.name == "_")]
    return functions[-1]


@pytest.mark.parametrize(("name", "schema", "options"), CASES, ids=[c[0] for c in CASES])
def test_every_artifact_agrees(generate, name, schema, options):
    project = generate(name, schema=schema, **options)
    spec = load_spec(project)  # opkit.json validates and reads back as the same spec
    sig = parse_schema(spec.schema, spec.dialect)
    assert not [f for f in lint([str(project)]).findings if f.severity >= Severity.ERROR]

    # msOpGen JSON ↔ OpDef parsed back from the C++
    document = json.loads((project / "msopgen" / f"{name}.json").read_text())
    validate_document(document, "msopgen")
    (op,) = document
    assert op["op"] == spec.resolved_op_type == (options.get("op_type") or naming.op_type(sig.base_name))
    kernel = naming.msopgen_snake(op["op"])
    host = (project / op["op"] / "op_host" / f"{kernel}.cpp").read_text()
    declared = _opdef(host)
    declared["attrs"] = [(n, m, o, _cpp_default(d) if d else None) for n, m, o, d in declared["attrs"]]
    assert declared == _declared_by_json(document)
    lengths = {len(d["type"]) for d in op["input_desc"] + op["output_desc"]}
    assert len(lengths) == 1, "column rule: every descriptor lists the same number of combinations"
    for d in op["input_desc"]:
        arg = sig.argument(d["name"])
        assert d["param_type"] == arg.type.msopgen_param_type
        assert (f'this->Input("{d["name"]}")' in host) and ((".Scalar()" in host.split(f'Input("{d["name"]}")')[1].split(";")[0]) == arg.type.is_scalar)
    for a in op.get("attr", []):
        arg = sig.argument(a["name"])
        assert a["type"] == arg.type.msopgen_attr_type
        assert (a["param_type"] == "optional") == (arg.default is not None)
        if "default_value" in a:
            assert re.fullmatch(r"[^;'\"()\n\t`\[\]]*", a["default_value"]), "msOpGen pastes defaults into C++: braces, no brackets"

    # InferShape / InferDataType set EVERY output, DYNAMIC inputs are read through GetDynamicInputShape
    outputs = op["output_desc"]
    assert sorted(map(int, re.findall(r"GetOutputShape\((\d+)\)", host))) == list(range(len(outputs)))
    assert sorted(map(int, re.findall(r"SetOutputDataType\((\d+),", host))) == list(range(len(outputs)))
    for i, d in enumerate(op["input_desc"]):
        if d["param_type"] == "dynamic":
            assert f"GetInputShape({i})" not in host
    rules = {r.name: r for r in spec.outputs}
    for i, d in enumerate(outputs):
        if d["name"] in rules and rules[d["name"]].dtype:
            ge = msopgen.DTYPES[rules[d["name"]].dtype]
            assert f"SetOutputDataType({i}, ge::{ge})" in host and {msopgen.DTYPES[t] for t in d["type"]} == {ge}
    # size rules: opkit.json ↔ InferShape ↔ yaml gen_opapi size ↔ Meta new_empty, dim for dim
    sized = {name: r for name, r in ((n, spec.output_rule(n)) for n in sig.output_names) if r.shape is not None or r.size_arg}
    input_names, attr_names = [d["name"] for d in op["input_desc"]], [a["name"] for a in op.get("attr", [])]
    for i, d in enumerate(outputs):
        if d["name"] in sized:
            assert _infer_shape_dims(host, i, input_names, attr_names) == _rule_dims(sized[d["name"]])
    kernel_src = (project / op["op"] / "op_kernel" / f"{kernel}.cpp").read_text()
    params = [p.split()[-1] for p in re.search(rf"void {kernel}\(([^)]*)\)", kernel_src)[1].split(",")]
    assert len(params) == len(set(params)) == len(op["input_desc"]) + len(outputs) + 2
    assert f"GET_TILING_DATA(tilingData, {params[-1]})" in kernel_src

    # yaml entry ↔ schema ↔ JSON (op-plugin style only)
    fresh = [n for r, n in zip(sig.returns, sig.output_names) if r.alias is None]
    fragment = project / "op_plugin" / "op_plugin_functions.yaml"
    if spec.style == "op-plugin":
        (entry,) = yaml.safe_load(fragment.read_text())["custom"]
        validate_document(entry, "op-plugin-entry")
        assert entry["func"] == schema
        if any(r.type.is_list for r in sig.fresh_returns):
            assert "gen_opapi" not in entry  # the codegen cannot allocate a Tensor[] result
        else:
            gen = entry["gen_opapi"]
            assert [k for k in gen if k not in ("exec", "new_params")] == fresh
            exec_parts = [p.strip() for p in gen["exec"].split(",")]
            assert exec_parts[0] == "aclnn" + op["op"]
            new_params = gen.get("new_params", {})
            if len(exec_parts) > 1:
                assert len(exec_parts) == 1 + len(sig.arguments) + len(fresh)
                for part, arg in zip(exec_parts[1:], sig.arguments):
                    assert part == arg.name or (part in new_params and arg.name in new_params[part])
                assert exec_parts[1 + len(sig.arguments) :] == fresh
            for arg in sig.arguments:  # optional attrs reach aclnn through value_or, as real entries do
                if arg.type.optional and arg.type.msopgen_attr_type and arg.type.msopgen_attr_type != "string":
                    assert any(f"{arg.name}.value_or(" in e for e in new_params.values())
            for key in fresh:
                rule = spec.output_rule(key)
                if rule.dtype:
                    assert gen[key]["dtype"] == msopgen.ATEN_DTYPES[msopgen.DTYPES[rule.dtype]]
                if key in sized:
                    assert _yaml_dims(gen[key]["size"], sig) == _rule_dims(sized[key]) or (gen[key]["size"] == "at::IntArrayRef{}" and not _rule_dims(sized[key]))
    else:
        assert not fragment.exists()

    # Meta parameters and returns ↔ schema
    meta = _meta_function(project, name)
    names = [a.arg for a in meta.args.args + meta.args.kwonlyargs]
    assert names == [a.name for a in sig.arguments]
    assert [a.arg for a in meta.args.kwonlyargs] == [a.name for a in sig.kwarg_only_arguments]
    returned = [n for n in ast.walk(meta) if isinstance(n, ast.Return)][-1].value
    if not sig.returns:
        assert isinstance(returned, ast.Constant) and returned.value is None
    elif len(sig.returns) > 1:
        assert isinstance(returned, ast.Tuple) and len(returned.elts) == len(sig.returns)
    else:
        assert isinstance(returned, ast.ListComp) == sig.returns[0].type.is_list
    allocations = returned.elts if isinstance(returned, ast.Tuple) else [returned]
    for out_name, allocation in zip(sig.output_names, allocations):
        if out_name in sized:
            assert _meta_dims(allocation) == _rule_dims(sized[out_name])
            rule = sized[out_name]
            dtype_kw = {k.arg: ast.unparse(k.value) for k in allocation.keywords}.get("dtype")
            assert dtype_kw == (f"torch.{_torch_dtype(rule.dtype)}" if rule.dtype else None)
    defaults = dict(zip([a.arg for a in meta.args.args][-len(meta.args.defaults) :] if meta.args.defaults else [], meta.args.defaults))
    for arg in sig.omittable_arguments:
        if not arg.kwarg_only:
            assert ast.unparse(defaults[arg.name]) == repr(arg.default_value) or arg.is_tensor

    # MRE sample call ↔ opkit.samples (what verify runs)
    mre = ast.parse((project / "mre" / f"{name}_mre.py").read_text())
    call = next(n for n in ast.walk(mre) if isinstance(n, ast.Call) and ast.unparse(n.func).startswith(f"torch.ops.{spec.namespace}."))
    assert ast.unparse(call.func) == f"torch.ops.{spec.namespace}.{sig.full_name}"
    samples = sample_call(sig)
    passed = [ast.unparse(a) for a in call.args] + [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords]
    assert len(passed) == len(samples)
    forward = next(n for n in ast.walk(mre) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert len({a.arg for a in forward.args.args}) == len(forward.args.args)  # `self` never repeated

    for py in project.rglob("*.py"):
        py_compile.compile(str(py), doraise=True, cfile=str(py) + "c")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "schema", "options"), CASES, ids=[c[0] for c in CASES])
def test_every_case_verifies(generate, name, schema, options):
    from opkit.verify import verify_project

    report = verify_project(generate(name, schema=schema, **options))
    assert report.ok, str(report)


@pytest.mark.parametrize(
    "outputs, dims", [("", 2), ("lse=size:[q.0, heads]", 2), ("lse=size:[q.0, q.2, heads]", 3), ("lse=size:[q.-4]", 4)]
)
def test_sample_tensors_have_every_dim_a_size_rule_reads(generate, outputs, dims):
    from opkit.verify.project import load_project

    project = generate("head_stats", schema="head_stats(Tensor q, int heads) -> (Tensor y, Tensor lse)", outputs=outputs or None)
    mre = ast.parse((project / "mre" / "head_stats_mre.py").read_text())
    randn = [n for n in ast.walk(mre) if isinstance(n, ast.Call) and ast.unparse(n.func) == "torch.randn"]
    assert randn and all(len(n.args) == dims for n in randn), [ast.unparse(n) for n in randn]
    assert len(load_project(project).sample_shape) == dims  # what verify passes


def test_library_style_takes_the_torch_library_dialect():
    sig = parse_schema("mylib::f(Tensor! x, Tensor y) -> (Tensor a, Tensor b)", Dialect.TORCH_LIBRARY)
    assert [a.name for a in sig.mutated_arguments] == ["x"] and str(sig) == "mylib::f(Tensor! x, Tensor y) -> (Tensor a, Tensor b)"
