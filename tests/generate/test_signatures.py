"""Varied signatures: every generated project lints clean, and the OpDef declares what the JSON declares.

The JSON-to-OpDef translation is checked against tables written here from msopgen.md (§1 dtype strings and
attr methods, §3 SoC families), not against opkit.msopgen's own tables (test_artifacts_literal.py has the
exact lines for representative schemas).
"""

from __future__ import annotations

import json
import re

import pytest

from opkit.lint import Severity, lint
from opkit.naming import msopgen_snake
from opkit.signature import Dialect, parse_schema

# msopgen.md §1: dtype strings and their ge:: enums; §1 and §6: JSON attr types and their OpAttrDef methods;
# §3: the SoC family each chip variant maps to. (test_op_model.py reads the OpDef with these helpers too.)
SPEC_DTYPES = {"float": "DT_FLOAT", "fp32": "DT_FLOAT", "float32": "DT_FLOAT", "fp16": "DT_FLOAT16", "float16": "DT_FLOAT16",
               "half": "DT_FLOAT16", "bf16": "DT_BF16", "bfloat16": "DT_BF16", "int8": "DT_INT8", "int16": "DT_INT16",
               "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8", "uint16": "DT_UINT16", "uint32": "DT_UINT32",
               "uint64": "DT_UINT64", "bool": "DT_BOOL", "double": "DT_DOUBLE", "complex64": "DT_COMPLEX64",
               "complex128": "DT_COMPLEX128"}  # fmt: skip
SPEC_ATTR_METHODS = {"int": "Int", "float": "Float", "bool": "Bool", "string": "String", "list_int": "ListInt",
                     "list_float": "ListFloat", "list_bool": "ListBool", "list_list_int": "ListListInt",
                     "list_string": "ListString", "type": "Type", "list_type": "ListType"}  # fmt: skip
SPEC_SOC_FAMILIES = {"ascend910b1": "ascend910b", "ascend910_9391": "ascend910_93"}

# (name, schema, extra make_spec options)
SIGNATURES = [
    ("add3", "add3(Tensor x, Tensor y, Tensor z) -> Tensor", {}),
    ("scale2d", "scale2d(Tensor x, float alpha=1.0) -> Tensor", {}),
    ("pad_v2", "pad_v2(Tensor x, int[2] pads=[1,1]) -> Tensor", {}),
    ("topk_pair", "topk_pair(Tensor x, int k) -> (Tensor values, Tensor indices)", {}),
    ("split3", "split3(Tensor x) -> (Tensor, Tensor, Tensor)", {}),
    ("update_kv", "update_kv(Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor k, Tensor v) -> ()", {}),
    ("fused_norm", "fused_norm(Tensor x, Tensor? gamma=None, Tensor? beta=None, float eps=1e-05) -> Tensor", {}),
    ("concat_list", "concat_list(Tensor x, Tensor[] xs, int dim=0) -> Tensor", {}),
    ("flags_op", "flags_op(Tensor x, bool flag=True, bool[] mask=[True,False]) -> Tensor", {}),
    ("str_mode", "str_mode(Tensor x, str mode='none') -> Tensor", {}),
    ("layer2_norm3", "layer2_norm3(Tensor x) -> Tensor", {}),
    ("kw_only", "kw_only(Tensor x, *, int group=1, float beta=0.5) -> Tensor", {}),
    ("inplace_add", "inplace_add(Tensor(a!) x, Tensor y, float alpha=1.0) -> ()", {}),
    ("mutate_pair", "mutate_pair(Tensor(a!) x, Tensor y) -> (Tensor, Tensor)", {}),
    ("list_attrs", "list_attrs(Tensor x, float[] weights, int[] dims) -> Tensor", {}),
    ("conv3x3", "conv3x3(Tensor x, Tensor w, int[2] stride=1, int groups=1) -> Tensor", {"out_like": "w"}),
    ("dual_fmt", "dual_fmt(Tensor x) -> Tensor", {"dtypes": "float16,float", "formats": "ND,NCHW", "soc": "ascend910b1,ascend910_9391"}),
    ("my_scale", "my_scale(Tensor x, Tensor? bias=None, float s=2.0) -> Tensor", {"style": "custom-op"}),
    ("kv_update_", "kv_update_(Tensor(a!) cache, Tensor update) -> ()", {"style": "custom-op", "namespace": "kvlib"}),
    ("two_out_op", "two_out_op(Tensor[] xs, Tensor x, bool b=False) -> (Tensor, Tensor)", {"style": "custom-op"}),
]

_TENSOR_RE = re.compile(
    r'this->(?P<kind>Input|Output)\("(?P<name>\w+)"\)\s*\.ParamType\((?P<param>\w+)\)\s*'
    r"\.DataType\(\{(?P<types>[^}]*)\}\)\s*\.Format\(\{(?P<formats>[^}]*)\}\)\s*\.UnknownShapeFormat\(\{(?P<unknown>[^}]*)\}\)(?:\s*\.Scalar\(\))?;"
)
_ATTR_RE = re.compile(r'this->Attr\("(?P<name>\w+)"\)(?P<optional>\.AttrType\(OPTIONAL\))?\.(?P<method>\w+)\((?P<default>.*)\);')


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _opdef(cpp: str) -> dict:
    """The OpDef's declarations, parsed back from the C++."""
    tensors = {"Input": [], "Output": []}
    for m in _TENSOR_RE.finditer(cpp):
        assert m["formats"] == m["unknown"]
        tensors[m["kind"]].append((m["name"], m["param"], _items(m["types"]), _items(m["formats"])))
    attrs = [(m["name"], m["method"], bool(m["optional"]), m["default"] or None) for m in _ATTR_RE.finditer(cpp)]
    return {"inputs": tensors["Input"], "outputs": tensors["Output"], "attrs": attrs}


def _cpp_default(text: str) -> str:
    """A C++ literal in msOpGen's default_value spelling: {1, 1} → {1,1}, "none" → none, ge::DT_FLOAT → DT_FLOAT."""
    return text.replace(" ", "").replace('"', "").removeprefix("ge::")


def _declared_by_json(document: list) -> dict:
    (op,) = document

    def tensor(d):
        return (d["name"], d["param_type"].upper(), [f"ge::{SPEC_DTYPES[t]}" for t in d["type"]], [f"ge::FORMAT_{f}" for f in d["format"]])

    attrs = [(a["name"], SPEC_ATTR_METHODS[a["type"]], a["param_type"] == "optional", a.get("default_value")) for a in op.get("attr", [])]
    return {"inputs": [tensor(d) for d in op["input_desc"]], "outputs": [tensor(d) for d in op["output_desc"]], "attrs": attrs}


@pytest.mark.parametrize(("name", "schema", "options"), SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_project_lints_clean_and_opdef_matches_json(generate, name, schema, options):
    project = generate(name, schema=schema, **options)
    result = lint([str(project)])
    problems = [f for f in result.findings if f.severity >= Severity.ERROR]
    assert not problems, "\n".join(map(str, problems))

    spec = json.loads((project / "opkit.json").read_text())
    document = json.loads((project / "msopgen" / f"{name}.json").read_text())
    op_type = document[0]["op"]
    kernel = msopgen_snake(op_type)
    declared = _opdef((project / op_type / "op_host" / f"{kernel}.cpp").read_text())
    expected = _declared_by_json(document)
    declared["attrs"] = [(n, m, o, _cpp_default(d) if d else None) for n, m, o, d in declared["attrs"]]
    assert declared == expected

    # every SoC family is configured, once
    families = list(dict.fromkeys(SPEC_SOC_FAMILIES[s] for s in spec["soc"]))
    host = (project / op_type / "op_host" / f"{kernel}.cpp").read_text()
    assert re.findall(r'AddConfig\("(\w+)"\)', host) == families
    presets = json.loads((project / op_type / "CMakePresets.json").read_text())
    variables = presets["configurePresets"][0]["cacheVariables"]
    assert variables["ASCEND_COMPUTE_UNIT"]["value"] == ";".join(families)
    assert variables["vendor_name"]["value"] == spec["vendor"] != "customize"

    # the kernel takes msOpGen's parameters in msOpGen's order
    params = [d["name"] for d in document[0]["input_desc"]]
    params += [f"{d['name']}_ref" if d["name"] in params else d["name"] for d in document[0]["output_desc"]]
    kernel_src = (project / op_type / "op_kernel" / f"{kernel}.cpp").read_text()
    signature = re.search(rf"void {kernel}\(([^)]*)\)", kernel_src)[1]
    assert [p.split()[-1] for p in signature.split(",")] == [*params, "workspace", "tiling"]

    # the generated Python is valid
    for py in project.rglob("*.py"):
        compile(py.read_text(), str(py), "exec")


def test_signatures_cover_every_argument_and_return_kind():
    """The table spans what an OpDef can declare: each input kind, each attr type with and without a default,
    keyword-only attrs, in-place inputs, several and no returns, and both registration styles."""
    kinds = set()
    for _, schema, options in SIGNATURES:
        sig = parse_schema(schema, Dialect.TORCH_LIBRARY if options.get("style") == "custom-op" else Dialect.OP_PLUGIN)
        for a in sig.arguments:
            kinds.add(str(a.type).replace("[2]", "[]") + ("=" if a.default is not None else ""))
            kinds.update({"kwonly"} if a.kwarg_only else set())
            kinds.update({"mutated"} if a.is_mutated else set())
        kinds.add(f"returns {min(len(sig.returns), 2)}")
        kinds.add(options.get("style", "op-plugin"))
    assert kinds >= {
        "Tensor", "Tensor?=", "Tensor[]", "int", "int=", "float=", "bool=", "bool[]=", "str=", "int[]", "int[]=",
        "float[]", "kwonly", "mutated", "returns 0", "returns 1", "returns 2", "op-plugin", "custom-op",
    }  # fmt: skip
